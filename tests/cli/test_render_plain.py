"""Text that is not for a terminal is written without rich, exactly as rich would draw it."""

from __future__ import annotations

import random
from functools import partial

from loopx_git.cli import render, tables

WORDS = [
    "todo-1",
    "P2",
    "open",
    "alice",
    "Write the parser",
    "a",
    "",
    "naïve café",
    "Cafe\u0301-cre\u0300me",  # combining marks: fewer columns than characters
    "宽字符",
    "x" * 30,
    "[red]not markup",
    ":rocket: launch",
    "tab\there",
    "line1\nline2",
    "para\u2028graph",
    "until todo_done:todo-with-a-long-id",
]


def drawn(capsys, fn) -> str:
    capsys.readouterr()
    fn()
    return capsys.readouterr().out


def test_a_table_off_a_terminal_is_what_rich_draws(capsys, monkeypatch):
    """Plain where nothing wraps, rich where it must lay something out (a tab, a line break, a
    table too wide for the console): either way what rich drew before, byte for byte."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    rng = random.Random(7)
    for trial in range(400):
        monkeypatch.setenv("COLUMNS", rng.choice(["200", "80", "40"]))
        columns = rng.sample(["todo", "pri", "status", "claimed by", "text", "agent", "#"], rng.randint(1, 6))
        cells = [[rng.choice(WORDS) for _ in columns] for _ in range(rng.randint(0, 6))]
        title = rng.choice([None, "Agent todos"])
        ours = drawn(capsys, partial(render.table, columns, cells, title))
        rich = drawn(capsys, partial(tables._rich_table, columns, cells, title, (), False))
        assert ours == rich, (trial, columns, cells)


def test_lines_and_fields_off_a_terminal_are_what_rich_prints(capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    for word in WORDS:
        ours = drawn(capsys, partial(render.line, f"added t1: {word} [open]"))
        rich = drawn(capsys, lambda w=word: render.console().print(f"added t1: {w} [open]", markup=False))
        assert ours == rich, word
        data = {"todo_id": "t1", "text": word, "evidence": [word, "b.py"], "items": [{"k": word, "v": 1}, "x"]}
        ours = drawn(capsys, partial(render.fields, data))
        rich = drawn(capsys, partial(render._rich_lines, render._nested_lines(list(data.items()), 0)))
        assert ours == rich, word


def test_a_long_listing_off_a_terminal_is_one_row_a_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    text = "a text long enough to pass the forty columns of this console"
    rows = [(f"todo-{i}", "P2", "open", "", text) for i in range(tables.PLAIN_ROWS + 1)]
    out = drawn(capsys, lambda: render.table(["todo", "pri", "status", "claimed by", "text"], rows))
    lines = out.splitlines()
    assert len(lines) == len(rows) + 1
    assert lines[1].startswith("todo-0    P2   open") and lines[1].endswith("forty columns of this console")


def test_fields_and_lines_are_plain_text_off_a_terminal(capsys):
    data = {"todo_id": "t1", "text": "fix :bug: [bold]now[/bold]", "evidence": ["a.py", "b.py"], "nested": {"k": 1}}
    out = drawn(capsys, lambda: render.fields(data))
    assert out == "todo_id: t1\ntext: fix :bug: [bold]now[/bold]\nevidence: a.py, b.py\nnested:\n  k: 1\n"
    assert drawn(capsys, lambda: render.line("done :bug:")) == "done :bug:\n"


def _written(fn, items, encoding: str) -> bytes:
    import io
    import sys

    buffer = io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors="backslashreplace")
    saved, sys.stdout = sys.stdout, buffer
    try:
        fn(items)
        buffer.flush()
    finally:
        sys.stdout = saved
    return buffer.buffer.getvalue()


def test_listings_stream_byte_for_byte_what_one_dump_would_write():
    import json

    from loopx_git.store.yaml_doc import render as yaml_render

    rng = random.Random(3)
    texts = ["a", "b\nc", "é ü", "x: y", "- z", "", "'q'", '"dq"', "emoji 😀", "[red]"]

    def item(i):
        return {"id": f"t{i}", "text": rng.choice(texts), "n": i, "l": [1, "two", None], "d": {"k": [True, 1.5]}}

    for count in (0, 1, 2, render.STREAM_CHUNK - 1, render.STREAM_CHUNK, render.STREAM_CHUNK + 1, 450):
        items = [item(i) for i in range(count)]
        for encoding in ("utf-8", "ascii"):
            expected = json.dumps(items, indent=2, ensure_ascii=encoding != "utf-8") + "\n"
            assert _written(render._stream_json, items, encoding) == expected.encode(encoding), (count, encoding)
        assert _written(render._stream_yaml, items, "utf-8") == yaml_render({"items": items}), count

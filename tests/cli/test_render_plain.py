"""Text that is not for a terminal is written without rich, exactly as rich would draw it."""

from __future__ import annotations

import random
from functools import partial

from loopx_git.cli import render

WORDS = [
    "todo-1",
    "P2",
    "open",
    "alice",
    "Write the parser",
    "a",
    "",
    "naïve café",
    "宽字符",
    "x" * 30,
    "[red]not markup",
]


def drawn(capsys, fn) -> str:
    capsys.readouterr()
    fn()
    return capsys.readouterr().out


def test_a_plain_table_is_what_rich_draws_when_nothing_wraps(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    rng = random.Random(7)
    for trial in range(200):
        columns = rng.sample(["todo", "pri", "status", "claimed by", "text", "agent", "#"], rng.randint(1, 6))
        cells = [[rng.choice(WORDS) for _ in columns] for _ in range(rng.randint(0, 6))]
        widths = [max([render._cells(c), *(render._cells(r[i]) for r in cells)]) for i, c in enumerate(columns)]
        title = rng.choice([None, "Agent todos"])
        plain = drawn(capsys, partial(render._plain_table, columns, cells, widths, title))
        rich = drawn(capsys, partial(render._rich_table, columns, cells, title, (), False))
        assert plain == rich, (trial, columns, cells)


def test_a_long_listing_off_a_terminal_is_one_row_a_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    text = "a text long enough to pass the forty columns of this console"
    rows = [(f"todo-{i}", "P2", "open", "", text) for i in range(render.PLAIN_ROWS + 1)]
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

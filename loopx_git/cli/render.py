"""All output goes through here: JSON/YAML are the models dumped as they are; text is for people
(rich tables and colour on a terminal, plain columns when piped). Data to stdout, the rest to stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from loopx_git.cli.context import Ctx, OutputFormat
from loopx_git.cli.text import console, one_line, terminal, visible
from loopx_git.cli.text import line as line  # render.line: what every command prints with

WRITE_SCHEMA = "loopx_write_result_v0"


def table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None, *, ids: Iterable[str] = ()
) -> None:
    """A table (``cli/tables.py``, imported when one is drawn: ``--version`` and the plain lines of
    most commands never load it)."""
    from loopx_git.cli.tables import table as draw

    draw(columns, rows, title, ids=ids)


def to_data(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {k: to_data(v) for k, v in value.items()}
    return value


def attributes(data: Any) -> Any:
    """JSON data read as the record it was dumped from (``card.goal.goal_id``): a read answered from
    the cache gets its text from the same data its JSON is, without building the models again."""
    from types import SimpleNamespace

    if isinstance(data, dict):
        return SimpleNamespace(**{key: attributes(value) for key, value in data.items()})
    if isinstance(data, list):
        return [attributes(value) for value in data]
    return data


def shown_json(value: Any, ascii_only: bool) -> str:
    """A value as indented JSON text. A string JSON prints with escapes is masked on its own first:
    a line break written ``\\n``, a control character ``\\u000b``, set a secret's pieces apart in
    the printed text the mask reads (the other strings are masked there: ``cli/masking.py``). The
    data is walked for that only where the text holds an escape, so a plain listing costs no walk."""
    data = to_data(value)
    body = json.dumps(data, indent=2, ensure_ascii=ascii_only)
    if "\\" in body:
        from loopx_git.cli.masking import data as masked

        body = json.dumps(masked(data), indent=2, ensure_ascii=ascii_only)
    return body


def emit(ctx: Ctx, value: Any, text: Callable[[Any], None]) -> None:
    if ctx.format == OutputFormat.json:  # \u escapes when stdout cannot carry every character (LANG=C)
        if isinstance(value, (list, tuple)):
            _stream_json(value)
        else:
            sys.stdout.write(shown_json(value, not _utf8_stdout()) + "\n")
    elif ctx.format == OutputFormat.yaml:
        if isinstance(value, (list, tuple)):
            _stream_yaml(value)
        else:
            _write_utf8(_shown_yaml(to_data(value)))
    else:
        text(value)


STREAM_CHUNK = 200
"""Items of a listing serialised and written at a time: a long listing starts at once and never
holds its whole text in memory."""


def _stream_json(items: Sequence[Any]) -> None:
    """A list as ``json.dumps(items, indent=2)`` writes it, byte for byte, written a chunk at a time.
    JSON text never holds a raw newline (it is escaped in strings), so an item's lines can be
    indented one level by splitting on them."""
    if not items:
        sys.stdout.write("[]\n")
        return
    ascii_only = not _utf8_stdout()
    for start in range(0, len(items), STREAM_CHUNK):
        parts = []
        for item in items[start : start + STREAM_CHUNK]:
            body = shown_json(item, ascii_only)
            parts.append("  " + body.replace("\n", "\n  "))
        lead = "[\n" if start == 0 else ",\n"
        sys.stdout.write(lead + ",\n".join(parts))
    sys.stdout.write("\n]\n")


def _stream_yaml(items: Sequence[Any]) -> None:
    """A list as ``{"items": [...]}`` in YAML, a chunk of items at a time: each chunk is the same
    document's ``items`` entries (the dumper keeps no state from one item to the next)."""
    from loopx_git.store.yaml_doc import render

    if not items:
        _write_utf8(render({"items": []}))
        return
    for start in range(0, len(items), STREAM_CHUNK):
        chunk = _shown_yaml({"items": [to_data(item) for item in items[start : start + STREAM_CHUNK]]})
        _write_utf8(chunk if start == 0 else chunk.split(b"\n", 1)[1])


def _shown_yaml(data: Any) -> bytes:
    """JSON data as YAML, masked as ``shown_json`` masks JSON (YAML double-quotes a string of several
    lines or with control characters, with escapes, and doubles a single quote in a single-quoted one)."""
    from loopx_git.store.yaml_doc import render

    body = render(data)
    if b"\\" in body or b"''" in body:
        from loopx_git.cli.masking import data as masked

        body = render(masked(data))
    return body


def _utf8_stdout() -> bool:
    return (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").replace("_", "") in (
        "utf8",
        "utf8sig",
    )


def _write_utf8(data: bytes) -> None:
    """YAML is UTF-8 whatever the locale: as bytes when stdout would encode text otherwise."""
    buffer = None if _utf8_stdout() else getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()


Segments = list[tuple[str, str | None]]
"""A line as (text, style) pieces: bold labels on a terminal, plain text elsewhere."""


def kv(pairs: Iterable[tuple[str, Any]]) -> None:
    """``key: value`` lines; nested values (lists, mappings, records) as indented lines below."""
    lines = _nested_lines(list(pairs), 0)
    if not terminal(sys.stdout) and not any("\t" in text for segments in lines for text, _ in segments):
        sys.stdout.write("".join("".join(text for text, _ in segments) + "\n" for segments in lines))
        return
    _rich_lines(lines)


def _rich_lines(lines: list[Segments]) -> None:
    from rich.text import Text

    out = console()
    for segments in lines:
        out.print(Text.assemble(*((text, style) if style else text for text, style in segments)))


def fields(data: Any, *, skip: Iterable[str] = ("schema_version",)) -> None:
    """A record or mapping for people, YAML-like: ``key: value``, nested values indented below,
    list items as ``- ``; empty values left out. Never a Python repr."""
    data = to_data(data)
    left_out = set(skip)
    kv([(k, v) for k, v in data.items() if k not in left_out] if isinstance(data, dict) else [("value", data)])


def scalar(value: Any) -> str:
    """One value as people write it: ``true``/``false``, ``-`` for none, text without quotes."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):  # inline, as in "evidence: [] -> [a.py, b.py]"
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {scalar(v)}" for k, v in value.items()) if value else "-"
    return visible(str(value))


def _empty(value: Any) -> bool:
    """Nothing to show: none, an empty text or list, or a mapping of nothing but those."""
    if isinstance(value, dict):
        return all(_empty(v) for v in value.values())
    return value is None or (isinstance(value, (str, list, tuple)) and not value)


def _nested_lines(pairs: list[tuple[str, Any]], depth: int) -> list[Segments]:
    pad = "  " * depth
    lines: list[Segments] = []
    for key, value in pairs:
        value = to_data(value)
        if _empty(value):
            continue
        label: Segments = [(pad, None), (f"{visible(str(key))}:", "bold")]
        if isinstance(value, dict):
            lines.append(label)
            lines += _nested_lines(list(value.items()), depth + 1)
        elif isinstance(value, (list, tuple)) and all(not isinstance(v, (dict, list, tuple)) for v in value):
            if sum(len(scalar(v)) for v in value) <= 60:  # a short list of scalars reads best on one line
                lines.append([*label, (" " + ", ".join(scalar(v) for v in value), None)])
            else:
                lines.append(label)
                lines += [[(f"{pad}  - {scalar(v)}", None)] for v in value]
        elif isinstance(value, (list, tuple)):
            lines.append(label)
            lines += _item_lines(value, depth + 1)
        else:
            lines.append([*label, (" " + scalar(value).replace("\n", "\n" + pad + "  "), None)])
    return lines


def _item_lines(items: Sequence[Any], depth: int) -> list[Segments]:
    """List items as ``- ``: a mapping's first key on the dash line, the rest aligned under it."""
    pad = "  " * depth
    lines: list[Segments] = []
    for item in items:
        item = to_data(item)
        if isinstance(item, dict) and not _empty(item):
            inner = _nested_lines(list(item.items()), depth + 1)
            lines.append([(pad + "- ", None), *_drop(inner[0], len(pad) + 2)])
            lines += inner[1:]
        elif isinstance(item, (list, tuple, dict)):  # a nested list, or a mapping with nothing in it
            lines.append([(pad + "-", None)])
            lines += _item_lines(item, depth + 1) if isinstance(item, (list, tuple)) else []
        else:
            lines.append([(f"{pad}- {scalar(item)}", None)])
    return lines


def _drop(segments: Segments, count: int) -> Segments:
    """``segments`` without their first ``count`` characters (the indent a dash line replaces)."""
    out: Segments = []
    for text, style in segments:
        if count >= len(text):
            count -= len(text)
            continue
        out.append((text[count:], style))
        count = 0
    return out


def plural(count: int, noun: str) -> str:
    """``1 event``, ``2 events``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def note(message: str) -> None:
    """One line to stderr, always ended: the shell's next prompt must not follow it on the same line."""
    if terminal(sys.stderr):
        err = console(stderr=True)
        err.print(one_line(message), style="dim", markup=False)
        err.file.flush()
    else:
        sys.stderr.write(one_line(message) + "\n")
        sys.stderr.flush()


MAX_NOTES = 20
"""Warnings a write prints as text at most; JSON carries every one."""


def write_result(ctx: Ctx, result: Any, text: Callable[[Any], None]) -> None:
    """A write prints an envelope (commit, events, record) in JSON/YAML, a sentence in text."""
    from loopx_git.errors import Notice

    warnings = [*result.warnings, *ctx.notices]  # notices: upkeep after the commit, which still stands
    ctx.notices.clear()
    envelope = {
        "schema_version": WRITE_SCHEMA,
        "changed": result.changed,
        "commit": result.commit,
        "event_ids": result.event_ids,
        "record": to_data(result.record),
        "redacted": [f.to_json() for f in result.redactions],
        "warnings": [w.to_json() for w in warnings],
    }
    try:
        if ctx.format == OutputFormat.text:
            text(result)
            for finding in result.redactions:
                note(f"redacted {finding.describe()}")
            for warning in warnings[:MAX_NOTES]:
                said = "" if isinstance(warning, Notice) else " (written; warn-level rules do not block)"
                note(f"warning: {warning.describe()}{said}")
            if len(warnings) > MAX_NOTES:
                note(f"warning: ... and {len(warnings) - MAX_NOTES} more (--format json lists every one)")
            if result.changed:
                note(f"commit {result.commit[:12]} · {plural(len(result.event_ids), 'event')}")
            else:
                note("nothing changed; no commit")
        else:
            emit(ctx, envelope, lambda _: None)
        sys.stdout.flush()
    except BrokenPipeError:
        # the write has landed; whoever read the output left (`| head`): that is no failure, and
        # a caller that retried on one would write twice
        reader_gone()


def reader_gone() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    finally:
        os.close(devnull)


_PROGRESS_SINK: ContextVar[Callable[[str, int, int], None] | None] = ContextVar("progress_sink", default=None)


@contextmanager
def progress_to(sink: Callable[[str, int, int], None] | None) -> Iterator[None]:
    """Long work inside reports ``(stage, done, total)`` to ``sink`` instead of drawing a bar: the MCP
    server turns it into progress notifications."""
    token = _PROGRESS_SINK.set(sink)
    try:
        yield
    finally:
        _PROGRESS_SINK.reset(token)


class Progress:
    """A progress bar on stderr when it is a terminal (or the sink ``progress_to`` set); silent otherwise."""

    def __enter__(self):
        sink = _PROGRESS_SINK.get()
        if sink is not None:
            self._bar = None
            return sink
        if not terminal(sys.stderr):
            self._bar = None
            return None
        err = console(stderr=True)
        from rich.progress import Progress as Bar

        bar = self._bar = Bar(console=err, transient=True)
        bar.start()
        self._tasks: dict = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in self._tasks:
                self._tasks[stage] = bar.add_task(f"checking {stage}", total=total)
            bar.update(self._tasks[stage], completed=done)

        return update

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

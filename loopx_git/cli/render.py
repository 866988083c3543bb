"""All output goes through here: JSON/YAML are the models dumped as they are; text is for people
(rich tables and colour on a terminal, plain columns when piped). Data to stdout, the rest to stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from loopx_git.cli.context import Ctx, OutputFormat

WRITE_SCHEMA = "loopx_write_result_v0"


def to_data(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {k: to_data(v) for k, v in value.items()}
    return value


def emit(ctx: Ctx, value: Any, text: Callable[[Any], None]) -> None:
    if ctx.format == OutputFormat.json:  # \u escapes when stdout cannot carry every character (LANG=C)
        sys.stdout.write(json.dumps(to_data(value), indent=2, ensure_ascii=not _utf8_stdout()) + "\n")
    elif ctx.format == OutputFormat.yaml:
        from loopx_git.store.yaml_doc import render

        data = to_data(value)
        _write_utf8(render(data if isinstance(data, dict) else {"items": data}))
    else:
        text(value)


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


def console(stderr: bool = False):
    from rich.console import Console  # lazy: rich is only loaded for text output

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


_CONTROL = {code: f"\\x{code:02x}" for code in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]}


def visible(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN``: a value from the branch (a todo text,
    a path in a hostile tree) cannot move the cursor or colour the terminal."""
    return text.translate(_CONTROL)


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out = console()
    tty = out.is_terminal
    grid = Table(
        *columns,
        title=title if tty else None,
        box=box.SIMPLE if tty else None,
        show_edge=False,
        pad_edge=False,
        header_style="bold" if tty else "",
    )
    for row in rows:  # Text, not str: rich would read "[red]" in a todo's text as markup
        grid.add_row(*(Text("" if cell is None else visible(str(cell))) for cell in row))
    if not tty and title:
        out.print(title)
    out.print(grid)


def line(message: str = "", style: str | None = None) -> None:
    console().print(visible(message), style=style, markup=False)


def kv(pairs: Iterable[tuple[str, Any]]) -> None:
    out = console()
    for key, value in pairs:
        if value in (None, [], ""):
            continue
        if isinstance(value, list):
            value = ", ".join(map(str, value))
        out.print(f"{visible(key)}: ", style="bold", markup=False, end="")
        out.print(visible(str(value)), markup=False)


def note(message: str) -> None:
    console(stderr=True).print(visible(message), style="dim", markup=False)


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
            for warning in warnings:
                said = "" if isinstance(warning, Notice) else " (written; warn-level rules do not block)"
                note(f"warning: {warning.describe()}{said}")
            if result.changed:
                note(f"commit {result.commit[:12]} · {len(result.event_ids)} event(s)")
            else:
                note("nothing changed; no commit")
        else:
            emit(ctx, envelope, lambda _: None)
        sys.stdout.flush()
    except BrokenPipeError:
        # the write has landed; whoever read the output left (`| head`): that is no failure, and
        # a caller that retried on one would write twice
        _reader_gone()


def _reader_gone() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    finally:
        os.close(devnull)


class Progress:
    """A progress bar on stderr when it is a terminal; silent otherwise."""

    def __enter__(self):
        err = console(stderr=True)
        if not err.is_terminal:
            self._bar = None
            return None
        from rich.progress import Progress as Bar

        self._bar = Bar(console=err, transient=True)
        self._bar.start()
        self._tasks: dict = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in self._tasks:
                self._tasks[stage] = self._bar.add_task(f"checking {stage}", total=total)
            self._bar.update(self._tasks[stage], completed=done)

        return update

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

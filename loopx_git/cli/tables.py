"""Tables: rich tables with colour where stdout is a terminal, plain aligned columns where it is piped
(ids never cut, long text shrunk first). Loaded when a command draws one (``render.table``)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

from loopx_git.cli.text import console, terminal, visible


def _width() -> int:
    """The width rich gives a console that is not a terminal: ``COLUMNS``, else the size of whichever
    standard stream is a terminal, else 80."""
    import os

    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns):
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def _cells(text: str) -> int:
    """Columns ``text`` takes on a terminal (wide characters take two)."""
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


ID_COLUMNS = frozenset(
    {"todo", "event", "entry", "packet", "run", "agent", "goal", "fire", "commit", "claimed by", "suggested by"}
)
"""Columns holding ids: what people copy into the next command, so never cut, folded or ellipsised."""


_SHRUNK = 8
"""The width a free-text column may shrink to (it wraps) before the table outgrows the terminal."""


def table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None, *, ids: Iterable[str] = ()
) -> None:
    """A table whose id columns (``ID_COLUMNS``, plus ``ids``) are printed whole: they keep their
    longest value's width and never wrap; the free-text columns wrap instead. When even that does
    not fit, the table is drawn wider than the terminal (which wraps the line) rather than cut an id."""
    cells = [["" if cell is None else visible(str(cell)) for cell in row] for row in rows]
    tty = terminal(sys.stdout)
    if not tty and not any(_laid_out(cell) for cell in columns) and not any(_laid_out(c) for r in cells for c in r):
        id_columns, widths, least = _minimums(columns, cells, ids)
        # a column is as wide as rich makes it: its minimum, or what its widest cell measures
        final = [
            max(width if name in id_columns else shrunk, *(_cells(row[i]) for row in cells), _cells(name))
            for i, (name, width, shrunk) in enumerate(zip(columns, widths, least))
        ]
        # plain columns, as rich draws them when nothing wraps; a long listing is never wrapped (rich
        # takes half a millisecond a row to lay one out, and a script reading it wants one row a line)
        if sum(final) + 2 * (len(columns) - 1) <= _width() or len(cells) > PLAIN_ROWS:
            _plain_table(columns, cells, final, title)
            return
    _rich_table(columns, cells, title, ids, tty)


def _laid_out(text: str) -> bool:
    """Whether rich lays ``text`` out rather than print it as it is: a tab (expanded to the next
    stop) or a line break in a cell (the row grows a line). Such text goes through rich."""
    return "\t" in text or "\n" in text or "\u2028" in text or "\u2029" in text


def _minimums(
    columns: Sequence[str], cells: list[list[str]], ids: Iterable[str]
) -> tuple[frozenset[str], list[int], list[int]]:
    """The id columns, each column's whole width (an id column's minimum) and the width free text may
    shrink to (between words, never inside one: a word may be an id, as in "until todo_done:<id>")."""
    id_columns = ID_COLUMNS | set(ids)
    widths = [max([len(name), *(len(row[i]) for row in cells)]) for i, name in enumerate(columns)]
    words = [max([len(name), *(len(w) for row in cells for w in row[i].split())]) for i, name in enumerate(columns)]
    least = [w if name in id_columns else max(min(w, _SHRUNK), word) for name, w, word in zip(columns, widths, words)]
    return id_columns, widths, least


def _rich_table(
    columns: Sequence[str], cells: list[list[str]], title: str | None, ids: Iterable[str], tty: bool
) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out = console()
    id_columns, widths, least = _minimums(columns, cells, ids)
    grid = Table(
        title=title if tty else None,
        box=box.SIMPLE if tty else None,
        show_edge=False,
        pad_edge=False,
        header_style="bold" if tty else "",
    )
    for name, width, minimum in zip(columns, widths, least):
        if name in id_columns:
            grid.add_column(name, no_wrap=True, min_width=width)
        else:
            grid.add_column(name, min_width=minimum)
    from loopx_git.cli.masking import cell as masked_cell

    for row in cells:  # Text, not str: rich would read "[red]" in a todo's text as markup
        grid.add_row(*(Text(masked_cell(cell)) for cell in row))
    needed = sum(least) + 2 * len(columns)
    if not tty and title:
        out.print(title)
    if needed > out.width:  # print never draws wider than its console: a wider console, same stream
        out = console(width=needed)
    out.print(grid)


PLAIN_ROWS = 200
"""Beyond this many rows a table that is not on a terminal is drawn plain even when it is wider
than the console: no wrapping, one row a line."""


def _plain_table(columns: Sequence[str], cells: list[list[str]], widths: list[int], title: str | None) -> None:
    out = []
    if title:
        out.append(title + "\n")
    for row in [list(columns), *cells]:
        out.append("  ".join(cell + " " * (width - _cells(cell)) for cell, width in zip(row, widths)))
        out.append("\n")
    sys.stdout.write("".join(out))

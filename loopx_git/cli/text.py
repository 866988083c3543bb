"""Text from the branch or the caller made safe to print: control characters escaped, one line
where a value must not start a line of its own, and what the output mask must read left for it;
and the terminal it is printed on (plain text where stdout is not one, rich only where it is)."""

from __future__ import annotations

import sys
from typing import Any


def visible(text: str) -> str:
    """``text`` with control characters shown as ``\\xNN``: a value from the branch (a todo text,
    a path in a hostile tree) cannot move the cursor or colour the terminal."""
    from loopx_git.model.canonical import visible as escaped

    shown = escaped(text)
    if shown == text and "\n" not in text and "\r" not in text:
        return shown  # nothing escaped: the mask reads this cell in the printed line
    from loopx_git.cli.masking import multiline

    return escaped(multiline(text, shown))


def one_line(text: str) -> str:
    """``text`` on one line, whatever it quotes: control characters and line breaks shown escaped, so
    a value from the branch (a file name, a todo's text) cannot start a line of its own (``error[…]``)."""
    shown = visible(text)
    for brk, escape in (("\n", "\\n"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        shown = shown.replace(brk, escape)
    return shown


def console(stderr: bool = False, width: int | None = None):
    from rich.console import Console  # lazy: rich is only loaded for a terminal (and tables that wrap)

    # emoji=False: a todo's text saying ":bug:" is printed as written, not as a picture
    return Console(stderr=stderr, highlight=False, soft_wrap=True, width=width, emoji=False)


def terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal as rich decides it (``TTY_COMPATIBLE``, ``FORCE_COLOR``,
    ``isatty``): where it is not, output is plain text, written without loading rich at all."""
    import os

    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def line(message: str = "", style: str | None = None) -> None:
    """A line to stdout, control characters escaped (a text of several lines stays several: a caller
    that quotes a value which must stay on one line — a path from the branch — passes it through
    ``one_line``)."""
    if not terminal(sys.stdout) and "\t" not in message:  # rich expands a tab
        sys.stdout.write(visible(message) + "\n")
        return
    console().print(visible(message), style=style, markup=False)

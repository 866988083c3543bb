"""Text from the branch or the caller made safe to print: control characters escaped, one line
where a value must not start a line of its own, and what the output mask must read left for it."""

from __future__ import annotations


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

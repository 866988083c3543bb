"""A block of a documentation file that the code writes: the text between two HTML comments, put back
by ``python -m loopx_git.mcp.tools docs/mcp.md`` (the MCP tools) and ``python -m loopx_git.cli.declared
docs/cli.md`` (the declared write operations). The test suite generates each block again and fails on
any difference, so the docs cannot drift from the code."""

from __future__ import annotations

from pathlib import Path


def between(text: str, start: str, end: str) -> str:
    """The block in ``text``, its markers included."""
    return start + text.split(start, 1)[1].split(end, 1)[0] + end


def rewrite(path: str, start: str, end: str, block: str) -> bool:
    """Put ``block`` (which begins with ``start`` and ends with ``end``) in place of the file's own;
    True when the file changed."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    new = text.replace(between(text, start, end), block.rstrip("\n"), 1)
    file.write_text(new, encoding="utf-8")
    return new != text

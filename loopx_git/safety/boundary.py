"""The local-state boundary: paths that never go into any commit of a connected repository, and
the marked block ``loopx connect`` keeps in ``.gitignore`` for them.

Patterns follow ``.gitignore``: a trailing ``/`` means a folder (and all below it); a pattern with
another ``/`` is anchored at the repository root; one without matches a name at any depth.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

DEFAULT_PATTERNS: tuple[str, ...] = (".loopx/", ".local/", ".codex/goals/", "raw*.log", "raw*.jsonl", "*.transcript*")

BLOCK_BEGIN = "# >>> loopx local state (managed by `loopx connect`; extra patterns: [tool.loopx.safety] local_state) >>>"
BLOCK_END = "# <<< loopx local state <<<"


@lru_cache(maxsize=512)
def _compile(glob: str) -> re.Pattern:
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(glob: str, path: str) -> bool:
    """``*`` stays inside one folder, ``**`` crosses folders (as in ``.gitignore`` and pre-commit)."""
    return _compile(glob).match(path) is not None


def matches(pattern: str, path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is covered by one ``.gitignore``-style pattern."""
    folder = pattern.endswith("/")
    body = pattern.strip("/")
    anchored = pattern.startswith("/") or "/" in body
    parts = path.split("/")
    if anchored:
        depth = body.count("/") + 1
        head = "/".join(parts[:depth])
        return glob_match(body, head) and (len(parts) > depth or not folder)
    # unanchored: any component; a folder pattern must match a folder, not the file itself
    last = len(parts) - 1
    return any(glob_match(body, part) for i, part in enumerate(parts) if not folder or i < last)


class Boundary:
    """The patterns in force: the defaults plus a repository's own."""

    def __init__(self, extra: Iterable[str] = ()):
        self.patterns = DEFAULT_PATTERNS + tuple(p for p in extra if p not in DEFAULT_PATTERNS)

    def violates(self, path: str) -> str | None:
        """The first pattern that covers ``path``, or None."""
        return next((p for p in self.patterns if matches(p, path)), None)


def render_block(patterns: Iterable[str]) -> list[str]:
    return [BLOCK_BEGIN, *patterns, BLOCK_END]


def with_ignore_block(text: str, patterns: Iterable[str]) -> str:
    """``.gitignore`` text with the loopx block present and current. Idempotent; the user's own
    lines keep their order; an existing block is replaced where it stands, else one is appended."""
    lines = text.splitlines()
    block = render_block(patterns)
    if BLOCK_BEGIN in lines and BLOCK_END in lines[lines.index(BLOCK_BEGIN):]:
        begin = lines.index(BLOCK_BEGIN)
        end = lines.index(BLOCK_END, begin)
        lines[begin:end + 1] = block
    else:
        if lines and lines[-1].strip():
            lines.append("")
        lines.extend(block)
    return "\n".join(lines) + "\n"


def has_ignore_block(text: str, patterns: Iterable[str]) -> bool:
    lines = text.splitlines()
    block = render_block(patterns)
    if BLOCK_BEGIN not in lines:
        return False
    begin = lines.index(BLOCK_BEGIN)
    return lines[begin:begin + len(block)] == block

"""The local-state boundary: paths that never go into any commit of a connected repository, and
the marked block ``loopx connect`` keeps in ``.gitignore`` for them.

Patterns follow ``.gitignore``: a trailing ``/`` means a folder (and all below it); a pattern with
another ``/`` is anchored at the repository root; one without matches a name at any depth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

DEFAULT_PATTERNS: tuple[str, ...] = (".loopx/", ".local/", ".codex/goals/", "raw*.log", "raw*.jsonl", "*.transcript*")

BLOCK_BEGIN = (
    "# >>> loopx local state (managed by `loopx connect`; extra patterns: [tool.loopx.safety] local_state) >>>"
)
BLOCK_END = "# <<< loopx local state <<<"


def _translate(glob: str) -> str:
    """A glob as a regex fragment: ``*`` and ``?`` stay inside one folder, ``**`` crosses folders."""
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
    return "".join(out)


@lru_cache(maxsize=512)
def _compile(glob: str) -> re.Pattern:
    return re.compile(_translate(glob) + r"\Z", re.S)  # a path may hold a newline


def glob_match(glob: str, path: str) -> bool:
    """``*`` stays inside one folder, ``**`` crosses folders (as in ``.gitignore`` and pre-commit)."""
    return _compile(glob).match(path) is not None


def _path_regex(pattern: str) -> str:
    """``matches(pattern, path)`` as one regex over the whole path."""
    folder = pattern.endswith("/")
    body = _translate(pattern.strip("/"))
    if pattern.startswith("/") or "/" in pattern.strip("/"):
        return f"^{body}/.+\\Z" if folder else f"^{body}(?:/.*)?\\Z"
    return f"(?:^|/){body}/" if folder else f"(?:^|/){body}(?:/|\\Z)"


@lru_cache(maxsize=512)
def _pattern_regex(pattern: str) -> re.Pattern:
    return re.compile(_path_regex(pattern), re.S)


def matches(pattern: str, path: str) -> bool:
    """Whether ``path`` (relative, ``/``-separated) is covered by one ``.gitignore``-style pattern."""
    return _pattern_regex(pattern).search(path) is not None


class Boundary:
    """The patterns in force: the defaults plus a repository's own, compiled into one regex so
    that checking every path of a large index stays cheap."""

    def __init__(self, extra: Iterable[str] = ()):
        self.patterns = DEFAULT_PATTERNS + tuple(p for p in extra if p not in DEFAULT_PATTERNS)
        self._regex = re.compile("|".join(f"(?P<p{i}>{_path_regex(p)})" for i, p in enumerate(self.patterns)), re.S)
        # a literal every match must contain: most paths hold none of them and skip the regex
        needles = [max(re.split(r"[*?/]", p), key=len) for p in self.patterns]
        self._needles = tuple(needles) if all(len(n) >= 2 for n in needles) else None

    def violates(self, path: str) -> str | None:
        """The first pattern that covers ``path``, or None."""
        if self._needles is not None and not any(n in path for n in self._needles):
            return None
        m = self._regex.search(path)
        if m is None:
            return None
        return self.patterns[min(int(name[1:]) for name, value in m.groupdict().items() if value is not None)]


def render_block(patterns: Iterable[str]) -> list[str]:
    return [BLOCK_BEGIN, *patterns, BLOCK_END]


def with_ignore_block(text: str, patterns: Iterable[str]) -> str:
    """``.gitignore`` text with the loopx block present and current. Idempotent; the user's own
    lines keep their order; an existing block is replaced where it stands, else one is appended."""
    lines = text.splitlines()
    block = render_block(patterns)
    if BLOCK_BEGIN in lines and BLOCK_END in lines[lines.index(BLOCK_BEGIN) :]:
        begin = lines.index(BLOCK_BEGIN)
        end = lines.index(BLOCK_END, begin)
        lines[begin : end + 1] = block
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
    return lines[begin : begin + len(block)] == block

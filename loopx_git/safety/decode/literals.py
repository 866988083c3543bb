"""String literals joined where code concatenates them (``'ghp_' + 'abc'``)."""

from __future__ import annotations

from collections.abc import Iterator

# The patterns below are compiled on first use: importing this module on the hook path compiles
# none, and a text with no escape compiles no escape pattern.
from loopx_git.safety.decode.view import MAX_REGION, Builder, View, is_escaped
from loopx_git.safety.rule import lazy_pattern

# --- string literals joined by code ----------------------------------------------------------------

_JOIN = lazy_pattern(r"""["'](?:[ \t]*(?:\+|\.|\|\|)[ \t]*(?:\\?\r?\n[ \t]*)?|[ \t]*\\?\r?\n[ \t]*|[ \t]+)(?=["'])""")
"""Between two string literals: `+` (Python, JS, Java), `.` (PHP), `||` (SQL), or only a line break
or blanks (implicit concatenation). Starts at the closing quote of the first: a fast search."""
MAX_LITERAL = 4096
"""The longest literal joined: looking further for a quote would make a long line quadratic."""
CONTEXT = 256
"""Characters of the line kept before the first literal and after the last: the key a value is
assigned to (`password: "…" + "…"`) is what a rule needs to see."""


_MAX_HOPS = 64
"""Escaped quotes skipped at most while looking for the quote that opens or closes a literal."""


def _opening(text: str, end: int) -> int | None:
    """Where the literal whose closing quote is at ``end - 1`` opens: the nearest unescaped same
    quote on its line, at most ``MAX_LITERAL`` before. ``rfind`` jumps from quote to quote, so this
    costs the quotes it passes, not the characters."""
    close = end - 1
    quote = text[close]
    if is_escaped(text, close):
        return None
    low = text.rfind("\n", max(0, close - MAX_LITERAL), close) + 1 or max(0, close - MAX_LITERAL)
    at = close
    for _ in range(_MAX_HOPS):
        at = text.rfind(quote, low, at)
        if at < 0:
            return None
        if not is_escaped(text, at):
            return at
    return None


def _closing(text: str, start: int) -> int | None:
    """One past the quote closing the literal opened at ``start``, on its line, at most
    ``MAX_LITERAL`` after."""
    quote = text[start]
    if is_escaped(text, start):
        return None
    high = min(len(text), start + 1 + MAX_LITERAL)
    newline = text.find("\n", start, high)
    high = high if newline < 0 else newline
    at = start
    for _ in range(_MAX_HOPS):
        at = text.find(quote, at + 1, high)
        if at < 0:
            return None
        if not is_escaped(text, at):
            return at + 1
    return None


def split_literals(text: str) -> Iterator[View]:
    if '"' not in text and "'" not in text:
        return
    chain: list[tuple[int, int]] = []  # the literals of the current chain: (open quote, one past close)
    for m in _JOIN.finditer(text):
        left_end, right_start = m.start() + 1, m.end()
        if chain and chain[-1][1] == left_end:
            left = chain[-1]
        else:
            if len(chain) >= 2:
                yield _joined(text, chain)
            opened = _opening(text, left_end)
            if opened is None:
                chain = []
                continue
            left = (opened, left_end)
            chain = [left]
        closed = _closing(text, right_start)
        if closed is None or closed - chain[0][0] > MAX_REGION:
            if len(chain) >= 2:
                yield _joined(text, chain)
            chain = []
            continue
        chain.append((right_start, closed))
    if len(chain) >= 2:
        yield _joined(text, chain)


def _joined(text: str, chain: list[tuple[int, int]]) -> View:
    """The literals' contents joined into one literal, with up to ``CONTEXT`` characters of the
    line before the first (its opening quote included) and after the last."""
    first, last = chain[0][0], chain[-1][1]
    line_start = text.rfind("\n", 0, first) + 1
    line_end = text.find("\n", last)
    line_end = len(text) if line_end < 0 else line_end
    out = Builder(0)
    out.copy(text, max(line_start, first - CONTEXT), first + 1)
    for opened, closed in chain:
        out.copy(text, opened + 1, closed - 1)
    out.copy(text, last - 1, min(line_end, last + CONTEXT))
    return out.view()

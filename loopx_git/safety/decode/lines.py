"""Lines continued by a backslash at their end, or by a YAML block scalar, read joined."""

from __future__ import annotations

import re
from collections.abc import Iterator
from heapq import merge

# The patterns below are compiled on first use: importing this module on the hook path compiles
# none, and a text with no escape compiles no escape pattern.
from loopx_git.safety.decode.view import MAX_REGION, Builder, View, line_region, regions
from loopx_git.safety.rule import lazy_pattern

# --- continued lines: a backslash at the end of a line, a YAML block scalar ----------------------

_CONTINUATION = lazy_pattern(r"\\\r?\n[ \t]*")
_INDICATOR = r"[ \t]*([|>])(?:[+-][0-9]?|[0-9][+-]?)?[ \t]*(?:#[^\n]*)?\r?\n"
_KEYED_BLOCK = lazy_pattern(":" + _INDICATOR)
"""``key: |``, ``key: >2-`` ending a line."""
_ITEM_BLOCK = lazy_pattern("-" + _INDICATOR)
"""``- >-`` ending a line (a sequence item), when nothing but blanks comes before the dash. Two
patterns that each start with one character are searched for seven times faster than one that
starts with either."""


def _block_heads(text: str) -> Iterator[tuple[int, str, int]]:
    """``(indentation, indicator, where the block's lines start)`` of every block scalar of a key
    or a sequence item (indented as its dash)."""
    found = merge(_KEYED_BLOCK.finditer(text), _ITEM_BLOCK.finditer(text), key=lambda m: m.start())
    for m in found:
        line_start = text.rfind("\n", 0, m.start()) + 1
        lead = text[line_start : m.start()].expandtabs()
        if m.group()[0] == "-" and lead.strip(" "):
            continue  # `a->` ending a line is no sequence item
        yield len(lead) - len(lead.lstrip(" ")), m.group(1), m.end()


def continued(text: str) -> Iterator[View]:
    """Lines continued by a backslash, joined as YAML's double-quoted scalars join them (the next
    line's indentation dropped) and, where there is indentation, also as a shell joins them (kept:
    ``--token \\`` then an indented value is two words)."""
    if "\\\n" not in text and "\\\r\n" not in text:
        return
    for start, end in regions(text, _CONTINUATION.finditer(text), _joined_lines):
        region = text[start:end]
        joins = list(_CONTINUATION.finditer(region))
        indented = any(m.group().endswith((" ", "\t")) for m in joins)
        for keep_indent in (False, True) if indented else (False,):
            out = Builder(start)
            at = 0
            for m in joins:
                out.copy(region, at, m.start())
                at = m.start() + len(m.group().rstrip(" \t")) if keep_indent else m.end()
            out.copy(region, at, len(region))
            yield out.view()


_CONTINUED_CONTEXT = 1024
"""Characters of the text on each side of a continued line that its view also holds: a value
continued in the middle of a multi-line block (a key file) is found with the rest of the block."""


def _joined_lines(text: str, m: re.Match) -> tuple[int, int]:
    return line_region(text, max(0, m.start() - _CONTINUED_CONTEXT), min(len(text), m.end() + _CONTINUED_CONTEXT))


_TOKEN_CHAR = lazy_pattern(r"[A-Za-z0-9+/=_.~%-]")
"""A character a token is made of: a line break between two of them may cut one in two."""


def yaml_blocks(text: str) -> Iterator[View]:
    """The value of each YAML block scalar of two or more lines, as YAML reads it: the indentation
    removed, and for a folded one (``>``) the lines joined by a space — so that a key and its value
    written over several lines meet on one. And the same lines glued with nothing between them: a
    value cut in two over a line break (``token: >-`` then its halves) is whole there, as whoever
    wrote it meant it to be read."""
    if "|" not in text and ">" not in text:
        return
    for indent, indicator, first in _block_heads(text):
        joiner = " " if indicator == ">" else "\n"
        out, glued = Builder(), Builder()
        lines = 0
        cuts = 0
        last = ""
        at = first
        while at < len(text) and at - first < MAX_REGION:
            line_end = text.find("\n", at)
            line_end = len(text) if line_end < 0 else line_end
            line = text[at:line_end].rstrip("\r")
            body = line.lstrip(" \t")
            if body and len(line) - len(body) <= indent:
                break  # the block ends at the first line not indented deeper than its key
            if body:
                if lines:
                    out.put(joiner, at - 1, at)  # the line break the joiner stands for
                    if _TOKEN_CHAR.match(last) and _TOKEN_CHAR.match(body[0]):
                        cuts += 1  # glued: no joiner
                    else:
                        glued.put(joiner, at - 1, at)
                out.copy(text, at + len(line) - len(body), at + len(line))
                glued.copy(text, at + len(line) - len(body), at + len(line))
                last = body[-1]
                lines += 1
            at = line_end + 1
        if lines >= 2:
            yield out.view()
            if cuts:  # else it reads as the view above
                yield glued.view()._replace(fallback=True)

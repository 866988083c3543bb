"""A decoded view of a text, mapped back to the original, and the bounded regions decoders read."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from typing import NamedTuple

# The patterns below are compiled on first use: importing this module on the hook path compiles
# none, and a text with no escape compiles no escape pattern.

MAX_REGION = 65_536
MAX_TOTAL = 4_000_000
MAX_DEPTH = 2
MIN_BLOB = 20
"""Shortest base64 or hex run worth decoding: shorter ones hold no credential worth the cost."""


class View(NamedTuple):
    """Decoded ``text``, with where its characters came from: ``segments`` are
    ``(view_start, view_end, origin_start, origin_end, copied)`` in view order — a copied segment maps
    character for character, a decoded one maps each of its characters to the whole encoded span.
    Positions are in ``parent``'s text when there is one (a view of a view), else in the original."""

    text: str
    segments: tuple[tuple[int, int, int, int, bool], ...]
    parent: View | None = None
    fallback: bool = False
    """A last reading (lines glued with nothing between them): what it finds counts only where no
    other reading of the text found anything, so it never hides a more exact finding."""

    def pieces(self, start: int, end: int) -> tuple[tuple[int, int], ...]:
        """The spans of the original that view characters ``[start, end)`` came from, merged where
        they touch: one span for a value written whole, several for one written in pieces."""
        keys = [seg[0] for seg in self.segments]
        spans: list[tuple[int, int]] = []
        for vs, ve, os_, oe, copied in self.segments[max(0, bisect_right(keys, start) - 1) :]:
            if vs >= end:
                break
            if ve <= start:
                continue
            spans.append((os_ + max(start, vs) - vs, os_ + min(end, ve) - vs) if copied else (os_, oe))
        if self.parent is not None:
            spans = [p for s, e in spans for p in self.parent.pieces(s, e)]
        merged: list[list[int]] = []
        for s, e in spans:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        return tuple((s, e) for s, e in merged)


class Builder:
    """A view under construction: text copied through or decoded, with where each part came from."""

    def __init__(self, base: int = 0):
        self.base = base
        self.parts: list[str] = []
        self.segments: list[tuple[int, int, int, int, bool]] = []
        self.size = 0

    def copy(self, text: str, start: int, end: int) -> None:
        if end > start:
            self._add(text[start:end], start, end, True)

    def put(self, decoded: str, start: int, end: int) -> None:
        if decoded:
            self._add(decoded, start, end, False)

    def _add(self, part: str, start: int, end: int, copied: bool) -> None:
        self.parts.append(part)
        self.segments.append((self.size, self.size + len(part), self.base + start, self.base + end, copied))
        self.size += len(part)

    def view(self) -> View:
        return View("".join(self.parts), tuple(self.segments))


def line_region(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole lines holding ``[start, end)``, without the last line break."""
    stop = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if stop < 0 else stop


REACH = 4096
"""How far on each side of an encoded sequence its region reaches (within its line, or URL part)."""


def regions(text: str, found: Iterator[re.Match], around) -> Iterator[tuple[int, int]]:
    """Regions to decode: for each match not inside the region before, ``around(text, match)``
    clipped to ``REACH`` on each side, merged while the merged region stays under ``MAX_REGION``.
    Every match is covered once, so a long line costs what its length costs, not its square."""
    start = end = -1
    for m in found:
        if m.start() < end:
            continue
        s, e = around(text, m)
        s, e = max(s, m.start() - REACH, end), min(e, m.end() + REACH)
        if s <= end and e - start <= MAX_REGION:
            end = e
            continue
        if end > start:
            yield start, end
        while e - s > MAX_REGION:  # one encoded run longer than a region: decoded in pieces
            yield s, s + MAX_REGION
            s += MAX_REGION
        start, end = s, e
    if end > start:
        yield start, end


def is_escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` is escaped (an odd number of backslashes before it; a run
    longer than 256 is read as its last 256)."""
    i = at
    stop = max(0, at - 256)
    while i > stop and text[i - 1] == "\\":
        i -= 1
    return (at - i) % 2 == 1

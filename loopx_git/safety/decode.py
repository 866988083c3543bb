"""Decoded views of a text, so that rules also see a secret that is written encoded or in pieces:
JSON ``\\uXXXX`` and ``\\/`` escapes, percent-encoding, lines joined where a backslash or a YAML
block scalar continues them, string literals joined where code concatenates them, and base64 or
hex blobs that decode to printable text.

A view knows, for each of its characters, the span of the original text it came from, so that a
finding in it is reported at its place in the original and ``redact`` replaces every original
piece of it. Decoding is bounded: only regions that hold an encoding are decoded, a region is at
most ``MAX_REGION`` characters, all views of one text together at most ``MAX_TOTAL``, and a view
is decoded again (base64 inside a JSON escape, say) at most ``MAX_DEPTH`` times.
"""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_right
from collections.abc import Iterator
from heapq import merge
from typing import NamedTuple

from loopx_git.safety.rule import lazy_pattern

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


class _Builder:
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


def _line_region(text: str, start: int, end: int) -> tuple[int, int]:
    """The whole lines holding ``[start, end)``, without the last line break."""
    stop = text.find("\n", end)
    return text.rfind("\n", 0, start) + 1, len(text) if stop < 0 else stop


REACH = 4096
"""How far on each side of an encoded sequence its region reaches (within its line, or URL part)."""


def _regions(text: str, found: Iterator[re.Match], around) -> Iterator[tuple[int, int]]:
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


# --- JSON string escapes ------------------------------------------------------------------------

_JSON_ESCAPE = lazy_pattern(r"\\u[0-9a-fA-F]{4}|\\/")
_JSON_PAIR = lazy_pattern(r"(?i)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|\\u([0-9a-f]{4})|\\/")


def _json_escapes(text: str) -> Iterator[View]:
    if "\\u" not in text and "\\/" not in text:
        return
    for start, end in _regions(text, _JSON_ESCAPE.finditer(text), lambda t, m: _line_region(t, m.start(), m.end())):
        out = _Builder(start)
        region = text[start:end]
        at = 0
        for m in _JSON_PAIR.finditer(region):
            if _escaped(region, m.start()):
                continue  # `\\u0041` is a backslash and the letters u0041, not an escape
            out.copy(region, at, m.start())
            if m.group(1):
                high, low = int(m.group(1), 16), int(m.group(2), 16)
                decoded = chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
            elif m.group(3):
                decoded = chr(int(m.group(3), 16))
            else:
                decoded = "/"
            out.put(decoded, m.start(), m.end())
            at = m.end()
        out.copy(region, at, len(region))
        yield out.view()


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` is escaped (an odd number of backslashes before it; a run
    longer than 256 is read as its last 256)."""
    i = at
    stop = max(0, at - 256)
    while i > stop and text[i - 1] == "\\":
        i -= 1
    return (at - i) % 2 == 1


# --- percent-encoding ----------------------------------------------------------------------------

_PERCENT = lazy_pattern(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*")  # a literal first: a fast search
_URL_STOP = " \t\r\n\"'`<>()[]{}&?#"
"""Where the encoded component ends: also at a query's own separators, so that one parameter's
decoded value does not run into the next."""


def _url_token(text: str, m: re.Match) -> tuple[int, int]:
    """The URL part around ``m``, up to ``REACH`` each way (``_regions`` clips it there anyway)."""
    s, e = m.start(), m.end()
    low, high = max(0, s - REACH), min(len(text), e + REACH)
    while s > low and text[s - 1] not in _URL_STOP:
        s -= 1
    while e < high and text[e] not in _URL_STOP:
        e += 1
    return s, e


def _percent(text: str) -> Iterator[View]:
    if "%" not in text:
        return
    for start, end in _regions(text, _PERCENT.finditer(text), _url_token):
        region = text[start:end]
        out = _Builder(start)
        at = 0
        for m in _PERCENT.finditer(region):
            out.copy(region, at, m.start())
            raw = bytes.fromhex(m.group().replace("%", ""))
            decoded = raw.decode("utf-8", "replace")
            if len(decoded) == len(raw):  # one character per escape: each maps to its own `%XX`
                for k, ch in enumerate(decoded):
                    out.put(ch, m.start() + 3 * k, m.start() + 3 * k + 3)
            else:
                out.put(decoded, m.start(), m.end())
            at = m.end()
        out.copy(region, at, len(region))
        yield out.view()


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


def _continued(text: str) -> Iterator[View]:
    """Lines continued by a backslash, joined as YAML's double-quoted scalars join them (the next
    line's indentation dropped) and, where there is indentation, also as a shell joins them (kept:
    ``--token \\`` then an indented value is two words)."""
    if "\\\n" not in text and "\\\r\n" not in text:
        return
    for start, end in _regions(text, _CONTINUATION.finditer(text), _joined_lines):
        region = text[start:end]
        joins = list(_CONTINUATION.finditer(region))
        indented = any(m.group().endswith((" ", "\t")) for m in joins)
        for keep_indent in (False, True) if indented else (False,):
            out = _Builder(start)
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
    return _line_region(text, max(0, m.start() - _CONTINUED_CONTEXT), min(len(text), m.end() + _CONTINUED_CONTEXT))


_TOKEN_CHAR = lazy_pattern(r"[A-Za-z0-9+/=_.~%-]")
"""A character a token is made of: a line break between two of them may cut one in two."""


def _yaml_blocks(text: str) -> Iterator[View]:
    """The value of each YAML block scalar of two or more lines, as YAML reads it: the indentation
    removed, and for a folded one (``>``) the lines joined by a space — so that a key and its value
    written over several lines meet on one. And the same lines glued with nothing between them: a
    value cut in two over a line break (``token: >-`` then its halves) is whole there, as whoever
    wrote it meant it to be read."""
    if "|" not in text and ">" not in text:
        return
    for indent, indicator, first in _block_heads(text):
        joiner = " " if indicator == ">" else "\n"
        out, glued = _Builder(), _Builder()
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
    if _escaped(text, close):
        return None
    low = text.rfind("\n", max(0, close - MAX_LITERAL), close) + 1 or max(0, close - MAX_LITERAL)
    at = close
    for _ in range(_MAX_HOPS):
        at = text.rfind(quote, low, at)
        if at < 0:
            return None
        if not _escaped(text, at):
            return at
    return None


def _closing(text: str, start: int) -> int | None:
    """One past the quote closing the literal opened at ``start``, on its line, at most
    ``MAX_LITERAL`` after."""
    quote = text[start]
    if _escaped(text, start):
        return None
    high = min(len(text), start + 1 + MAX_LITERAL)
    newline = text.find("\n", start, high)
    high = high if newline < 0 else newline
    at = start
    for _ in range(_MAX_HOPS):
        at = text.find(quote, at + 1, high)
        if at < 0:
            return None
        if not _escaped(text, at):
            return at + 1
    return None


def _split_literals(text: str) -> Iterator[View]:
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
    out = _Builder(0)
    out.copy(text, max(line_start, first - CONTEXT), first + 1)
    for opened, closed in chain:
        out.copy(text, opened + 1, closed - 1)
    out.copy(text, last - 1, min(line_end, last + CONTEXT))
    return out.view()


# --- base64 and hex blobs --------------------------------------------------------------------------


def _printable(data: bytes) -> str | None:
    """``data`` as text if it is text: UTF-8, and no control characters but tab and line breaks."""
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(decoded) < 12 or any((c < " " and c not in "\t\r\n") or c == "\x7f" for c in decoded):
        return None
    return decoded


_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
_TO_SPACE = bytes(c if c in _ALPHABET else 32 for c in range(256))
_HEXDIGITS = b"0123456789abcdefABCDEF"


_LONG_RUN = lazy_pattern(rb" ([^ ]{%d,}+)" % MIN_BLOB)
"""A run at least ``MIN_BLOB`` long in the translated bytes: a space first is a fast search."""


def _blob_runs(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, run) of each run of base64 (or base64url) characters at least ``MIN_BLOB`` long.
    Found on the UTF-8 bytes with every other byte turned into a space — passes at the speed of C —
    then located in ``text`` in order (a long run cannot hide inside shorter ones)."""
    data = b" " + text.encode("utf-8", "surrogatepass").translate(_TO_SPACE)
    ascii_text = text.isascii()
    cursor = 0
    for m in _LONG_RUN.finditer(data):
        run = m.group(1).decode("ascii")
        start = m.start(1) - 1 if ascii_text else text.find(run, cursor)
        end = start + len(run)
        cursor = end
        yield start, end, run


def _blob_text(run: str) -> tuple[str, int, int] | None:
    """What a base64, base64url or hex ``run`` decodes to if that is printable text, with how many
    bytes each group of how many characters of the run encodes."""
    if _all_hex(run):
        decoded = _printable(bytes.fromhex(run)) if len(run) % 2 == 0 else None
        return None if decoded is None else (decoded, 1, 2)
    if run.islower() or run.isupper() or run.isdigit():
        return None  # base64 of text mixes cases; a run in one case is a name or a word
    urlsafe = "-" in run or "_" in run
    if urlsafe and ("+" in run or "/" in run):
        return None  # two alphabets: a path or a name, not an encoding
    try:
        data = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_" if urlsafe else None, validate=True)
    except (binascii.Error, ValueError):
        return None
    decoded = _printable(data)
    return None if decoded is None else (decoded, 3, 4)


def _blob_candidates(run: str) -> Iterator[tuple[int, str]]:
    """(offset, part) of ``run`` that may be the blob: the whole run; the part after its last
    ``/``, ``_`` or ``-`` (a blob at the end of a path or after a name: ``v1/<b64>``, ``cfg_<hex>``);
    the run without its first one to three characters (a blob glued to a word, ``0x<hex>``); odd
    hex without its first or last digit. Only a run that mixes cases (base64 of text does) or holds
    hex is worth more than one try: names and ids are most runs."""
    yield 0, run
    mixed = not _one_case(run)
    hexish = _all_hex(run[-MIN_BLOB:])  # ends in hex: `cfg_<hex>`, `0x<hex>`
    if not (mixed or hexish):
        return
    cut = max(run.rfind("/"), run.rfind("_"), run.rfind("-")) + 1
    if cut > 0 and len(run) - cut >= MIN_BLOB:
        yield cut, run[cut:]
    for k in (1, 2, 3):
        if len(run) - k >= MIN_BLOB:
            yield k, run[k:]
    if len(run) % 2 and _all_hex(run[:-1]):
        yield 0, run[:-1]


_HEX_CHARS = _HEXDIGITS.decode()


def _one_case(run: str) -> bool:
    return run.islower() or run.isupper()


def _all_hex(run: str) -> bool:
    """Every character a hex digit (``strip`` runs in C; ``translate`` with a table looks each
    character up in a dict, and this is asked of every run in every text)."""
    return not run.strip(_HEX_CHARS)


_WRAP = (64, 76)
"""Line lengths base64 is wrapped at (PEM, MIME and the ``base64`` tool): such runs on
consecutive lines are one blob."""


def _wrapped(text: str, runs: Iterator[tuple[int, int, str]]) -> Iterator[tuple[list[tuple[int, int]], str]]:
    """Runs joined where base64 was wrapped: (pieces of ``text`` as (start, length), joined run)."""
    pieces: list[tuple[int, int]] = []
    joined = ""
    last_end = -1
    for start, end, run in runs:
        if pieces and pieces[-1][1] in _WRAP and text[last_end:start] in ("\n", "\r\n"):
            pieces.append((start, len(run)))
            joined += run
        else:
            if pieces:
                yield pieces, joined
            pieces, joined = [(start, len(run))], run
        last_end = end
    if pieces:
        yield pieces, joined


def _position(pieces: list[tuple[int, int]], offset: int) -> int:
    """Where character ``offset`` of a joined run sits in the text."""
    for start, length in pieces:
        if offset < length:
            return start + offset
        offset -= length
    start, length = pieces[-1]
    return start + length + offset


def _blobs(text: str) -> Iterator[View]:
    for pieces, joined in _wrapped(text, _blob_runs(text)):
        if len(joined) > MAX_REGION or (_one_case(joined) and not _all_hex(joined[-MIN_BLOB:])):
            continue  # a name (`raw_session_transcript_recorded`): what _blob_candidates would refuse
        for offset, part in _blob_candidates(joined):
            found = _blob_text(part)
            if found is not None:
                yield _blob_view(text, pieces, offset, part, found)
                break


def _blob_view(text: str, pieces: list[tuple[int, int]], offset: int, part: str, found: tuple[str, int, int]) -> View:
    """Each decoded character mapped to the groups of the run that encode its bytes, so that a
    value found inside a blob is placed (and redacted) there, not over the whole blob."""
    decoded, group_bytes, group_chars = found
    end = offset + len(part)
    stop = _position(pieces, end - 1) + 1
    while stop < len(text) and text[stop] == "=" and end - offset < len(part) + 2:
        stop += 1  # the padding belongs to the blob
        end += 1
    out = _Builder()
    at = 0
    for ch in decoded:
        size = len(ch.encode())
        first = offset + at // group_bytes * group_chars
        last = min(offset + (at + size - 1) // group_bytes * group_chars + group_chars, end) - 1
        out.put(ch, _position(pieces, first), min(_position(pieces, last) + 1, stop))
        at += size
    return out.view()


# --- characters that print as nothing ---------------------------------------------------------------

_INVISIBLE_CHARS = "\u00ad\u034f\u180e\u200b-\u200d\u2060-\u2064\ufeff"
_INVISIBLE = lazy_pattern(f"[{_INVISIBLE_CHARS}]+")
"""Zero-width spaces and joiners, soft hyphens and the like: written inside a token they hide it
from a rule and print as nothing."""
_ONE_INVISIBLE = lazy_pattern(f"[{_INVISIBLE_CHARS}]")
"""One of them: searched for over a whole text (three times faster than the run above)."""


def _invisible(text: str) -> Iterator[View]:
    """The lines holding invisible characters, without them (a line at a time: a token split by
    one is within its line, and a text with one such character is not read twice over)."""
    if text.isascii():
        return
    around = lambda t, m: _line_region(t, m.start(), m.end())  # noqa: E731
    for start, end in _regions(text, _ONE_INVISIBLE.finditer(text), around):
        out = _Builder(start)
        region = text[start:end]
        at = 0
        for m in _INVISIBLE.finditer(region):
            out.copy(region, at, m.start())
            at = m.end()
        out.copy(region, at, len(region))
        yield out.view()


DECODERS = (_json_escapes, _percent, _continued, _yaml_blocks, _split_literals, _blobs, _invisible)


def views(text: str, depth: int = MAX_DEPTH) -> Iterator[View]:
    """Every decoded view of ``text`` (and of those views, ``depth`` levels down), each mapped to
    the original text, until ``MAX_TOTAL`` characters more than eight times the text's own length
    have been decoded (regions are bounded, so ordinary text never gets near it)."""
    budget = MAX_TOTAL + 8 * len(text)
    for view in _views(text, depth):
        budget -= len(view.text)
        if budget < 0:
            return
        yield view


_NESTING = (_json_escapes, _percent, _blobs)
"""Decoders whose output may hold another encoding (base64 in a JSON escape, a percent-encoded
value in base64): their views are decoded again. Joining lines or literals yields no new encoding."""


def _views(text: str, depth: int) -> Iterator[View]:
    for decoder in DECODERS:
        for view in decoder(text):
            if view.text == text:
                continue
            yield view
            if depth > 1 and decoder in _NESTING:
                for inner in _views(view.text, depth - 1):
                    yield _through(view, inner)


def _through(outer: View, inner: View) -> View:
    """``inner`` (a view of ``outer``'s text) as a view of the original."""
    return View(inner.text, inner.segments, outer if inner.parent is None else _through(outer, inner.parent))

"""Base64 and hex blobs that decode to printable text."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator

# The patterns below are compiled on first use: importing this module on the hook path compiles
# none, and a text with no escape compiles no escape pattern.
from loopx_git.safety.decode.view import MAX_REGION, MIN_BLOB, Builder, View
from loopx_git.safety.rule import lazy_pattern

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


def blobs(text: str) -> Iterator[View]:
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
    out = Builder()
    at = 0
    for ch in decoded:
        size = len(ch.encode())
        first = offset + at // group_bytes * group_chars
        last = min(offset + (at + size - 1) // group_bytes * group_chars + group_chars, end) - 1
        out.put(ch, _position(pieces, first), min(_position(pieces, last) + 1, stop))
        at += size
    return out.view()

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

from collections.abc import Iterator

from loopx_git.safety.decode.encoded import blobs
from loopx_git.safety.decode.escaped import json_escapes, percent
from loopx_git.safety.decode.lines import continued, yaml_blocks
from loopx_git.safety.decode.literals import split_literals

# The patterns below are compiled on first use: importing this module on the hook path compiles
# none, and a text with no escape compiles no escape pattern.
from loopx_git.safety.decode.view import MAX_DEPTH, MAX_TOTAL, Builder, View, line_region, regions
from loopx_git.safety.rule import lazy_pattern

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
    around = lambda t, m: line_region(t, m.start(), m.end())  # noqa: E731
    for start, end in regions(text, _ONE_INVISIBLE.finditer(text), around):
        out = Builder(start)
        region = text[start:end]
        at = 0
        for m in _INVISIBLE.finditer(region):
            out.copy(region, at, m.start())
            at = m.end()
        out.copy(region, at, len(region))
        yield out.view()


DECODERS = (json_escapes, percent, continued, yaml_blocks, split_literals, blobs, _invisible)


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


_NESTING = (json_escapes, percent, blobs)
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

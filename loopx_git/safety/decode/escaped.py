"""Escapes a value may be written in: JSON ``\\uXXXX`` and ``\\/``, and percent-encoding."""

from __future__ import annotations

import re
from collections.abc import Iterator

# The patterns below are compiled on first use: importing this module on the hook path compiles
# none, and a text with no escape compiles no escape pattern.
from loopx_git.safety.decode.view import REACH, Builder, View, is_escaped, line_region, regions
from loopx_git.safety.rule import lazy_pattern

# --- JSON string escapes ------------------------------------------------------------------------

_JSON_ESCAPE = lazy_pattern(r"\\u[0-9a-fA-F]{4}|\\/")
_JSON_PAIR = lazy_pattern(r"(?i)\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|\\u([0-9a-f]{4})|\\/")


def json_escapes(text: str) -> Iterator[View]:
    if "\\u" not in text and "\\/" not in text:
        return
    for start, end in regions(text, _JSON_ESCAPE.finditer(text), lambda t, m: line_region(t, m.start(), m.end())):
        out = Builder(start)
        region = text[start:end]
        at = 0
        for m in _JSON_PAIR.finditer(region):
            if is_escaped(region, m.start()):
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


# --- percent-encoding ----------------------------------------------------------------------------

_PERCENT = lazy_pattern(r"%[0-9A-Fa-f]{2}(?:%[0-9A-Fa-f]{2})*")  # a literal first: a fast search
_URL_STOP = " \t\r\n\"'`<>()[]{}&?#"
"""Where the encoded component ends: also at a query's own separators, so that one parameter's
decoded value does not run into the next."""


def _url_token(text: str, m: re.Match) -> tuple[int, int]:
    """The URL part around ``m``, up to ``REACH`` each way (``regions`` clips it there anyway)."""
    s, e = m.start(), m.end()
    low, high = max(0, s - REACH), min(len(text), e + REACH)
    while s > low and text[s - 1] not in _URL_STOP:
        s -= 1
    while e < high and text[e] not in _URL_STOP:
        e += 1
    return s, e


def percent(text: str) -> Iterator[View]:
    if "%" not in text:
        return
    for start, end in regions(text, _PERCENT.finditer(text), _url_token):
        region = text[start:end]
        out = Builder(start)
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

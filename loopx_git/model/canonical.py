"""Canonical encodings: the bytes that go on the branch and the fingerprints over them."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def pretty_json(data: Any) -> bytes:
    """The on-branch form of a record: sorted keys, 2-space indent, trailing newline."""
    return (json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def compact_json(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def fingerprint(data: Any) -> str:
    """sha256 over the canonical compact JSON of a record."""
    return hashlib.sha256(compact_json(data)).hexdigest()


_CONTROL: dict[int, str] = {
    code: f"\\x{code:02x}" for code in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]
}
_INVISIBLE = [
    0x00AD,  # soft hyphen
    0x034F,  # combining grapheme joiner
    0x061C,  # Arabic letter mark
    0x115F,  # Hangul choseong filler
    0x1160,  # Hangul jungseong filler
    0x180E,  # Mongolian vowel separator
    *range(0x200B, 0x2010),  # zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
    *range(0x202A, 0x202F),  # bidirectional embeddings and overrides (U+202E)
    *range(0x2060, 0x2065),  # word joiner, invisible operators
    *range(0x2066, 0x206A),  # bidirectional isolates
    0x3164,  # Hangul filler
    0xFFA0,  # halfwidth Hangul filler
    0xFEFF,  # zero-width no-break space, the byte-order mark
    *range(0xE0000, 0xE0080),  # tags: invisible ASCII, the way text is smuggled past a reader to a model
]
"""Characters that print as nothing yet change what is shown or read: the bidirectional overrides
and isolates (U+202E turns ``exe.txt`` around), zero-width spaces and joiners, fillers, line
separators, and the tag characters that spell text no one sees."""
_CONTROL.update({code: f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}" for code in _INVISIBLE})


def visible(text: str) -> str:
    """``text`` with control characters (tab and newline kept) shown as ``\\xNN``, and the invisible
    ones that reorder or hide text (bidi overrides, zero-width characters) as ``\\uNNNN``: text
    from the branch, a hook, a server or a child process cannot move the cursor, colour the
    terminal or show something other than what it holds."""
    return text.translate(_CONTROL)


def printable(text: str) -> str:
    """``text`` with undecodable bytes shown as ``\\udcff`` escapes: safe to put in a message."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


MAX_INPUT_DEPTH = 64
"""How deeply a JSON document given as input (a packet, a conformance case) may nest."""


def undecodable_field(value: Any, path: str = "") -> str | None:
    """The dotted path of the first string (or key) in ``value`` that is not UTF-8 text: the lone
    surrogates Python makes of undecodable bytes (an argument in another encoding) or that a JSON
    ``\\ud800`` escape decodes to. None when every string is clean. Walks records (pydantic models)
    too, without recursion, so a deeply nested input cannot exhaust the stack."""
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where
            continue
        if hasattr(type(item), "model_fields") and hasattr(item, "__dict__"):  # a record
            item = item.__dict__
        if isinstance(item, dict):
            children = list(item.items())
        elif isinstance(item, (list, tuple)):
            children = list(enumerate(item))
        else:
            continue
        for key, child in reversed(children):
            name = printable(key) if isinstance(key, str) else str(key)
            at = f"{where}.{name}" if where else name
            if isinstance(key, str) and _SURROGATE.search(key):
                return at
            stack.append((at, child))
    return None


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in item)
    return deepest


def parse_json(data: bytes, *, field: str, source: str) -> Any:
    """A JSON document given as input, or a ValidationError naming ``field``: not UTF-8, not JSON,
    nested past MAX_INPUT_DEPTH, a number past Python's int conversion limit, or a string that is
    not text. Never a RecursionError or a bare ValueError."""
    from loopx_git.errors import ValidationError

    def refuse(problem: str) -> ValidationError:
        return ValidationError(f"field '{field}': {source} {problem}", code="invalid-field")

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refuse(f"is not UTF-8 (byte {exc.start}); rule: JSON input is UTF-8 text") from None
    try:
        document = json.loads(text)
    except RecursionError:
        raise refuse(f"nests too deeply to read; rule: JSON input nests at most {MAX_INPUT_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise refuse(f"is not JSON ({exc})") from None
    except ValueError:  # an integer past the int conversion limit (4300 digits)
        raise refuse("holds a number too long to read; rule: numbers in JSON input have at most 4300 digits") from None
    if _depth(document) > MAX_INPUT_DEPTH:
        raise refuse(
            f"nests more than {MAX_INPUT_DEPTH} levels deep; rule: JSON input nests at most {MAX_INPUT_DEPTH} levels"
        )
    where = undecodable_field(document)
    if where is not None:
        raise refuse(
            f"holds a string that is not text (a lone surrogate escape) at '{where or '(top)'}'; rule: JSON "
            "input is Unicode text"
        )
    return document

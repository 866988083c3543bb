"""The last bytes of a stream too long to keep whole, cut so that redaction still sees every secret
in them whole.

Redaction finds a secret by its shape: the end of a token whose start was cut off, or a key's body
without its ``-----BEGIN`` line, is no longer a secret to the rules, and would pass unredacted. So a
window keeps whole lines only: the line it starts inside is dropped (a marker says how much went),
and so is a key body whose header went with it, and a last line still being written.
"""

from __future__ import annotations

import re

_KEY_EDGE = re.compile(rb"-----(BEGIN|END)[ A-Z0-9]{0,30}PRIVATE KEY")
_KEY_BODY = re.compile(rb"(?:[ \t]*[A-Za-z0-9+/=]+[ \t]*\r?\n)+")


def cut_marker(size: int) -> str:
    return f"[cut: {size} bytes]"


def whole_lines(data: bytes, *, limit: int | None = None, dropped: int = 0, complete: bool = True) -> str:
    """``data``, the last bytes of a stream (``dropped`` bytes before them already gone), as text
    made of whole lines only, at most ``limit`` bytes of them. What was cut from the start is one
    ``[cut: N bytes]`` line; a line with no start in the window is all cut. ``complete=False``: the
    stream has not ended, and its last line (no newline yet) may still grow, so it is left out."""
    if limit is not None and len(data) > limit:
        dropped += len(data) - limit
        data = data[len(data) - limit :]
    if not complete:
        data = data[: data.rfind(b"\n") + 1]
    if not dropped:
        return data.decode("utf-8", "replace")
    start = data.find(b"\n") + 1
    if not start:  # no line starts in the window: none of it is kept
        return cut_marker(dropped + len(data))
    edge = _KEY_EDGE.search(data, start)
    if edge is not None and edge.group(1) == b"END":  # a key whose header was cut off: its body goes too
        start = data.find(b"\n", edge.end()) + 1 or len(data)
    else:  # a key body without a header or an end line
        body = _KEY_BODY.match(data, start)
        if body is not None:
            start = body.end()
    return cut_marker(dropped + start) + "\n" + data[start:].decode("utf-8", "replace")

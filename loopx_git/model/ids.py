"""Identifier and timestamp types shared by every record."""
from __future__ import annotations

import os
import re
import time
from datetime import datetime, timezone
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

# Opaque tokens, never paths: no '/', no leading '.', no spaces. Underscore is
# accepted because upstream LoopX records use it (todo_public_boundary_repair).
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
ID_RULE = "1-128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit"
_ID_RE = re.compile(ID_PATTERN)


def _check_id(value: str) -> str:
    if not _ID_RE.match(value):
        raise ValueError(f"{value!r} is not an id ({ID_RULE})")
    return value


Id = Annotated[str, AfterValidator(_check_id), WithJsonSchema({"type": "string", "pattern": ID_PATTERN})]

TIMESTAMP_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")


def _check_utc(value: str) -> str:
    if not TIMESTAMP_RE.match(value):
        raise ValueError(f"{value!r} is not a UTC timestamp like 2026-01-31T12:00:00Z")
    try:  # the constructor checks ranges, ten times cheaper than strptime on the fold's hot path
        datetime(int(value[0:4]), int(value[5:7]), int(value[8:10]), int(value[11:13]), int(value[14:16]), int(value[17:19]))
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a real date and time") from exc
    return value


UtcTimestamp = Annotated[
    str,
    AfterValidator(_check_utc),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": r"Z$"}),
]
"""RFC 3339 in UTC with a ``Z`` suffix; kept as text so records round-trip byte for byte."""


def format_utc(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now() -> str:
    return format_utc(datetime.now(timezone.utc))


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def _base32(number: int, length: int) -> str:
    out = []
    for _ in range(length):
        out.append(_CROCKFORD[number & 31])
        number >>= 5
    return "".join(reversed(out))


_last_ulid = [0, 0]  # (millis, random) of the last id made in this process


def new_ulid() -> str:
    """A ULID in lower-case Crockford base32: 48 bits of milliseconds, 80 random bits.

    Unique without coordination (clones write offline) and sortable by creation time; within one
    millisecond of one process the random part counts up, so ids made in a row sort in order.
    """
    millis = int(time.time() * 1000)
    rand = int.from_bytes(os.urandom(10), "big")
    if millis <= _last_ulid[0]:
        millis, rand = _last_ulid[0], _last_ulid[1] + 1
    _last_ulid[:] = [millis, rand]
    return _base32(millis, 10) + _base32(rand, 16)


def new_id(prefix: str) -> str:
    return f"{prefix}_{new_ulid()}"


def short_id(prefix: str) -> str:
    """A short random id for things people type (todo ids): 40 random bits."""
    return f"{prefix}-{_base32(int.from_bytes(os.urandom(5), 'big'), 8)}"

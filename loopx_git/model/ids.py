"""Identifier and timestamp types shared by every record."""

from __future__ import annotations

import os
import re
import time
from datetime import datetime, timezone
from typing import Annotated

from pydantic import StringConstraints

from loopx_git.model.patterns import ID_PATTERN as ID_PATTERN  # re-exported: records read the rule here
from loopx_git.model.patterns import ID_RULE as ID_RULE

# Field ranges are in the pattern so the check runs inside pydantic-core (it runs for every
# timestamp of every event on a cold fold); day-of-month is not checked against the month.
TIMESTAMP_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?Z$"
TIMESTAMP_RULE = "a UTC timestamp like 2026-01-31T12:00:00Z"
TIMESTAMP_RE = re.compile(TIMESTAMP_PATTERN)
"""Use with ``fullmatch``: in Python's ``re``, ``$`` also matches before a final newline (pydantic's
Rust engine reads ``$`` as the end of the text, so the ``pattern=`` constraints are exact)."""

PATTERN_RULES = {ID_PATTERN: ID_RULE, TIMESTAMP_PATTERN: TIMESTAMP_RULE}
"""What a pattern means, for error messages (pydantic would only quote the regex)."""

Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]

UtcTimestamp = Annotated[str, StringConstraints(pattern=TIMESTAMP_PATTERN)]
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

"""Canonical encodings: the bytes that go on the branch and the fingerprints over them."""
from __future__ import annotations

import hashlib
import json
from typing import Any


def pretty_json(data: Any) -> bytes:
    """The on-branch form of a record: sorted keys, 2-space indent, trailing newline."""
    return (json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def compact_json(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def fingerprint(data: Any) -> str:
    """sha256 over the canonical compact JSON of a record."""
    return hashlib.sha256(compact_json(data)).hexdigest()

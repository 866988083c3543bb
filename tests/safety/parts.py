"""Pieces planted values are assembled from at run time, so that no source file holds a
secret-shaped literal (the files pass the rules, and secret scanners elsewhere)."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def rand(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def cat(*parts: str) -> str:
    """Joins pieces so that no prefix a scanner knows appears whole in this source file."""
    return "".join(parts)


def pem(rng: random.Random, kind: str) -> str:
    body = "\n".join(rand(rng, 64, B64) for _ in range(4))
    label = f"{kind} PRIVATE KEY".strip()
    return cat("-----BEGIN ", label, "-----\n", body, "\n-----END ", label, "-----")


def jwt(rng: random.Random) -> str:
    """A signed token whose header is JSON naming its algorithm, as every real one is (the jwt rule
    decodes it); payload and signature random."""
    header = json.dumps({"alg": "HS256", "typ": "JWT", "kid": rand(rng, 20, URLSAFE)}, separators=(",", ":"))
    head = base64.urlsafe_b64encode(header.encode()).decode().rstrip("=")
    return cat(head, ".ey", "J", rand(rng, 30, URLSAFE), ".", rand(rng, 43, URLSAFE))


# One maker of a text holding one planted value.
Shape = Callable[[random.Random], str]

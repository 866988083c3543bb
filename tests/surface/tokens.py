"""One planted secret of each rule family, and the shapes a secret is handed to loopx in (issue 32):
as it is, with a word character glued before it, cut over a folded YAML scalar, and cut into two
literals joined with ``+``. Assembled at run time from a seeded generator: no source file holds a
secret-shaped literal.

Each shaped value knows its secret part (both halves of a cut one), written down here rather than
found by the scanner under test: ``leaked`` says which runs of ``PIECE`` characters of it a
command printed.
"""

from __future__ import annotations

import random
import string
from typing import NamedTuple

from loopx_git.safety.output import PIECE
from loopx_git.safety.scan import scan
from tests.safety.parts import B64, cat, rand
from tests.safety.shapes.hosting import mixed

_R = random.Random(32)
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def _family_tokens() -> dict[str, tuple[str, str]]:
    """Family -> (the value, its secret part)."""
    password = mixed(_R, 18)
    body = rand(_R, 64, B64)
    age, anthropic = rand(_R, 58, BECH32), mixed(_R, 40)
    # a vendor's prefix is public (`loopx safety rules` names AGE-SECRET-KEY-1 and sk-ant-api03): where
    # it is longer than a piece, the secret part is what follows it
    return {
        "keys": (cat("AGE-SECRET", "-KEY-1", age), age),
        "cloud": (cat("AK", "IA", rand(_R, 16, string.ascii_uppercase + string.digits)),) * 2,
        "hosting": (cat("gh", "p_", mixed(_R, 36)),) * 2,
        "saas": (cat("xo", "xb-", rand(_R, 10, string.digits), "-", rand(_R, 12, string.digits), "-", mixed(_R, 24)),)
        * 2,
        "payment": (cat("sk", "_live_", mixed(_R, 24)),) * 2,
        "ai": (cat("sk-", "ant-api03-", anthropic), anthropic),
        "generic": (cat("pass", "word=", password), password),
        "personal": (cat("/ho", "me/", "alicia", "/notes/plan.txt"), cat("/ho", "me/", "alicia")),
        "keys (one-line PEM)": (cat("-----BEGIN ", "PRIVATE KEY----- ", body, " -----END ", "PRIVATE KEY-----"), body),
    }


FAMILY_TOKENS = _family_tokens()
"""Family (as ``safety.rules.FAMILIES`` names them; a one-line PEM besides) -> (value, secret part)."""


class Shaped(NamedTuple):
    name: str
    value: str
    secrets: tuple[str, ...]
    """The parts of the secret as ``value`` holds them (both halves of a cut one): never printed."""


def _cut(value: str, secret: str) -> tuple[str, str, tuple[str, ...]]:
    """``value`` in two halves, and the secret's part in each."""
    cut = len(value) // 2
    start = value.index(secret)
    end = start + len(secret)
    parts = (value[start : min(end, cut)], value[max(start, cut) : end])
    return value[:cut], value[cut:], tuple(p for p in parts if len(p) >= PIECE)


def shaped_values() -> list[Shaped]:
    """Every family's token as it is and with a word character before it (paths excepted: a path
    glued to a word is another path), and cut over a folded scalar and split by ``+``."""
    out = []
    for family, (value, secret) in FAMILY_TOKENS.items():
        out.append(Shaped(f"plain {family}", value, (secret,)))
        if family == "personal":
            continue
        out.append(Shaped(f"word-glued {family}", "x_" + value, (secret,)))
        first, second, parts = _cut(value, secret)
        out.append(Shaped(f"folded {family}", f"token: >-\n  {first}\n  {second}", parts))
        out.append(Shaped(f"plus {family}", f"'{first}' + '{second}'", parts))
    return out


SHAPED = shaped_values()


def check_planted() -> None:
    """The scanner finds every planted value (else a test that nothing leaked would prove nothing)."""
    for shaped in SHAPED:
        assert [f for f in scan(shaped.value, inline=False) if f.blocks], shaped


def leaked(shaped: Shaped, printed: str) -> list[str]:
    """Every run of ``PIECE`` characters of the secret that ``printed`` holds."""
    runs = {s[i : i + PIECE] for s in shaped.secrets for i in range(len(s) - PIECE + 1)}
    return sorted(run for run in runs if run in printed)


ONE_LINE_PEM_BODY = FAMILY_TOKENS["keys (one-line PEM)"][1]

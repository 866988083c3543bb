"""Credentials by context rather than by format: headers, URLs, assignments."""

from __future__ import annotations

import re

from loopx_git.safety.rule import BLOCK, VALUE, Context, Q, Rule, is_placeholder, looks_random, random_enough, secret


def _generic_assignment(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    after = m.string[m.end("s") : m.end("s") + 1]
    if after in ("(", "[") or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value):
        return False  # a call, a subscript or a dotted name: code that fetches a secret, not a secret
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() and c not in "_-." for c in value),
        )
    )
    if classes < 2:
        return False  # one kind of character: a word or a number (`secret: my_secret_name`), not a password
    return not is_placeholder(value) and looks_random(value, 2.5)


RULES: tuple[Rule, ...] = (
    Rule(
        "authorization-header",
        BLOCK,
        "Authorization header value",
        ("authorization",),
        (
            r"(?i)\b(?:proxy-)?authorization"
            + Q
            + r"\s*[:=]\s*"
            + Q
            + r"(?:(?:basic|bearer|token|digest|negotiate|apikey|sso-key)\s+)?"
            r"(?P<s>" + VALUE + r"{8,})"
        ),
        accept=random_enough(2.5),
    ),
    Rule(
        "bearer-token",
        BLOCK,
        "bearer token",
        ("bearer",),
        (r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{16,})"),
        accept=random_enough(3.0),
    ),
    Rule(
        "api-key-header",
        BLOCK,
        "API-key header value",
        ("api-key", "auth-token", "access-token", "private-token"),
        (
            r"(?i)\b(?:x-)?(?:api-key|auth-token|access-token|goog-api-key|private-token)"
            + Q
            + r"\s*:\s*"
            + Q
            + r"(?P<s>"
            + VALUE
            + r"{8,})"
        ),
        accept=random_enough(2.5),
    ),
    Rule(
        "cookie-header",
        BLOCK,
        "Cookie header value",
        ("cookie",),
        (
            r"(?i)\b(?:set-)?cookie"
            + Q
            + r"\s*:\s*"
            + Q
            + r"(?P<s>[A-Za-z0-9_.-]+=[^\s\"';]{8,}(?:;\s*[A-Za-z0-9_.-]+=[^\s\"';]*)*)"
        ),
        accept=random_enough(3.0),
    ),
    Rule(
        "url-credentials",
        BLOCK,
        "user:password inside a URL",
        ("://",),
        (r"://(?P<s>[^\s:/@\"'<>]*:[^\s@/\"'<>]+)@[A-Za-z0-9.-]+"),
        accept=lambda m, ctx: not is_placeholder(m.group("s").split(":", 1)[1]),
    ),
    Rule(
        "generic-secret",
        BLOCK,
        "password/secret/token/api_key assignment",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        (
            r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
            r"private[_-]?key|auth[_-]?key|credentials?)"
            + Q
            + r"\s*(?:=|:=|=>|:)\s*"
            + Q
            + r"(?P<s>"
            + VALUE
            + r"{8,})"
        ),
        accept=_generic_assignment,
        anchored=True,
        back=8,
    ),
)

"""Private keys and signed tokens."""

from __future__ import annotations

from loopx_git.safety.rule import BLOCK, Rule, not_placeholder

RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        BLOCK,
        "PEM or OpenSSH private key block",
        ("private key",),
        (
            r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"(?P<s>(?:\\[rn]|\s)*[A-Za-z0-9+/=](?:[A-Za-z0-9+/=:,\s\\]|-(?!----)){15,})"
        ),
        fingerprint_only=True,
        span=20_000,
        reference="RFC 7468 (PEM); OpenSSH PROTOCOL.key",
    ),
    Rule(
        "jwt",
        BLOCK,
        "JSON Web Token",
        ("eyj",),
        (r"(?<![A-Za-z0-9_-])(?P<s>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"),
        accept=not_placeholder,
    ),
)

"""Cloud providers."""

from __future__ import annotations

from loopx_git.safety.rule import BLOCK, Q, Rule, not_placeholder, random_enough

RULES: tuple[Rule, ...] = (
    Rule(
        "aws-access-key-id",
        BLOCK,
        "AWS access key id",
        ("akia", "asia", "abia", "acca", "a3t"),
        (r"(?<![A-Za-z0-9])(?P<s>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Za-z0-9])"),
        accept=not_placeholder,
    ),
    Rule(
        "aws-secret-access-key",
        BLOCK,
        "AWS secret access key assignment",
        ("secret",),
        (
            r"(?i)aws_?secret_?(?:access_?)?key"
            + Q
            + r"\s*(?:=|:|=>)\s*"
            + Q
            + r"(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        accept=random_enough(3.5),
    ),
    Rule(
        "google-api-key",
        BLOCK,
        "Google API key",
        ("aiza",),
        (r"(?<![A-Za-z0-9_-])(?P<s>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
)

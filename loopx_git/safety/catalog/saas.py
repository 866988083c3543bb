"""SaaS and chat services."""

from __future__ import annotations

from loopx_git.safety.rule import BLOCK, Rule, random_enough

RULES: tuple[Rule, ...] = (
    Rule(
        "slack-token",
        BLOCK,
        "Slack token",
        ("xox", "xapp-"),
        (r"(?<![A-Za-z0-9])(?P<s>xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
    Rule(
        "slack-webhook",
        BLOCK,
        "Slack webhook URL",
        ("hooks.slack.com",),
        (r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,})"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
    Rule(
        "sendgrid-key",
        BLOCK,
        "SendGrid API key",
        ("sg.",),
        (r"(?<![A-Za-z0-9])(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
)

"""Shapes of SaaS and chat services: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import string

from tests.safety.parts import UPPER_DIGITS, URLSAFE, Shape, cat, rand

SHAPES: dict[str, list[Shape]] = {
    "slack-token": [
        lambda r: cat("xo", "xb-", rand(r, 12, string.digits), "-", rand(r, 13, string.digits), "-", rand(r, 24)),
        lambda r: cat("xo", "xp-", rand(r, 12, string.digits), "-", rand(r, 32)),
        lambda r: cat("xa", "pp-1-", rand(r, 11, UPPER_DIGITS), "-", rand(r, 13, string.digits), "-", rand(r, 40)),
    ],
    "slack-webhook": [
        lambda r: cat(
            "https://hooks.",
            "slack.com/services/T",
            rand(r, 8, UPPER_DIGITS),
            "/B",
            rand(r, 8, UPPER_DIGITS),
            "/",
            rand(r, 24),
        ),
        lambda r: cat(
            "url: https://hooks.",
            "slack.com/workflows/T",
            rand(r, 8, UPPER_DIGITS),
            "/A",
            rand(r, 10, UPPER_DIGITS),
            "/",
            rand(r, 20),
        ),
        lambda r: cat(
            "post to hooks.",
            "slack.com/triggers/T",
            rand(r, 8, UPPER_DIGITS),
            "/",
            rand(r, 12, string.digits),
            "/",
            rand(r, 32),
        ),
    ],
    "sendgrid-key": [
        lambda r: cat("S", "G.", rand(r, 22, URLSAFE), ".", rand(r, 43, URLSAFE)),
        lambda r: cat("SENDGRID_API_KEY=S", "G.", rand(r, 22, URLSAFE), ".", rand(r, 43, URLSAFE)),
        lambda r: cat("mail via S", "G.", rand(r, 22, URLSAFE), ".", rand(r, 43, URLSAFE), " ok"),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

"""Shapes of AI model providers: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import string

from tests.safety.parts import URLSAFE, Shape, cat, rand

SHAPES: dict[str, list[Shape]] = {
    "openai-api-key": [
        lambda r: cat("s", "k-proj-", rand(r, 48, URLSAFE)),
        lambda r: cat("OPENAI_API_KEY=s", "k-", rand(r, 20), "T3Blbk", "FJ", rand(r, 20)),
        lambda r: cat("s", "k-svcacct-", rand(r, 40, URLSAFE)),
    ],
    "anthropic-api-key": [
        lambda r: cat("s", "k-ant-api03-", rand(r, 93, URLSAFE), "AA"),
        lambda r: cat("ANTHROPIC_API_KEY=s", "k-ant-api03-", rand(r, 60, URLSAFE)),
        lambda r: cat("admin s", "k-ant-admin01-", rand(r, 80, URLSAFE)),
    ],
    "huggingface-token": [
        lambda r: cat("h", "f_", rand(r, 34, string.ascii_letters)),
        lambda r: cat("HF_TOKEN=h", "f_", rand(r, 34, string.ascii_letters)),
        lambda r: cat("hub login h", "f_", rand(r, 34, string.ascii_letters), " done"),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

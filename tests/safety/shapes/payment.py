"""Shapes of payment providers: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

from tests.safety.parts import Shape, cat, rand

SHAPES: dict[str, list[Shape]] = {
    "stripe-key": [
        lambda r: cat("s", "k_live_", rand(r, 24)),
        lambda r: cat("STRIPE=r", "k_live_", rand(r, 32)),
        lambda r: cat("test mode s", "k_test_", rand(r, 26)),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

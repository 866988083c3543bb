"""Payment providers."""

from __future__ import annotations

from loopx_git.safety.rule import BLOCK, Rule, random_enough

RULES: tuple[Rule, ...] = (
    Rule(
        "stripe-key",
        BLOCK,
        "Stripe secret or restricted key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        (r"(?<![A-Za-z0-9])(?P<s>[sr]k_(?:live|test)_[A-Za-z0-9]{20,})"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
)

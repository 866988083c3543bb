"""The rule table: every family of ``safety/catalog/`` in one tuple, with the indexes the scanner
and the policy use. Specific formats come before the generic rules, so that where two rules find
the same span the specific one names it."""

from __future__ import annotations

from loopx_git.safety.catalog import ai, cloud, generic, hosting, keys, payment, personal, saas
from loopx_git.safety.rule import BLOCK, DEFAULT_CI_HOME_USERS, WARN, Context, Rule

__all__ = ["BLOCK", "BY_ID", "DEFAULT_CI_HOME_USERS", "KNOWN_RULE_IDS", "RULES", "WARN", "Context", "Rule"]

FAMILIES = {
    "keys": keys.RULES,
    "cloud": cloud.RULES,
    "hosting": hosting.RULES,
    "saas": saas.RULES,
    "payment": payment.RULES,
    "ai": ai.RULES,
    "generic": generic.RULES,
    "personal": personal.RULES,
}
"""Family name -> its rules, in the order the table holds them."""

RULES: tuple[Rule, ...] = tuple(rule for rules in FAMILIES.values() for rule in rules)

BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}

STRUCTURAL_RULE_IDS = ("raw-material-key", "field-too-large", "unsafe-ref", "boundary-claim")
"""The structural record rules (safety/records.py): no allowlist applies to them; a value that
breaks one is fixed (or, where a marker is valid, redacted)."""
OTHER_RULE_IDS = ("local-state", *STRUCTURAL_RULE_IDS)
"""Rules that are not text patterns: the local-state boundary (safety/boundary.py), which can be
allowlisted by fingerprint, and the structural record rules."""
KNOWN_RULE_IDS = frozenset(BY_ID) | frozenset(OTHER_RULE_IDS)

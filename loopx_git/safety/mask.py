"""What is printed for review never carries a flagged value.

A ``Masker`` replaces every value a finding flags — block or warn, text rule or structural — with
``[REDACTED:<rule>] fp=<16hex>``, so a reviewer sees which rule fired and the fingerprint (to
allowlist a false positive in the trusted policy) but never the value. It learns the values the
structural rules flag from the records it is shown (a whole field: an absolute ref, a raw log), and
finds text-rule values by scanning each string it masks, so a commit subject, a ref name or an
error message written by anyone is covered too.
"""

from __future__ import annotations

import re

from loopx_git.safety.policy import DEFAULT_POLICY, Policy
from loopx_git.safety.records import FieldFinding, flagged_values
from loopx_git.safety.scan import marker, scan

_SHARED_MIN = 6
"""A structural value shorter than this (``..``, ``x``) is masked only in the row of its own
record: replacing it in every string of a review would garble the rest."""


def _alternation(values) -> re.Pattern:
    return re.compile("|".join(re.escape(v) for v in sorted(values, key=len, reverse=True)))


def shown(rule: str, fingerprint: str) -> str:
    """How a masked value is printed."""
    return f"{marker(rule)} fp={fingerprint}"


class Masker:
    def __init__(self, policy: Policy = DEFAULT_POLICY):
        self.policy = policy
        self._shared: dict[str, str] = {}
        self._pattern: re.Pattern | None = None

    def _shared_pattern(self) -> re.Pattern:
        if self._pattern is None:
            self._pattern = _alternation(self._shared)
        return self._pattern

    def learn(self, record: dict) -> tuple[list[FieldFinding], dict[str, str]]:
        """The findings in ``record`` and a table of its flagged values (pass it to ``mask`` for
        strings built from this record); longer values are masked everywhere from now on."""
        own: dict[str, str] = {}
        findings = []
        for value, finding in flagged_values(record, self.policy):
            findings.append(finding)
            if value:
                own[value] = shown(finding.rule, finding.fingerprint)
        shared = {v: m for v, m in own.items() if len(v) >= _SHARED_MIN and v not in self._shared}
        if shared:
            self._shared.update(shared)
            self._pattern = None
        return findings, own

    def mask(self, text: str | None, own: dict[str, str] | None = None) -> str | None:
        if not text:
            return text
        table = {**self._shared, **own} if own else self._shared
        if table:  # one pass, longest value first, so a replacement is never searched again
            pattern = _alternation(table) if own else self._shared_pattern()
            text = pattern.sub(lambda m: table[m.group()], text)
        for finding in reversed(scan(text, self.policy, inline=False)):
            text = text[: finding.start] + shown(finding.rule, finding.fingerprint) + text[finding.end :]
        return text


def masked(text: str, policy: Policy = DEFAULT_POLICY) -> str:
    """``text`` with every text-rule finding masked (for a message that echoes user input)."""
    return Masker(policy).mask(text) or text

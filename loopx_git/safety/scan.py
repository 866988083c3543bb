"""``scan(text)`` finds secrets and private material; ``redact(text)`` replaces the secret part of
each blocking finding with ``[REDACTED:<rule-id>]``. A finding carries a fingerprint of the value,
never the value.

Redaction is a fixed point (a redaction marker counts as a placeholder, which no rule reports)
and keeps JSON valid (the marker holds no quote or backslash, and a span never ends inside an
escape sequence).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from loopx_git.safety.policy import DEFAULT_POLICY, Policy
from loopx_git.safety.rules import BLOCK, KEYWORDS, RULES, Rule

_INLINE_ALLOW = re.compile(
    r"publicsafe:\s*allow(?:\[(?P<rules>[a-z0-9,\s-]*)\])?|pragma:\s*allowlist secret|gitleaks:allow"
)


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    line: int
    column: int
    fingerprint: str
    start: int
    end: int
    path: str | None = None
    where: str | None = None
    """What else locates it: the commit a pushed blob came from."""
    note: str | None = None
    """Why, when the rule id alone does not say (the local-state pattern a path matched)."""

    @property
    def blocks(self) -> bool:
        return self.severity == BLOCK

    def format(self) -> str:
        """``path:line:col: rule-id (severity) fp=<16hex>`` — the one way a finding is printed."""
        place = f"{self.path or '<text>'}:{self.line}:{self.column}"
        tail = (f" in {self.where}" if self.where else "") + (f" ({self.note})" if self.note else "")
        return f"{place}: {self.rule} ({self.severity}) fp={self.fingerprint}{tail}"

    def to_json(self) -> dict:
        data = {
            "rule": self.rule,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "fingerprint": self.fingerprint,
        }
        if self.where:
            data["where"] = self.where
        if self.note:
            data["note"] = self.note
        return data


def fingerprint(value: str) -> str:
    """16 hex digits of a domain-separated sha256: stable across machines, so it can be allowlisted."""
    return hashlib.sha256(b"loopx-publicsafe/v1:" + value.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _span(text: str, m: re.Match) -> tuple[int, int]:
    start, end = m.span("s")
    trailing = len(text[start:end]) - len(text[start:end].rstrip("\\"))
    if trailing % 2:  # never cut an escape sequence in half: `\"` must stay whole
        end -= 1
    i = start
    while i > 0 and text[i - 1] == "\\":
        i -= 1
    if (start - i) % 2 and text[start] == "\\":  # the match begins with the second half of a `\\` pair
        start -= 1
    return start, end


def _line_of(text: str, start: int) -> tuple[int, int, str]:
    begin = text.rfind("\n", 0, start) + 1
    finish = text.find("\n", start)
    return text.count("\n", 0, start) + 1, start - begin + 1, text[begin : finish if finish >= 0 else len(text)]


def _inline_allowed(line: str, rule: Rule) -> bool:
    if rule.fingerprint_only:
        return False
    for m in _INLINE_ALLOW.finditer(line):
        listed = m.group("rules")  # None: every rule; "a,b": only those
        if listed is None or rule.id in {r.strip() for r in listed.split(",")}:
            return True
    return False


def _candidates(text: str, lower: str, policy: Policy):
    ctx = policy.context
    present = {keyword for keyword in KEYWORDS if keyword in lower}
    for rule in (*RULES, *policy.extra_rules):
        if present.isdisjoint(rule.keywords) and not any(k in lower for k in rule.keywords) or (rule.id in policy.disabled and not rule.fingerprint_only):
            continue
        for m in rule.finditer(text, lower):
            if rule.accept is not None and not rule.accept(m, ctx):
                continue
            start, end = _span(text, m)
            if "[REDACTED:" in text[start:end]:
                continue  # an earlier redaction: what makes redact a fixed point
            yield rule, (start, end)


def scan(text: str, policy: Policy = DEFAULT_POLICY, *, path: str | None = None, inline: bool = True) -> list[Finding]:
    """Findings in ``text``, in order, one per span (where two rules match one place, the first
    blocking one wins). ``inline=False`` ignores allow comments (for records, which are not code)."""
    lower = text.lower()
    honour_inline = inline and "allow" in lower
    path_allowed = policy.path_allowed(path)
    found: list[Finding] = []
    for rule, (start, end) in _candidates(text, lower, policy):
        value = text[start:end]
        fp = fingerprint(value)
        if policy.allowed_by_fingerprint(rule.id, fp, path):
            continue
        if path_allowed and not rule.fingerprint_only:
            continue
        line, column, line_text = _line_of(text, start)
        if honour_inline and _inline_allowed(line_text, rule):
            continue
        severity = rule.severity if rule.fingerprint_only else policy.severity.get(rule.id, rule.severity)
        found.append(Finding(rule.id, severity, line, column, fp, start, end, path))
    return _without_overlaps(found)


def _without_overlaps(found: list[Finding]) -> list[Finding]:
    found.sort(key=lambda f: (f.start, not f.blocks, -(f.end - f.start)))
    kept: list[Finding] = []
    for finding in found:
        if kept and finding.start < kept[-1].end:
            if finding.blocks and not kept[-1].blocks:
                kept[-1] = finding
            continue
        kept.append(finding)
    return kept


def marker(rule_id: str) -> str:
    return f"[REDACTED:{rule_id}]"


def redact(text: str, policy: Policy = DEFAULT_POLICY, *, path: str | None = None) -> tuple[str, list[Finding]]:
    """``text`` with the secret part of every blocking finding replaced, and the findings replaced."""
    replaced = [f for f in scan(text, policy, path=path, inline=False) if f.blocks]
    out = text
    for finding in reversed(replaced):
        out = out[: finding.start] + marker(finding.rule) + out[finding.end :]
    return out, replaced


def with_place(finding: Finding, *, path: str | None = None, where: str | None = None) -> Finding:
    return replace(finding, path=path if path is not None else finding.path, where=where or finding.where)

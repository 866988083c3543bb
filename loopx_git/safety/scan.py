"""``scan(text)`` finds secrets and private material; ``redact(text)`` replaces the secret part of
each blocking finding with ``[REDACTED:<rule-id>]``. A finding carries a fingerprint of the value,
never the value.

Redaction is a fixed point (a redaction marker counts as a placeholder, which no rule reports)
and keeps JSON valid (the marker holds no quote or backslash, and a span never ends inside an
escape sequence).
"""

from __future__ import annotations

import re
from functools import lru_cache, partial
from typing import NamedTuple

from loopx_git.safety.decode import views
from loopx_git.safety.index import KeywordIndex, lowered, matches
from loopx_git.safety.policy import DEFAULT_POLICY, Policy
from loopx_git.safety.rules import BLOCK, BY_ID, RULES, Rule

_INLINE_ALLOW = re.compile(
    r"publicsafe:\s*allow(?:\[(?P<rules>[a-z0-9,\s-]*)\])?|pragma:\s*allowlist secret|gitleaks:allow"
)


class Finding(NamedTuple):
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
    decoded: bool = False
    """Found in a decoded view: the fingerprint is of the value as decoded."""
    pieces: tuple[tuple[int, int], ...] = ()
    """Where a value found in a decoded view was written in several pieces (a literal split by
    ``+``, a line continued): every ``[start, end)`` of it, which ``redact`` replaces each. Empty
    when the value is the one span ``[start, end)``."""

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Every ``[start, end)`` the value was written in: one, unless it was written in pieces."""
        return self.pieces or ((self.start, self.end),)

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
    import hashlib  # only once something is found: ~2.5 ms of every hook otherwise

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


class _Lines:
    """Line numbers of positions asked for in increasing order, counted once through the text."""

    def __init__(self, text: str):
        self.text = text
        self.at = 0
        self.line = 1

    def of(self, start: int) -> tuple[int, int, str]:
        """(line, column, the line's text) of ``start``, both 1-based."""
        text = self.text
        if start < self.at:
            self.at, self.line = 0, 1
        self.line += text.count("\n", self.at, start)
        self.at = start
        begin = text.rfind("\n", 0, start) + 1
        finish = text.find("\n", start)
        return self.line, start - begin + 1, text[begin : finish if finish >= 0 else len(text)]


def _inline_allowed(line: str, rule: Rule) -> bool:
    if rule.fingerprint_only:
        return False
    for m in _INLINE_ALLOW.finditer(line):
        listed = m.group("rules")  # None: every rule; "a,b": only those
        if listed is None or rule.id in {r.strip() for r in listed.split(",")}:
            return True
    return False


_RANK = {rule.id: i for i, rule in enumerate(RULES)}


@lru_cache(maxsize=8)
def _index(extra: tuple[Rule, ...]) -> KeywordIndex:
    """The keyword index of the table and a team's rules (built once per process and rule set)."""
    return KeywordIndex((*RULES, *extra))


def _candidates(text: str, lower: str, policy: Policy):
    ctx = policy.context
    index = _index(policy.extra_rules)
    hits = index.hits(lower)
    for i in sorted({*hits, *index.unkeyed}):  # in table order; only rules whose keyword occurs
        rule = index.rules[i]
        positions = hits.get(i)
        if rule.id in policy.disabled and not rule.fingerprint_only:
            continue
        if i >= len(RULES):  # a team's rule: its keywords gate the whole text, as gitleaks reads them
            positions = None
        for m in matches(rule, text, positions, partial(_keep, rule, ctx)):
            yield rule, _span(text, m)


def _keep(rule: Rule, ctx, m: re.Match) -> bool:
    """A match is a finding unless the rule's check calls it a look-alike or it is an earlier
    redaction (what makes redact a fixed point)."""
    if rule.accept is not None and not rule.accept(m, ctx):
        return False
    start, end = _span(m.string, m)
    return end > start and "[REDACTED:" not in m.string[start:end]


_Match = tuple[Rule, int, int, str, tuple[tuple[int, int], ...], bool]


def _found(text: str, lower: str, policy: Policy) -> list[_Match]:
    """(rule, start, end, value, pieces, decoded) of every match in ``text`` and in its decoded
    views, by start. A value found in a view is located by the pieces of ``text`` it came from."""
    found: list[_Match] = [(rule, s, e, text[s:e], (), False) for rule, (s, e) in _candidates(text, lower, policy)]
    last: list[_Match] = []
    for view in views(text):
        for rule, (s, e) in _candidates(view.text, lowered(view.text), policy):
            pieces = view.pieces(s, e)
            if pieces:
                value = view.text[s:e]
                start, end = pieces[0][0], pieces[-1][1]
                many = pieces if len(pieces) > 1 else ()
                (last if view.fallback else found).append((rule, start, end, value, many, value != text[start:end]))
    if last:
        found = _with_glued(text, found, last)
    found.sort(key=lambda f: f[1])
    return found


def _with_glued(text: str, found: list[_Match], glued_found: list[_Match]) -> list[_Match]:
    """``found`` with the glued reading's findings that may stand (``_outranks``, ``_cut_by_a_break``),
    and without the pieces they hold whole. The findings a glued one overlaps are looked up by start
    (a running maximum of ends stops the walk back), so many of either stay cheap."""
    from bisect import bisect_left

    normal = sorted(found, key=lambda f: f[1])
    starts = [f[1] for f in normal]
    reach, furthest = [], -1
    for f in normal:
        furthest = max(furthest, f[2])
        reach.append(furthest)
    dropped: set[int] = set()
    added: list[_Match] = []
    for glued in glued_found:
        overlapping = []
        j = bisect_left(starts, glued[2]) - 1
        while j >= 0 and reach[j] > glued[1]:
            if normal[j][2] > glued[1]:
                overlapping.append(j)
            j -= 1
        cut = [j for j in overlapping if _cut_by_a_break(text, normal[j], glued)]
        if cut or all(_outranks(text, glued, normal[j]) for j in overlapping):
            dropped.update(cut)  # a piece of the value that only the glued reading holds whole
            added.append(glued)
    return [f for j, f in enumerate(normal) if j not in dropped] + added


def _outranks(text: str, glued: _Match, other: _Match) -> bool:
    """Whether the glued reading's finding may stand beside ``other`` (and the overlap be settled as
    usual): it blocks where ``other`` only warns; or it holds all of ``other`` and its rule is as
    specific (as early in the table), or ``other`` lies inside it (a value found in a blob the glued
    token is made of) rather than starting a line of its own that the glued reading ran into."""
    if glued[0].severity == BLOCK and other[0].severity != BLOCK:
        return True
    if not (glued[1] <= other[1] and other[2] <= glued[2]):
        return False
    if _RANK.get(glued[0].id, len(_RANK)) <= _RANK.get(other[0].id, len(_RANK)):
        return True
    line_start = text.rfind("\n", 0, other[1]) + 1
    return bool(text[line_start : other[1]].strip())


def _cut_by_a_break(text: str, part: _Match, whole: _Match) -> bool:
    """Whether ``part`` is the first piece of the value ``whole`` found with the lines glued: it ends
    at a line break that ``whole`` runs on past."""
    end = part[2]
    return text[end : end + 1] in ("\n", "\r") and whole[2] > end


def scan(text: str, policy: Policy = DEFAULT_POLICY, *, path: str | None = None, inline: bool = True) -> list[Finding]:
    """Findings in ``text``, in order, one per span: where rules find values starting at one place,
    the blocking one, then the more specific one, names it — and only then is it allowlisted or not
    (allowlisting a value clears its place, whichever rules also found it). ``inline=False`` ignores
    allow comments (for records, which are not code). The fingerprint of a value found decoded is
    that of the decoded value: one secret has one fingerprint however it is written."""
    lower = lowered(text)
    honour_inline = inline and "allow" in lower
    path_allowed = policy.path_allowed(path)
    found: list[Finding] = []
    for rule, start, end, value, pieces, decoded in _found(text, lower, policy):
        severity = rule.severity if rule.fingerprint_only else policy.severity.get(rule.id, rule.severity)
        found.append(
            Finding(rule.id, severity, 0, 0, fingerprint(value), start, end, path, decoded=decoded, pieces=pieces)
        )
    lines = _Lines(text)
    kept: list[Finding] = []
    for finding in _without_overlaps(found):
        rule = _rule(finding.rule, policy)
        if policy.allowed_by_fingerprint(rule.id, finding.fingerprint, path):
            continue
        if path_allowed and not rule.fingerprint_only:
            continue
        line, column, line_text = lines.of(finding.start)
        if honour_inline and _inline_allowed(line_text, rule):
            continue
        kept.append(finding._replace(line=line, column=column))
    return kept


def _rule(rule_id: str, policy: Policy) -> Rule:
    return BY_ID.get(rule_id) or next(r for r in policy.extra_rules if r.id == rule_id)


def _without_overlaps(found: list[Finding]) -> list[Finding]:
    # where two rules find values starting at one place, the one earlier in the table (the more
    # specific) names it, even if a generic rule's value runs on (over an encoding, say)
    # (and a value found decoded before the same value found still encoded)
    rank = _RANK.get
    found.sort(key=lambda f: (f.start, not f.blocks, rank(f.rule, len(_RANK)), not f.decoded, -(f.end - f.start)))
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
    return redacted(text, replaced), replaced


def redacted(text: str, findings: list[Finding]) -> str:
    """``text`` with every piece of each of ``findings`` replaced by its rule's marker."""
    spans = sorted((span, f.rule) for f in findings for span in f.spans)
    out = text
    for (start, end), rule in reversed(spans):
        out = out[:start] + marker(rule) + out[end:]
    return out


def with_place(finding: Finding, *, path: str | None = None, where: str | None = None) -> Finding:
    return finding._replace(path=path if path is not None else finding.path, where=where or finding.where)

"""The public-safety gate every write passes before it becomes a commit.

Each event and run record of a write is checked as the JSON the store will write, and so is the
summary that becomes the commit subject. A blocking finding refuses the write (naming the field,
the rule and the fingerprint) unless the caller asked to redact; then the redacted records are
validated again and the write carries them, with a note of what was replaced.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from loopx_git.errors import SafetyError
from loopx_git.safety.policy import Policy
from loopx_git.safety.records import STRUCTURAL_FIXES, STRUCTURAL_RULES, UNREDACTABLE, FieldFinding, check
from loopx_git.safety.rules import BY_ID
from loopx_git.safety.scan import redact as redact_text
from loopx_git.safety.scan import scan

if TYPE_CHECKING:
    from loopx_git.model.record import Record


@dataclass
class Guarded:
    """A write that passed, what ``--redact`` replaced in it, and the warnings it still carries."""

    write: Any
    redactions: list[FieldFinding] = field(default_factory=list)
    warnings: list[FieldFinding] = field(default_factory=list)


def _where(record: Any) -> str:
    kind = getattr(record, "event_kind", None) or "run record"
    return f"{kind} {getattr(record, 'event_id', None) or getattr(record, 'run_id', '')}".strip()


def _fix(finding: FieldFinding, policy: Policy) -> str:
    """What makes a refused value pass: per rule, only fixes that work (structural rules are not
    allowlistable; a fingerprint-only rule cannot be disabled)."""
    if finding.rule in STRUCTURAL_FIXES:
        return STRUCTURAL_FIXES[finding.rule].format(max_field_bytes=policy.max_field_bytes)
    allow = f"add '{finding.rule} {finding.fingerprint} # reason' to .publicsafe-allow"
    if not BY_ID[finding.rule].fingerprint_only:
        allow += " (or turn the rule down with disabled_rules or severity in [tool.loopx.safety])"
    return f"rerun with --redact to write [REDACTED:{finding.rule}] in its place, or, for a false positive, {allow}"


def _refusal(blocking: list[FieldFinding], policy: Policy, *, redacting: bool = False) -> SafetyError:
    first = blocking[0]
    more = f" (and {len(blocking) - 1} more)" if len(blocking) > 1 else ""
    rule = STRUCTURAL_RULES.get(first.rule) or f"{BY_ID[first.rule].description} may not be written to the state branch"
    if redacting:
        rule += "; --redact cannot fix it"
    hints = dict.fromkeys(_fix(f, policy) for f in blocking)  # one per rule, in order
    return SafetyError(f"{first.describe()}{more}: {rule}; nothing was written", hint="; ".join(hints))


def guard(write: Any, policy: Policy, *, redact: bool = False) -> Guarded:
    """Check (and with ``redact``, clean) every record of ``write``; raise SafetyError on a block."""
    findings: list[FieldFinding] = []
    events: list[Record] = []
    runs: list[Record] = []
    for records, out in ((write.events, events), (write.runs, runs)):
        for record in records:
            clean, found = check(record.model_dump(mode="json"), policy, redact=redact)
            findings.extend(found)
            out.append(_rebuilt(record, clean) if redact and any(f.blocks for f in found) else record)
    summary = write.summary  # becomes the commit subject
    findings.extend(
        FieldFinding("summary", f.rule, f.severity, f.fingerprint, f) for f in scan(summary, policy, inline=False)
    )
    unique: dict = {}
    for finding in findings:  # a summary repeats a field: report each value once, under its field
        unique.setdefault((finding.rule, finding.fingerprint), finding)
    findings = list(unique.values())
    blocking = [f for f in findings if f.blocks]
    if blocking and not redact:
        raise _refusal(blocking, policy)
    if not blocking:
        return Guarded(write, [], findings)
    unredactable = [f for f in blocking if f.rule in UNREDACTABLE]
    if unredactable:  # a marker is not a ref, and a flag is not a value: there is nothing to redact
        raise _refusal(unredactable, policy, redacting=True)
    summary = redact_text(summary, policy)[0]
    result = write.result
    if result is not None and hasattr(result, "model_dump"):
        result = _rebuilt(result, check(result.model_dump(mode="json"), policy, redact=True)[0])
    cleaned = replace(write, events=events, runs=runs, summary=summary, result=result)
    return Guarded(cleaned, blocking, [f for f in findings if not f.blocks])


def _rebuilt(record: Any, data: dict) -> Any:
    """The redacted record, validated again: a redaction must still be a valid record."""
    import pydantic

    try:
        return type(record).model_validate(data)
    except pydantic.ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first["loc"] if not str(p).startswith("function-")) or "record"
        # the value is not quoted back: it is the secret
        raise SafetyError(
            f"{_where(record)}: field '{field}' holds a secret and cannot hold a [REDACTED:<rule>] marker "
            f"({first['type']}); nothing was written",
            hint="leave the secret out of that field (ids, labels and refs are never redacted)",
        ) from exc

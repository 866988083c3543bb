"""``loopx review-diff BASE..HEAD``: what changed in the state between two commits of a state
branch, as people review it — todos added, claimed, completed, blocked, deferred, superseded (with
evidence and reasons), goal edits, gates and handoffs, rollbacks, run records — grouped by goal and
agent, with every record that fails verification or the safety rules. Read-only.
"""
from __future__ import annotations

from typing import Optional

from loopx_git.errors import LoopxError
from loopx_git.model.event import EventBase
from loopx_git.model.record import Record
from loopx_git.model.run import RunRecord
from loopx_git.store import layout
from loopx_git.store.git import GitRepo
from loopx_git.views.verify import Problem

REVIEW_SCHEMA = "loopx_review_diff_v0"
SECTIONS = ("todos", "goal", "gates", "handoffs", "rollbacks", "runs", "facts")


class CommitRow(Record):
    sha: str
    subject: str


class Change(Record):
    """One reviewable change: a row in a section of a goal."""

    section: str
    change: str
    goal_id: str
    agent_id: Optional[str] = None
    todo_id: Optional[str] = None
    detail: str = ""
    commit: Optional[str] = None
    event_id: Optional[str] = None


class ReviewDiff(Record):
    schema_version: str = REVIEW_SCHEMA
    base: str
    head: str
    base_sha: str
    head_sha: str
    ok: bool
    commits: list[CommitRow]
    changes: list[Change]
    issues: list[Problem]
    """Records that fail verification (the verify codes) or a safety rule (``safety:<rule>``)."""

    def goals(self) -> list[str]:
        return sorted({c.goal_id for c in self.changes})


def _after(event: EventBase, name: str):
    return next((c.after for c in event.changes if c.field == name), None)


def _todo_change(event: EventBase) -> tuple[str, str]:
    kind = event.event_kind  # type: ignore[attr-defined]
    reason = _after(event, "reason")
    if kind == "todo_add":
        return "added", f"{_after(event, 'text') or ''} ({_after(event, 'priority') or 'P2'})"
    if kind == "todo_claim":
        return "claimed", f"by {event.agent_id}"
    if kind == "todo_complete":
        evidence = _after(event, "evidence") or []
        return "completed", ("evidence: " + ", ".join(evidence)) if evidence else (reason or "no follow-up")
    if kind == "todo_supersede":
        return "superseded", f"by {_after(event, 'superseded_by')}: {reason or ''}".rstrip(": ")
    if kind == "todo_resume":
        return "resumed", event.summary or ""
    if kind == "todo_suggest":
        return "suggested", _after(event, "text") or ""
    if kind == "todo_promote":
        return "promoted", _after(event, "text") or ""
    if kind == "todo_compensate":
        fields = ", ".join(c.field for c in event.changes if c.field != "updated_at")
        return "compensated", f"restores {fields} (compensates {event.compensates})"  # type: ignore[attr-defined]
    status = _after(event, "status")
    if status in ("blocked", "deferred"):
        until = _after(event, "resume_when")
        return status, (reason or "") + (f" until {until}" if until else "")
    if status == "open":
        return "reopened", reason or ""
    if any(c.field == "claimed_by" and c.after is None for c in event.changes):
        return "released", reason or ""
    supersedes = _after(event, "supersedes")
    if supersedes and {c.field for c in event.changes} <= {"supersedes", "updated_at"}:
        return "replaces", ", ".join(supersedes)
    return "updated", ", ".join(c.field for c in event.changes if c.field != "updated_at")


def _change(event: EventBase, commit: str) -> Change:
    kind = event.event_kind  # type: ignore[attr-defined]
    base = {"goal_id": event.goal_id, "agent_id": event.agent_id, "todo_id": event.todo_id, "commit": commit,
            "event_id": event.event_id}  # fmt: skip
    if kind.startswith("todo_"):
        change, detail = _todo_change(event)
        return Change(section="todos", change=change, detail=detail, **base)
    if kind in ("goal_create", "goal_update", "goal_compensate", "agent_register"):
        fields = ", ".join(c.field for c in event.changes if c.field not in ("updated_at", "created_at"))
        change = {"goal_create": "created", "goal_update": "edited", "goal_compensate": "compensated",
                  "agent_register": "agent registered"}[kind]  # fmt: skip
        return Change(section="goal", change=change, detail=event.summary or fields, **base)
    if kind == "rollback_plan":
        packet = event.packet  # type: ignore[attr-defined]
        steps = ", ".join(f"{s.kind}{' (gated)' if s.requires_gate else ''}" for s in packet.plan)
        return Change(section="rollbacks", change=packet.trigger.kind, detail=f"{packet.packet_id}: {packet.trigger.summary}; "
                      f"steps: {steps}", **base)  # fmt: skip
    if kind == "handoff":
        return Change(section="handoffs", change="handoff", detail=f"to {event.handoff.to_agent_id}: {event.summary or ''}".rstrip(": "),
                      **base)  # type: ignore[union-attr]  # fmt: skip
    causality = event.causality
    if causality and (causality.gate_id or causality.decision_id):
        gate = causality.gate_id or causality.decision_id
        return Change(section="gates", change=kind, detail=f"{gate}: {event.summary or ''}".rstrip(": "), **base)
    return Change(section="facts", change=kind, detail=event.summary or "", **base)


def _run_change(run: RunRecord, commit: str) -> Change:
    outcome = f" ({run.delivery_outcome})" if run.delivery_outcome else ""
    return Change(section="runs", change=run.classification, goal_id=run.goal_id, agent_id=run.agent_id,
                  todo_id=run.todo_id, detail=f"{run.run_id}{outcome}", commit=commit)  # fmt: skip


def review(git: GitRepo, ref: str, base: str, head: str, policy=None) -> ReviewDiff:
    """The review of the commits in ``base..head`` (any two commits or refs of state branches)."""
    from loopx_git.safety.policy import DEFAULT_POLICY
    from loopx_git.safety.records import check
    from loopx_git.store.records import parse_event, parse_run
    from loopx_git.views.verify import verify_since

    base_sha, head_sha = git.rev_parse(base), git.rev_parse(head)
    commits = list(git.walk_range([head_sha], [base_sha]))
    changes: list[Change] = []
    issues: list[Problem] = []
    blocking = False
    for commit in commits:
        for path, oid in git.added_records(commit.oid):
            blob = git.read_blob(oid)
            kind = layout.record_kind(path)
            try:
                record = parse_event(blob, path) if kind == "event" else parse_run(blob, path)
            except LoopxError:  # an invalid record: verify below reports it, with its code
                continue
            if kind == "run":
                changes.append(_run_change(record, commit.oid))
            elif record.event_kind != "refresh_state":  # its run record, in the same commit, is the row
                changes.append(_change(record, commit.oid))
            for finding in check(record.model_dump(mode="json"), policy or DEFAULT_POLICY)[1]:
                blocking = blocking or finding.blocks
                issues.append(Problem(code=f"safety:{finding.rule}", path=path, commit=commit.oid, message=finding.describe()))
    report = verify_since(git, ref, head_sha, base_sha)
    issues += report.problems
    return ReviewDiff(base=base, head=head, base_sha=base_sha, head_sha=head_sha, ok=report.ok and not blocking,
                      commits=[CommitRow(sha=c.oid, subject=c.message.split("\n", 1)[0]) for c in commits],
                      changes=changes, issues=issues)  # fmt: skip

"""``loopx review-diff BASE..HEAD``: what changed in the state between two commits of a state
branch, as people review it — todos added, claimed, completed, blocked, deferred, superseded (with
evidence and reasons), goal edits, gates and handoffs, rollbacks, run records — grouped by goal and
agent, with every record that fails verification or the safety rules. Read-only.

The review applies the safety policy committed on a trusted side (the base, or ``--policy-from``),
flags any commit in the range that touches a policy file, and prints no flagged value: what it
shows for a finding is ``[REDACTED:<rule>] fp=<16hex>``.
"""

from __future__ import annotations

from typing import cast

from loopx_git.errors import LoopxError
from loopx_git.model.event import HandoffEvent
from loopx_git.model.event_head import EventBase
from loopx_git.model.record import Record
from loopx_git.model.rollback import RollbackPlan, TodoCompensate
from loopx_git.model.run import RunRecord
from loopx_git.safety.mask import Masker, masked
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
    agent_id: str | None = None
    todo_id: str | None = None
    detail: str = ""
    commit: str | None = None
    event_id: str | None = None


class ReviewDiff(Record):
    schema_version: str = REVIEW_SCHEMA
    base: str
    head: str
    base_sha: str
    head_sha: str
    policy_from: str
    """The ref or commit whose committed safety policy the review applied (default: the base)."""
    policy_commit: str
    ok: bool
    commits: list[CommitRow]
    changes: list[Change]
    issues: list[Problem]
    """Records that fail verification (the verify codes) or a safety rule (``safety:<rule>``), and
    commits that change a safety policy file (``policy-change``)."""

    def goals(self) -> list[str]:
        return sorted({c.goal_id for c in self.changes})


def _after(event: EventBase, name: str):
    return next((c.after for c in event.changes if c.field == name), None)


def _todo_change(event: EventBase) -> tuple[str, str]:
    kind = event.event_kind
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
        return "compensated", f"restores {fields} (compensates {cast(TodoCompensate, event).compensates})"
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
    kind = event.event_kind
    base = {
        "goal_id": event.goal_id,
        "agent_id": event.agent_id,
        "todo_id": event.todo_id,
        "commit": commit,
        "event_id": event.event_id,
    }
    if kind.startswith("todo_"):
        change, detail = _todo_change(event)
        return Change(section="todos", change=change, detail=detail, **base)
    if kind in ("goal_create", "goal_update", "goal_compensate", "agent_register"):
        fields = ", ".join(c.field for c in event.changes if c.field not in ("updated_at", "created_at"))
        change = {
            "goal_create": "created",
            "goal_update": "edited",
            "goal_compensate": "compensated",
            "agent_register": "agent registered",
        }[kind]
        return Change(section="goal", change=change, detail=event.summary or fields, **base)
    if kind == "rollback_plan":
        packet = cast(RollbackPlan, event).packet
        steps = ", ".join(f"{s.kind}{' (gated)' if s.requires_gate else ''}" for s in packet.plan)
        return Change(
            section="rollbacks",
            change=packet.trigger.kind,
            detail=f"{packet.packet_id}: {packet.trigger.summary}; steps: {steps}",
            **base,
        )
    if kind == "handoff":
        return Change(
            section="handoffs",
            change="handoff",
            detail=f"to {cast(HandoffEvent, event).handoff.to_agent_id}: {event.summary or ''}".rstrip(": "),
            **base,
        )
    causality = event.causality
    if causality and (causality.gate_id or causality.decision_id):
        gate = causality.gate_id or causality.decision_id
        return Change(section="gates", change=kind, detail=f"{gate}: {event.summary or ''}".rstrip(": "), **base)
    return Change(section="facts", change=kind, detail=event.summary or "", **base)


def _run_change(run: RunRecord, commit: str) -> Change:
    outcome = f" ({run.delivery_outcome})" if run.delivery_outcome else ""
    return Change(
        section="runs",
        change=run.classification,
        goal_id=run.goal_id,
        agent_id=run.agent_id,
        todo_id=run.todo_id,
        detail=f"{run.run_id}{outcome}",
        commit=commit,
    )


def _commit_of(git: GitRepo, spec: str, field: str, masker: Masker) -> str:
    try:
        return git.rev_parse(spec)
    except LoopxError as exc:  # its message quotes the spec, which can be anything
        raise type(exc)(
            f"field '{field}': {masker.mask(spec)!r} names no commit in this repository", code=exc.code
        ) from None


def _state_tips(git: GitRepo, ref: str) -> list[str]:
    """The tips of every copy of the state branch this clone holds: ``ref`` itself, the default
    ``loopx/state``, and their remote-tracking copies (``refs/remotes/<remote>/loopx/state``)."""
    names = {ref, layout.DEFAULT_STATE_REF}
    branches = {n.removeprefix("refs/heads/") for n in names if n.startswith("refs/heads/")}
    names |= {name for name, _ in git.refs("refs/remotes/") if name.split("/", 3)[-1] in branches}
    tips = []
    for name in sorted(names):
        try:
            tip = git.ref_target(name)
        except LoopxError:  # a damaged ref is verify's finding; the others still say what is state
            continue
        if tip is not None:
            tips.append(tip)
    return tips


def _check_range(git: GitRepo, ref: str, base_sha: str, head_sha: str, labels: tuple[str, str]) -> None:
    """A range is reviewed only from a commit of the state history: a base on the project's code
    branch (``main``, ``HEAD~1``) would list every code commit as stray state files. The head is
    state too: it shares history with the base (a proposal, the other side of a sync), or is on a
    copy of the state branch (a clone that connected on its own shares no history until it syncs)."""
    from loopx_git.errors import ValidationError

    branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else "loopx/state"
    good = f"`loopx review-diff {branch}..origin/{branch}` (what a sync would bring)"
    base, head = labels
    tips = _state_tips(git, ref)
    if not any(git.is_ancestor(base_sha, tip) for tip in tips):
        raise ValidationError(
            f"field 'range': BASE {base!r} ({base_sha[:12]}) is not a commit of the state branch's history; "
            f"the rule: BASE is {branch}, a remote's copy of it, or one of their earlier commits",
            code="base-not-state",
            hint=f"git's HEAD, main and the like are the project's code branch, not the state branch; try {good}, "
            f"or `loopx review-diff origin/{branch}..origin/loopx/proposals/agent-a` for a proposal",
        )
    if git.merge_base(base_sha, head_sha) is None and not any(git.is_ancestor(head_sha, tip) for tip in tips):
        raise ValidationError(
            f"field 'range': HEAD {head!r} ({head_sha[:12]}) shares no history with BASE {base!r} and is on no "
            f"copy of the state branch; the rule: HEAD is a state commit, such as a proposal made from {branch}",
            code="head-not-state",
            hint=f"git's HEAD, main and the like are the project's code, not the state; try {good}",
        )


def _policy(git: GitRepo, sha: str, label: str):
    from loopx_git.views.policy import committed_policy

    try:
        return committed_policy(git, sha)
    except LoopxError as exc:
        raise type(exc)(
            masked(f"the safety policy of {label} ({sha[:12]}): {exc.message}"),
            code=exc.code,
            hint="fix the policy on the trusted branch, or review with --policy-from naming another trusted ref",
        ) from None


def _policy_changes(git: GitRepo, commit, label: str) -> list[Problem]:
    """A commit in the range that adds, changes or deletes a policy file, anywhere in its tree."""
    from loopx_git.views.policy import POLICY_FILES

    parent = git.commit(commit.parents[0]).tree if commit.parents else None
    verbs = {(True, False): "adds", (False, True): "deletes", (False, False): "changes"}
    return [
        Problem(
            code="policy-change",
            path=c.path,
            commit=commit.oid,
            message=f"this commit {verbs[(c.old is None, c.new is None)]} a safety policy file; the review "
            f"used the policy of {label}, never one from the change under review: a policy change is "
            "made and reviewed on the trusted branch",
        )
        for c in git.changes(parent, commit.tree)
        if c.path.rsplit("/", 1)[-1] in POLICY_FILES
    ]


MESSAGE_PATH = "<commit message>"


def _message_findings(commit, policy, seen: set) -> list:
    """A commit message is published with its commit, and plain git can write any: it is checked
    like a record (a value that a record of the same commit already reports is not repeated)."""
    from loopx_git.safety.scan import scan

    return [f for f in scan(commit.message, policy, inline=False) if (f.rule, f.fingerprint) not in seen]


def review(git: GitRepo, ref: str, base: str, head: str, *, policy_from: str | None = None) -> ReviewDiff:
    """The review of the commits in ``base..head``: ``base`` is a commit of the state branch's
    history (``ref``, the default state branch, or a remote-tracking copy of either), ``head`` one
    that shares history with it (the other side, a proposal) or is on such a copy; a range on the
    project's code is refused.

    The safety policy is the one committed at ``policy_from`` (default: ``base``), never one from
    the range or a work tree: a change under review cannot allowlist its own secret. Every string
    of the result is masked: a flagged value shows as ``[REDACTED:<rule>] fp=<16hex>``."""
    from loopx_git.store.records import parse_event, parse_run
    from loopx_git.views.verify import verify_since

    untrusted = Masker()  # until the policy is known: the default rules
    base_sha, head_sha = _commit_of(git, base, "base", untrusted), _commit_of(git, head, "head", untrusted)
    _check_range(git, ref, base_sha, head_sha, (untrusted.mask(base) or "", untrusted.mask(head) or ""))
    policy_label = untrusted.mask(policy_from or base) or ""
    policy_sha = _commit_of(git, policy_from, "policy_from", untrusted) if policy_from else base_sha
    if policy_sha != base_sha and git.is_ancestor(policy_sha, head_sha) and not git.is_ancestor(policy_sha, base_sha):
        from loopx_git.errors import ValidationError

        raise ValidationError(
            f"field 'policy_from': {policy_label} is a commit of the change under review "
            f"({base_sha[:12]}..{head_sha[:12]}); a change never supplies the policy it is reviewed by",
            code="invalid-field",
            hint="name a trusted ref the change cannot move, e.g. origin/main",
        )
    masker = Masker(_policy(git, policy_sha, policy_label))
    commits = list(git.walk_range([head_sha], [base_sha]))
    rows: list[tuple[Change, dict]] = []
    issues: list[Problem] = []
    blocking = False
    for commit in commits:
        changed_policy = _policy_changes(git, commit, policy_label)
        blocking = blocking or bool(changed_policy)
        issues += changed_policy
        seen: set[tuple[str, str]] = set()
        for path, oid in git.added_records(commit.oid):
            blob = git.read_blob(oid)
            kind = layout.record_kind(path)
            try:
                record = parse_event(blob, path) if kind == "event" else parse_run(blob, path)
            except LoopxError:  # an invalid record: verify below reports it, with its code
                continue
            findings, own = masker.learn(record.model_dump(mode="json"))
            if isinstance(record, RunRecord):  # kind "run"
                rows.append((_run_change(record, commit.oid), own))
            elif record.event_kind != "refresh_state":  # its run record, in the same commit, is the row
                rows.append((_change(record, commit.oid), own))
            for finding in findings:
                blocking = blocking or finding.blocks
                seen.add((finding.rule, finding.fingerprint))
                issues.append(
                    Problem(code=f"safety:{finding.rule}", path=path, commit=commit.oid, message=finding.describe())
                )
        for f in _message_findings(commit, masker.policy, seen):
            blocking = blocking or f.blocks
            issues.append(
                Problem(
                    code=f"safety:{f.rule}",
                    path=MESSAGE_PATH,
                    commit=commit.oid,
                    message=f"line {f.line}, column {f.column}: {f.rule} ({f.severity}) fp={f.fingerprint}",
                )
            )
    report = verify_since(git, ref, head_sha, base_sha)
    issues += report.problems
    mask = masker.mask
    return ReviewDiff(
        base=mask(base),
        head=mask(head),
        base_sha=base_sha,
        head_sha=head_sha,
        policy_from=policy_label,
        policy_commit=policy_sha,
        ok=report.ok and not blocking,
        commits=[CommitRow(sha=c.oid, subject=mask(c.message.split("\n", 1)[0])) for c in commits],
        changes=[_masked(row, masker, own) for row, own in rows],
        issues=[i.model_copy(update={"path": mask(i.path), "message": mask(i.message)}) for i in issues],
    )


def _masked(change: Change, masker: Masker, own: dict) -> Change:
    return change.model_copy(
        update={
            k: masker.mask(getattr(change, k), own) for k in ("goal_id", "agent_id", "todo_id", "detail", "event_id")
        }
    )

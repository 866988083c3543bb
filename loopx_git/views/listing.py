"""Filtered lists: todos from the fold; events and run history read from the branch."""

from __future__ import annotations

import re

from pydantic import Field

from loopx_git.errors import ValidationError
from loopx_git.model.event import LISTED_KINDS
from loopx_git.model.event_head import EventBase, event_order_key
from loopx_git.model.ids import TIMESTAMP_RE
from loopx_git.model.run import RunRecord, run_order_key
from loopx_git.model.state import State, require_goal
from loopx_git.model.todo import SuggestedTodo, TodoItem, TodoStatus
from loopx_git.store.reader import StateReader
from loopx_git.store.records import holding
from loopx_git.views.status import todo_order
from loopx_git.views.status_model import RewardDigest

LIST_STATUSES = (*(s.value for s in TodoStatus), "superseded")
"""What ``todo list --status`` takes: a stored status, or ``superseded`` (``superseded_by`` set)."""


def list_todos(
    state: State,
    goal_id: str,
    *,
    status: str | None = None,
    role: str | None = None,
    claimed_by: str | None = None,
    include_closed: bool = False,
) -> list[TodoItem]:
    """Without ``status``: the live todos (``include_closed`` adds done and superseded ones). A
    superseded todo keeps the status it had when it was replaced, so it is listed only under
    ``superseded``, never as open, blocked or deferred."""
    if status is not None and status not in LIST_STATUSES:
        raise ValidationError(
            f"field 'status': {status!r} is not one of {', '.join(LIST_STATUSES)}", code="invalid-field"
        )
    gs = require_goal(state, goal_id)
    out = []
    for todo in gs.todos.values():
        closed = todo.status == "done" or bool(todo.superseded_by)
        if status is None and closed and not include_closed:
            continue
        if status == "superseded" and not todo.superseded_by:
            continue
        if status not in (None, "superseded") and (todo.status != status or todo.superseded_by):
            continue
        if role and todo.role != role:
            continue
        if claimed_by and todo.claimed_by != claimed_by:
            continue
        out.append(todo)
    return sorted(out, key=todo_order)


def list_suggested(state: State, goal_id: str) -> list[SuggestedTodo]:
    gs = require_goal(state, goal_id)
    return sorted((s for s in gs.suggested.values() if not s.promoted), key=lambda s: (s.priority, s.created_at))


def _since_shard(since: str | None) -> str:
    if not since:
        return ""
    if not TIMESTAMP_RE.fullmatch(since) and not (len(since) == 10 and TIMESTAMP_RE.fullmatch(since + "T00:00:00Z")):
        raise ValidationError(
            f"field 'since': {since!r} is not a UTC date or time (2026-01-31 or 2026-01-31T12:00:00Z)",
            code="invalid-field",
        )
    return since[:13].replace("-", "/").replace("T", "/") if len(since) > 10 else since.replace("-", "/")


def list_events(
    reader: StateReader,
    tip: str | None,
    state: State,
    goal_id: str,
    *,
    agent_id: str | None = None,
    todo_id: str | None = None,
    run_id: str | None = None,
    case_id: str | None = None,
    benchmark_id: str | None = None,
    kind: str | None = None,
    since: str | None = None,
    limit: int | None = None,
) -> list[EventBase]:
    """Events in fold order; ``since`` skips older hour shards unread; ``limit`` keeps the newest N."""
    if kind is not None and kind not in LISTED_KINDS:
        raise ValidationError(f"field 'kind': {kind!r} is not one of {', '.join(LISTED_KINDS)}", code="invalid-field")
    require_goal(state, goal_id)
    shard = _since_shard(since)
    keys = {"agent_id": agent_id, "todo_id": todo_id, "run_id": run_id, "case_id": case_id}
    keys["benchmark_id"] = benchmark_id
    named = next(((k, v) for k, v in keys.items() if v is not None), None)
    # a join key names few events of many: records that do not hold it in their bytes are not parsed
    keep = holding(*named) if named else None
    events = reader.read_events(reader.goal_files(tip, goal_id, "events", shard), keep=keep)
    wanted = [
        e
        for e in events
        if (agent_id is None or e.agent_id == agent_id)
        and (todo_id is None or e.todo_id == todo_id)
        and (run_id is None or e.run_id == run_id)
        and (case_id is None or e.case_id == case_id)
        and (benchmark_id is None or e.benchmark_id == benchmark_id)
        and (kind is None or e.event_kind == kind or _imported_kind(e) == kind)
        and (not since or e.recorded_at >= _full(since))
    ]
    wanted.sort(key=event_order_key)
    return wanted[-limit:] if limit else wanted


def _imported_kind(event: EventBase) -> str | None:
    """An imported line's own kind: ``--kind validation`` finds imported validations too."""
    origin = getattr(event, "origin", None)
    return origin.kind if origin is not None else None


def _full(since: str) -> str:
    return since if len(since) > 10 else since + "T00:00:00Z"


def run_history(
    reader: StateReader,
    tip: str | None,
    state: State,
    goal_id: str,
    *,
    agent_id: str | None = None,
    limit: int | None = None,
    evidence_ref: str | None = None,
) -> list[RunRecord]:
    """Run records, newest first, each with the human rewards given for it beside it; with
    ``evidence_ref`` (and ``agent_id``), exactly the one record it names, or a refusal."""
    gs = require_goal(state, goal_id)
    if evidence_ref is not None:
        runs = [resolve_evidence_ref(reader, tip, state, goal_id, agent_id, evidence_ref)]
    else:
        runs = [
            r
            for r in reader.read_runs(reader.goal_files(tip, goal_id, "runs"))
            if agent_id is None or r.agent_id == agent_id
        ]
    runs.sort(key=run_order_key, reverse=True)
    runs = runs[:limit] if limit else runs
    by_run: dict[str, list[RewardDigest]] = {}
    for reward in sorted(gs.rewards.values(), key=lambda r: (r.judged_at, r.reward_id)):
        if reward.run_id is not None:
            by_run.setdefault(reward.run_id, []).append(RewardDigest.of(reward))
    return [
        HistoryEntry(
            **r.model_dump(),
            rewards=by_run.get(r.run_id, []),
            slot_spent_at=gs.spends[r.run_id][1] if r.run_id in gs.spends else None,
        )
        for r in runs
    ]


class HistoryEntry(RunRecord):
    """A run record with the rewards given for it (``history``)."""

    rewards: list[RewardDigest] = Field(default_factory=list)
    slot_spent_at: str | None = None
    """When a compute slot was spent after this run (``quota spend-slot``), else null."""


EVIDENCE_REF_RE = re.compile(r"evr:(?P<run>[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}):(?P<digest>[0-9a-f]{16})")
REFRESH = "refresh the context: `loopx quota should-run --goal-id {goal} --agent-id {agent}` projects current refs"


def resolve_evidence_ref(
    reader: StateReader, tip: str | None, state: State, goal_id: str, agent_id: str | None, ref: str
) -> RunRecord:
    """The one run record of ``goal_id`` and ``agent_id`` that ``ref`` (a replan context's
    ``evidence_ref``) names. Never a fallback: an unknown, stale, wrong-goal or wrong-agent ref is
    refused with its own code, and nothing is written (no read receipt)."""
    from loopx_git.errors import NotFoundError, RuleError
    from loopx_git.views.replan_context import evidence_ref as ref_of

    hint = REFRESH.format(goal=goal_id, agent=agent_id or "AGENT")
    if agent_id is None:
        raise ValidationError(
            "field 'agent_id': missing with --evidence-ref; rule: an evidence ref resolves within one agent's "
            "history (--agent-id)",
            code="agent-required",
        )
    match = EVIDENCE_REF_RE.fullmatch(ref)
    if match is None:
        raise ValidationError(
            f"field 'evidence_ref': {ref[:60]!r} is not an evidence ref; rule: evr:<run id>:<16 hex digits>, "
            "as a replan context gives it",
            code="invalid-evidence-ref",
            hint=hint,
        )
    run_id = match.group("run")
    files = reader.goal_files(tip, goal_id, "runs")
    found = [r for r in reader.read_runs(f for f in files if f[0].endswith(f"/{run_id}.json")) if r.run_id == run_id]
    if not found:
        elsewhere = sorted(g for g, gs in state.goals.items() if g != goal_id and run_id in gs.run_ids)
        if elsewhere:
            raise RuleError(
                f"field 'evidence_ref': {ref!r} names a run of goal {elsewhere[0]!r}, not of {goal_id!r}; rule: "
                "an evidence ref resolves in the goal it was projected for",
                code="evidence-ref-wrong-goal",
                hint=hint,
            )
        raise NotFoundError(
            f"field 'evidence_ref': {ref!r} names no run of goal {goal_id!r}; rule: an evidence ref names a "
            "run of the goal's history",
            code="unknown-evidence-ref",
            hint=hint,
        )
    run = found[0]
    if run.agent_id != agent_id:
        raise RuleError(
            f"field 'evidence_ref': {ref!r} names a run of agent {run.agent_id or '(none)'}, not of "
            f"{agent_id}; rule: an agent's evidence comes from its own history only",
            code="evidence-ref-wrong-agent",
            hint=hint,
        )
    if ref_of(run) != ref:
        raise RuleError(
            f"field 'evidence_ref': {ref!r} does not match run {run_id} as it is now (its content digest "
            "differs); rule: a ref is bound to the content it was projected from",
            code="stale-evidence-ref",
            hint=hint,
        )
    return run

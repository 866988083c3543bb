"""The loop ledger's iteration protocol: add entries, select exactly one runnable entry per
iteration, and write its result back (status, evidence, verdict, next) before anything else is
selected. Refusals carry the seed's failure codes."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.write import EventMaker, Write, build, check_actor, given, one_of
from loopx_git.errors import NotFoundError, RuleError, ValidationError
from loopx_git.model.event_head import FieldChange
from loopx_git.model.ids import new_id
from loopx_git.model.ledger import (
    LEDGER_SCHEMA,
    EntryStatus,
    Evidence,
    LedgerAdd,
    LedgerEntry,
    LedgerRecord,
    LedgerSelect,
    Next,
    Verdict,
)
from loopx_git.model.state import GoalState, State, listed, require_goal

ACTION_SCHEMA = "loopx_ledger_action_v0"


def require_entry(gs: GoalState, entry_id: str) -> LedgerEntry:
    entry = gs.ledger.get(entry_id)
    if entry is None:
        raise NotFoundError(
            f"entry_id '{entry_id}' is not a ledger entry of goal '{gs.goal_id}' (entries: {listed(gs.ledger)})",
            code="not-found",
            hint=f"`loopx ledger list --goal-id {gs.goal_id}` lists them",
        )
    return entry


def _changes(before: LedgerEntry, **after) -> list[FieldChange]:
    old = before.model_dump(mode="json")
    return [FieldChange(field=k, before=old.get(k), after=v) for k, v in after.items() if old.get(k) != v]


def add_entry(
    state: State,
    *,
    goal_id: str,
    claim: str,
    action: str,
    entry_id: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    given(entry_id=entry_id)
    check_actor(gs, actor)
    entry_id = new_id("ledger") if entry_id is None else entry_id
    if entry_id in gs.ledger:
        raise RuleError(
            f"field 'entry_id': '{entry_id}' is already a ledger entry; rule: entry ids are unique", code="entry-exists"
        )
    entry = build(
        LedgerEntry,
        {"id": entry_id, "claim": claim, "action": action, "created_at": now, "updated_at": now},
        what="ledger entry",
    )
    event = EventMaker(gs, now).make(
        LedgerAdd,
        goal_id=goal_id,
        entry_id=entry_id,
        agent_id=actor,
        summary=f"ledger {entry_id}: {action}"[:1000],
        changes=[
            FieldChange(field=k, after=v)
            for k, v in entry.model_dump(mode="json").items()
            if k not in ("id", "evidence") and v not in (None, [], 0)
        ],
    )
    return Write("ledger add", f"{entry_id}: {action}", goal_id, actor, [event], result=entry)


def stopped_by(gs: GoalState) -> list[LedgerEntry]:
    """Entries that halt the loop until a person answers (UNVERIFIABLE, or next=ask_user)."""
    return [e for e in gs.ledger.values() if e.stops_the_loop]


def action_contract(goal_id: str, entry: LedgerEntry) -> dict:
    """What an iteration is handed: the one entry and the rule it runs under."""
    return {
        "schema_version": ACTION_SCHEMA,
        "ledger_schema": LEDGER_SCHEMA,
        "goal_id": goal_id,
        "entry": entry.model_dump(mode="json"),
        "iteration": entry.iterations,
        "rule": "execute only this entry's action, verify it with evidence, then write back status, evidence, "
        "verdict and next before anything else is selected",
    }


def select_next(state: State, *, goal_id: str, agent_id: str | None, now: str) -> Write:
    """Mark the first runnable entry active for ``agent_id``; its action contract is the result
    (None when nothing is runnable)."""
    gs = require_goal(state, goal_id)
    check_actor(gs, agent_id)
    held = [e for e in gs.ledger.values() if e.status == EntryStatus.active.value and e.selected_by == agent_id]
    if held:
        raise RuleError(
            f"entry '{held[0].id}' is still active for {agent_id or 'this operator'} without a write-back; "
            "rule: one action per iteration",
            code="multiple_actions_in_one_iteration",
            hint=f"write it back first: loopx ledger record --goal-id {goal_id} --entry-id {held[0].id} ...",
        )
    waiting = stopped_by(gs)
    if waiting:
        raise RuleError(
            f"the loop is stopped: entry '{waiting[0].id}' waits for a person "
            f"(verdict {waiting[0].verdict}, next {waiting[0].next}); rule: UNVERIFIABLE and ask_user stop "
            "the loop",
            code="needs-attention",  # loopx's own refusal; needs_attention (the seed's) is the fire's status
            hint="answer it with `loopx ledger record` (new evidence, a verdict, next=resume)",
        )
    runnable = sorted((e for e in gs.ledger.values() if e.runnable), key=lambda e: (e.created_at, e.id))
    if not runnable:
        return Write("ledger next", "nothing runnable", goal_id, agent_id, result=None)
    entry = runnable[0]
    selected = entry.model_copy(
        update={
            "status": EntryStatus.active.value,
            "selected_by": agent_id,
            "iterations": entry.iterations + 1,
            "updated_at": now,
        }
    )
    event = EventMaker(gs, now).make(
        LedgerSelect,
        goal_id=goal_id,
        entry_id=entry.id,
        agent_id=agent_id,
        summary=f"selected {entry.id}: {entry.action}"[:1000],
        changes=_changes(
            entry, status=selected.status, selected_by=agent_id, iterations=selected.iterations, updated_at=now
        ),
    )
    return Write(
        "ledger next",
        f"{entry.id} for {agent_id or 'an operator'}",
        goal_id,
        agent_id,
        [event],
        result=action_contract(goal_id, selected),
    )


def record_result(
    state: State,
    *,
    goal_id: str,
    entry_id: str,
    status: str,
    verdict: str,
    next_: str,
    evidence: Sequence[Evidence] = (),
    agent_id: str | None,
    question: str | None = None,
    failure: str | None = None,
    now: str,
) -> Write:
    """Write an iteration's result back. Refused: ``done`` without evidence (evidence_missing),
    and an UNVERIFIABLE entry turned MATCH without new evidence (unverifiable_inherited_confidence).
    ``failure`` says why the iteration failed (a fire's error); every write-back replaces it."""
    gs = require_goal(state, goal_id)
    given(question=question, failure=failure)
    if failure is not None and len(failure) > 1000:
        raise ValidationError(
            f"field 'failure': {len(failure)} characters; rule: one line of at most 1000", code="invalid-field"
        )
    check_actor(gs, agent_id)
    entry = require_entry(gs, entry_id)
    for name, value, enum in (("status", status, EntryStatus), ("verdict", verdict, Verdict), ("next", next_, Next)):
        one_of(name, value, enum)
    if status == EntryStatus.active.value:
        raise ValidationError(
            "field 'status': a write-back ends the iteration: pending, blocked or done", code="invalid-field"
        )
    if entry.status != EntryStatus.active.value and not entry.stops_the_loop:
        raise RuleError(
            f"entry '{entry_id}' is {entry.status}, not selected; rule: an iteration selects one entry "
            "(loopx ledger next) and writes that one back",
            code="not-selected",
        )
    if entry.status == EntryStatus.active.value and agent_id is not None and entry.selected_by not in (None, agent_id):
        raise RuleError(
            f"entry '{entry_id}' is active for '{entry.selected_by}'; rule: the iteration that selected an "
            "entry writes it back",
            code="not-selected",
        )
    evidence = [
        build(Evidence, e.model_dump(mode="json", exclude_none=True) if isinstance(e, Evidence) else e, what="evidence")
        for e in evidence
    ]  # today's rules, however the items were made
    new = [e for e in evidence if e not in entry.evidence]
    # the more specific rule first: MATCH on an UNVERIFIABLE entry without new evidence is inherited
    # confidence, whatever the status (a `done` without evidence is also, but less exactly, evidence_missing)
    if entry.verdict == Verdict.UNVERIFIABLE.value and verdict == Verdict.MATCH.value and not new:
        raise RuleError(
            f"field 'verdict': entry '{entry_id}' was UNVERIFIABLE; MATCH needs new evidence; rule: an "
            "unverifiable verdict never inherits confidence",
            code="unverifiable_inherited_confidence",
        )
    if status == EntryStatus.done.value and not new:
        raise RuleError(
            f"field 'evidence': entry '{entry_id}' cannot be done without evidence (a test path, diff, "
            "command output digest, URL, artifact id or receipt hash); rule: evidence first",
            code="evidence_missing",
        )
    asked = question if next_ == Next.ask_user.value else None
    changes = _changes(
        entry,
        status=status,
        verdict=verdict,
        next=next_,
        selected_by=None,
        question=asked,
        failure=failure,
        updated_at=now,
    )
    event = EventMaker(gs, now).make(
        LedgerRecord,
        goal_id=goal_id,
        entry_id=entry_id,
        agent_id=agent_id,
        evidence=list(new),
        changes=changes,
        summary=(f"{entry_id}: {status} {verdict} next={next_}" + (f"; asks: {question}" if question else ""))[:1000],
    )
    written = entry.model_copy(
        update={
            "status": status,
            "verdict": verdict,
            "next": next_,
            "selected_by": None,
            "question": asked,
            "failure": failure,
            "updated_at": now,
            "evidence": entry.evidence + new,
        }
    )
    return Write(
        "ledger record", f"{entry_id} {status} {verdict} next={next_}", goal_id, agent_id, [event], result=written
    )


def record_fire(state: State, *, goal_id: str, summary, agent_id: str | None, now: str) -> Write:
    """The record of a fire's end: terminal status, stop condition, iterations, entries touched."""
    from loopx_git.model.event import FireRecord

    gs = require_goal(state, goal_id)
    check_actor(gs, agent_id)
    event = EventMaker(gs, now).make(
        FireRecord,
        goal_id=goal_id,
        agent_id=agent_id,
        fire=summary,
        # the reason's first words only: the whole of it is in the record, and a summary stays short
        summary=f"fire {summary.fire_id}: {summary.terminal_status} ({summary.stop_condition}, "
        f"{summary.iterations_run} iteration(s))" + (f": {summary.reason.message[:160]}" if summary.reason else ""),
    )
    return Write("fire", f"{summary.fire_id} {summary.terminal_status}", goal_id, agent_id, [event], result=summary)

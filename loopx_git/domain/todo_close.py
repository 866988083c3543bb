"""Closing a todo: complete (with its delivery outcome, the research closeout it may owe, what it
wakes) and supersede (replaced by another; both keep the link, nothing is deleted)."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.todo_rules import (
    TODO_KEYS,
    delivery_tier,
    not_claimed_by_other,
    not_gate_held,
    require_todo,
    still_open,
    transition,
    wake_dependents,
)
from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, many
from loopx_git.errors import RuleError, ValidationError
from loopx_git.model.event_head import EventBase
from loopx_git.model.goal import explore_policy
from loopx_git.model.record import JsonScalar
from loopx_git.model.research_gate import (
    invalidation,
    retirement_contract,
)
from loopx_git.model.state import GoalState, State, require_goal
from loopx_git.model.todo import (
    ResumeCondition,
    TodoComplete,
    TodoItem,
    TodoStatus,
    TodoSupersede,
    TodoUpdate,
)


def complete_todo(
    state: State,
    *,
    goal_id: str,
    todo_id: str,
    evidence: Sequence[str] = (),
    no_follow_up: bool = False,
    reason: str | None = None,
    successor_todo_ids: Sequence[str] = (),
    decision_outcome: str | None = None,
    delivery_outcome: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    """``decision_outcome`` (a ``user_gate`` todo only): approve | reject | cancel, recorded as the
    decision of the todo's gate; only an approval wakes what waits for the todo. ``delivery_outcome``:
    the result tier the completion delivered, kept on the todo and in the event's details."""
    from loopx_git.domain import gate as gate_ops  # only a user_gate completion needs the gates
    from loopx_git.domain import gate_todo

    gs = require_goal(state, goal_id)
    many(evidence=evidence, successor_todo_ids=successor_todo_ids)
    tier = delivery_tier(delivery_outcome)
    check_actor(gs, actor)
    todo = require_todo(gs, todo_id)
    still_open(todo, "completed")
    not_claimed_by_other(todo, actor, "complete")
    not_gate_held(gs, todo, "completed")
    if decision_outcome is not None:
        gate_todo.check_outcome(todo, decision_outcome)
    if no_follow_up and not reason:
        raise ValidationError(
            "field 'reason': --no-follow-up needs a reason; rule: completing without evidence says why nothing follows",
            code="reason-required",
        )
    if not evidence and not no_follow_up:
        raise ValidationError(
            "field 'evidence': at least one --evidence is required; rule: complete needs "
            "evidence unless --no-follow-up is given with a reason",
            code="evidence-required",
        )
    if todo.capability_guard is not None:
        closeout_result(gs, todo)
    for successor in successor_todo_ids:
        if successor == todo_id:
            raise RuleError(f"field 'successor_todo_ids': '{todo_id}' cannot succeed itself", code="invalid-dependency")
        require_todo(gs, successor, field="successor_todo_ids")
    update = {
        "status": TodoStatus.done.value,
        "completed_at": now,
        "updated_at": now,
        "evidence": todo.evidence + [e for e in evidence if e not in todo.evidence],
        "successor_todo_ids": todo.successor_todo_ids
        + [s for s in successor_todo_ids if s not in todo.successor_todo_ids],
        "reason": reason,
        "delivery_outcome": tier,
    }
    done = build(TodoItem, {**todo.model_dump(mode="json"), **update}, what="todo")
    details: dict[str, JsonScalar] = {"no_follow_up": True} if no_follow_up else {}
    if tier is not None:
        details["delivery_outcome"] = tier
    maker = EventMaker(gs, now)
    event = maker.make(
        TodoComplete,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor or todo.claimed_by,
        summary=f"{todo_id} done" + (f" ({len(evidence)} evidence)" if evidence else " (no follow-up)"),
        state_transition=transition(todo.status, "done"),
        changes=changes(todo, done, skip=TODO_KEYS),
        details=details or None,
    )
    gated: list[EventBase] = []
    if decision_outcome is not None:
        gated, gate = gate_todo.todo_gate_decision(
            gs, maker, todo, decision_outcome, cause=event, reason=reason, actor=actor, now=now
        )
    woken: list[EventBase] = []
    if decision_outcome in (None, "approve"):  # a rejected or cancelled gate consumes no authority
        woken = wake_dependents(
            gs, maker, event, ResumeCondition("todo_done", todo_id=todo_id), unblocked=todo.unblocks_todo_id
        )
    if decision_outcome == "approve":  # and what a gate opened by hand for this todo unblocks
        done_already = {w.todo_id for w in woken}
        woken += [w for w in gate_ops.wake_unblocked(gs, maker, gated[-1], gate) if w.todo_id not in done_already]
    return Write(
        "todo complete",
        f"{todo_id}"
        + (f" ({decision_outcome})" if decision_outcome else "")
        + (f", woke {len(woken)}" if woken else ""),
        goal_id,
        actor or todo.claimed_by,
        [event, *gated, *woken],
        result=done,
    )


def supersede_todo(
    state: State, *, goal_id: str, todo_id: str, by: str, reason: str, actor: str | None, now: str
) -> Write:
    gs = require_goal(state, goal_id)
    check_actor(gs, actor)
    old = require_todo(gs, todo_id)
    new = require_todo(gs, by, field="by")
    if by == todo_id:
        raise RuleError(f"field 'by': todo '{todo_id}' cannot supersede itself", code="invalid-dependency")
    if not reason:
        raise ValidationError("field 'reason': required; rule: a supersede says why", code="reason-required")
    still_open(old, "superseded")
    not_gate_held(gs, old, "superseded")
    if old.capability_guard is not None:  # another terminal verb does not avoid the closeout check
        closeout_result(gs, old)
    if new.superseded_by:
        raise RuleError(
            f"field 'by': todo '{by}' is itself superseded by '{new.superseded_by}'; rule: supersede with a live todo",
            code="todo-closed",
        )
    not_claimed_by_other(old, actor, "supersede")
    not_claimed_by_other(new, actor, "name as the replacement")  # the write records on it what it replaces
    replaced = build(
        TodoItem,
        {
            **old.model_dump(mode="json"),
            "superseded_by": by,
            "reason": reason,
            "claimed_by": None,
            "updated_at": now,
            "successor_todo_ids": old.successor_todo_ids + ([by] if by not in old.successor_todo_ids else []),
        },
        what="todo",
    )
    successor = new.model_copy(update={"supersedes": new.supersedes + [todo_id], "updated_at": now})
    maker = EventMaker(gs, now)
    first = maker.make(
        TodoSupersede,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor,
        summary=f"{todo_id} superseded by {by}: {reason}"[:1000],
        state_transition={"from_state": old.status, "to_state": "superseded"},
        changes=changes(old, replaced, skip=TODO_KEYS),
    )
    second = maker.make(
        TodoUpdate,
        goal_id=goal_id,
        todo_id=by,
        agent_id=actor,
        summary=f"{by} supersedes {todo_id}",
        causality={"caused_by": first.event_id},
        changes=changes(new, successor, skip=TODO_KEYS),
    )
    return Write("todo supersede", f"{todo_id} by {by}", goal_id, actor, [first, second], result=replaced)


def closeout_result(gs: GoalState, todo: TodoItem) -> None:
    """A joint_probe admitted for a research gap closes with its exact result: its experiment's
    current observation, made under execution lineage for this todo and its obligation, is a
    coverage-backed terminal result or a dismissal (seed 002), while its guard holds (a stale duty is
    retired first). Once its duty is retired, or with the gate off, it closes as any todo does. A
    done todo certifies nothing more: not the goal, not the gap beyond what that observation says."""
    guard = todo.capability_guard
    assert guard is not None
    if guard.obligation_id in gs.retirements or not explore_policy(gs.goal).active:
        return  # the duty is closed, or the gate is off: the todo closes as any todo does
    stale = invalidation(gs, guard)
    if stale:
        raise RuleError(
            f"field 'todo_id': {todo.todo_id}'s capability duty {guard.obligation_id} no longer holds "
            f"({'; '.join(stale)}); rule: a joint probe closes on the same current eligibility its result was "
            "attributed under; an invalidated duty is retired instead",
            code="stale-capability-duty",
            hint="retirement_contract: " + retirement_contract(gs, guard),
        )
    for node_id in todo.explore_result_node_refs:
        node = gs.explore.get(node_id)
        facts = gs.research.get(node.current_observation) if node is not None and node.current_observation else None
        lineage = facts.lineage if facts is not None else None
        if (
            facts is not None
            and lineage is not None
            and (lineage.todo_id, lineage.obligation_id) == (todo.todo_id, guard.obligation_id)
            and (facts.resolution == "dismissed" or (facts.resolution is None and facts.coverage_backed))
        ):
            return
    raise RuleError(
        f"field 'todo_id': {todo.todo_id} is a joint probe for capability obligation {guard.obligation_id} and "
        f"{', '.join(todo.explore_result_node_refs)} has no terminal result or dismissal recorded under it; rule: "
        "its closeout needs the task's exact terminal experiment or dismissal evidence (explore observe with "
        "execution_lineage first)",
        code="closeout-needs-result",
    )

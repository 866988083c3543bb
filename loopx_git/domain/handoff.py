"""Handoffs: the source agent prepares one for the todos it holds; the target adopts it, which moves
every claim to the target in the same commit; either side (or a person) may cancel it before that.
An adopted or cancelled handoff is final."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, ClassVar

from loopx_git.domain.operation import Actor, Cli, Field, GoalId, Operation, applies
from loopx_git.domain.todo_rules import TODO_KEYS, require_todo
from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, many
from loopx_git.errors import NotFoundError, RuleError, ValidationError
from loopx_git.model.event_head import EventBase
from loopx_git.model.handoff import AgentHandoff, HandoffAdopt, HandoffCancel, HandoffPrepare, HandoffStatus
from loopx_git.model.state import GoalState, State, listed, require_agent, require_goal
from loopx_git.model.todo import TodoStatus, TodoUpdate

HANDOFF_KEYS = ("handoff_id", "schema_version")


def require_handoff(gs: GoalState, handoff_id: str) -> AgentHandoff:
    handoff = gs.handoffs.get(handoff_id)
    if handoff is None:
        raise NotFoundError(
            f"handoff_id '{handoff_id}': no such handoff in goal '{gs.goal_id}' (handoffs: {listed(gs.handoffs)}); "
            "rule: a handoff named by a command exists",
            code="unknown-handoff",
            hint=f"`loopx handoff list --goal-id {gs.goal_id}` lists them",
        )
    return handoff


def _held_by(gs: GoalState, todo_id: str, agent_id: str, *, field: str, verb: str) -> None:
    todo = require_todo(gs, todo_id, field=field)
    if todo.superseded_by or todo.status == TodoStatus.done.value:
        raise RuleError(
            f"field '{field}': todo '{todo_id}' is {'superseded' if todo.superseded_by else 'done'}; rule: only work "
            f"still to do is {verb}",
            code="todo-closed",
        )
    if todo.claimed_by != agent_id:
        holder = f"held by '{todo.claimed_by}'" if todo.claimed_by else "not claimed"
        raise RuleError(
            f"field '{field}': todo '{todo_id}' is {holder}, not by '{agent_id}'; rule: a handoff moves the todos "
            "its source agent holds",
            code="claim-not-held",
            hint=f"claim it first: `loopx todo claim --goal-id {gs.goal_id} --todo-id {todo_id} --agent-id {agent_id}`",
        )


def prepare_handoff(
    state: State,
    *,
    goal_id: str,
    handoff_id: str,
    from_agent_id: str,
    to_agent_id: str,
    todo_ids: Sequence[str] = (),
    scope: str | None = None,
    stop_condition: str,
    evidence_refs: Sequence[str] = (),
    review_required: bool = True,
    actor: str | None = None,
    as_operator: bool = False,
    now: str,
) -> Write:
    """``actor`` is the agent the command acts as (None: the source itself); ``as_operator`` a person
    preparing it for the source, which the event records."""
    gs = require_goal(state, goal_id)
    many(todo_ids=todo_ids, evidence_refs=evidence_refs)
    given(handoff_id=handoff_id, scope=scope)
    check_actor(gs, from_agent_id, field="from_agent_id")
    if as_operator and actor is not None:
        raise ValidationError(
            f"field 'agent_id': '{actor}' given with --as-operator; rule: an operator is a person, acting as no agent",
            code="invalid-field",
        )
    if not as_operator and actor is not None and actor != from_agent_id:
        check_actor(gs, actor)
        raise RuleError(
            f"field 'from_agent_id': '{from_agent_id}' is the source, but this command acts as '{actor}'; rule: a "
            "handoff is prepared by the agent that holds its todos, or by a person acting as operator, who says so "
            "(--as-operator)",
            code="not-holder",
            hint=f"run it as {from_agent_id} (`--agent-id {from_agent_id}`), or as a person with --as-operator",
        )
    require_agent(gs, to_agent_id, field="to_agent_id", rule="a handoff's target is a registered agent")
    if from_agent_id == to_agent_id:
        raise ValidationError(
            f"field 'to_agent_id': '{to_agent_id}' is the source too; rule: a handoff moves work to another agent",
            code="invalid-field",
        )
    if handoff_id in gs.handoffs:
        raise RuleError(
            f"field 'handoff_id': '{handoff_id}' is already a handoff of goal '{goal_id}' "
            f"({gs.handoffs[handoff_id].status}); rule: handoff ids are unique within a goal",
            code="handoff-exists",
        )
    if not todo_ids and scope is None:
        raise ValidationError(
            "field 'todo_ids': the handoff moves nothing; rule: a handoff names the todos (--todo-id) or the "
            "scope (--scope) it moves",
            code="invalid-field",
        )
    for todo_id in todo_ids:
        _held_by(gs, todo_id, from_agent_id, field="todo_ids", verb="handed off")
    pending = {t for h in gs.handoffs.values() if h.waiting for t in h.todo_ids} & set(todo_ids)
    if pending:
        raise RuleError(
            f"field 'todo_ids': {', '.join(sorted(pending))} already wait in another handoff; rule: a todo is in at "
            "most one handoff at a time (cancel that one first)",
            code="handoff-pending",
        )
    handoff = build(
        AgentHandoff,
        {
            "handoff_id": handoff_id,
            "from_agent_id": from_agent_id,
            "to_agent_id": to_agent_id,
            "todo_ids": list(dict.fromkeys(todo_ids)),
            "scope": scope,
            "stop_condition": stop_condition,
            "evidence_refs": list(evidence_refs),
            "review_required": review_required,
            "self_merge_allowed": not review_required,
            "prepared_at": now,
            "updated_at": now,
        },
        what="handoff",
    )
    event = EventMaker(gs, now).make(
        HandoffPrepare,
        goal_id=goal_id,
        handoff_id=handoff_id,
        agent_id=from_agent_id,
        summary=f"handoff {handoff_id}: {from_agent_id} -> {to_agent_id} ({', '.join(handoff.todo_ids) or scope})",
        handoff={"to_agent_id": to_agent_id},
        details={"prepared_by": "operator"} if as_operator else {},
        changes=changes(None, handoff, skip=HANDOFF_KEYS),
    )
    return Write("handoff prepare", f"{handoff_id} to {to_agent_id}", goal_id, from_agent_id, [event], result=handoff)


def _waiting(handoff: AgentHandoff, verb: str) -> None:
    if not handoff.waiting:
        raise RuleError(
            f"handoff '{handoff.handoff_id}' is already {handoff.status}; rule: an adopted or cancelled handoff is "
            f"final and cannot be {verb}",
            code="handoff-closed",
        )


def adopt_handoff(state: State, *, goal_id: str, handoff_id: str, agent_id: str, now: str) -> Write:
    gs = require_goal(state, goal_id)
    given(agent_id=agent_id)
    check_actor(gs, agent_id)
    handoff = require_handoff(gs, handoff_id)
    _waiting(handoff, "adopted")
    if agent_id != handoff.to_agent_id:
        raise RuleError(
            f"field 'agent_id': handoff '{handoff_id}' is for '{handoff.to_agent_id}', not '{agent_id}'; rule: only "
            "the target agent adopts a handoff",
            code="not-handoff-target",
        )
    for todo_id in handoff.todo_ids:  # the source may have let go of one since it prepared the handoff
        _held_by(gs, todo_id, handoff.from_agent_id, field="todo_ids", verb="handed off")
    adopted = handoff.model_copy(update={"status": HandoffStatus.adopted.value, "adopted_at": now, "updated_at": now})
    maker = EventMaker(gs, now)
    event = maker.make(
        HandoffAdopt,
        goal_id=goal_id,
        handoff_id=handoff_id,
        agent_id=agent_id,
        summary=f"handoff {handoff_id} adopted by {agent_id} from {handoff.from_agent_id}",
        handoff={"to_agent_id": agent_id},
        state_transition={"from_state": handoff.status, "to_state": adopted.status},
        changes=changes(handoff, adopted, skip=HANDOFF_KEYS),
    )
    moved: list[EventBase] = []
    for todo_id in handoff.todo_ids:
        todo = gs.todos[todo_id]
        claimed = todo.model_copy(update={"claimed_by": agent_id, "updated_at": now})
        moved.append(
            maker.make(
                TodoUpdate,
                goal_id=goal_id,
                todo_id=todo_id,
                agent_id=agent_id,
                summary=f"{todo_id} handed off: {handoff.from_agent_id} -> {agent_id} ({handoff_id})",
                handoff={"to_agent_id": agent_id},
                causality={"caused_by": event.event_id, "source_event_id": event.event_id},
                changes=changes(todo, claimed, skip=TODO_KEYS),
            )
        )
    return Write(
        "handoff adopt",
        f"{handoff_id}: {len(moved)} claim(s) to {agent_id}",
        goal_id,
        agent_id,
        [event, *moved],
        result=adopted,
    )


class CancelHandoff(Operation):
    """Cancel a handoff not yet adopted (its source, its target or a person).

    Example: loopx handoff cancel -g parser --handoff-id h1 --reason 'bob is on leave' -a alice
    """

    words: ClassVar = ("handoff", "cancel")
    method: ClassVar = "handoff_cancel"
    positional: ClassVar = ("goal_id", "handoff_id")
    done: ClassVar = "cancelled handoff {summary}"

    goal_id: GoalId
    handoff_id: Annotated[str, Cli("--handoff-id")] = Field(description="Handoff id.")
    reason: Annotated[str, Cli("--reason")] = Field(description="Why.")
    agent_id: Actor = None


@applies(CancelHandoff)
def cancel_handoff(state: State, op: CancelHandoff, now: str) -> Write:
    goal_id, handoff_id, reason, agent_id = op.goal_id, op.handoff_id, op.reason, op.agent_id
    gs = require_goal(state, goal_id)
    given(reason=reason)
    check_actor(gs, agent_id)
    handoff = require_handoff(gs, handoff_id)
    _waiting(handoff, "cancelled")
    if agent_id is not None and agent_id not in (handoff.from_agent_id, handoff.to_agent_id):
        raise RuleError(
            f"field 'agent_id': '{agent_id}' is neither side of handoff '{handoff_id}' ({handoff.from_agent_id} -> "
            f"{handoff.to_agent_id}); rule: a handoff is cancelled by its source, its target or a person",
            code="not-handoff-party",
        )
    cancelled = build(
        AgentHandoff,
        {
            **handoff.model_dump(mode="json"),
            "status": HandoffStatus.cancelled.value,
            "reason": reason,
            "cancelled_at": now,
            "updated_at": now,
        },
        what="handoff",
    )
    event = EventMaker(gs, now).make(
        HandoffCancel,
        goal_id=goal_id,
        handoff_id=handoff_id,
        agent_id=agent_id,
        summary=f"handoff {handoff_id} cancelled: {reason}"[:1000],
        state_transition={"from_state": handoff.status, "to_state": cancelled.status},
        changes=changes(handoff, cancelled, skip=HANDOFF_KEYS),
    )
    return Write("handoff cancel", handoff_id, goal_id, agent_id, [event], result=cancelled)

"""Operator gates: open one on the work it blocks, and let its owner decide it. An approval wakes
what the gate unblocks in the same commit; a rejection (or a cancellation) keeps the blocked work
blocked, with the reason; a deferral keeps it blocked and leaves the gate to be decided again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, ClassVar

from loopx_git.domain.operation import Actor, Cli, Field, GoalId, Operation, applies, ids
from loopx_git.domain.todo_rules import require_todo, resume_event
from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, one_of
from loopx_git.errors import NotFoundError, RuleError, ValidationError
from loopx_git.model.event_head import EventBase
from loopx_git.model.gate import DECIDED, Decision, GateDecide, GateOpen, GateStatus, OperatorGate, OwnerClass
from loopx_git.model.state import GoalState, State, listed, require_agent, require_goal
from loopx_git.model.todo import TodoStatus

GATE_KEYS = ("gate_id", "schema_version")
CLI_DECISIONS = (Decision.approve.value, Decision.reject.value, Decision.defer.value)


def require_gate(gs: GoalState, gate_id: str, *, field: str = "gate_id") -> OperatorGate:
    gate = gs.gates.get(gate_id)
    if gate is None:
        raise NotFoundError(
            f"{field} '{gate_id}': no such gate in goal '{gs.goal_id}' (gates: {listed(gs.gates)}); "
            "rule: a gate named by a command exists",
            code="unknown-gate",
            hint=f"`loopx gate list --goal-id {gs.goal_id}` lists them",
        )
    return gate


def _owner(gs: GoalState, owner_class: str, owner_agent_id: str | None) -> None:
    one_of("owner_class", owner_class, OwnerClass)
    if owner_class == OwnerClass.agent.value:
        if owner_agent_id is None:
            raise ValidationError(
                "field 'owner_agent_id': an agent-owned gate names its agent; rule: --owner-agent-id is "
                "required with --owner-class agent",
                code="invalid-field",
            )
        require_agent(gs, owner_agent_id, field="owner_agent_id", rule="an agent that owns a gate is registered")
    elif owner_agent_id is not None:
        raise ValidationError(
            f"field 'owner_agent_id': a {owner_class}-owned gate names no agent; rule: --owner-agent-id goes "
            "with --owner-class agent only",
            code="invalid-field",
        )


def _unique(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


OWNER_CLASSES = tuple(c.value for c in OwnerClass)


class OpenGate(Operation):
    """Open a gate on the todos (and/or scope) it blocks, until its owner approves it.

    Blocked todos stay out of every agent's next action; the goal card shows the gate first.

    Example: loopx gate open -g parser --gate-id release --owner-class user --blocks ship --question 'Release 1.0 now?' --unblocks tag
    """

    words: ClassVar = ("gate", "open")
    method: ClassVar = "gate_open"
    positional: ClassVar = ("goal_id", "gate_id")
    done: ClassVar = "opened gate {record.gate_id}: {summary}"
    use_when: ClassVar = (
        "Use when work must wait for a decision by a person or another agent: opens an operator gate that blocks it."
    )

    goal_id: GoalId
    gate_id: Annotated[str, Cli("--gate-id")] = Field(description="Gate id.")
    owner_class: Annotated[str, Cli("--owner-class", choices=OWNER_CLASSES)] = Field(description="Who decides it.")
    owner_agent_id: Annotated[str | None, Cli("--owner-agent-id")] = Field(
        None, description="The registered agent, for --owner-class agent."
    )
    blocks: Annotated[tuple[str, ...], ids("--blocks")] = Field(
        (), description="A todo it blocks (repeatable, or comma-separated)."
    )
    scope: Annotated[str | None, Cli("--scope")] = Field(
        None, description="A scope it blocks: every todo whose --action-kind is this (deploy, ...)."
    )
    question: Annotated[str, Cli("--question")] = Field(description="The decision the owner is asked for.")
    unblocks: Annotated[tuple[str, ...], ids("--unblocks")] = Field(
        (), description="A todo an approval wakes (repeatable, or comma-separated)."
    )
    next_safe_action: Annotated[str | None, Cli("--next-safe-action")] = Field(
        None, description="What is safe to do meanwhile."
    )
    actor: Actor = None


@applies(OpenGate)
def open_gate(state: State, op: OpenGate, now: str) -> Write:
    goal_id, gate_id, owner_class, question = op.goal_id, op.gate_id, op.owner_class, op.question
    blocks, scope, unblocks, owner_agent_id, actor = op.blocks, op.scope, op.unblocks, op.owner_agent_id, op.actor
    gs = require_goal(state, goal_id)
    given(gate_id=gate_id, scope=scope, owner_agent_id=owner_agent_id)
    check_actor(gs, actor)
    if gate_id in gs.gates:
        raise RuleError(
            f"field 'gate_id': '{gate_id}' is already a gate of goal '{goal_id}' ({gs.gates[gate_id].status}); "
            "rule: gate ids are unique within a goal",
            code="gate-exists",
        )
    _owner(gs, owner_class, owner_agent_id)
    if not blocks and scope is None:
        raise ValidationError(
            "field 'blocks': the gate blocks nothing; rule: a gate names the todos it blocks (--blocks) "
            "or the scope it holds (--scope)",
            code="gate-blocks-nothing",
        )
    for todo_id in blocks:
        todo = require_todo(gs, todo_id, field="blocks")
        if todo.superseded_by or todo.status == TodoStatus.done.value:
            raise RuleError(
                f"field 'blocks': todo '{todo_id}' is {'superseded' if todo.superseded_by else 'done'}; "
                "rule: a gate blocks work still to do",
                code="todo-closed",
            )
    for todo_id in unblocks:
        require_todo(gs, todo_id, field="unblocks")
    gate = build(
        OperatorGate,
        {
            "gate_id": gate_id,
            "owner_class": owner_class,
            "owner_agent_id": owner_agent_id,
            "blocks": _unique(blocks),
            "scope": scope,
            "question": question,
            "unblocks": _unique(unblocks),
            "next_safe_action": op.next_safe_action,
            "opened_by": actor,
            "created_at": now,
            "updated_at": now,
        },
        what="gate",
    )
    event = EventMaker(gs, now).make(
        GateOpen,
        goal_id=goal_id,
        gate_id=gate_id,
        agent_id=actor,
        summary=f"gate {gate_id} ({owner_class}): {question}"[:1000],
        causality={"gate_id": gate_id, "blocks": gate.blocks, "unblocks": gate.unblocks},
        changes=changes(None, gate, skip=GATE_KEYS),
    )
    return Write("gate open", f"{gate_id} blocks {_blocked(gate)}", goal_id, actor, [event], result=gate)


def _blocked(gate: OperatorGate) -> str:
    named = [*gate.blocks, *([f"scope {gate.scope}"] if gate.scope else [])]
    return ", ".join(named)


def check_decider(gate: OperatorGate, decided_by_class: str, agent_id: str | None) -> None:
    one_of("decided_by_class", decided_by_class, OwnerClass)
    if decided_by_class != gate.owner_class:
        raise RuleError(
            f"field 'decided_by_class': gate '{gate.gate_id}' is owned by the {gate.owner_class} class, not "
            f"{decided_by_class}; rule: only a gate's owner class decides it",
            code="not-gate-owner",
        )
    if gate.owner_class == OwnerClass.agent.value and agent_id != gate.owner_agent_id:
        raise RuleError(
            f"field 'agent_id': gate '{gate.gate_id}' is owned by agent '{gate.owner_agent_id}', and "
            f"{repr(agent_id) if agent_id else 'no agent'} decided it; rule: an agent-owned gate is decided "
            "by its owner agent",
            code="not-gate-owner",
        )


def check_undecided(gate: OperatorGate) -> None:
    if gate.decided and gate.status != GateStatus.deferred.value:
        raise RuleError(
            f"gate '{gate.gate_id}' was already decided: {gate.status} at {gate.decided_at}; rule: a gate is "
            "decided once (only a deferral may be decided again)",
            code="gate-decided",
            hint="open a new gate on the same todos to ask again: its approval lifts what this one holds",
        )


class DecideGate(Operation):
    """Decide a gate as its owner class: approve, reject or defer.

    An agent-owned gate is decided by its owner agent (--agent-id). A decision is final, except a
    deferral, which may be decided again; an approval wakes what the gate unblocks in the same commit.

    Example: loopx gate decide -g parser --gate-id release --decision approve --reason 'notes reviewed' --decided-by-class user
    """

    words: ClassVar = ("gate", "decide")
    method: ClassVar = "gate_decide"
    positional: ClassVar = ("goal_id", "gate_id")
    done: ClassVar = "gate {summary}"
    use_when: ClassVar = "Use when you are the gate's owner and the decision is made: approves or rejects it."

    goal_id: GoalId
    gate_id: Annotated[str, Cli("--gate-id")] = Field(description="Gate id.")
    decision: Annotated[str, Cli("--decision", choices=CLI_DECISIONS)] = Field(
        description="approve wakes what it unblocks; reject and defer keep it blocked."
    )
    reason: Annotated[str, Cli("--reason")] = Field(description="Why (public-safe).")
    follow_up: Annotated[str | None, Cli("--follow-up")] = Field(None, description="What happens next.")
    handoff_command: Annotated[str | None, Cli("--handoff-command")] = Field(
        None, description="The command that hands the work on."
    )
    next_safe_action: Annotated[str | None, Cli("--next-safe-action")] = Field(
        None, description="What is safe to do now."
    )
    decided_by_class: Annotated[str, Cli("--decided-by-class", choices=OWNER_CLASSES)] = Field(
        description="The deciding class: the gate's owner."
    )
    agent_id: Actor = None


@applies(DecideGate)
def decide_gate(state: State, op: DecideGate, now: str) -> Write:
    goal_id, gate_id, decision, reason = op.goal_id, op.gate_id, op.decision, op.reason
    decided_by_class, agent_id = op.decided_by_class, op.agent_id
    gs = require_goal(state, goal_id)
    given(reason=reason, agent_id=agent_id)
    check_actor(gs, agent_id)
    gate = require_gate(gs, gate_id)
    check_undecided(gate)
    check_decider(gate, decided_by_class, agent_id)
    maker = EventMaker(gs, now)
    event, decided = decision_event(
        gs,
        maker,
        gate,
        decision=decision,
        reason=reason,
        decided_by_class=decided_by_class,
        agent_id=agent_id,
        extra={
            "follow_up": op.follow_up,
            "handoff_command": op.handoff_command,
            "next_safe_action": op.next_safe_action,
        },
        now=now,
    )
    woken = wake_unblocked(gs, maker, event, decided) if decision == Decision.approve.value else []
    return Write(
        "gate decide",
        f"{gate_id} {decided.status}" + (f", woke {len(woken)}" if woken else ""),
        goal_id,
        agent_id,
        [event, *woken],
        result=decided,
    )


def decision_event(
    gs: GoalState,
    maker: EventMaker,
    gate: OperatorGate,
    *,
    decision: str,
    reason: str,
    decided_by_class: str,
    agent_id: str | None,
    extra: dict,
    now: str,
    todo_id: str | None = None,
    caused_by: str | None = None,
) -> tuple[EventBase, OperatorGate]:
    update = {
        "status": DECIDED[decision],
        "decision": decision,
        "reason": reason,
        "decided_by_class": decided_by_class,
        "decided_by_agent_id": agent_id,
        "decided_at": now,
        "updated_at": now,
        **{k: v for k, v in extra.items() if v is not None},
    }
    decided = build(OperatorGate, {**gate.model_dump(mode="json"), **update}, what="gate")
    event = maker.make(
        GateDecide,
        goal_id=gs.goal_id,
        gate_id=gate.gate_id,
        agent_id=agent_id,
        todo_id=todo_id,
        summary=f"gate {gate.gate_id} {decided.status}: {reason}"[:1000],
        state_transition={"from_state": gate.status, "to_state": decided.status},
        causality={
            "caused_by": caused_by,
            "gate_id": gate.gate_id,
            "decision_id": None,
            "blocks": gate.blocks,
            "unblocks": gate.unblocks if decision == Decision.approve.value else [],
        },
        changes=changes(gate, decided, skip=GATE_KEYS),
    )
    return event, decided


def wake_unblocked(gs: GoalState, maker: EventMaker, cause: EventBase, gate: OperatorGate) -> list[EventBase]:
    """``todo_resume`` events for the blocked or deferred todos an approved ``gate`` unblocks."""
    woken: list[EventBase] = []
    for todo_id in gate.unblocks:
        todo = gs.todos.get(todo_id)
        if todo is None or todo.superseded_by or todo.status not in (TodoStatus.blocked.value, "deferred"):
            continue
        woken.append(resume_event(gs, maker, todo, cause, f"gate {gate.gate_id} approved", gate_id=gate.gate_id))
    return woken

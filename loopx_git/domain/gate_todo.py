"""A ``user_gate`` todo completed with a decision outcome (``todo complete --decision-outcome``): the
completion records the decision of the todo's own gate, opened from the todo when no gate was. Kept
beside ``gate.py``, which holds the gates' own writes, so that module stays one family."""

from __future__ import annotations

from loopx_git.domain.gate import GATE_KEYS, check_decider, check_undecided, decision_event
from loopx_git.domain.write import EventMaker, build, changes
from loopx_git.errors import ValidationError
from loopx_git.model.event_head import EventBase
from loopx_git.model.gate import Decision, GateOpen, OperatorGate, OwnerClass
from loopx_git.model.state import GoalState
from loopx_git.model.todo import TaskClass, TodoItem

TODO_OUTCOMES = (Decision.approve.value, Decision.reject.value, Decision.cancel.value)


def dependents(gs: GoalState, todo_id: str) -> list[str]:
    """The live todos waiting for ``todo_id``: ``resume_when=todo_done:<it>``, or the one it unblocks."""
    waiting = [
        t.todo_id
        for t in gs.live_todos()
        if t.todo_id != todo_id and t.resume_condition is not None and t.resume_condition.todo_id == todo_id
    ]
    todo = gs.todos.get(todo_id)
    if todo is not None and todo.unblocks_todo_id and todo.unblocks_todo_id not in waiting:
        waiting.append(todo.unblocks_todo_id)
    return waiting


def check_outcome(todo: TodoItem, outcome: str) -> None:
    if outcome not in TODO_OUTCOMES:
        raise ValidationError(
            f"field 'decision_outcome': {outcome!r} is not one of {', '.join(TODO_OUTCOMES)}", code="invalid-field"
        )
    if todo.task_class != TaskClass.user_gate.value:
        raise ValidationError(
            f"field 'decision_outcome': todo '{todo.todo_id}' is a {todo.task_class} todo; rule: only a user_gate "
            "todo records a gate decision",
            code="invalid-field",
        )


def todo_gate_decision(
    gs: GoalState,
    maker: EventMaker,
    todo: TodoItem,
    outcome: str,
    *,
    cause: EventBase,
    reason: str | None,
    actor: str | None,
    now: str,
) -> tuple[list[EventBase], OperatorGate]:
    """The gate events a ``user_gate`` todo's completion records: its gate (``gate_id`` = the todo's
    id) opened from the todo when no gate was, and decided ``outcome`` by the user class. What the
    todo held back (its dependents) is what the gate blocks; only an approval releases it, which the
    completion's own wake-ups do (and ``wake_unblocked`` for what a gate opened by hand names). The
    gate events name the completion as their cause: a rollback of the completion sees them (and,
    as it does not compensate gates, refuses rather than leave the decision behind)."""
    gate = gs.gates.get(todo.todo_id)
    events: list[EventBase] = []
    if gate is None:
        gate = build(
            OperatorGate,
            {
                "gate_id": todo.todo_id,
                "owner_class": OwnerClass.user.value,
                "blocks": dependents(gs, todo.todo_id),
                "question": todo.text,
                "unblocks": dependents(gs, todo.todo_id),
                "source_todo_id": todo.todo_id,
                "opened_by": actor,
                "created_at": now,
                "updated_at": now,
            },
            what="gate",
        )
        events.append(
            maker.make(
                GateOpen,
                goal_id=gs.goal_id,
                gate_id=gate.gate_id,
                todo_id=todo.todo_id,
                agent_id=actor,
                summary=f"gate {gate.gate_id} (user) from todo {todo.todo_id}: {todo.text}"[:1000],
                causality={
                    "caused_by": cause.event_id,
                    "gate_id": gate.gate_id,
                    "blocks": gate.blocks,
                    "unblocks": gate.unblocks,
                },
                changes=changes(None, gate, skip=GATE_KEYS),
            )
        )
    else:
        check_undecided(gate)
        check_decider(gate, OwnerClass.user.value, None)
    event, decided = decision_event(
        gs,
        maker,
        gate,
        decision=outcome,
        reason=reason or f"{todo.todo_id} completed: {outcome}",
        decided_by_class=OwnerClass.user.value,
        agent_id=None,
        extra={},
        now=now,
        todo_id=todo.todo_id,
        caused_by=cause.event_id,
    )
    events.append(event)
    return events, decided

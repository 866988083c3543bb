"""What every todo write checks and what a wake-up writes, shared by the families that act on
todos (todos, claims, gates, handoffs, runs, events): a todo named by a command exists, is still open,
is not another agent's, is not held by a gate; a waiting todo resumed by the event that met its
condition. Below ``domain/todo.py`` and ``domain/gate.py``, which both build on it."""

from __future__ import annotations

from loopx_git.domain.write import EventMaker, changes
from loopx_git.errors import NotFoundError, RuleError, ValidationError
from loopx_git.model.event_head import EventBase
from loopx_git.model.run import DELIVERY_RULE, FLAGS_FIELD, DeliveryOutcome
from loopx_git.model.state import GoalState, listed
from loopx_git.model.state import require_agent as _require_agent
from loopx_git.model.todo import ResumeCondition, TodoItem, TodoResume, TodoStatus

TODO_KEYS = ("todo_id", "schema_version", FLAGS_FIELD)
"""Fields no change names: the todo's identity, and its delivery flags (shown with its tier, derived from it)."""
UPDATE_STATUSES = ("open", "blocked", "deferred")


# --- lookups that refuse clearly ----------------------------------------------------------


def require_todo(gs: GoalState, todo_id: str, *, field: str = "todo_id") -> TodoItem:
    todo = gs.todos.get(todo_id)
    if todo is None and todo_id in gs.suggested:
        raise NotFoundError(
            f"{field} '{todo_id}' is a suggested todo; rule: a suggestion is never runnable until promoted",
            hint=f"promote it first: `loopx todo promote --goal-id {gs.goal_id} --todo-id {todo_id}`",
        )
    if todo is None:
        raise NotFoundError(
            f"{field} '{todo_id}': no such todo in goal '{gs.goal_id}' (todos in play: "
            f"{listed(gs.live)}); rule: a todo named by a command exists",
            hint=f"`loopx todo list --goal-id {gs.goal_id} --all` lists them",
        )
    return todo


def require_agent(gs: GoalState, agent_id: str, *, field: str) -> str:
    return _require_agent(gs, agent_id, field=field, rule="claims are held by registered agents")


def delivery_tier(value: object) -> str | None:
    """A delivery outcome given to a write, as its tier (None when not given); the refusal states the
    rule, which a caller of the Python API would otherwise meet only as pydantic's wording."""
    if value is None:
        return None
    tier = getattr(value, "value", value)
    if not isinstance(tier, str) or tier not in {t.value for t in DeliveryOutcome}:
        raise ValidationError(
            f"field 'delivery_outcome': {tier!r} is not a delivery outcome; rule: {DELIVERY_RULE}",
            code="invalid-field",
        )
    return tier


def still_open(todo: TodoItem, verb: str) -> None:
    if todo.superseded_by:
        raise RuleError(
            f"todo '{todo.todo_id}' was superseded by '{todo.superseded_by}'; rule: a superseded todo cannot be {verb}",
            code="todo-closed",
        )
    if todo.status == TodoStatus.done.value:
        raise RuleError(
            f"todo '{todo.todo_id}' is done; rule: done is final, a done todo cannot be {verb} "
            "(add a successor instead)",
            code="todo-closed",
        )


def not_claimed_by_other(todo: TodoItem, actor: str | None, verb: str) -> None:
    """Refuse (``claim-held``) an agent acting on a todo another agent holds; a person may."""
    if actor and todo.claimed_by and todo.claimed_by != actor:
        raise RuleError(
            f"todo '{todo.todo_id}' is claimed by '{todo.claimed_by}'; rule: only the claimant "
            f"(or a person, without --agent-id) may {verb} a claimed todo",
            code="claim-held",
        )


def not_gate_held(gs: GoalState, todo: TodoItem, verb: str) -> None:
    held = gs.holding_gates(todo.todo_id) if gs.gates else []
    if held:
        named = ", ".join(f"'{g.gate_id}' ({g.status}, {g.owner_class})" for g in held)
        raise RuleError(
            f"todo '{todo.todo_id}' is held by gate {named}; rule: a todo a gate holds is not {verb} until the "
            "gate is approved",
            code="gate-held",
            hint=f"`loopx gate show --goal-id {gs.goal_id} --gate-id {held[0].gate_id}` says whose decision it waits for",
        )


def transition(before: str, after: str) -> dict | None:
    return {"from_state": before, "to_state": after} if before != after else None


# --- wake-ups -----------------------------------------------------------------------------


def wake_dependents(
    gs: GoalState, maker: EventMaker, cause: EventBase, fact: ResumeCondition, *, unblocked: str | None = None
) -> list[EventBase]:
    """``todo_resume`` events for every waiting todo that ``fact`` (just made true by ``cause``) releases."""
    woken: list[EventBase] = []
    for todo in gs.live_todos():
        if todo.status not in (TodoStatus.deferred.value, TodoStatus.blocked.value):
            continue
        condition = todo.resume_condition
        released_by_condition = condition == fact
        released_by_blocker = todo.todo_id == unblocked and condition is None
        if not (released_by_condition or released_by_blocker):
            continue
        why = str(todo.resume_when) if released_by_condition else f"unblocked by {cause.todo_id}"
        woken.append(resume_event(gs, maker, todo, cause, why))
    return woken


def resume_event(
    gs: GoalState, maker: EventMaker, todo: TodoItem, cause: EventBase, why: str, *, gate_id: str | None = None
) -> EventBase:
    """The ``todo_resume`` that makes a waiting ``todo`` open again because of ``cause``."""
    # The met condition goes with the wait (the todo_resume event keeps it, in its summary and
    # its change of resume_when): an open todo waits for nothing, and a later re-block names only
    # its own condition. Cleared here, by the event, not by the fold: the fold of a branch written
    # before this (its resume events leave resume_when as it was) is unchanged, so its documents
    # still equal the fold and `loopx verify` passes; update_todo drops what such a todo kept.
    resumed = todo.model_copy(
        update={
            "status": TodoStatus.open.value,
            "reason": None,
            "resume_when": None,
            "updated_at": cause.recorded_at,
        }
    )
    causality = {"caused_by": cause.event_id, "unblocks": [todo.todo_id]}
    if gate_id is not None:
        causality["gate_id"] = gate_id
    return maker.make(
        TodoResume,
        goal_id=gs.goal_id,
        todo_id=todo.todo_id,
        summary=f"{todo.todo_id} resumed: {why}",
        causality=causality,
        state_transition={"from_state": todo.status, "to_state": "open"},
        changes=changes(todo, resumed, skip=TODO_KEYS),
    )

"""Claims on todos, as declared operations: giving one back.

A claim says which agent works on a todo; ``todo claim`` takes one (``domain/todo.py``), ``todo
release`` gives it back, so the todo is open to every agent again. Only the claimant releases its own
claim; a person (no agent named) may release any, which is how an operator frees the todos of an agent
that stopped."""

from __future__ import annotations

from typing import Annotated, ClassVar

from loopx_git.domain.operation import Actor, Cli, Field, GoalId, Operation, applies
from loopx_git.domain.todo_rules import TODO_KEYS, not_claimed_by_other, require_todo, still_open
from loopx_git.domain.write import EventMaker, Write, changes, check_actor, given
from loopx_git.model.state import State, require_goal
from loopx_git.model.todo import TodoUpdate


class ReleaseTodo(Operation):
    """Give back a claimed todo: its claim is cleared and it stays as it is for the next agent.

    Only the claimant releases its claim; a person (no --agent-id) may release any claim, to free the
    todos of an agent that stopped. A todo nobody holds is left as it is (nothing is written).

    Example: loopx todo release -g parser -t todo-tok -a alice --reason 'out of time today'
    """

    words: ClassVar = ("todo", "release")
    method: ClassVar = "todo_release"
    positional: ClassVar = ("goal_id", "todo_id")
    done: ClassVar = "released {summary}"
    use_when: ClassVar = (
        "Use when you stop working on a todo you hold without finishing it: gives the claim back, so "
        "another agent can take it."
    )

    goal_id: GoalId
    todo_id: Annotated[str, Cli("--todo-id", "-t")] = Field(description="Todo id.")
    reason: Annotated[str | None, Cli("--reason")] = Field(None, description="Why it is given back (public-safe).")
    agent_id: Actor = None


@applies(ReleaseTodo)
def release_todo(state: State, op: ReleaseTodo, now: str) -> Write:
    gs = require_goal(state, op.goal_id)
    given(reason=op.reason)
    actor = check_actor(gs, op.agent_id)
    todo = require_todo(gs, op.todo_id)
    still_open(todo, "released")
    not_claimed_by_other(todo, actor, "release")
    if todo.claimed_by is None:
        return Write("todo release", f"{todo.todo_id} (not claimed)", op.goal_id, actor, result=todo)
    released = todo.model_copy(update={"claimed_by": None, "updated_at": now})
    event = EventMaker(gs, now).make(
        TodoUpdate,
        goal_id=op.goal_id,
        todo_id=todo.todo_id,
        agent_id=actor,
        summary=f"{todo.claimed_by}'s claim on {todo.todo_id} released" + (f": {op.reason}" if op.reason else ""),
        state_transition={"from_state": "claimed", "to_state": todo.status},
        changes=changes(todo, released, skip=TODO_KEYS),
    )
    return Write(
        "todo release", f"{todo.todo_id} (held by {todo.claimed_by})", op.goal_id, actor, [event], result=released
    )

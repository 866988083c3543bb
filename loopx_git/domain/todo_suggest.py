"""Suggested todos: candidates visible for a decision, never runnable until promoted into the backlog.
``todo promote`` is a declared operation (``domain/operation.py``): its command, its ``StateRepo``
method and its row in docs/cli.md are made from ``PromoteTodo``."""

from __future__ import annotations

from typing import Annotated, ClassVar

from loopx_git.domain.operation import Actor, Cli, Field, GoalId, Operation, applies
from loopx_git.domain.todo import new_todo_id
from loopx_git.domain.todo_rules import TODO_KEYS
from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor
from loopx_git.errors import NotFoundError, RuleError
from loopx_git.model.state import State, require_goal
from loopx_git.model.todo import (
    SuggestedTodo,
    TodoItem,
    TodoPromote,
    TodoSuggest,
)


def suggest_todo(
    state: State,
    *,
    goal_id: str,
    text: str,
    role: str = "agent",
    task_class: str = "advancement_task",
    action_kind: str | None = None,
    priority: str = "P2",
    task_repository: str | None = None,
    reason: str | None = None,
    todo_id: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    check_actor(gs, actor)
    todo_id = new_todo_id(gs, todo_id)
    suggestion = build(
        SuggestedTodo,
        {
            "todo_id": todo_id,
            "role": role,
            "text": text,
            "task_class": task_class,
            "action_kind": action_kind,
            "priority": priority,
            "task_repository": task_repository,
            "reason": reason,
            "suggested_by": actor,
            "created_at": now,
            "updated_at": now,
        },
        what="suggestion",
    )
    event = EventMaker(gs, now).make(
        TodoSuggest,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor,
        summary=f"suggested: {text}"[:1000],
        state_transition={"to_state": "suggested"},
        changes=changes(None, suggestion, skip=TODO_KEYS),
    )
    return Write("todo suggest", f"{todo_id}: {text}", goal_id, actor, [event], result=suggestion)


class PromoteTodo(Operation):
    """Promote a suggested todo into the formal backlog: it becomes an open todo, runnable as any other.

    Example: loopx todo promote -g parser -t todo-fuzz
    """

    words: ClassVar = ("todo", "promote")
    method: ClassVar = "todo_promote"
    positional: ClassVar = ("goal_id", "todo_id")
    done: ClassVar = "promoted {record.todo_id}: {record.text} [{record.status}]"

    goal_id: GoalId
    todo_id: Annotated[str, Cli("--todo-id", "-t")] = Field(description="Todo id.")
    agent_id: Actor = None


@applies(PromoteTodo)
def promote_todo(state: State, op: PromoteTodo, now: str) -> Write:
    goal_id, todo_id = op.goal_id, op.todo_id
    gs = require_goal(state, goal_id)
    actor = check_actor(gs, op.agent_id)
    suggestion = gs.suggested.get(todo_id)
    if suggestion is None:
        raise NotFoundError(f"todo_id '{todo_id}': no suggested todo with this id in goal '{goal_id}'")
    if suggestion.promoted or todo_id in gs.todos:
        raise RuleError(
            f"todo_id '{todo_id}' was already promoted; rule: a suggestion is promoted once", code="already-promoted"
        )
    todo = build(
        TodoItem,
        {
            "todo_id": todo_id,
            "role": suggestion.role,
            "text": suggestion.text,
            "task_class": suggestion.task_class,
            "action_kind": suggestion.action_kind,
            "priority": suggestion.priority,
            "task_repository": suggestion.task_repository,
            "created_at": now,
            "updated_at": now,
        },
        what="todo",
    )
    event = EventMaker(gs, now).make(
        TodoPromote,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor,
        summary=f"promoted {todo_id}: {suggestion.text}"[:1000],
        state_transition={"from_state": "suggested", "to_state": "open"},
        changes=changes(None, todo, skip=TODO_KEYS),
    )
    return Write("todo promote", todo_id, goal_id, actor, [event], result=todo)

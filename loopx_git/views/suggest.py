"""``todo suggest --prompt``: todo_suggestion_prompt_v0, the packet a user's agent fills in to propose
candidate todos for the goal. What it proposes is written with ``todo suggest`` and stays a
candidate — visible for a decision, never runnable — until a person or controller promotes it."""

from __future__ import annotations

from typing import Final, Literal

from loopx_git.model.record import Record
from loopx_git.model.state import State, require_goal
from loopx_git.views.status import todo_order

SUGGESTION_SCHEMA: Final = "todo_suggestion_prompt_v0"
SHOWN = 50
"""Todos and candidates listed at most, each list with the count left out (the packet stays small)."""


class KnownTodo(Record):
    todo_id: str
    text: str
    status: str
    role: str
    priority: str


class CandidateShape(Record):
    """What each proposed candidate holds (the options of ``todo suggest``)."""

    text: str = "what is to be done, one line, public-safe"
    role: str = "agent | user"
    task_class: str = "advancement_task | continuous_monitor | user_gate | user_action | blocker"
    priority: str = "P0 (highest) .. P4"
    reason: str = "why it should be done, one line"


class SuggestionPrompt(Record):
    schema_version: Literal["todo_suggestion_prompt_v0"] = SUGGESTION_SCHEMA
    goal_id: str
    objective: str
    acceptance_criteria: list[str]
    non_goals: list[str]
    todos: list[KnownTodo]
    todos_omitted: int
    candidates: list[KnownTodo]
    """Candidates already suggested and not yet promoted: do not propose them again."""
    candidates_omitted: int
    instructions: list[str]
    candidate_shape: CandidateShape
    submit_command: str


def suggestion_prompt(state: State, goal_id: str) -> SuggestionPrompt:
    gs = require_goal(state, goal_id)
    assert gs.goal is not None
    live = sorted(gs.live_todos(), key=todo_order)
    pending = sorted((s for s in gs.suggested.values() if not s.promoted), key=lambda s: (s.created_at, s.todo_id))
    return SuggestionPrompt(
        goal_id=goal_id,
        objective=gs.goal.objective,
        acceptance_criteria=list(gs.goal.acceptance_criteria),
        non_goals=list(gs.goal.non_goals),
        todos=[
            KnownTodo(todo_id=t.todo_id, text=t.text, status=t.status, role=t.role, priority=t.priority)
            for t in live[:SHOWN]
        ],
        todos_omitted=max(0, len(live) - SHOWN),
        candidates=[
            KnownTodo(todo_id=s.todo_id, text=s.text, status="suggested", role=s.role, priority=s.priority)
            for s in pending[:SHOWN]
        ],
        candidates_omitted=max(0, len(pending) - SHOWN),
        instructions=[
            "Propose the few todos that move the objective forward most and are not already listed.",
            "Each candidate is one concrete, checkable unit of work; name user work (decisions, access, "
            "approvals) as role user.",
            "Keep every text public-safe: no credentials, tokens, private paths or raw logs.",
            "Candidates stay candidates: they are not runnable until a person or controller promotes them.",
        ],
        candidate_shape=CandidateShape(),
        submit_command=f"loopx todo suggest -g {goal_id} --text TEXT --role agent --task-class advancement_task "
        "--priority P2 --reason TEXT",
    )

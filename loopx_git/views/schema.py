"""JSON Schemas of every record and output, exported from the models (``loopx schema``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _event() -> Any:
    from loopx_git.model.event import EVENT_ADAPTER

    return EVENT_ADAPTER.json_schema()


def _model(module: str, name: str) -> Callable[[], Any]:
    def schema() -> Any:
        import importlib

        return getattr(importlib.import_module(module), name).model_json_schema()

    return schema


SCHEMAS: dict[str, Callable[[], Any]] = {
    "loopx_rollout_event_v0": _event,
    "todo_item_v0": _model("loopx_git.model.todo", "TodoItem"),
    "suggested_todo_v0": _model("loopx_git.model.todo", "SuggestedTodo"),
    "loopx_goal_v0": _model("loopx_git.model.goal", "Goal"),
    "agent": _model("loopx_git.model.goal", "Agent"),
    "loopx_run_record_v0": _model("loopx_git.model.run", "RunRecord"),
    "loopx_status_v0": _model("loopx_git.views.status", "GoalCard"),
    "loopx_verify_report_v0": _model("loopx_git.views.verify", "VerifyReport"),
}
ALIASES = {
    "event": "loopx_rollout_event_v0",
    "todo": "todo_item_v0",
    "suggested": "suggested_todo_v0",
    "goal": "loopx_goal_v0",
    "run": "loopx_run_record_v0",
    "status": "loopx_status_v0",
    "verify": "loopx_verify_report_v0",
}


def schema(name: str) -> Any:
    from loopx_git.errors import NotFoundError

    key = ALIASES.get(name, name)
    if key not in SCHEMAS:
        raise NotFoundError(
            f"schema '{name}' is unknown (known: {', '.join(sorted(SCHEMAS))}; aliases: {', '.join(sorted(ALIASES))})"
        )
    return SCHEMAS[key]()

"""Writing run history: one compact run record per agent turn (``loopx refresh-state``)."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.todo import require_agent, require_todo
from loopx_git.domain.write import EventMaker, Write, build, given, many
from loopx_git.errors import RuleError, ValidationError
from loopx_git.model.event import RefreshState
from loopx_git.model.ids import new_id
from loopx_git.model.record import JsonScalar
from loopx_git.model.run import RunRecord
from loopx_git.model.state import State, require_goal

MAX_BATCH_SCALE = 2**53 - 1


def refresh_state(
    state: State,
    *,
    goal_id: str,
    classification: str,
    agent_id: str | None = None,
    todo_id: str | None = None,
    recommended_action: str | None = None,
    delivery_outcome: str | None = None,
    delivery_batch_scale: int | None = None,
    evidence: Sequence[str] = (),
    run_id: str | None = None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    given(agent_id=agent_id, todo_id=todo_id, run_id=run_id, recommended_action=recommended_action)
    many(evidence=evidence)
    if isinstance(delivery_batch_scale, int) and not 0 <= delivery_batch_scale <= MAX_BATCH_SCALE:
        raise ValidationError(
            f"field 'delivery_batch_scale': out of range; rule: a whole number from 0 to {MAX_BATCH_SCALE} "
            "(2^53 - 1, the largest a JSON reader keeps exact)",
            code="invalid-field",
        )
    if agent_id is not None:
        require_agent(gs, agent_id, field="agent_id")
    if todo_id is not None:
        require_todo(gs, todo_id)
    if run_id is not None and run_id in gs.run_ids:
        raise RuleError(
            f"field 'run_id': '{run_id}' is already a run of goal '{goal_id}'; rule: run ids are unique",
            code="run-exists",
        )
    run = build(
        RunRecord,
        {
            "run_id": new_id("run") if run_id is None else run_id,
            "generated_at": now,
            "goal_id": goal_id,
            "agent_id": agent_id,
            "todo_id": todo_id,
            "classification": classification,
            "recommended_action": recommended_action,
            "delivery_outcome": delivery_outcome,
            "delivery_batch_scale": delivery_batch_scale,
            "evidence": list(evidence),
        },
        what="run",
    )
    details: dict[str, JsonScalar] = {"classification": classification}
    if delivery_outcome:
        details["delivery_outcome"] = run.delivery_outcome
    event = EventMaker(gs, now).make(
        RefreshState,
        goal_id=goal_id,
        agent_id=agent_id,
        todo_id=todo_id,
        run_id=run.run_id,
        summary=f"run {classification}" + (f" ({run.delivery_outcome})" if run.delivery_outcome else ""),
        details=details,
    )
    return Write("refresh-state", f"{run.run_id} {classification}", goal_id, agent_id, [event], runs=[run], result=run)

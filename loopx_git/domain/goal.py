"""Creating and changing goals, and registering the agents that work on them."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, many
from loopx_git.errors import RuleError
from loopx_git.model.event import AgentRegister, GoalCreate, GoalUpdate
from loopx_git.model.goal import Agent, Goal
from loopx_git.model.state import GoalState, State, require_goal

GOAL_KEYS = ("goal_id", "schema_version")


def create_goal(
    state: State,
    *,
    goal_id: str,
    objective: str,
    acceptance_criteria: Sequence[str] = (),
    non_goals: Sequence[str] = (),
    actor: str | None,
    now: str,
) -> Write:
    many(acceptance_criteria=acceptance_criteria, non_goals=non_goals)
    existing = state.goals.get(goal_id)
    if existing is not None and existing.goal is not None:
        raise RuleError(
            f"goal '{goal_id}' already exists; rule: goal ids are unique",
            code="goal-exists",
            hint="change it with `loopx goal update`",
        )
    goal = build(
        Goal,
        {
            "goal_id": goal_id,
            "objective": objective,
            "acceptance_criteria": list(acceptance_criteria),
            "non_goals": list(non_goals),
            "created_at": now,
            "updated_at": now,
        },
        what="goal",
    )
    maker = EventMaker(existing or GoalState(goal_id=goal_id), now)
    event = maker.make(
        GoalCreate,
        goal_id=goal_id,
        agent_id=actor,
        summary=f"goal created: {objective}"[:1000],
        changes=changes(None, goal, skip=GOAL_KEYS),
    )
    return Write("goal create", goal_id, goal_id, actor, [event], result=goal)


def update_goal(
    state: State,
    *,
    goal_id: str,
    objective: str | None = None,
    add_acceptance: Sequence[str] = (),
    add_non_goals: Sequence[str] = (),
    status: str | None = None,
    delivery_branch_pattern: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    many(add_acceptance=add_acceptance, add_non_goals=add_non_goals)
    given(delivery_branch_pattern=delivery_branch_pattern)
    check_actor(gs, actor)
    current = gs.goal
    assert current is not None
    data = current.model_dump(mode="json")
    if objective is not None:
        data["objective"] = objective
    data["acceptance_criteria"] = data["acceptance_criteria"] + [
        a for a in add_acceptance if a not in data["acceptance_criteria"]
    ]
    data["non_goals"] = data["non_goals"] + [n for n in add_non_goals if n not in data["non_goals"]]
    if status is not None:
        data["status"] = status
    if delivery_branch_pattern is not None:
        data["delivery_branch_pattern"] = delivery_branch_pattern
    updated = build(Goal, data, what="goal")
    diff = changes(current, updated, skip=GOAL_KEYS)
    if not diff:
        return Write("goal update", f"{goal_id} (no change)", goal_id, actor, result=current)
    updated = updated.model_copy(update={"updated_at": now})
    diff = changes(current, updated, skip=GOAL_KEYS)
    fields = ", ".join(c.field for c in diff if c.field != "updated_at")
    event = EventMaker(gs, now).make(
        GoalUpdate, goal_id=goal_id, agent_id=actor, summary=f"goal updated: {fields}", changes=diff
    )
    return Write("goal update", f"{goal_id}: {fields}", goal_id, actor, [event], result=updated)


def register_agent(
    state: State,
    *,
    goal_id: str,
    agent_id: str,
    lane: str | None = None,
    role: str = "worker",
    actor: str | None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    current = gs.agents.get(agent_id)
    data = {
        "agent_id": agent_id,
        "lane": lane,
        "role": role,
        "registered_at": current.registered_at if current else now,
    }
    agent = build(Agent, data, what="agent")
    diff = changes(current, agent, skip=("agent_id",))
    if current is not None and not diff:
        return Write("agent register", f"{agent_id} (no change)", goal_id, agent_id, result=current)
    verb = "registered" if current is None else "re-registered"
    event = EventMaker(gs, now).make(
        AgentRegister,
        goal_id=goal_id,
        agent_id=agent_id,
        summary=f"agent {agent_id} {verb}",
        lane={"lane_id": lane} if lane else None,
        changes=diff,
    )
    return Write("agent register", f"{agent_id} on {goal_id}", goal_id, actor or agent_id, [event], result=agent)

"""Creating and changing goals, and registering the agents that work on them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, many
from loopx_git.errors import RuleError, ValidationError
from loopx_git.model.capability import PolicyChange, PolicySettings
from loopx_git.model.goal import Agent, AgentRegister, Goal, GoalCreate, GoalUpdate, explore_policy
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
    write = _goal_write(gs, "goal update", "updated", updated, actor, now)
    return write if write.events else replace(write, result=current)


def _goal_write(gs: GoalState, verb: str, said: str, updated: Goal, actor: str | None, now: str) -> Write:
    """The goal_update event turning the goal into ``updated`` (stamped ``now``), or no write when
    nothing changes; its result is the stamped goal."""
    current = gs.goal
    assert current is not None
    if not changes(current, updated, skip=GOAL_KEYS):
        return Write(verb, f"{gs.goal_id} (no change)", gs.goal_id, actor, result=updated)
    updated = updated.model_copy(update={"updated_at": now})
    diff = changes(current, updated, skip=GOAL_KEYS)
    fields = ", ".join(c.field for c in diff if c.field != "updated_at")
    event = EventMaker(gs, now).make(
        GoalUpdate, goal_id=gs.goal_id, agent_id=actor, summary=f"goal {said}: {fields}", changes=diff
    )
    return Write(verb, f"{gs.goal_id}: {fields}", gs.goal_id, actor, [event], result=updated)


def configure_goal(
    state: State,
    *,
    goal_id: str,
    explore_harness_enabled: bool | None = None,
    explore_composition_mode: str | None = None,
    explore_composition_scope_id: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    """The goal's explore policy (seed 002): the live research gate is on when the harness is
    enabled and composition is explicit_only, with the coverage scope joint results must name. A
    setting left out keeps its value; the result says what changes, before and after."""
    gs = require_goal(state, goal_id)
    given(explore_composition_scope_id=explore_composition_scope_id)
    check_actor(gs, actor)
    current = gs.goal
    assert current is not None
    data = current.model_dump(mode="json")
    for name, value, unset in (
        ("explore_harness_enabled", explore_harness_enabled, False),
        ("explore_composition_mode", getattr(explore_composition_mode, "value", explore_composition_mode), "disabled"),
        ("explore_composition_scope_id", explore_composition_scope_id, None),
    ):
        # turning off what was never on changes nothing: no commit for a setting equal to its absence
        if value is not None and not (value == unset and data.get(name) is None):
            data[name] = value
    updated = build(Goal, data, what="goal")
    policy = explore_policy(updated)
    if policy.harness_enabled and policy.composition_mode == "explicit_only" and policy.scope_id is None:
        raise ValidationError(
            "field 'explore_composition_scope_id': missing; rule: the live research gate (harness enabled, "
            "composition explicit_only) names the coverage scope a joint experiment's result must carry "
            "(--explore-composition-scope-id S)",
            code="invalid-field",
        )
    write = _goal_write(gs, "configure-goal", "configured", updated, actor, now)
    change = PolicyChange(
        goal_id=goal_id,
        before=PolicySettings.of(explore_policy(current)),
        after=PolicySettings.of(policy),
        changed=bool(write.events),
    )
    return replace(write, result=change)


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

"""The goal and the agents registered to work on it, and their fold step."""

from __future__ import annotations

from enum import Enum
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Literal,
)

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    model_serializer,
)

from loopx_git.model.capability import ExplorePolicy
from loopx_git.model.event_head import EventBase
from loopx_git.model.ids import (
    Id,
    UtcTimestamp,
)
from loopx_git.model.record import Line, Record

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

GOAL_SCHEMA = "loopx_goal_v0"


class GoalStatus(str, Enum):
    active = "active"
    paused = "paused"
    completed = "completed"
    abandoned = "abandoned"


class AgentRole(str, Enum):
    worker = "worker"
    reviewer = "reviewer"
    controller = "controller"
    observer = "observer"


class CompositionMode(str, Enum):
    explicit_only = "explicit_only"
    disabled = "disabled"


class Agent(Record):
    agent_id: Id
    lane: Id | None = None
    role: AgentRole = AgentRole.worker
    registered_at: UtcTimestamp


BranchPattern = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._/*?{}\-]{1,200}$")]
"""A glob of branch names (``agent/{agent_id}/*``); ``{agent_id}`` stands for the asking agent."""


class Goal(Record):
    schema_version: str = GOAL_SCHEMA
    goal_id: Id
    objective: Line
    acceptance_criteria: list[Line] = Field(default_factory=list)
    non_goals: list[Line] = Field(default_factory=list)
    status: GoalStatus = GoalStatus.active
    created_at: UtcTimestamp
    updated_at: UtcTimestamp
    delivery_branch_pattern: BranchPattern | None = None
    """The delivery branch policy (agent_workspace_guard_v1): an agent may deliver only from a branch
    matching it. Left out of the record when None."""
    explore_harness_enabled: bool | None = None
    """The explore harness is on for this goal (``loopx configure-goal``): half of the live research
    gate (seed 002), which also needs ``explore_composition_mode`` explicit_only."""
    explore_composition_mode: CompositionMode | None = None
    explore_composition_scope_id: Id | None = None
    """The coverage scope a joint experiment's result must name before it counts as live observed."""

    @model_serializer(mode="wrap")
    def _without_empty_policy(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        # the fields came after goals were on branches: a document is compared byte for byte with the
        # fold (`loopx verify`), so a goal without a policy renders exactly as it did before
        data: dict[str, Any] = handler(self)
        for name in POLICY_FIELDS:
            if data.get(name) is None:
                data.pop(name, None)
        return data


POLICY_FIELDS = (
    "delivery_branch_pattern",
    "explore_harness_enabled",
    "explore_composition_mode",
    "explore_composition_scope_id",
)


# --- the events of this family: the fold below applies them --------------------


class GoalCreate(EventBase):
    event_kind: Literal["goal_create"] = "goal_create"


class GoalUpdate(EventBase):
    event_kind: Literal["goal_update"] = "goal_update"


class AgentRegister(EventBase):
    event_kind: Literal["agent_register"] = "agent_register"
    agent_id: Id


FOLDS: Final[tuple[str, ...]] = (
    "goal_create",
    "goal_update",
    "agent_register",
    "goal_compensate",
)
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: EventBase) -> None:
    """Fold one goal_create / goal_update / agent_register event into ``state``."""
    kind = event.event_kind
    after = {c.field: c.after for c in event.changes}
    if kind == "goal_create":
        state.goal = Goal.model_validate({"goal_id": event.goal_id, **after})
    elif kind in ("goal_update", "goal_compensate"):
        state.check_before(event, state.goal)
        state.goal = state.goal.model_copy(update=after) if state.goal else None
    elif isinstance(event, AgentRegister):  # kind agent_register: its agent_id is required
        current = state.agents.get(event.agent_id)
        if current is None:
            state.agents[event.agent_id] = Agent.model_validate({"agent_id": event.agent_id, **after})
        else:
            state.check_before(event, current)
            state.agents[event.agent_id] = current.model_copy(update=after)


def explore_policy(goal: Goal | None) -> ExplorePolicy:
    if goal is None:
        return ExplorePolicy()
    return ExplorePolicy(
        bool(goal.explore_harness_enabled), goal.explore_composition_mode, goal.explore_composition_scope_id
    )

"""human_reward: a person's judgment of a run, bound to it (or, with no run, to the time it was
given), and its fold step. A reward is an overlay on the run history: it never grants, changes or
takes away write authority — it moves no todo, claim or gate."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field

from loopx_git.model.event_head import EventBase
from loopx_git.model.ids import (
    Id,
    UtcTimestamp,
)
from loopx_git.model.record import Line, Record

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

REWARD_SCHEMA: Final = "human_reward_v0"


class Polarity(str, Enum):
    positive = "positive"
    negative = "negative"
    mixed = "mixed"
    neutral = "neutral"


class LessonKind(str, Enum):
    route = "route"
    priority = "priority"
    benchmark_protocol = "benchmark_protocol"
    safety_boundary = "safety_boundary"
    operating_rule = "operating_rule"


class Lesson(Record):
    """What the judgment teaches the next turns: what to avoid, what to prefer."""

    kind: LessonKind
    summary: Line
    avoid: list[Line] = Field(default_factory=list, max_length=12)
    prefer: list[Line] = Field(default_factory=list, max_length=12)


class HumanReward(Record):
    schema_version: str = REWARD_SCHEMA
    reward_id: Id
    run_id: Id | None = None
    """The judged run; None binds the reward to ``judged_at`` alone."""
    judged_at: UtcTimestamp
    """When the judgment was given (generated): what a reward without a run is bound to."""
    label: Line
    """The decision label (``accept``, ``needs_rework``, ...)."""
    polarity: Polarity
    reason: Line
    follow_up: Line | None = None
    lesson: Lesson | None = None
    given_by: Id | None = None
    """A registered agent relaying the judgment; None when a person records it."""


# --- the events of this family: the fold below applies them --------------------


class RewardAdd(EventBase):
    """A human_reward given; its document is goals/<goal>/rewards/<h1>/<h2>/<id>.yaml."""

    event_kind: Literal["reward_add"] = "reward_add"
    reward: HumanReward


FOLDS: Final[tuple[str, ...]] = ("reward_add",)
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: RewardAdd) -> None:
    """Fold a reward_add event: the reward as given (rewards are never edited)."""
    reward = event.reward
    if reward.reward_id in state.rewards:
        state.record_conflict(event, "duplicate_reward", f"reward {reward.reward_id} was given twice")
        return
    state.rewards[reward.reward_id] = reward

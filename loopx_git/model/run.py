"""Compact run history: one record per agent turn, with its delivery outcome."""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from loopx_git.model.ids import Id, UtcTimestamp
from loopx_git.model.record import Line, Record, Token

RUN_SCHEMA = "loopx_run_record_v0"


class DeliveryOutcome(str, Enum):
    """Result tiers, weakest first: a run is judged by what it delivered, not how busy it was."""

    surface_only = "surface_only"
    outcome_gap = "outcome_gap"
    outcome_progress = "outcome_progress"
    primary_goal_outcome = "primary_goal_outcome"

    @property
    def rank(self) -> int:
        return list(DeliveryOutcome).index(self)


class RunRecord(Record):
    schema_version: str = RUN_SCHEMA
    run_id: Id
    generated_at: UtcTimestamp
    goal_id: Id
    agent_id: Id | None = None
    todo_id: Id | None = None
    classification: Token
    recommended_action: Line | None = None
    delivery_outcome: DeliveryOutcome | None = None
    delivery_batch_scale: int | None = Field(
        default=None, ge=0, description="How many units of work this run delivered."
    )
    evidence: list[Line] = Field(default_factory=list)


def run_order_key(run: RunRecord) -> tuple[str, str]:
    return (run.generated_at, run.run_id)

"""agent_handoff: work moved from one registered agent to another, and its fold step. Prepared by
the source with what moves (the todos it holds), when to stop, the evidence the target needs and
who reviews; adopted by the target, which moves the claims in the same commit; or cancelled."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field

from loopx_git.model.event_head import EventBase
from loopx_git.model.ids import (
    Id,
    UtcTimestamp,
)
from loopx_git.model.record import Line, Record, Token

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

HANDOFF_SCHEMA: Final = "agent_handoff_v0"


class HandoffStatus(str, Enum):
    prepared = "prepared"
    adopted = "adopted"
    cancelled = "cancelled"


class AgentHandoff(Record):
    schema_version: str = HANDOFF_SCHEMA
    handoff_id: Id
    from_agent_id: Id
    to_agent_id: Id
    todo_ids: list[Id] = Field(default_factory=list)
    """The todos moved: the source holds their claims until the target adopts them."""
    scope: Token | None = None
    """A named scope moved beside (or instead of) single todos."""
    stop_condition: Line
    evidence_refs: list[Line] = Field(default_factory=list)
    """What the target needs to continue: docs, PRs, runs, commits (public-safe refs)."""
    review_required: bool = True
    """Whether the target's result needs a review before it merges (else it may self-merge)."""
    self_merge_allowed: bool = False
    status: HandoffStatus = HandoffStatus.prepared
    reason: Line | None = None
    """Why it was cancelled."""
    prepared_at: UtcTimestamp
    adopted_at: UtcTimestamp | None = None
    cancelled_at: UtcTimestamp | None = None
    updated_at: UtcTimestamp

    @property
    def waiting(self) -> bool:
        return self.status == HandoffStatus.prepared.value


# --- the events of this family: the fold below applies them --------------------


class HandoffEntityEvent(EventBase):
    handoff_id: Id


class HandoffPrepare(HandoffEntityEvent):
    event_kind: Literal["handoff_prepare"] = "handoff_prepare"


class HandoffAdopt(HandoffEntityEvent):
    """The target took the work: its commit also moves each todo's claim (todo_update events)."""

    event_kind: Literal["handoff_adopt"] = "handoff_adopt"


class HandoffCancel(HandoffEntityEvent):
    event_kind: Literal["handoff_cancel"] = "handoff_cancel"


FOLDS: Final[tuple[str, ...]] = (
    "handoff_prepare",
    "handoff_adopt",
    "handoff_cancel",
)
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: HandoffEntityEvent) -> None:
    """Fold one handoff_prepare / handoff_adopt / handoff_cancel event. An adoption and a cancellation
    made offline on two clones: the first in fold order stands, the other is a recorded conflict."""
    after = {c.field: c.after for c in event.changes}
    current = state.handoffs.get(event.handoff_id)
    if event.event_kind == "handoff_prepare":
        if current is not None:
            state.record_conflict(event, "duplicate_handoff", f"handoff {event.handoff_id} was prepared twice")
            return
        state.handoffs[event.handoff_id] = AgentHandoff.model_validate({"handoff_id": event.handoff_id, **after})
        return
    if current is None:
        state.record_conflict(
            event, "unknown_handoff", f"{event.event_kind} names handoff {event.handoff_id}, never prepared"
        )
        return
    if not current.waiting:
        state.record_conflict(
            event, "handoff_conflict", f"{event.event_kind} of handoff {event.handoff_id}, already {current.status}"
        )
        state.dropped.add(event.event_id)  # the claims a losing adoption moved stay where they were
        return
    state.check_before(event, current)
    state.handoffs[event.handoff_id] = current.model_copy(update=after)

"""operator_gate: a decision point an owner (a person, a controller, a registered agent or an
external system) must settle before the work it blocks may run, and its fold step.

A gate blocks while it is undecided, rejected or deferred; only an approval lifts it, and the
approval's own commit wakes the todos it names in ``unblocks``. The gate's status is derived from
its events, never written by hand."""

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

GATE_SCHEMA = "operator_gate_v0"


class OwnerClass(str, Enum):
    user = "user"
    controller = "controller"
    agent = "agent"
    external = "external"


class Decision(str, Enum):
    approve = "approve"
    reject = "reject"
    defer = "defer"
    cancel = "cancel"
    """Only through a ``user_gate`` todo completed with ``--decision-outcome cancel``."""


class GateStatus(str, Enum):
    open = "open"
    approved = "approved"
    rejected = "rejected"
    deferred = "deferred"
    cancelled = "cancelled"


DECIDED = {
    Decision.approve.value: GateStatus.approved.value,
    Decision.reject.value: GateStatus.rejected.value,
    Decision.defer.value: GateStatus.deferred.value,
    Decision.cancel.value: GateStatus.cancelled.value,
}


class OperatorGate(Record):
    schema_version: str = GATE_SCHEMA
    gate_id: Id
    owner_class: OwnerClass
    owner_agent_id: Id | None = None
    """The registered agent that owns the gate, when ``owner_class`` is agent."""
    blocks: list[Id] = Field(default_factory=list)
    """Todos that may not run while the gate is not approved."""
    scope: Token | None = None
    """A named scope the gate blocks beyond single todos (``release``, ``deploy``)."""
    question: Line
    unblocks: list[Id] = Field(default_factory=list)
    """Todos an approval wakes (blocked or deferred ones are made open in the approval's commit)."""
    next_safe_action: Line | None = None
    status: GateStatus = GateStatus.open
    decision: Decision | None = None
    reason: Line | None = None
    follow_up: Line | None = None
    handoff_command: Line | None = None
    decided_by_class: OwnerClass | None = None
    decided_by_agent_id: Id | None = None
    opened_by: Id | None = None
    source_todo_id: Id | None = None
    """The ``user_gate`` todo this gate was recorded from, when it came from one."""
    created_at: UtcTimestamp
    decided_at: UtcTimestamp | None = None
    updated_at: UtcTimestamp

    @property
    def holds(self) -> bool:
        """Whether it still blocks: until approved (a rejection or a deferral keeps the work blocked)."""
        return self.status != GateStatus.approved.value

    @property
    def decided(self) -> bool:
        return self.status != GateStatus.open.value


# --- the events of this family: the fold below applies them --------------------


class GateEvent(EventBase):
    gate_id: Id


class GateOpen(GateEvent):
    event_kind: Literal["gate_open"] = "gate_open"


class GateDecide(GateEvent):
    """approve | reject | defer (| cancel, from a user_gate todo); an approval's commit also holds
    the todo_resume events of what it unblocks."""

    event_kind: Literal["gate_decide"] = "gate_decide"


FOLDS: Final[tuple[str, ...]] = ("gate_open", "gate_decide")
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: GateEvent) -> None:
    """Fold one gate_open / gate_decide event. Two clones deciding one gate offline: the first
    decision in fold order stands and the other is recorded as a conflict."""
    after = {c.field: c.after for c in event.changes}
    current = state.gates.get(event.gate_id)
    if event.event_kind == "gate_open":
        if current is not None:
            state.record_conflict(event, "duplicate_gate", f"gate {event.gate_id} was opened twice")
            return
        state.gates[event.gate_id] = OperatorGate.model_validate({"gate_id": event.gate_id, **after})
        return
    if current is None:
        state.record_conflict(event, "unknown_gate", f"{event.event_kind} names gate {event.gate_id}, never opened")
        return
    if current.decided and current.status != GateStatus.deferred.value:
        state.record_conflict(
            event,
            "decision_conflict",
            f"gate {event.gate_id} was decided {after.get('decision')!r}, already {current.status}",
        )
        state.dropped.add(event.event_id)  # what the losing decision woke stays asleep
        return
    state.check_before(event, current)
    state.gates[event.gate_id] = current.model_copy(update=after)

"""rollback_packet_v0: a compensating-action record. A rollback never deletes history: it is a
packet (what went wrong, what it touched, who decides, the plan) plus, for the plan's
``state_compensation`` step, compensating events that restore the affected entities.

Steps of kind ``history_rewrite`` are always protected (``requires_gate``) and never automatable:
the model refuses a packet that says otherwise, and loopx never executes one.
"""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import Field, StringConstraints, model_validator

from loopx_git.model.boundary import Boundary
from loopx_git.model.event_head import EventBase
from loopx_git.model.ids import Id
from loopx_git.model.record import Line, Record, Token
from loopx_git.model.todo import TodoEvent

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

ROLLBACK_SCHEMA: Final = "rollback_packet_v0"

Rfc3339 = Annotated[
    str,
    StringConstraints(
        pattern=r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$"
    ),
]
"""An RFC 3339 time with any offset: packets written elsewhere (the upstream fixture) carry +08:00."""
Ref = Annotated[str, StringConstraints(min_length=1, max_length=300)]
"""A commit, PR, resource or surface reference: public-safe text, checked by the safety rules."""


class TriggerKind(str, Enum):
    public_boundary_leak = "public_boundary_leak"
    mistaken_transition = "mistaken_transition"
    regression = "regression"
    failed_validation = "failed_validation"
    operator_request = "operator_request"
    external_incident = "external_incident"


class StepKind(str, Enum):
    git_revert = "git_revert"
    fix_forward = "fix_forward"
    history_rewrite = "history_rewrite"
    state_compensation = "state_compensation"
    external_cleanup = "external_cleanup"
    support_request = "support_request"
    todo_supersede = "todo_supersede"
    validation = "validation"


class Trigger(Record):
    kind: TriggerKind
    summary: Line
    todo_ids: list[Id] = Field(default_factory=list)
    source_event_ids: list[Id] = Field(default_factory=list)


class RepositoryRefs(Record):
    commit_refs: list[Ref] = Field(default_factory=list)
    pr_refs: list[Ref] = Field(default_factory=list)


class Scope(Record):
    repository_refs: RepositoryRefs = Field(default_factory=RepositoryRefs)
    todo_ids: list[Id] = Field(default_factory=list)
    external_resource_refs: list[Ref] = Field(default_factory=list)
    user_visible_surfaces: list[Ref] = Field(default_factory=list)
    local_state_refs: list[Ref] = Field(default_factory=list)


class Decision(Record):
    owner: Id
    required: bool
    reason: Line
    default_safe_action: Token


class PlanStep(Record):
    step_id: Id
    kind: StepKind
    action: Line
    requires_gate: bool
    destructive: bool
    automatable_by_agent: bool

    @model_validator(mode="after")
    def _history_rewrite_is_protected(self) -> PlanStep:
        if self.kind == StepKind.history_rewrite.value and (not self.requires_gate or self.automatable_by_agent):
            raise ValueError(
                "a history_rewrite step is always protected: requires_gate true, automatable_by_agent false"
            )
        return self


class AddTodo(Record):
    role: Literal["user", "agent"]
    task_class: Token
    title: Line


class TodoCompensation(Record):
    complete_todo_ids: list[Id] = Field(default_factory=list)
    add_todos: list[AddTodo] = Field(default_factory=list)
    supersede_todo_ids: list[Id] = Field(default_factory=list)


class Validation(Record):
    commands: list[Line] = Field(default_factory=list)
    public_boundary_scan_required: bool = False
    success_criteria: list[Line] = Field(default_factory=list)


class RollbackPacket(Record):
    schema_version: Literal["rollback_packet_v0"] = ROLLBACK_SCHEMA
    packet_id: Id
    goal_id: Id
    created_at: Rfc3339
    trigger: Trigger
    scope: Scope = Field(default_factory=Scope)
    decision: Decision
    plan: list[PlanStep] = Field(min_length=1)
    todo_compensation: TodoCompensation = Field(default_factory=TodoCompensation)
    validation: Validation = Field(default_factory=Validation)
    boundary: Boundary = Field(default_factory=Boundary)

    @property
    def pending_steps(self) -> list[PlanStep]:
        """Steps that wait for a gate or a person; loopx never runs them."""
        return [s for s in self.plan if s.requires_gate or not s.automatable_by_agent]

    @property
    def is_open(self) -> bool:
        return bool(self.pending_steps)


# --- the events of this family: the fold below applies them --------------------


class RollbackPlan(EventBase):
    """A rollback_packet_v0 recorded on the branch; its document is goals/<goal>/rollbacks/<h1>/<h2>/<id>.yaml."""

    event_kind: Literal["rollback_plan"] = "rollback_plan"
    packet: RollbackPacket


class TodoCompensate(TodoEvent):
    """Restores fields of a todo to their values before the event it compensates."""

    event_kind: Literal["todo_compensate"] = "todo_compensate"
    compensates: Id
    packet_id: Id


class GoalCompensate(EventBase):
    event_kind: Literal["goal_compensate"] = "goal_compensate"
    compensates: Id
    packet_id: Id


FOLDS: Final[tuple[str, ...]] = ("rollback_plan",)
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: RollbackPlan) -> None:
    """Fold a rollback_plan event: the packet, as recorded (compensating events fold as todo/goal events)."""
    state.rollbacks[event.packet.packet_id] = event.packet

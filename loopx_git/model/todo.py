"""todo_item_v0: formal todos, candidate (suggested) todos, resume conditions, and their fold step."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Literal,
)

from pydantic import (
    AfterValidator,
    Field,
    GetJsonSchemaHandler,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
    model_validator,
)
from pydantic_core import CoreSchema

from loopx_git.model import github
from loopx_git.model.capability import CapabilityGuard
from loopx_git.model.event_head import EventBase
from loopx_git.model.ids import (
    Id,
    UtcTimestamp,
)
from loopx_git.model.record import Line, Record, Row, Token, exact, stored, writing
from loopx_git.model.run import DeliveryFlags, DeliveryOutcome, drop_flags, flags_schema, with_flags

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

TODO_SCHEMA = "todo_item_v0"


class TodoRole(str, Enum):
    user = "user"
    agent = "agent"


class TodoStatus(str, Enum):
    open = "open"
    done = "done"
    blocked = "blocked"
    deferred = "deferred"


class TaskClass(str, Enum):
    advancement_task = "advancement_task"
    continuous_monitor = "continuous_monitor"
    user_gate = "user_gate"
    user_action = "user_action"
    blocker = "blocker"


class Priority(str, Enum):
    P0 = "P0"
    P1 = "P1"
    P2 = "P2"
    P3 = "P3"
    P4 = "P4"


# matched whole (record.exact): in Python's re, `$` also matches before a final newline
REPO_RE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
RESUME_RULE = (
    "todo_done:<todo_id> | pr_merged:#N | pr_merged:owner/repo#N (or a github.com pull request URL) | "
    "capacity_available:<cap>"
)
_RESUME_RE = re.compile(
    r"(?:todo_done:(?P<todo>[A-Za-z0-9][A-Za-z0-9_.:-]{0,127})"
    r"|pr_merged:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#(?P<pr>[1-9][0-9]{0,9})"
    r"|capacity_available:(?P<cap>[a-z][a-z0-9_.-]{0,63}))"
)


@dataclass(frozen=True)
class ResumeCondition:
    """A parsed ``resume_when``. ``repository`` is None for an unqualified ``pr_merged:#N``."""

    kind: str  # todo_done | pr_merged | capacity_available
    todo_id: str | None = None
    repository: str | None = None
    pr_number: int | None = None
    capacity: str | None = None

    @classmethod
    def parse(cls, text: str, *, lenient: bool = False) -> ResumeCondition:
        """``lenient`` reads what older versions wrote (a final newline); a new value never has one."""
        match = exact(_RESUME_RE, text, lenient=lenient)
        if not match:
            raise ValueError(f"{text!r} is not a resume condition ({RESUME_RULE})")
        if match.group("todo"):
            return cls("todo_done", todo_id=match.group("todo"))
        if match.group("pr"):
            return cls("pr_merged", repository=match.group("repo"), pr_number=int(match.group("pr")))
        return cls("capacity_available", capacity=match.group("cap"))

    def bound_to(self, task_repository: str | None) -> ResumeCondition:
        """Bind an unqualified PR ref to the todo's repository (None stays ambiguous)."""
        if self.kind == "pr_merged" and self.repository is None and task_repository:
            return ResumeCondition("pr_merged", repository=task_repository, pr_number=self.pr_number)
        return self


def canonical_resume(text: str) -> str:
    """``pr_merged:<PR URL>`` as ``pr_merged:owner/repo#N`` (what a wake-up matches); every other
    condition as given. ValueError when a ``pr_merged`` ref is neither a PR ref nor a GitHub PR URL."""
    kind, sep, ref = text.partition(":")
    if kind == "pr_merged" and sep and not exact(_RESUME_RE, text):
        return f"pr_merged:{github.pr_ref(ref)}"
    return text


def _check_resume(value: str, info: ValidationInfo) -> str:
    if writing(info):
        value = canonical_resume(value)
    ResumeCondition.parse(value, lenient=not writing(info))
    return value


def _check_repo(value: str, info: ValidationInfo) -> str:
    if writing(info):  # a new value may be pasted as a URL; what is stored is owner/repo
        return github.repository(value)
    if not exact(REPO_RE, value, lenient=True):
        raise ValueError(f"{value!r} is not a repository (owner/repo)")
    return value


ResumeWhen = Annotated[str, AfterValidator(_check_resume)]
Repository = Annotated[str, AfterValidator(_check_repo)]


class TodoItem(Record):
    schema_version: str = TODO_SCHEMA
    todo_id: Id
    role: TodoRole = TodoRole.agent
    text: Line
    status: TodoStatus = TodoStatus.open
    task_class: TaskClass = TaskClass.advancement_task
    action_kind: Token | None = None
    priority: Priority = Priority.P2
    claimed_by: Id | None = None
    resume_when: ResumeWhen | None = None
    unblocks_todo_id: Id | None = None
    successor_todo_ids: list[Id] = Field(default_factory=list)
    superseded_by: Id | None = None
    supersedes: list[Id] = Field(default_factory=list)
    task_repository: Repository | None = None
    reason: Line | None = None
    evidence: list[Line] = Field(default_factory=list)
    created_at: UtcTimestamp | None = None
    completed_at: UtcTimestamp | None = None
    updated_at: UtcTimestamp
    replan_obligation_id: Id | None = None
    """The replan obligation this todo was added as a successor for (``todo add --replan-obligation-id``)."""
    delivery_outcome: DeliveryOutcome | None = None
    """The result tier the completion reported (``todo complete --delivery-outcome``); shown with
    its ``delivery_flags``. Both are left out of a todo without one."""
    explore_result_node_refs: list[Id] = Field(default_factory=list)
    """The explore nodes this todo's result is recorded on (``todo add --explore-result-node-ref``):
    a joint_probe successor names exactly its one experiment."""
    capability_guard: CapabilityGuard | None = None
    """The capability obligation this todo was admitted for (model/capability.py): set by loopx when
    ``--replan-obligation-id`` names a live research gap's obligation, never by the caller."""

    @model_validator(mode="before")
    @classmethod
    def _derived_flags(cls, data: Any, info: ValidationInfo) -> Any:
        return drop_flags(data, info)

    @model_serializer(mode="wrap")
    def _shown(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):  # type: ignore[no-untyped-def]
        # delivery_outcome came after todos were on branches: a document is compared byte for byte
        # with the fold (`loopx verify`), so a todo without a tier renders exactly as it did before.
        # (No return annotation: pydantic would take it as the serialized shape and lose the fields'.)
        data = handler(self)
        for name in (
            "replan_obligation_id",
            "capability_guard",
        ):  # came later too: a todo without one renders as before
            if data.get(name, "") is None:
                data.pop(name)
        if data.get("explore_result_node_refs") == []:
            data.pop("explore_result_node_refs")
        return with_flags(data, info, stored=stored(info), keep_empty=False)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        schema = handler(core_schema)
        flags_schema(schema, handler)
        return schema

    @property
    def delivery_flags(self) -> DeliveryFlags | None:
        return DeliveryFlags.of(self.delivery_outcome)

    def to_row(self) -> Row:
        # a cache row is marshalled: the one nested record goes in as its JSON data
        row = super().to_row()
        if self.capability_guard is None:
            return row
        at = _GUARD_AT
        return (*row[:at], self.capability_guard.model_dump(mode="json"), *row[at + 1 :])

    @classmethod
    def from_row(cls, row: Row) -> TodoItem:
        guard = row[_GUARD_AT]
        if isinstance(guard, dict):
            row = (*row[:_GUARD_AT], CapabilityGuard.model_validate(guard), *row[_GUARD_AT + 1 :])
        return super().from_row(row)

    @property
    def resume_condition(self) -> ResumeCondition | None:
        if not self.resume_when:
            return None
        return ResumeCondition.parse(self.resume_when, lenient=True).bound_to(self.task_repository)

    @property
    def is_closed(self) -> bool:
        return self.status == TodoStatus.done.value


_GUARD_AT = list(TodoItem.model_fields).index("capability_guard")


class SuggestedTodo(Record):
    """A candidate todo: visible for decision, never runnable until promoted."""

    schema_version: str = "suggested_todo_v0"
    todo_id: Id
    role: TodoRole = TodoRole.agent
    text: Line
    task_class: TaskClass = TaskClass.advancement_task
    action_kind: Token | None = None
    priority: Priority = Priority.P2
    task_repository: Repository | None = None
    reason: Line | None = None
    suggested_by: Id | None = None
    promoted: bool = False
    created_at: UtcTimestamp
    updated_at: UtcTimestamp


# --- the events of this family: the fold below applies them --------------------


class TodoEvent(EventBase):
    todo_id: Id


class TodoAdd(TodoEvent):
    event_kind: Literal["todo_add"] = "todo_add"
    capability_guard: CapabilityGuard | None = None
    """research_capability_guard_v0 of a joint_probe admitted for a research gap's obligation: kept
    whole here (field changes hold scalars), and on the todo it adds."""


class TodoClaim(TodoEvent):
    event_kind: Literal["todo_claim"] = "todo_claim"
    agent_id: Id


class TodoUpdate(TodoEvent):
    event_kind: Literal["todo_update"] = "todo_update"


class TodoResume(TodoEvent):
    """A deferred or blocked todo made runnable again because its condition came true."""

    event_kind: Literal["todo_resume"] = "todo_resume"


class TodoComplete(TodoEvent):
    event_kind: Literal["todo_complete"] = "todo_complete"


class TodoSupersede(TodoEvent):
    event_kind: Literal["todo_supersede"] = "todo_supersede"


class TodoSuggest(TodoEvent):
    event_kind: Literal["todo_suggest"] = "todo_suggest"


class TodoPromote(TodoEvent):
    event_kind: Literal["todo_promote"] = "todo_promote"


FOLDS: Final[tuple[str, ...]] = (
    "todo_add",
    "todo_claim",
    "todo_update",
    "todo_resume",
    "todo_complete",
    "todo_supersede",
    "todo_suggest",
    "todo_promote",
    "todo_compensate",
)
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: TodoEvent) -> None:
    """Fold one todo_* event into ``state``; conflicting facts are recorded, never dropped."""
    kind = event.event_kind
    todo_id = event.todo_id
    after = {c.field: c.after for c in event.changes}
    if kind == "todo_suggest":
        state.suggested[todo_id] = SuggestedTodo.model_validate({"todo_id": todo_id, **after})
        return
    if kind == "todo_add" or (kind == "todo_promote" and todo_id not in state.todos):
        if todo_id in state.todos:
            state.record_conflict(event, "duplicate_todo", f"todo {todo_id} was added twice")
            return
        guard = getattr(event, "capability_guard", None)  # a todo_add's, kept whole on the event
        state.put_todo(TodoItem.model_validate({"todo_id": todo_id, **after, "capability_guard": guard}))
        if guard is not None:
            state.duties.setdefault(guard.obligation_id, guard)
            state.duty_todo_ids.setdefault(guard.obligation_id, []).append(todo_id)
        if kind == "todo_promote" and todo_id in state.suggested:
            state.suggested[todo_id] = state.suggested[todo_id].model_copy(update={"promoted": True})
        return
    current = state.todos.get(todo_id)
    if current is None:
        state.record_conflict(event, "unknown_todo", f"{kind} names todo {todo_id}, which was never added")
        return
    cause = event.causality.caused_by if event.causality else None
    if cause is not None and cause in state.dropped:
        state.record_conflict(
            event, "cause_dropped", f"{kind} of {todo_id} not applied: its cause {cause} lost to another decision"
        )
        state.dropped.add(event.event_id)
        return
    if kind == "todo_claim" and current.claimed_by not in (None, event.agent_id):
        state.record_conflict(
            event, "claim_conflict", f"{event.agent_id} claimed {todo_id}, already held by {current.claimed_by}"
        )
        return
    state.check_before(event, current)
    state.put_todo(current.model_copy(update=after))

"""loopx_rollout_event_v0: the append-only event stream, one immutable file per event.

Every event kind is a class with a literal ``event_kind``: the facts that change no document are
declared here, each family's own events with its fold (``model/todo.py``, ``model/gate.py``...).
``RolloutEvent`` is the discriminated union of all of them and the only way events are read.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import Field, TypeAdapter, ValidationInfo, field_validator
from pydantic import JsonValue as AnyJson

from loopx_git.model.event_head import (
    CodeRefs,
    EventBase,
    Handoff,
    PrivateSource,
    SourceRef,
)
from loopx_git.model.explore import (
    ExploreEdgeAdd,
    ExploreEvent,
    ExploreFindingAdd,
    ExploreNodeAdd,
    ExploreNodeUpdate,
    ExploreObserve,
)
from loopx_git.model.fire import FireSummary
from loopx_git.model.gate import (
    GateDecide,
    GateEvent,
    GateOpen,
)
from loopx_git.model.github import PR_REF_RE
from loopx_git.model.goal import (
    AgentRegister,
    GoalCreate,
    GoalUpdate,
)
from loopx_git.model.handoff import (
    HandoffAdopt,
    HandoffCancel,
    HandoffEntityEvent,
    HandoffPrepare,
)
from loopx_git.model.ids import Id
from loopx_git.model.ledger import (
    LedgerAdd,
    LedgerEvent,
    LedgerRecord,
    LedgerSelect,
)
from loopx_git.model.record import Line, Record, Token, exact, writing
from loopx_git.model.reward import RewardAdd
from loopx_git.model.rollback import (
    GoalCompensate,
    Rfc3339,
    RollbackPlan,
    TodoCompensate,
)
from loopx_git.model.todo import (
    TodoAdd,
    TodoClaim,
    TodoComplete,
    TodoEvent,
    TodoPromote,
    TodoResume,
    TodoSuggest,
    TodoSupersede,
    TodoUpdate,
)

# --- facts: appended as they are, they change no document -----------------------------------


class PrMerge(EventBase):
    event_kind: Literal["pr_merge"] = "pr_merge"
    code_refs: CodeRefs

    @field_validator("code_refs")
    @classmethod
    def _qualified_pr(cls, refs: CodeRefs, info: ValidationInfo) -> CodeRefs:
        match = exact(PR_REF_RE, refs.pr_ref or "", lenient=not writing(info))
        if not match or not match.group("repo"):
            raise ValueError("a pr_merge event names its PR as owner/repo#N in code_refs.pr_ref")
        return refs


class Validation(EventBase):
    event_kind: Literal["validation"] = "validation"


class RefreshState(EventBase):
    event_kind: Literal["refresh_state"] = "refresh_state"
    run_id: Id


class HandoffEvent(EventBase):
    event_kind: Literal["handoff"] = "handoff"
    handoff: Handoff


class Quota(EventBase):
    """``details.capacity`` with ``details.available`` wakes ``capacity_available:<cap>`` todos."""

    event_kind: Literal["quota"] = "quota"


class QuotaSpend(EventBase):
    """A compute slot spent after run ``run_id``'s compact write-back (``quota spend-slot``)."""

    event_kind: Literal["quota_spend"] = "quota_spend"
    run_id: Id
    agent_id: Id


class Repair(EventBase):
    event_kind: Literal["repair"] = "repair"


class Failure(EventBase):
    event_kind: Literal["failure"] = "failure"


class Note(EventBase):
    event_kind: Literal["note"] = "note"


class FireRecord(EventBase):
    """How a bounded headless fire ended (a fact: it changes no document)."""

    event_kind: Literal["fire"] = "fire"
    fire: FireSummary


# --- imported history: a rollout-event log written elsewhere ----------------------------------


class ImportOrigin(Record):
    """Where an imported line came from, and what of it this log's own fields have no place for:
    upstream LoopX's status, classification and source refs, or a loopx export's kind-specific
    fields (``payload``), so that exporting it again gives the same facts."""

    source: Literal["rollout_event_log"] = "rollout_event_log"
    event_id: Id
    """The line's own event id: what imports are deduplicated by."""
    kind: Token
    """The line's ``event_kind`` (named apart from it: a record's own kind is found by its key)."""
    goal_id: Id
    recorded_at: Rfc3339
    """As the line wrote it (any offset); the event's own ``recorded_at`` is the same moment in UTC."""
    status: Line | None = None
    classification: Line | None = None
    delivery_outcome: Token | None = None
    agent_model: Token | None = None
    agent_role: Line | None = None
    source_refs: list[SourceRef] = Field(default_factory=list)
    private_source: PrivateSource | None = None
    payload: dict[Token, AnyJson] = Field(default_factory=dict)


class RolloutImport(EventBase):
    """A line of another rollout-event log (``loopx events import``): history, not state. It keeps
    the line's time and join keys, so every listing and view finds it, and its event id in
    ``origin``; it adds, claims or wakes nothing (a fact to act on is appended with ``loopx event
    append``)."""

    event_kind: Literal["rollout_import"] = "rollout_import"
    origin: ImportOrigin


EVENT_CLASSES: tuple[type[EventBase], ...] = (
    GoalCreate,
    GoalUpdate,
    AgentRegister,
    TodoAdd,
    TodoClaim,
    TodoUpdate,
    TodoResume,
    TodoComplete,
    TodoSupersede,
    TodoSuggest,
    TodoPromote,
    PrMerge,
    Validation,
    RefreshState,
    HandoffEvent,
    Quota,
    Repair,
    Failure,
    Note,
    RollbackPlan,
    TodoCompensate,
    GoalCompensate,
    LedgerAdd,
    LedgerSelect,
    LedgerRecord,
    FireRecord,
    GateOpen,
    GateDecide,
    RewardAdd,
    HandoffPrepare,
    HandoffAdopt,
    HandoffCancel,
    QuotaSpend,
    RolloutImport,
    ExploreNodeAdd,
    ExploreNodeUpdate,
    ExploreEdgeAdd,
    ExploreFindingAdd,
    ExploreObserve,
)

RolloutEvent = Annotated[Union[EVENT_CLASSES], Field(discriminator="event_kind")]  # type: ignore[valid-type]  # noqa: UP007 - a union built from a tuple

EVENT_KINDS: tuple[str, ...] = tuple(cls.model_fields["event_kind"].default for cls in EVENT_CLASSES)
EVENT_CLASS: dict[str, type[EventBase]] = dict(zip(EVENT_KINDS, EVENT_CLASSES))

_KIND_RE = re.compile(rb'"event_kind"\s*:\s*"([a-z_]+)"')


class EventAdapter:
    """The union of every event kind, validated one kind at a time: the record's own class is built
    and used, not a validator of all of them (which costs a tenth of a second to build, at import or
    at first use). Whatever the shortcut cannot settle goes to the whole union, whose answer — and
    error — is the definition: a kind found once, whose class validates the record, is the kind the
    union's discriminator would pick."""

    def __init__(self) -> None:
        self._union: TypeAdapter[EventBase] | None = None

    @property
    def union(self) -> TypeAdapter[EventBase]:
        if self._union is None:
            self._union = TypeAdapter(RolloutEvent)
        return self._union

    def validate_json(self, data: str | bytes) -> EventBase:
        raw = data.encode() if isinstance(data, str) else data
        found = _KIND_RE.findall(raw)
        cls = EVENT_CLASS.get(found[0].decode()) if len(found) == 1 else None
        if cls is not None:
            try:
                event = cls.model_validate_json(raw)
            except ValueError:  # pydantic.ValidationError: let the union say what is wrong, as it always has
                pass
            else:  # the kind was the record's own, not one nested in a value (the default fills a missing one)
                if "event_kind" in event.model_fields_set:
                    return event
        return self.union.validate_json(raw)

    def validate_python(self, data: object, **kwargs: object) -> EventBase:
        kind = data.get("event_kind") if isinstance(data, dict) else getattr(data, "event_kind", None)
        cls = EVENT_CLASS.get(kind) if isinstance(kind, str) else None
        if cls is not None:
            try:
                event = cls.model_validate(data, **kwargs)  # type: ignore[arg-type]
            except ValueError:
                pass
            else:
                if "event_kind" in event.model_fields_set:
                    return event
        return self.union.validate_python(data, **kwargs)  # type: ignore[arg-type]

    def json_schema(self, **kwargs: object) -> dict[str, object]:
        return self.union.json_schema(**kwargs)  # type: ignore[arg-type]


EVENT_ADAPTER = EventAdapter()
ENTITY_KINDS = frozenset(
    k
    for k in EVENT_KINDS
    if k.startswith(("goal_", "agent_", "todo_", "rollback_", "ledger_", "gate_", "reward_", "handoff_", "explore_"))
)
"""Kinds that change a document; only their own commands write them."""
APPENDABLE_KINDS = tuple(
    k
    for k in EVENT_KINDS
    if k not in ENTITY_KINDS and k not in ("refresh_state", "fire", "quota_spend", "rollout_import")
)
"""Kinds ``loopx event append`` accepts: facts that change no document by themselves."""

UPSTREAM_KINDS = frozenset(
    {
        "benchmark_launch",
        "benchmark_status",
        "codex_session_observed",
        "capability_gap",
        "compact_blocker",
        "compact_case_result",
        "failure_attribution",
        "pr_merge",
        "quota_monitor_poll",
        "quota_should_run",
        "quota_spend",
        "quota_void",
        "refresh_state",
        "research_evidence",
        "research_hypothesis",
        "todo_add",
        "todo_archive_completed",
        "todo_claim",
        "todo_complete",
        "todo_supersede",
        "todo_update",
        "validation",
    }
)
"""The kinds upstream LoopX's rollout log writes (its ``ROLLOUT_EVENT_KINDS``)."""
LISTED_KINDS: tuple[str, ...] = EVENT_KINDS + tuple(sorted(UPSTREAM_KINDS - set(EVENT_KINDS)))
"""What ``events --kind`` takes: loopx's kinds, and upstream's (the kind an imported line had)."""

EventBase = EventBase
TodoEvent = TodoEvent
LedgerEvent = LedgerEvent
GateEvent = GateEvent
HandoffEntityEvent = HandoffEntityEvent
ExploreEvent = ExploreEvent

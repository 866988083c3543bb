"""loopx_rollout_event_v0: the append-only event stream, one immutable file per event.

Every event kind is a class here with a literal ``event_kind``; ``RolloutEvent`` is
the discriminated union of all of them and the only way events are read.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Final, Literal, Union

from pydantic import AfterValidator, ConfigDict, Field, TypeAdapter, ValidationInfo, field_validator, model_validator
from pydantic import JsonValue as AnyJson

from loopx_git.model.boundary import Boundary
from loopx_git.model.capability import CapabilityGuard
from loopx_git.model.explore import ExploreEdge, ExploreFinding
from loopx_git.model.fire import FireSummary
from loopx_git.model.github import PR_REF_RE, pr_ref
from loopx_git.model.ids import Id, UtcTimestamp
from loopx_git.model.ledger import Evidence
from loopx_git.model.record import JsonScalar, JsonValue, Line, Record, Token, control_free, exact, writing
from loopx_git.model.research import FINGERPRINT, ResearchObservation, observation_fingerprint
from loopx_git.model.reward import HumanReward
from loopx_git.model.rollback import Rfc3339, RollbackPacket

EVENT_SCHEMA: Final = "loopx_rollout_event_v0"

COMMIT_RE = re.compile(r"[0-9a-f]{7,40}|[0-9a-f]{64}")
COMMIT_RULE = "a commit id: 7-40 lower-case hex digits (SHA-1, full or abbreviated) or 64 (SHA-256)"
_LEGACY_COMMIT_RE = re.compile(r"[0-9a-f]{7,64}")  # what records written before the rule above may hold


def _check_pr_ref(value: str, info: ValidationInfo) -> str:
    if writing(info):  # a new value may be pasted as a PR URL; what is stored is owner/repo#N
        return pr_ref(value)
    if not exact(PR_REF_RE, value, lenient=True):
        raise ValueError(f"{value!r} is not a PR ref (#N or owner/repo#N)")
    return value


def _check_commit(value: str, info: ValidationInfo) -> str:
    if not (exact(COMMIT_RE, value) if writing(info) else exact(_LEGACY_COMMIT_RE, value, lenient=True)):
        raise ValueError(f"{value!r} is not {COMMIT_RULE}")
    return value


def _check_relative(value: str, info: ValidationInfo) -> str:
    parts = value.replace("\\", "/").split("/")
    if (
        not value
        or value.startswith(("/", "~", "\\"))
        or re.match(r"^[A-Za-z]:", value)
        or ".." in parts
        or len(value) > 512
        or (writing(info) and not control_free(value))
    ):
        raise ValueError(
            f"{value!r} is not a relative ref (no leading /, ~ or drive, no '..', no control "
            "characters, at most 512 chars)"
        )
    return value


PrRef = Annotated[str, AfterValidator(_check_pr_ref)]
CommitRef = Annotated[str, AfterValidator(_check_commit)]
RelativeRef = Annotated[str, AfterValidator(_check_relative)]


class Lane(Record):
    lane_id: Id


class StateTransition(Record):
    from_state: Token | None = None
    to_state: Token


class Causality(Record):
    caused_by: Id | None = None
    source_event_id: Id | None = None
    gate_id: Id | None = None
    decision_id: Id | None = None
    blocks: list[Id] = Field(default_factory=list)
    unblocks: list[Id] = Field(default_factory=list)


class CodeRefs(Record):
    commit_ref: CommitRef | None = None
    pr_ref: PrRef | None = None
    revert_of: CommitRef | None = None


class Handoff(Record):
    to_agent_id: Id


class FieldChange(Record):
    """One field of one entity, before and after: what makes documents re-derivable."""

    field: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    before: JsonValue = None
    after: JsonValue = None


INT64_MAX: Final = 2**63 - 1


class EventHead(Record):
    """What every event has and the fold reads of every event: identity, clock, join keys.

    A cold read parses facts that change no state only this far (a third of the cost of the
    whole record); ``loopx verify`` and every listing validate whole records."""

    model_config = ConfigDict(extra="ignore")
    schema_version: Literal["loopx_rollout_event_v0"] = EVENT_SCHEMA
    event_id: Id
    goal_id: Id
    event_kind: Token
    recorded_at: UtcTimestamp
    lamport: int = Field(ge=1, description="Per-goal Lamport clock; fold order is (lamport, recorded_at, event_id).")
    agent_id: Id | None = None
    todo_id: Id | None = None
    run_id: Id | None = None
    case_id: Id | None = None
    benchmark_id: Id | None = None
    lane: Lane | None = None
    summary: Line | None = None

    @field_validator("lamport")
    @classmethod
    def _lamport_fits(cls, value: int) -> int:
        # a clock past 64 bits is no clock loopx wrote: every later event would have to pass it
        if value > INT64_MAX:
            raise ValueError(f"a clock of {len(str(value))} digits; rule: lamport fits in 64 bits")
        return value

    @property
    def has_join_key(self) -> bool:
        """Whether a view can join this event to an agent, todo, run, case, benchmark or lane; a
        bridge drawn from an event without one is inferred, never observed (seed 003)."""
        return any((self.agent_id, self.todo_id, self.run_id, self.case_id, self.benchmark_id, self.lane))


class _Event(EventHead):
    model_config = ConfigDict(extra="forbid")
    state_transition: StateTransition | None = None
    causality: Causality | None = None
    code_refs: CodeRefs | None = None
    handoff: Handoff | None = None
    labels: list[Token] = Field(default_factory=list)
    artifact_refs: list[RelativeRef] = Field(default_factory=list)
    details: dict[Token, JsonScalar] = Field(default_factory=dict)
    changes: list[FieldChange] = Field(default_factory=list)
    boundary: Boundary = Field(default_factory=Boundary)

    @field_validator("details")
    @classmethod
    def _details_are_json(cls, value: dict[str, Any]) -> dict[str, Any]:
        # the commands write 64-bit integers and never a float that is not finite: NaN and Infinity are
        # no JSON, and a record from elsewhere holding them would be written back as invalid JSON
        for key, item in value.items():
            if isinstance(item, float) and not math.isfinite(item):
                raise ValueError(f"'{key}' is {item}; rule: details are JSON, with finite numbers")
            if isinstance(item, int) and not isinstance(item, bool) and not -INT64_MAX - 1 <= item <= INT64_MAX:
                raise ValueError(f"'{key}' is out of range; rule: integers in details fit in 64 bits")
        return value


def event_order_key(event: EventHead) -> tuple[int, str, str]:
    """The one total order of events: the fold and every listing use it."""
    return (event.lamport, event.recorded_at, event.event_id)


# --- entity events: they carry the field changes they apply -------------------------------


class GoalCreate(_Event):
    event_kind: Literal["goal_create"] = "goal_create"


class GoalUpdate(_Event):
    event_kind: Literal["goal_update"] = "goal_update"


class AgentRegister(_Event):
    event_kind: Literal["agent_register"] = "agent_register"
    agent_id: Id


class _TodoEvent(_Event):
    todo_id: Id


class TodoAdd(_TodoEvent):
    event_kind: Literal["todo_add"] = "todo_add"
    capability_guard: CapabilityGuard | None = None
    """research_capability_guard_v0 of a joint_probe admitted for a research gap's obligation: kept
    whole here (field changes hold scalars), and on the todo it adds."""


class TodoClaim(_TodoEvent):
    event_kind: Literal["todo_claim"] = "todo_claim"
    agent_id: Id


class TodoUpdate(_TodoEvent):
    event_kind: Literal["todo_update"] = "todo_update"


class TodoResume(_TodoEvent):
    """A deferred or blocked todo made runnable again because its condition came true."""

    event_kind: Literal["todo_resume"] = "todo_resume"


class TodoComplete(_TodoEvent):
    event_kind: Literal["todo_complete"] = "todo_complete"


class TodoSupersede(_TodoEvent):
    event_kind: Literal["todo_supersede"] = "todo_supersede"


class TodoSuggest(_TodoEvent):
    event_kind: Literal["todo_suggest"] = "todo_suggest"


class TodoPromote(_TodoEvent):
    event_kind: Literal["todo_promote"] = "todo_promote"


# --- facts: appended as they are, they change no document -----------------------------------


class PrMerge(_Event):
    event_kind: Literal["pr_merge"] = "pr_merge"
    code_refs: CodeRefs

    @field_validator("code_refs")
    @classmethod
    def _qualified_pr(cls, refs: CodeRefs, info: ValidationInfo) -> CodeRefs:
        match = exact(PR_REF_RE, refs.pr_ref or "", lenient=not writing(info))
        if not match or not match.group("repo"):
            raise ValueError("a pr_merge event names its PR as owner/repo#N in code_refs.pr_ref")
        return refs


class Validation(_Event):
    event_kind: Literal["validation"] = "validation"


class RefreshState(_Event):
    event_kind: Literal["refresh_state"] = "refresh_state"
    run_id: Id


class HandoffEvent(_Event):
    event_kind: Literal["handoff"] = "handoff"
    handoff: Handoff


class Quota(_Event):
    """``details.capacity`` with ``details.available`` wakes ``capacity_available:<cap>`` todos."""

    event_kind: Literal["quota"] = "quota"


class QuotaSpend(_Event):
    """A compute slot spent after run ``run_id``'s compact write-back (``quota spend-slot``)."""

    event_kind: Literal["quota_spend"] = "quota_spend"
    run_id: Id
    agent_id: Id


class Repair(_Event):
    event_kind: Literal["repair"] = "repair"


class Failure(_Event):
    event_kind: Literal["failure"] = "failure"


class Note(_Event):
    event_kind: Literal["note"] = "note"


# --- the loop ledger: an entry added, selected by one iteration, written back -------------------


class _LedgerEvent(_Event):
    entry_id: Id


class LedgerAdd(_LedgerEvent):
    event_kind: Literal["ledger_add"] = "ledger_add"


class LedgerSelect(_LedgerEvent):
    """An iteration took the entry: it is active for ``agent_id`` until written back."""

    event_kind: Literal["ledger_select"] = "ledger_select"


class LedgerRecord(_LedgerEvent):
    """The write-back: status, verdict, next, and the evidence it adds."""

    event_kind: Literal["ledger_record"] = "ledger_record"
    evidence: list[Evidence] = Field(default_factory=list)


# --- operator gates: opened with what they block, decided once by their owner ---------------------


class _GateEvent(_Event):
    gate_id: Id


class GateOpen(_GateEvent):
    event_kind: Literal["gate_open"] = "gate_open"


class GateDecide(_GateEvent):
    """approve | reject | defer (| cancel, from a user_gate todo); an approval's commit also holds
    the todo_resume events of what it unblocks."""

    event_kind: Literal["gate_decide"] = "gate_decide"


# --- handoffs: work moved between registered agents ---------------------------------------------


class _HandoffEntityEvent(_Event):
    handoff_id: Id


class HandoffPrepare(_HandoffEntityEvent):
    event_kind: Literal["handoff_prepare"] = "handoff_prepare"


class HandoffAdopt(_HandoffEntityEvent):
    """The target took the work: its commit also moves each todo's claim (todo_update events)."""

    event_kind: Literal["handoff_adopt"] = "handoff_adopt"


class HandoffCancel(_HandoffEntityEvent):
    event_kind: Literal["handoff_cancel"] = "handoff_cancel"


# --- the explore graph: every event a new revision of one node ---------------------------------------


class _ExploreEvent(_Event):
    node_id: Id


class ExploreNodeAdd(_ExploreEvent):
    """A node of the investigation; its document is goals/<goal>/explore/<h1>/<h2>/<node>.yaml."""

    event_kind: Literal["explore_node_add"] = "explore_node_add"


class ExploreNodeUpdate(_ExploreEvent):
    event_kind: Literal["explore_node_update"] = "explore_node_update"


class ExploreEdgeAdd(_ExploreEvent):
    """An edge out of ``node_id``."""

    event_kind: Literal["explore_edge_add"] = "explore_edge_add"
    edge: ExploreEdge


class ExploreFindingAdd(_ExploreEvent):
    event_kind: Literal["explore_finding_add"] = "explore_finding_add"
    finding: ExploreFinding


class ExploreObserve(_ExploreEvent):
    """A typed research observation recorded on ``node_id``, with its content fingerprint."""

    event_kind: Literal["explore_observe"] = "explore_observe"
    observation: ResearchObservation
    fingerprint: Annotated[str, Field(pattern=FINGERPRINT)]

    @model_validator(mode="after")
    def _fingerprinted(self) -> ExploreObserve:
        # the replay identity: a record whose fingerprint is not its envelope's (a writer other than
        # loopx, an edit) is refused where it is read, as verify and a sync do with every record
        expected = observation_fingerprint(self.observation)
        if self.fingerprint != expected:
            raise ValueError(
                f"fingerprint: {self.fingerprint} is not the observation's ({expected}); rule: an observation's "
                "fingerprint is computed from its envelope"
            )
        if self.observation.explore_node_id != self.node_id:
            raise ValueError(
                f"node_id: {self.node_id} is not the observation's explore_node_id "
                f"({self.observation.explore_node_id}); rule: an observation is recorded on its own node"
            )
        return self


# --- human rewards: a judgment of a run, never an authority ---------------------------------------


class RewardAdd(_Event):
    """A human_reward given; its document is goals/<goal>/rewards/<h1>/<h2>/<id>.yaml."""

    event_kind: Literal["reward_add"] = "reward_add"
    reward: HumanReward


class FireRecord(_Event):
    """How a bounded headless fire ended (a fact: it changes no document)."""

    event_kind: Literal["fire"] = "fire"
    fire: FireSummary


# --- rollback: a packet, and the compensating events it writes ---------------------------------


class RollbackPlan(_Event):
    """A rollback_packet_v0 recorded on the branch; its document is goals/<goal>/rollbacks/<h1>/<h2>/<id>.yaml."""

    event_kind: Literal["rollback_plan"] = "rollback_plan"
    packet: RollbackPacket


class TodoCompensate(_TodoEvent):
    """Restores fields of a todo to their values before the event it compensates."""

    event_kind: Literal["todo_compensate"] = "todo_compensate"
    compensates: Id
    packet_id: Id


class GoalCompensate(_Event):
    event_kind: Literal["goal_compensate"] = "goal_compensate"
    compensates: Id
    packet_id: Id


# --- imported history: a rollout-event log written elsewhere ----------------------------------


class SourceRef(Record):
    kind: Token
    ref: Line


class PrivateSource(Record):
    """That a private source (a session log, a run directory) was counted, never what it held."""

    kind: Token
    raw_values_recorded: Literal[False] = False
    count: int | None = Field(default=None, ge=0)


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


class RolloutImport(_Event):
    """A line of another rollout-event log (``loopx events import``): history, not state. It keeps
    the line's time and join keys, so every listing and view finds it, and its event id in
    ``origin``; it adds, claims or wakes nothing (a fact to act on is appended with ``loopx event
    append``)."""

    event_kind: Literal["rollout_import"] = "rollout_import"
    origin: ImportOrigin


EVENT_CLASSES: tuple[type[_Event], ...] = (
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
EVENT_CLASS: dict[str, type[_Event]] = dict(zip(EVENT_KINDS, EVENT_CLASSES))

_KIND_RE = re.compile(rb'"event_kind"\s*:\s*"([a-z_]+)"')


class EventAdapter:
    """The union of every event kind, validated one kind at a time: the record's own class is built
    and used, not a validator of all of them (which costs a tenth of a second to build, at import or
    at first use). Whatever the shortcut cannot settle goes to the whole union, whose answer — and
    error — is the definition: a kind found once, whose class validates the record, is the kind the
    union's discriminator would pick."""

    def __init__(self) -> None:
        self._union: TypeAdapter[_Event] | None = None

    @property
    def union(self) -> TypeAdapter[_Event]:
        if self._union is None:
            self._union = TypeAdapter(RolloutEvent)
        return self._union

    def validate_json(self, data: str | bytes) -> _Event:
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

    def validate_python(self, data: object, **kwargs: object) -> _Event:
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

EventBase = _Event
TodoEvent = _TodoEvent
LedgerEvent = _LedgerEvent
GateEvent = _GateEvent
HandoffEntityEvent = _HandoffEntityEvent
ExploreEvent = _ExploreEvent

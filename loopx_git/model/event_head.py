"""What every loopx_rollout_event_v0 record holds: its head (identity, clock, join keys), the base
every event kind is built on, and the value types events share. The kinds themselves are declared
with their family (``model/todo.py`` holds the todo_* events beside the fold that applies them);
``model/event.py`` gathers them into the one union events are read through."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, field_validator

from loopx_git.model.boundary import Boundary
from loopx_git.model.github import PR_REF_RE, pr_ref
from loopx_git.model.ids import Id, UtcTimestamp
from loopx_git.model.record import JsonScalar, JsonValue, Line, Record, Token, control_free, exact, writing

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


class EventBase(EventHead):
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


class SourceRef(Record):
    kind: Token
    ref: Line


class PrivateSource(Record):
    """That a private source (a session log, a run directory) was counted, never what it held."""

    kind: Token
    raw_values_recorded: Literal[False] = False
    count: int | None = Field(default=None, ge=0)

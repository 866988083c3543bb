"""Compact run history: one record per agent turn, with its delivery outcome."""

from __future__ import annotations

import copy
from enum import Enum
from typing import Any

from pydantic import (
    Field,
    GetJsonSchemaHandler,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    model_serializer,
    model_validator,
)
from pydantic_core import CoreSchema

from loopx_git.model.capability import CapabilityRetirement
from loopx_git.model.event_head import RelativeRef
from loopx_git.model.ids import Id, UtcTimestamp
from loopx_git.model.progress import ProgressObservation
from loopx_git.model.record import Line, Record, Token, stored, writing

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

    @property
    def flags(self) -> DeliveryFlags:
        return DeliveryFlags(**_FLAGS[self.value])


DELIVERY_RULE = "one of " + ", ".join(t.value for t in DeliveryOutcome) + " (weakest first)"


class DeliveryFlags(Record):
    """What a delivery tier means for the goal. The one definition, derived from the tier alone:

    - ``material``: the run touched the outcome itself — every tier but ``surface_only`` (finding the
      gap in the outcome, ``outcome_gap``, is material);
    - ``accountable``: it counts toward the goal — ``outcome_progress`` or ``primary_goal_outcome``;
    - ``follow_through_required``: the outcome still needs work after it — ``surface_only`` or
      ``outcome_gap``.

    Never an input and never stored: a record shows them beside its ``delivery_outcome`` whenever it
    is read (JSON, YAML, documents), computed from that tier, so they cannot disagree with it."""

    material: bool
    accountable: bool
    follow_through_required: bool

    @classmethod
    def of(cls, tier: str | None) -> DeliveryFlags | None:
        """The flags of ``tier``; None for none, and for a tier this version does not know (a record
        folded from a hand-made or newer change: ``loopx verify`` reports it, a read never fails)."""
        return DeliveryFlags(**_FLAGS[tier]) if tier in _FLAGS else None


_ACCOUNTABLE = ("outcome_progress", "primary_goal_outcome")
_FLAGS: dict[str, dict[str, bool]] = {
    tier.value: {
        "material": tier.value != "surface_only",
        "accountable": tier.value in _ACCOUNTABLE,
        "follow_through_required": tier.value not in _ACCOUNTABLE,
    }
    for tier in DeliveryOutcome
}
"""The flags of each tier as plain data: a history of thousands of runs dumps them without building a model."""

FLAGS_FIELD = "delivery_flags"
_FLAGS_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {
            "type": "object",
            "properties": {name: {"type": "boolean"} for name in DeliveryFlags.model_fields},
            "required": list(DeliveryFlags.model_fields),
            "additionalProperties": False,
        },
        {"type": "null"},
    ],
    "readOnly": True,
    "title": "Delivery Flags",
    "description": "Derived from delivery_outcome (material, accountable, follow_through_required); never an input.",
}


def drop_flags(data: Any, info: ValidationInfo) -> Any:
    """``data`` without the derived flags. A record read back from its own output carries them: they
    are checked against its tier and dropped (they are computed again whenever it is shown). A write
    that rebuilds a record from its dump with another tier (a rollback restoring a todo) drops them
    unchecked, for the same reason."""
    if not isinstance(data, dict) or FLAGS_FIELD not in data:
        return data
    given = data[FLAGS_FIELD]
    data = {k: v for k, v in data.items() if k != FLAGS_FIELD}
    tier = data.get("delivery_outcome")
    tier = getattr(tier, "value", tier)
    if writing(info) or (tier is not None and tier not in _FLAGS):  # a bad tier is reported as such
        return data
    if given != (None if tier is None else _FLAGS[tier]):
        raise ValueError(
            f"'{FLAGS_FIELD}' {given!r} does not match delivery_outcome {tier!r}; rule: the delivery flags "
            "are derived from the tier, never given"
        )
    return data


def with_flags(data: dict[str, Any], info: SerializationInfo, *, stored: bool, keep_empty: bool) -> dict[str, Any]:
    """``data`` (a record dumped) with ``delivery_flags`` right after its ``delivery_outcome``.
    ``stored``: the form written to the branch, which never holds them. ``keep_empty``: a record
    without a tier still shows ``delivery_outcome: null`` (and flags null); else both are left out."""
    if "delivery_outcome" not in data:  # excluded by the caller
        return data
    tier = data["delivery_outcome"]
    tier = getattr(tier, "value", tier)
    if tier is None and not keep_empty:
        data.pop("delivery_outcome")
        return data
    if stored or (info.include is not None and FLAGS_FIELD not in info.include):
        return data
    if info.exclude is not None and FLAGS_FIELD in info.exclude:
        return data
    out: dict[str, Any] = {}
    for key, value in data.items():
        out[key] = value
        if key == "delivery_outcome":
            out[FLAGS_FIELD] = dict(_FLAGS[tier]) if tier in _FLAGS else None  # an unknown tier: no flags
    return out


def flags_schema(schema: dict[str, Any], handler: GetJsonSchemaHandler) -> None:
    """Name ``delivery_flags`` among a record's properties (read-only): an output that carries them
    conforms to its exported schema."""
    target = handler.resolve_ref_schema(schema)
    properties: dict[str, Any] = target.setdefault("properties", {})
    properties[FLAGS_FIELD] = copy.deepcopy(_FLAGS_SCHEMA)  # each schema its own: a generator may edit it


class ResourceSetup(str, Enum):
    """How setting up an external resource (a bucket, a database, a deployment) ended in a run."""

    success = "success"
    partial_success = "partial_success"
    failed = "failed"


MAX_USABLE_RESOURCES = 12


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
    resource_setup: ResourceSetup | None = None
    """How an external-resource setup in this run ended; ``failed`` with a usable resource is
    recorded as ``partial_success`` (seed 003: a usable resource is not a failure)."""
    usable_resources: list[RelativeRef] = Field(default_factory=list, max_length=MAX_USABLE_RESOURCES)
    """The usable resources the setup left, as relative refs or opaque ids."""
    progress: ProgressObservation | None = None
    """typed_progress_observation_v0 the write-back gave (``refresh-state --progress-*``), fingerprinted."""
    replan_obligation_id: Id | None = None
    """The replan obligation this write-back settles (``--replan-obligation-id``)."""
    turn_instance_id: Id | None = None
    """The turn this write-back closes (``--turn-instance-id``), when the agent named one."""
    capability_retirement: CapabilityRetirement | None = None
    """Set by loopx when the write-back retired an invalidated capability duty (model/capability.py):
    then no quota slot is spent after this run."""

    @model_validator(mode="before")
    @classmethod
    def _derived_flags(cls, data: Any, info: ValidationInfo) -> Any:
        return drop_flags(data, info)

    @model_serializer(mode="wrap")
    def _shown(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):  # type: ignore[no-untyped-def]
        # Run files are stored records, written once (store.records.encode, the dump made with the
        # STORED context) and verified as they are: that form gets neither the derived flags nor
        # the empty fields newer than the oldest runs, so an old run file encodes again byte for
        # byte and a new one holds only what was given. Every other dump (history, the goal card,
        # a write's result) shows the flags. (No return annotation: pydantic would take it as the
        # serialized shape and lose the fields'.)
        data: dict[str, Any] = handler(self)
        is_stored = stored(info)
        if is_stored and not data.get("usable_resources"):
            data.pop("usable_resources", None)
        for name in ("turn_instance_id", "capability_retirement"):  # newer still: a run without one reads as before
            if data.get(name, "") is None:
                data.pop(name)
        return with_flags(data, info, stored=is_stored, keep_empty=True)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> dict[str, Any]:
        schema = handler(core_schema)
        flags_schema(schema, handler)
        return schema

    @property
    def delivery_flags(self) -> DeliveryFlags | None:
        return DeliveryFlags.of(self.delivery_outcome)


def run_order_key(run: RunRecord) -> tuple[str, str]:
    return (run.generated_at, run.run_id)

"""typed_progress_observation_v0: what a write-back says it changed, in typed terms a gate can compare.

A run's classification is prose to a machine; its typed progress names the work item, the surface,
hypothesis and probe it tried, the result class, and the evidence behind it. Two observations that
say the same thing have the same fingerprint (seed 000): that is how a repeated "unchanged" is told
from a new attempt, and how a replan obligation is settled only by a real semantic delta.
"""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from typing import Final, Literal

from pydantic import Field, model_validator

from loopx_git.model.ids import Id
from loopx_git.model.record import Record

PROGRESS_SCHEMA: Final = "typed_progress_observation_v0"
MAX_EVIDENCE_IDS: Final = 12


class ResultClass(str, Enum):
    advanced = "advanced"
    unchanged = "unchanged"
    blocked = "blocked"
    exploration_exhausted = "exploration_exhausted"
    no_followup = "no_followup"


TERMINAL_CLASSES: Final = frozenset({"blocked", "exploration_exhausted", "no_followup"})
"""The result classes that end a line of work (seed 000: the last three)."""
COVERAGE_CLASSES: Final = frozenset({"exploration_exhausted", "no_followup"})
"""Terminal classes that claim coverage: they name the scope they covered."""

FINGERPRINT_FIELDS: Final = (
    "work_item_id",
    "surface_id",
    "hypothesis_id",
    "probe_kind",
    "result_class",
    "blocker_id",
    "coverage_scope_id",
    "evidence_ids",
    "coverage_complete",
)


class ProgressObservation(Record):
    """One write-back's typed progress. Ids are opaque tokens (1-128 characters); the fingerprint is
    computed from the fields, never given."""

    schema_version: Literal["typed_progress_observation_v0"] = PROGRESS_SCHEMA
    work_item_id: Id | None = None
    surface_id: Id | None = None
    hypothesis_id: Id | None = None
    probe_kind: Id | None = None
    result_class: ResultClass
    blocker_id: Id | None = None
    coverage_scope_id: Id | None = None
    evidence_ids: list[Id] = Field(default_factory=list, max_length=MAX_EVIDENCE_IDS)
    coverage_complete: bool = False
    fingerprint: str = ""
    """sha256 over the canonical (sorted, compact) JSON of FINGERPRINT_FIELDS, first 16 hex digits."""

    @model_validator(mode="after")
    def _typed(self) -> ProgressObservation:
        distinct(self.evidence_ids, "evidence_ids")
        if self.coverage_complete and self.coverage_scope_id is None:
            raise ValueError("coverage_complete: needs coverage_scope_id; rule: complete coverage names its scope")
        if self.result_class in COVERAGE_CLASSES and self.coverage_scope_id is None:
            raise ValueError(
                f"coverage_scope_id: missing for result_class {self.result_class}; rule: "
                "exploration_exhausted and no_followup name the coverage scope they close"
            )
        if self.result_class == "exploration_exhausted" and not self.coverage_complete:
            raise ValueError(
                "coverage_complete: missing for result_class exploration_exhausted; rule: exhausted "
                "exploration asserts complete coverage of its scope"
            )
        if self.result_class == "blocked" and self.coverage_complete:
            raise ValueError(
                "coverage_complete: given for result_class blocked; rule: a blocked result cannot assert "
                "terminal coverage"
            )
        expected = progress_fingerprint(self)
        if self.fingerprint and self.fingerprint != expected:
            raise ValueError(
                f"fingerprint: {self.fingerprint!r} does not match the fields ({expected}); rule: the "
                "fingerprint is computed from the observation, never given"
            )
        object.__setattr__(self, "fingerprint", expected)  # frozen record: set once, here
        return self

    @property
    def terminal(self) -> bool:
        return self.result_class in TERMINAL_CLASSES


def distinct(ids: list[str], field: str) -> None:
    """Refuse an evidence id given twice (a validator's ValueError, naming ``field``)."""
    if len(set(ids)) != len(ids):
        raise ValueError(
            f"{field}: an id is given twice; rule: each evidence id once (an observation's evidence is a set)"
        )


def progress_fingerprint(observation: ProgressObservation) -> str:
    """The upstream fingerprint: every identity field (absent ones as null), evidence ids sorted."""
    fields = {name: getattr(observation, name) for name in FINGERPRINT_FIELDS}
    fields["result_class"] = getattr(fields["result_class"], "value", fields["result_class"])
    fields["evidence_ids"] = sorted(fields["evidence_ids"])
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]

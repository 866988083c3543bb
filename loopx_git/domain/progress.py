"""Typed progress given with a write-back (``refresh-state --progress-*``), checked at the boundary:
every refusal names the option's field and the rule, before anything is written."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loopx_git.domain.write import build, given, many
from loopx_git.errors import ValidationError
from loopx_git.model.ids import ID_PATTERN, ID_RULE
from loopx_git.model.progress import (
    COVERAGE_CLASSES,
    MAX_EVIDENCE_IDS,
    PROGRESS_SCHEMA,
    ProgressObservation,
    ResultClass,
)

CLASSES = ", ".join(c.value for c in ResultClass)
ID_RE = re.compile(ID_PATTERN)


def _refuse(field: str, problem: str, rule: str) -> ValidationError:
    return ValidationError(f"field '{field}': {problem}; rule: {rule}", code="invalid-progress")


def progress_observation(
    *,
    result_class: str | None = None,
    work_item_id: str | None = None,
    surface_id: str | None = None,
    hypothesis_id: str | None = None,
    probe_kind: str | None = None,
    blocker_id: str | None = None,
    coverage_scope_id: str | None = None,
    evidence_ids: Sequence[str] = (),
    coverage_complete: bool = False,
    schema_version: str = PROGRESS_SCHEMA,
) -> ProgressObservation | None:
    """The observation the options describe, or None when none is given."""
    ids = {
        "progress_work_item_id": work_item_id,
        "progress_surface_id": surface_id,
        "progress_hypothesis_id": hypothesis_id,
        "progress_probe_kind": probe_kind,
        "progress_blocker_id": blocker_id,
        "progress_coverage_scope_id": coverage_scope_id,
    }
    given(progress_result_class=result_class, **ids)
    many(progress_evidence_ids=evidence_ids)
    for name, value in [*ids.items(), *(("progress_evidence_ids", e) for e in evidence_ids)]:
        if value is not None and not ID_RE.fullmatch(value):
            raise _refuse(name, f"{value[:40]!r}{'...' if len(value) > 40 else ''} is not an id", ID_RULE)
    if result_class is None:
        named = [name for name, value in ids.items() if value is not None]
        if evidence_ids:
            named.append("progress_evidence_ids")
        if coverage_complete:
            named.append("progress_coverage_complete")
        if named:
            raise _refuse(
                named[0],
                "given without --progress-result-class",
                f"typed progress names its result class ({CLASSES}) first",
            )
        return None
    if schema_version != PROGRESS_SCHEMA:
        raise _refuse("progress_schema_version", f"{schema_version!r} is not supported", f"{PROGRESS_SCHEMA} only")
    if result_class not in {c.value for c in ResultClass}:
        raise _refuse("progress_result_class", f"{result_class!r} is not a result class", f"one of {CLASSES}")
    if len(evidence_ids) > MAX_EVIDENCE_IDS:
        raise _refuse(
            "progress_evidence_ids", f"{len(evidence_ids)} ids", f"at most {MAX_EVIDENCE_IDS} per observation"
        )
    if len(set(evidence_ids)) != len(evidence_ids):
        raise _refuse("progress_evidence_ids", "an id is given twice", "each evidence id once")
    if result_class in COVERAGE_CLASSES and coverage_scope_id is None:
        raise _refuse(
            "progress_coverage_scope_id",
            f"missing for result class {result_class}",
            "exploration_exhausted and no_followup name the coverage scope they close (--progress-coverage-scope-id)",
        )
    if result_class == "exploration_exhausted" and not coverage_complete:
        raise _refuse(
            "progress_coverage_complete",
            "missing for result class exploration_exhausted",
            "exhausted exploration asserts complete coverage of its scope (--progress-coverage-complete)",
        )
    if coverage_complete and coverage_scope_id is None:
        raise _refuse("progress_coverage_complete", "given without a scope", "complete coverage names its scope")
    if result_class == "blocked" and coverage_complete:
        raise _refuse("progress_coverage_complete", "given for result class blocked", "blocked cannot assert coverage")
    data: dict[str, Any] = {
        "result_class": result_class,
        "work_item_id": work_item_id,
        "surface_id": surface_id,
        "hypothesis_id": hypothesis_id,
        "probe_kind": probe_kind,
        "blocker_id": blocker_id,
        "coverage_scope_id": coverage_scope_id,
        "evidence_ids": list(evidence_ids),
        "coverage_complete": coverage_complete,
    }
    return build(ProgressObservation, {k: v for k, v in data.items() if v is not None}, what="progress")

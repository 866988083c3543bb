"""typed_research_observation_v0 (seed 002): what one node of an investigation established, in typed
terms, and the content fingerprint that makes recording it again a replay.

The envelope composes the generic typed progress (``model/progress.py``) with what research adds:
a closure basis (why a line of inquiry is closed), at most three explicit composition candidates
(which other node it may combine with in a joint experiment), the input observations of an
experiment, and, for work done under a replan obligation, its execution lineage and a composition
resolution. Everything here is checked without the graph; what needs it (a known target, evidence
attributable to both nodes, the current inputs of an experiment) is checked by the writer.

Unknown fields are rejected: a research envelope never carries raw text, paths or source bodies.
"""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from typing import Any, Final, Literal, NamedTuple

from pydantic import Field, model_validator

from loopx_git.model.ids import Id
from loopx_git.model.progress import COVERAGE_CLASSES, MAX_EVIDENCE_IDS, ProgressObservation, distinct
from loopx_git.model.record import Record

OBSERVATION_SCHEMA: Final = "typed_research_observation_v0"
CLOSURE_SCHEMA: Final = "research_closure_basis_v0"
LINEAGE_SCHEMA: Final = "research_execution_lineage_v0"
RESOLUTION_SCHEMA: Final = "research_composition_resolution_v0"
MAX_CONSTRAINTS: Final = 12
MAX_CANDIDATES: Final = 3
GAP_PREFIX: Final = "research-composition-"
FINGERPRINT = r"^[0-9a-f]{16}$"


class Disposition(str, Enum):
    bounded = "bounded"
    exhausted = "exhausted"
    no_followup = "no_followup"
    blocked = "blocked"


class ConstraintKind(str, Enum):
    stage = "stage"
    decision = "decision"
    invariant = "invariant"
    dependency = "dependency"
    resource = "resource"
    policy = "policy"


class ConstraintRole(str, Enum):
    decisive = "decisive"
    supporting = "supporting"


class InteractionKind(str, Enum):
    shared_constraint = "shared_constraint"
    producer_consumer = "producer_consumer"
    state_interference = "state_interference"
    order_dependency = "order_dependency"
    resource_coupling = "resource_coupling"
    unknown_interaction = "unknown_interaction"


class ResolutionDisposition(str, Enum):
    dismissed = "dismissed"
    deferred = "deferred"


class DismissalBasis(str, Enum):
    duplicate = "duplicate"
    invalid = "invalid"
    unsafe = "unsafe"
    outside_scope = "outside_scope"


class ClosureConstraint(Record):
    kind: ConstraintKind
    id: Id
    role: ConstraintRole


class ClosureBasis(Record):
    """research_closure_basis_v0: why a line of inquiry is closed. Constraints keep their order (a
    path); two with the same (kind, id) are refused, never merged."""

    schema_version: Literal["research_closure_basis_v0"] = CLOSURE_SCHEMA
    disposition: Disposition
    constraints: list[ClosureConstraint] = Field(default_factory=list, max_length=MAX_CONSTRAINTS)
    evidence_ids: list[Id] = Field(default_factory=list, max_length=MAX_EVIDENCE_IDS)

    @model_validator(mode="after")
    def _identities(self) -> ClosureBasis:
        seen: set[tuple[str, str]] = set()
        for constraint in self.constraints:
            identity = (constraint.kind, constraint.id)
            if identity in seen:
                raise ValueError(
                    f"constraints: ({constraint.kind}, {constraint.id}) is given twice; rule: a constraint's "
                    "identity is its exact (kind, id), and a duplicate fails closed"
                )
            seen.add(identity)
        if not self.evidence_ids:
            raise ValueError("evidence_ids: empty; rule: a closure basis names the evidence it rests on")
        distinct(self.evidence_ids, "evidence_ids")
        return self

    @property
    def decisive(self) -> bool:
        return any(c.role == ConstraintRole.decisive.value for c in self.constraints)


class CompositionCandidate(Record):
    """An explicit claim that this node and ``target_node_id`` may interact: a composition gap (a joint
    experiment to run) between them. Only ``explicit`` is a basis: shared constraints alone never
    pair two nodes."""

    target_node_id: Id
    basis: Literal["explicit"]
    interaction_kind: InteractionKind
    evidence_ids: list[Id] = Field(max_length=MAX_EVIDENCE_IDS)

    @model_validator(mode="after")
    def _evidence(self) -> CompositionCandidate:
        if not self.evidence_ids:
            raise ValueError("evidence_ids: empty; rule: a candidate names evidence attributable to both nodes")
        distinct(self.evidence_ids, "evidence_ids")
        return self


class InputObservation(Record):
    """One input of a binary experiment as the experiment saw it: the node and its observation."""

    node_id: Id
    fingerprint: str = Field(pattern=FINGERPRINT)


class ExecutionLineage(Record):
    """research_execution_lineage_v0: the gap, replan obligation and successor todo an experiment
    was run under, and by whom."""

    schema_version: Literal["research_execution_lineage_v0"] = LINEAGE_SCHEMA
    goal_id: Id
    gap_id: str = Field(pattern=rf"^{GAP_PREFIX}[0-9a-f]{{16}}$")
    replan_obligation_id: str = Field(pattern=r"^replan-[0-9a-f]{16}$")
    successor_todo_id: Id
    agent_id: Id


class CompositionResolution(Record):
    """research_composition_resolution_v0: a gap dismissed (with a typed basis) or deferred behind a
    blocker, by the evidence of the same observation."""

    schema_version: Literal["research_composition_resolution_v0"] = RESOLUTION_SCHEMA
    disposition: ResolutionDisposition
    basis: DismissalBasis | None = None
    evidence_ids: list[Id] = Field(default_factory=list, max_length=MAX_EVIDENCE_IDS)


class ResearchObservation(Record):
    """typed_research_observation_v0, recorded on an explore node by ``loopx explore observe``."""

    schema_version: Literal["typed_research_observation_v0"] = OBSERVATION_SCHEMA
    explore_node_id: Id
    progress: ProgressObservation
    closure_basis: ClosureBasis | None = None
    composition_candidates: list[CompositionCandidate] = Field(default_factory=list)
    input_observations: list[InputObservation] = Field(default_factory=list)
    execution_lineage: ExecutionLineage | None = None
    composition_resolution: CompositionResolution | None = None

    @model_validator(mode="after")
    def _research(self) -> ResearchObservation:
        progress = self.progress
        evidence = set(progress.evidence_ids)
        if progress.work_item_id is None:
            raise ValueError(
                "progress.work_item_id: missing; rule: a research observation names the work item (todo) it reports on"
            )
        basis = self.closure_basis
        if basis is not None and not set(basis.evidence_ids) <= evidence:
            extra = ", ".join(sorted(set(basis.evidence_ids) - evidence))
            raise ValueError(
                f"closure_basis.evidence_ids: {extra} not in the progress evidence; rule: closure evidence is a "
                "non-empty subset of this observation's progress evidence"
            )
        if progress.result_class in COVERAGE_CLASSES:
            missing = [
                what
                for what, absent in (
                    ("progress.coverage_complete", not progress.coverage_complete),
                    ("progress.evidence_ids", not progress.evidence_ids),
                    ("closure_basis", basis is None),
                    ("a decisive constraint in closure_basis", basis is not None and not basis.decisive),
                )
                if absent
            ]
            if missing:
                raise ValueError(
                    f"{missing[0]}: missing for result_class {progress.result_class}; rule: exploration_exhausted "
                    "and no_followup need complete coverage, its scope, evidence and at least one decisive constraint"
                )
        asserts_coverage = progress.coverage_complete or progress.result_class in COVERAGE_CLASSES
        if basis is not None and basis.disposition == Disposition.blocked.value and asserts_coverage:
            raise ValueError(
                f"closure_basis.disposition: blocked with result_class {progress.result_class}"
                f"{' and complete coverage' if progress.coverage_complete else ''}; rule: a blocked "
                "disposition cannot assert terminal coverage"
            )
        self._check_candidates()
        self._check_inputs()
        self._check_lineage()
        return self

    def _check_candidates(self) -> None:
        candidates = self.composition_candidates
        if len(candidates) > MAX_CANDIDATES:
            raise ValueError(
                f"composition_candidates: {len(candidates)} given; rule: at most {MAX_CANDIDATES} candidates per "
                "observation (the excess is rejected, never truncated)"
            )
        targets = [c.target_node_id for c in candidates]
        if self.explore_node_id in targets:
            raise ValueError(
                f"composition_candidates.target_node_id: {self.explore_node_id} is this observation's own node; "
                "rule: a candidate names a distinct node"
            )
        if len(set(targets)) != len(targets):
            raise ValueError(
                "composition_candidates.target_node_id: a target is named twice; rule: one candidate per target"
            )

    def _check_inputs(self) -> None:
        nodes = [i.node_id for i in self.input_observations]
        if len(set(nodes)) != len(nodes):
            raise ValueError("input_observations.node_id: a node is named twice; rule: each input once")
        if self.explore_node_id in nodes:
            raise ValueError(
                f"input_observations.node_id: {self.explore_node_id} is the experiment itself; rule: an "
                "experiment's inputs are the nodes it depends on"
            )

    def _check_lineage(self) -> None:
        lineage, resolution, progress = self.execution_lineage, self.composition_resolution, self.progress
        if lineage is not None and progress.work_item_id != lineage.successor_todo_id:
            raise ValueError(
                f"progress.work_item_id: {progress.work_item_id!r} is not the successor todo "
                f"{lineage.successor_todo_id!r}; rule: an experiment run under execution lineage reports on "
                "its successor todo"
            )
        if resolution is None:
            return
        if lineage is None:
            raise ValueError(
                "execution_lineage: missing beside composition_resolution; rule: a resolution is recorded by "
                "the execution it resolves"
            )
        if not resolution.evidence_ids or not set(resolution.evidence_ids) <= set(progress.evidence_ids):
            raise ValueError(
                "composition_resolution.evidence_ids: empty or not in the progress evidence; rule: a resolution "
                "rests on evidence of the same progress observation"
            )
        basis = self.closure_basis
        if resolution.disposition == ResolutionDisposition.dismissed.value:
            if (
                progress.result_class != "no_followup"
                or not progress.coverage_complete
                or basis is None
                or basis.disposition != Disposition.no_followup.value
                or resolution.basis is None
            ):
                raise ValueError(
                    "composition_resolution.disposition: dismissed without its proof; rule: a dismissal needs "
                    "coverage-backed no_followup progress, a no_followup closure basis and a typed basis "
                    "(duplicate, invalid, unsafe or outside_scope)"
                )
        elif progress.result_class != "blocked" or progress.blocker_id is None:
            raise ValueError(
                "composition_resolution.disposition: deferred without a blocker; rule: a deferral needs blocked "
                "progress naming its blocker_id (and cannot assert terminal coverage)"
            )


class ObservationFacts(NamedTuple):
    """What the fold keeps of an observation: all that input eligibility and the gaps read. The
    envelope itself stays in its event: 50k of them as models made a cold read five times slower."""

    result_class: str
    coverage_backed: bool
    """A coverage-backed terminal result (exploration_exhausted or no_followup, complete coverage,
    evidence): the only kind that is a composition input."""
    evidence_ids: tuple[str, ...]
    candidates: tuple[tuple[str, str], ...]
    """(target node, interaction kind) of each composition candidate."""
    inputs: tuple[tuple[str, str], ...]
    """(node, fingerprint) of each input observation (a joint experiment's)."""
    lineage: LineageFacts | None = None
    """The execution lineage it was recorded under (the live research gate reads it)."""
    resolution: str | None = None
    """Its composition resolution's disposition: dismissed or deferred."""
    scope_id: str | None = None
    """The progress coverage scope: a live observed result names the goal's configured one. This and
    the next two are kept for an observation under execution lineage only (None otherwise)."""
    blocker_id: str | None = None
    progress_fingerprint: str | None = None
    """The generic progress fingerprint: a write-back bound to this result repeats that progress."""

    @classmethod
    def of(cls, observation: ResearchObservation) -> ObservationFacts:
        p = observation.progress
        lineage = observation.execution_lineage
        resolution = observation.composition_resolution
        return cls(
            result_class=p.result_class,
            coverage_backed=p.result_class in COVERAGE_CLASSES and p.coverage_complete and bool(p.evidence_ids),
            evidence_ids=tuple(p.evidence_ids),
            candidates=tuple((c.target_node_id, c.interaction_kind) for c in observation.composition_candidates),
            inputs=tuple((i.node_id, i.fingerprint) for i in observation.input_observations),
            lineage=LineageFacts(
                lineage.gap_id, lineage.replan_obligation_id, lineage.successor_todo_id, lineage.agent_id
            )
            if lineage is not None
            else None,
            # what only the live gate reads is kept only where it can read it (50k observations are a
            # fold cache's bulk): under execution lineage
            resolution=resolution.disposition if resolution is not None else None,
            scope_id=p.coverage_scope_id if lineage is not None else None,
            blocker_id=p.blocker_id if lineage is not None else None,
            progress_fingerprint=p.fingerprint if lineage is not None else None,
        )


class LineageFacts(NamedTuple):
    """What the fold keeps of an execution lineage."""

    gap_id: str
    obligation_id: str
    todo_id: str
    agent_id: str


def normalised(observation: ResearchObservation) -> dict[str, Any]:
    """The envelope as it is fingerprinted: absent fields left out, the progress fingerprint (derived)
    left out, every list of ids sorted and deduplicated, candidates sorted by target and input
    observations by node; constraints keep their order (they are a path)."""
    data = observation.model_dump(mode="json", exclude_none=True)
    data["progress"].pop("fingerprint", None)

    def ids(holder: dict[str, Any] | None, key: str = "evidence_ids") -> None:
        if holder is not None and key in holder:
            holder[key] = sorted(set(holder[key]))

    ids(data["progress"])
    ids(data.get("closure_basis"))
    ids(data.get("composition_resolution"))
    for candidate in data.get("composition_candidates", []):
        ids(candidate)
    data["composition_candidates"] = sorted(data.get("composition_candidates", []), key=lambda c: c["target_node_id"])
    data["input_observations"] = sorted(data.get("input_observations", []), key=lambda i: i["node_id"])
    return data


def observation_fingerprint(observation: ResearchObservation) -> str:
    """sha256 over the recursively key-sorted compact JSON of the normalised envelope, first 16 hex."""
    canonical = json.dumps(normalised(observation), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def gap_id(goal_id: str, a: str, b: str) -> str:
    """The identity of a composition gap: its goal and the sorted pair of inputs, whoever declared it."""
    canonical = json.dumps([goal_id, sorted([a, b])], separators=(",", ":"), ensure_ascii=False)
    return GAP_PREFIX + hashlib.sha256(canonical.encode()).hexdigest()[:16]


class ObserveReceipt(Record):
    """research_observation_receipt_v0: what ``explore observe`` did. A replay writes nothing and names
    the revision the same envelope made the first time."""

    schema_version: Literal["research_observation_receipt_v0"] = "research_observation_receipt_v0"
    goal_id: Id
    node_id: Id
    fingerprint: str
    revision: int
    """The node revision the observation is (or, replayed, was) recorded at."""
    replayed: bool = False
    written: bool = False
    commit: str | None = None
    """The commit that recorded it (None for a replay)."""

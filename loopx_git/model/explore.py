"""The explore graph (seed 002): the nodes of an investigation — questions, areas, hypotheses,
experiments, artifacts — their edges and findings, and the typed research observations recorded on
them, with the fold step that keeps them.

Every change is an event, and every event on a node is a new revision of it (``revision`` counts
them): nothing is edited in place. A node's document (``goals/<goal>/explore/<h1>/<h2>/<node>.yaml``) shows
what its own events made of it; what depends on other nodes — whether its observation may still be
used as an input, which composition gaps are open — is worked out by ``model/composition.py`` and
never stored, so it cannot go stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Final, Literal

from pydantic import (
    Field,
    model_validator,
)

from loopx_git.model.event_head import EventBase
from loopx_git.model.ids import (
    Id,
    UtcTimestamp,
)
from loopx_git.model.progress import MAX_EVIDENCE_IDS
from loopx_git.model.record import Line, Record
from loopx_git.model.research import FINGERPRINT, ObservationFacts, ResearchObservation, observation_fingerprint

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

NODE_SCHEMA: Final = "explore_node_v0"


class NodeKind(str, Enum):
    question = "question"
    area = "area"
    hypothesis = "hypothesis"
    experiment = "experiment"
    artifact = "artifact"


class NodeStatus(str, Enum):
    open = "open"
    exploring = "exploring"
    blocked = "blocked"
    resolved = "resolved"
    dead_end = "dead_end"


CLOSED_STATUSES: Final = frozenset({"resolved", "dead_end"})
"""A node in one of these is done with: its observation may be an input to a joint experiment."""


class EdgeType(str, Enum):
    subtopic_of = "subtopic_of"
    depends_on = "depends_on"
    answers = "answers"
    supports = "supports"
    refutes = "refutes"
    leads_to = "leads_to"


class FindingState(str, Enum):
    tentative = "tentative"
    confirmed = "confirmed"
    refuted = "refuted"


class ExploreEdge(Record):
    """An edge out of the node whose document holds it."""

    to_node_id: Id
    edge_type: EdgeType
    created_at: UtcTimestamp


class ExploreFinding(Record):
    finding_id: Id
    state: FindingState
    evidence_ids: list[Id] = Field(min_length=1, max_length=MAX_EVIDENCE_IDS)
    recorded_at: UtcTimestamp


class ObservationRef(Record):
    """One accepted research observation of the node: the revision it made, and its fingerprint (the
    envelope itself is in the ``explore_observe`` event)."""

    revision: int
    fingerprint: str
    result_class: str
    agent_id: Id | None = None
    recorded_at: UtcTimestamp


class ExploreNode(Record):
    schema_version: str = NODE_SCHEMA
    node_id: Id
    kind: NodeKind
    title: Line
    parent_id: Id | None = None
    status: NodeStatus = NodeStatus.open
    reason: Line | None = None
    """Why it is blocked (required then), or what the last status change said."""
    evidence_ids: list[Id] = Field(default_factory=list, max_length=MAX_EVIDENCE_IDS)
    """Evidence attributed to the node itself (beside what its observations bring)."""
    revision: int = 1
    """How many events made the node what it is: each is a revision, appended, never edited."""
    current_observation: str | None = None
    """The fingerprint of its current observation; cleared by a node update (an input that changed
    is not what its observation saw) until a fresh observation is recorded — except an update that
    only closes the node (resolved or dead_end, with its reason), which changes nothing observed."""
    edges: list[ExploreEdge] = Field(default_factory=list)
    findings: list[ExploreFinding] = Field(default_factory=list)
    observations: list[ObservationRef] = Field(default_factory=list)
    created_by: Id | None = None
    created_at: UtcTimestamp
    updated_at: UtcTimestamp

    @property
    def closed(self) -> bool:
        return self.status in CLOSED_STATUSES

    def depends_on(self) -> list[str]:
        """The nodes this one depends on (its outgoing ``depends_on`` edges), in the order declared."""
        return [e.to_node_id for e in self.edges if e.edge_type == EdgeType.depends_on.value]

    def observed(self, fingerprint: str) -> bool:
        return any(o.fingerprint == fingerprint for o in self.observations)


def closes_only(changed: Mapping[str, object], status: str) -> bool:
    """Whether a node update leaves it closed (resolved or dead_end: ``status`` is the one after) and
    changes nothing but that status and its reason: nothing its observation saw."""
    return status in CLOSED_STATUSES and set(changed) <= {"status", "reason"}


# --- the events of this family: the fold below applies them --------------------


class ExploreEvent(EventBase):
    node_id: Id


class ExploreNodeAdd(ExploreEvent):
    """A node of the investigation; its document is goals/<goal>/explore/<h1>/<h2>/<node>.yaml."""

    event_kind: Literal["explore_node_add"] = "explore_node_add"


class ExploreNodeUpdate(ExploreEvent):
    event_kind: Literal["explore_node_update"] = "explore_node_update"


class ExploreEdgeAdd(ExploreEvent):
    """An edge out of ``node_id``."""

    event_kind: Literal["explore_edge_add"] = "explore_edge_add"
    edge: ExploreEdge


class ExploreFindingAdd(ExploreEvent):
    event_kind: Literal["explore_finding_add"] = "explore_finding_add"
    finding: ExploreFinding


class ExploreObserve(ExploreEvent):
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


FOLDS: Final[tuple[str, ...]] = (
    "explore_node_add",
    "explore_node_update",
    "explore_edge_add",
    "explore_finding_add",
    "explore_observe",
)
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: ExploreEvent) -> None:
    """Fold one explore event. Two clones adding the same node id is a conflict (the first in fold
    order stands); the same edge or the same observation from two clones is kept once."""
    kind = event.event_kind
    current = state.explore.get(event.node_id)
    if kind == "explore_node_add":
        if current is not None:
            state.record_conflict(event, "duplicate_node", f"explore node {event.node_id} was added twice")
            return
        after = {c.field: c.after for c in event.changes}
        state.explore[event.node_id] = ExploreNode.model_validate({"node_id": event.node_id, **after})
        return
    if current is None:
        state.record_conflict(event, "unknown_node", f"{kind} names explore node {event.node_id}, never added")
        return
    update: dict[str, object] = {"revision": current.revision + 1, "updated_at": event.recorded_at}
    if kind == "explore_node_update":
        state.check_before(event, current)
        changed: dict[str, object] = {c.field: c.after for c in event.changes}
        evidence = next((c for c in event.changes if c.field == "evidence_ids"), None)
        if evidence is not None:  # a writer only adds evidence: what two clones added is all kept
            had = evidence.before if isinstance(evidence.before, list) else []
            has = evidence.after if isinstance(evidence.after, list) else []
            added = [e for e in has if e not in had and e not in current.evidence_ids]
            changed["evidence_ids"] = [*current.evidence_ids, *added]
        update |= changed
        if not closes_only(changed, str(update.get("status", current.status))):
            update["current_observation"] = None  # what its observation saw has changed
    elif kind == "explore_edge_add":
        edge = event.edge  # type: ignore[attr-defined]
        same = any(e.to_node_id == edge.to_node_id and e.edge_type == edge.edge_type for e in current.edges)
        update["edges"] = current.edges if same else [*current.edges, edge]
        depends = [e for e in update["edges"] if e.edge_type == EdgeType.depends_on.value]  # type: ignore[attr-defined]
        if current.kind == NodeKind.experiment.value and len(depends) > 2 and not same:
            state.record_conflict(  # two clones each gave it dependencies: it is no binary experiment now
                event,
                "experiment_not_binary",
                f"experiment {event.node_id} depends on {', '.join(e.to_node_id for e in depends)} after a merge; "
                "it observes no gap until it is replaced by a binary experiment (add a new node with two "
                "depends_on edges; mark this one dead_end)",
            )
    elif kind == "explore_finding_add":
        finding = event.finding  # type: ignore[attr-defined]
        kept = [f for f in current.findings if f.finding_id != finding.finding_id]
        update["findings"] = [*kept, finding]
    elif kind == "explore_observe":
        observation: ResearchObservation = event.observation  # type: ignore[attr-defined]
        fingerprint = event.fingerprint  # type: ignore[attr-defined]
        if current.observed(fingerprint):
            return  # the same observation from another clone: recorded once
        ref = ObservationRef(
            revision=current.revision + 1,
            fingerprint=fingerprint,
            result_class=observation.progress.result_class,
            agent_id=event.agent_id,
            recorded_at=event.recorded_at,
        )
        update |= {"observations": [*current.observations, ref], "current_observation": fingerprint}
        state.research[fingerprint] = ObservationFacts.of(observation)
    state.explore[event.node_id] = current.model_copy(update=update)

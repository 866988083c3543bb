"""Which research results may still be used as inputs to a joint experiment, and the composition gaps
between them (seed 002) — worked out from the explore graph at the tip, exactly, and never stored.

- A node's observation is a current input when the node is resolved or dead_end, its current
  observation is coverage-backed ``exploration_exhausted`` or ``no_followup`` (a negative result is
  as good an input as a positive one), and, for a joint experiment, its whole declared lineage still
  holds: its two ``depends_on`` nodes are the inputs it observed, each is itself a current input, and
  each still has the observation it saw. Reopening A therefore makes AB ineligible as an input to ABC
  although AB's own fingerprint is unchanged; a missing input or a circular lineage never supplies
  coverage.
- A composition gap is an explicit candidate between two nodes (declared from either side: the
  reverse declaration is the same gap). It is ``observed`` when a binary experiment over exactly its
  two inputs has a coverage-backed terminal result that saw their current observations; ``pending``
  when both inputs are current and none has; ``ineligible`` otherwise, with the reasons. A gap whose
  declarations are all historical (their observations are no longer current) stays visible, ineligible.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from loopx_git.model.research import gap_id

if TYPE_CHECKING:
    from loopx_git.model.research import ObservationFacts
    from loopx_git.model.state import GoalState

GapState = Literal["pending", "ineligible", "observed"]


@dataclass(frozen=True)
class Eligibility:
    node_id: str
    eligible: bool
    reason: str
    """Why not, in one line naming the rule (``eligible`` when it is)."""
    fingerprint: str | None
    """Its current observation, whether or not that is eligible."""


@dataclass
class Gap:
    gap_id: str
    inputs: tuple[str, str]
    """The two input nodes, sorted."""
    interaction_kinds: list[str] = field(default_factory=list)
    declared_by: list[tuple[str, str, bool]] = field(default_factory=list)
    """(node, observation fingerprint, whether that observation is still the node's current one)."""
    state: GapState = "ineligible"
    reasons: list[str] = field(default_factory=list)
    input_observations: list[tuple[str, str | None]] = field(default_factory=list)
    """(node, its current observation): what an experiment over the gap must carry."""
    experiments: list[str] = field(default_factory=list)
    """Experiment nodes that depend on exactly these two inputs."""
    observed_by: tuple[str, str] | None = None
    """(experiment, fingerprint) of the result that observed it."""


def attributed(gs: GoalState, node_id: str) -> set[str]:
    """The evidence ids attributable to a node: its own, and those of its research observations (a
    closed status, a finding or a read establishes none)."""
    node = gs.explore.get(node_id)
    if node is None:
        return set()
    found = set(node.evidence_ids)
    for ref in node.observations:
        found.update(gs.research[ref.fingerprint].evidence_ids)
    return found


class Lineage:
    """Eligibility of every node asked about, each worked out once (a 10k-node graph is walked once)."""

    def __init__(self, gs: GoalState) -> None:
        self._gs = gs
        self._known: dict[str, Eligibility] = {}

    def of(self, node_id: str) -> Eligibility:
        return self._of(node_id, ())

    def _of(self, node_id: str, path: tuple[str, ...]) -> Eligibility:
        if node_id in self._known:
            return self._known[node_id]
        if node_id in path:
            cycle = " -> ".join((*path[path.index(node_id) :], node_id))
            return Eligibility(node_id, False, f"circular lineage ({cycle}); rule: a cycle supplies no coverage", None)
        # a verdict reached inside a cycle is the absolute one too: every node of a cycle, and every node
        # depending on one, is ineligible whichever node the walk began at
        found = self._known[node_id] = self._decide(node_id, path)
        return found

    def _decide(self, node_id: str, path: tuple[str, ...]) -> Eligibility:
        node = self._gs.explore.get(node_id)
        if node is None:
            return Eligibility(
                node_id, False, f"{node_id} is missing; rule: a missing input supplies no coverage", None
            )
        fingerprint = node.current_observation
        if not node.closed:
            return Eligibility(
                node_id, False, f"{node_id} is {node.status}; rule: an input is resolved or dead_end", fingerprint
            )
        if fingerprint is None:
            why = "changed since its observation" if node.observations else "has no observation"
            return Eligibility(
                node_id, False, f"{node_id} {why}; rule: an input has a current coverage-backed observation", None
            )
        observation = self._gs.research[fingerprint]
        if not observation.coverage_backed:
            return Eligibility(
                node_id,
                False,
                f"{node_id}'s observation is {observation.result_class}; rule: only coverage-backed "
                "exploration_exhausted or no_followup is a composition input",
                fingerprint,
            )
        if observation.inputs:
            broken = self._broken_lineage(node_id, observation, (*path, node_id))
            if broken is not None:
                return Eligibility(node_id, False, broken, fingerprint)
        return Eligibility(node_id, True, "eligible", fingerprint)

    def _broken_lineage(self, node_id: str, observation: ObservationFacts, path: tuple[str, ...]) -> str | None:
        """Why a joint experiment's declared lineage no longer holds, or None."""
        node = self._gs.explore[node_id]
        inputs = dict(observation.inputs)
        depends = node.depends_on()
        if len(depends) != 2 or set(depends) != set(inputs):
            return (
                f"{node_id}'s inputs {sorted(inputs)} are not its depends_on nodes {sorted(depends)}; rule: a "
                "joint experiment observes exactly its two binary dependencies"
            )
        for input_id in sorted(inputs):
            found = self._of(input_id, path)
            if not found.eligible:
                return f"input {found.reason}"
            if found.fingerprint != inputs[input_id]:
                return (
                    f"input {input_id} is now observation {found.fingerprint}, not {inputs[input_id]}; rule: a "
                    "joint result holds only for the input observations it saw"
                )
        return None


def gaps(gs: GoalState) -> list[Gap]:
    """Every composition gap of the goal, by id, with its shadow state."""
    lineage = Lineage(gs)
    found: dict[str, Gap] = {}
    for node_id in sorted(gs.explore):
        node = gs.explore[node_id]
        for ref in node.observations:
            current = ref.fingerprint == node.current_observation
            for target, interaction in gs.research[ref.fingerprint].candidates:
                a, b = sorted((node_id, target))
                gap = found.setdefault(gap_id(gs.goal_id, a, b), Gap(gap_id(gs.goal_id, a, b), (a, b)))
                if interaction not in gap.interaction_kinds:
                    gap.interaction_kinds.append(interaction)
                gap.declared_by.append((node_id, ref.fingerprint, current))
    experiments: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for node_id, node in sorted(gs.explore.items()):
        depends = node.depends_on()
        if node.kind == "experiment" and len(depends) == 2:
            experiments[tuple(sorted(depends))].append(node_id)
    for gap in found.values():
        gap.interaction_kinds.sort()
        gap.experiments = experiments.get(gap.inputs, [])
        _judge(gs, gap, lineage)
    return [found[key] for key in sorted(found)]


def _judge(gs: GoalState, gap: Gap, lineage: Lineage) -> None:
    inputs = [lineage.of(node_id) for node_id in gap.inputs]
    gap.input_observations = [(e.node_id, e.fingerprint) for e in inputs]
    if not any(current for _, _, current in gap.declared_by):
        gap.reasons.append(
            "declared only by observations no longer current; rule: a historical claim stays visible, ineligible"
        )
    gap.reasons.extend(e.reason for e in inputs if not e.eligible)
    if gap.reasons:
        gap.state = "ineligible"
        return
    for experiment in gap.experiments:  # the sign of its conclusion is no criterion: coverage and lineage are
        fingerprint = gs.explore[experiment].current_observation
        if fingerprint is None:
            continue
        observation = gs.research[fingerprint]
        if observation.coverage_backed and dict(observation.inputs) == dict(gap.input_observations):
            gap.state, gap.observed_by = "observed", (experiment, fingerprint)
            return
    gap.state = "pending"

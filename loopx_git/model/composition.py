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


_Frame = tuple[str, str, list[tuple[str, str]], list[int]]
"""A node being decided: its id, its fingerprint, its inputs (node, the fingerprint it saw), the next."""


class Lineage:
    """Eligibility of every node asked about, each worked out once (a 10k-node graph is walked once),
    with an explicit stack: a lineage thousands of experiments deep is an ordinary answer, not a
    recursion error."""

    def __init__(self, gs: GoalState) -> None:
        self._gs = gs
        self._known: dict[str, Eligibility] = {}

    def of(self, start: str) -> Eligibility:
        if start in self._known:
            return self._known[start]
        stack: list[_Frame] = []
        path: dict[str, int] = {}
        returned: Eligibility | None = self._begin(start, stack, path)
        while stack:
            node_id, fingerprint, inputs, at = stack[-1]
            if returned is not None:  # the verdict on inputs[at[0]]
                input_id, saw = inputs[at[0]]
                verdict = None
                if not returned.eligible:
                    verdict = self._ineligible(node_id, fingerprint, f"input {input_id} is ineligible", returned)
                elif returned.fingerprint != saw:
                    verdict = Eligibility(
                        node_id,
                        False,
                        f"input {input_id} is now observation {returned.fingerprint}, not {saw}; rule: a joint "
                        "result holds only for the input observations it saw",
                        fingerprint,
                    )
                returned = None
                if verdict is not None:
                    returned = self._finish(verdict, stack, path)
                    continue
                at[0] += 1
            if at[0] == len(inputs):
                returned = self._finish(Eligibility(node_id, True, "eligible", fingerprint), stack, path)
                continue
            input_id = inputs[at[0]][0]
            if input_id in self._known:
                returned = self._known[input_id]
            elif input_id in path:  # a cycle: ineligible, and so is everything it feeds
                cycle = [*list(path)[path[input_id] :], input_id]
                shown = " -> ".join(cycle if len(cycle) <= 8 else [*cycle[:7], "...", input_id])
                returned = Eligibility(
                    input_id, False, f"circular lineage ({shown}); rule: a cycle supplies no coverage", None
                )
            else:
                returned = self._begin(input_id, stack, path)
        return self._known[start]

    def _begin(self, node_id: str, stack: list[_Frame], path: dict[str, int]) -> Eligibility | None:
        """The verdict on ``node_id`` when it needs no input's (cached), else None with its frame pushed."""
        verdict, frame = self._local(node_id)
        if verdict is not None:
            self._known[node_id] = verdict
            return verdict
        assert frame is not None  # _local gives a verdict or a frame
        path[node_id] = len(path)
        stack.append(frame)
        return None

    def _finish(self, verdict: Eligibility, stack: list[_Frame], path: dict[str, int]) -> Eligibility:
        # a verdict reached inside a cycle is the absolute one too: every node of a cycle, and every node
        # depending on one, is ineligible whichever node the walk began at
        stack.pop()
        path.pop(verdict.node_id, None)
        self._known[verdict.node_id] = verdict
        return verdict

    @staticmethod
    def _ineligible(node_id: str, fingerprint: str | None, why: str, cause: Eligibility) -> Eligibility:
        """``node_id`` is ineligible because an input is: the root cause is said once, not nested."""
        prefix, said, rest = cause.reason.partition(" is ineligible: ")
        root = rest if said and prefix.startswith("input ") else cause.reason
        return Eligibility(node_id, False, f"{why}: {root}", fingerprint)

    def _local(self, node_id: str) -> tuple[Eligibility | None, _Frame | None]:
        """The verdict on what the node itself holds, or its frame when its inputs decide."""
        node = self._gs.explore.get(node_id)
        if node is None:
            return Eligibility(
                node_id, False, f"{node_id} is missing; rule: a missing input supplies no coverage", None
            ), None
        fingerprint = node.current_observation
        if not node.closed:
            why = f"{node_id} is {node.status}; rule: an input is resolved or dead_end"
            return Eligibility(node_id, False, why, fingerprint), None
        if fingerprint is None:
            why = "changed since its observation" if node.observations else "has no observation"
            rule = "rule: an input has a current coverage-backed observation"
            return Eligibility(node_id, False, f"{node_id} {why}; {rule}", None), None
        observation = self._gs.research[fingerprint]
        if not observation.coverage_backed:
            why = (
                f"{node_id}'s observation is {observation.result_class}; rule: only coverage-backed "
                "exploration_exhausted or no_followup is a composition input"
            )
            return Eligibility(node_id, False, why, fingerprint), None
        inputs = dict(observation.inputs)
        depends = node.depends_on()
        if depends and not inputs:
            why = (
                f"{node_id} depends on {', '.join(depends)} but its observation names no input observations; "
                "rule: a joint result holds only for the input observations it saw"
            )
            return Eligibility(node_id, False, why, fingerprint), None
        if inputs and (len(depends) != 2 or set(depends) != set(inputs)):
            why = (
                f"{node_id}'s inputs {sorted(inputs)} are not its depends_on nodes {sorted(depends)}; rule: a "
                "joint experiment observes exactly its two binary dependencies"
            )
            return Eligibility(node_id, False, why, fingerprint), None
        if not inputs:
            return Eligibility(node_id, True, "eligible", fingerprint), None
        return None, (node_id, fingerprint, sorted(inputs.items()), [0])


def gaps(gs: GoalState) -> list[Gap]:
    """Every composition gap of the goal, by id, with its shadow state."""
    lineage = Lineage(gs)
    by_pair: dict[tuple[str, str], Gap] = {}
    for node_id in sorted(gs.explore):
        node = gs.explore[node_id]
        for ref in node.observations:
            current = ref.fingerprint == node.current_observation
            for target, interaction in gs.research[ref.fingerprint].candidates:
                pair = (node_id, target) if node_id < target else (target, node_id)
                gap = by_pair.get(pair)
                if gap is None:
                    gap = by_pair[pair] = Gap(gap_id(gs.goal_id, *pair), pair)
                if interaction not in gap.interaction_kinds:
                    gap.interaction_kinds.append(interaction)
                gap.declared_by.append((node_id, ref.fingerprint, current))
    experiments: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for node_id, node in sorted(gs.explore.items()):
        if node.kind == "experiment":
            depends = node.depends_on()
            if len(depends) == 2:
                experiments[tuple(sorted(depends))].append(node_id)
    for gap in by_pair.values():
        gap.interaction_kinds.sort()
        gap.experiments = experiments.get(gap.inputs, [])
        _judge(gs, gap, lineage)
    return sorted(by_pair.values(), key=lambda g: g.gap_id)


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
        if observation.resolution == "dismissed":  # a dismissal is a retirement, never an observed experiment
            continue
        if observation.coverage_backed and dict(observation.inputs) == dict(gap.input_observations):
            gap.state, gap.observed_by = "observed", (experiment, fingerprint)
            return
    gap.state = "pending"

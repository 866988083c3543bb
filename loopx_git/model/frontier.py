"""The goal frontier of each agent, folded from its own run history: when it must replan (seed 000).

One reducer, run as a fold step over the agent's run records in time order, shared by everything that
asks (``quota should-run``, ``status``, the write gate of ``refresh-state``). It opens a replan
obligation when the agent's own history shows it stalling:

- typed progress repeated: 2 consecutive runs with the same ``unchanged`` or ``blocked`` fingerprint;
- periodic review: every 20 runs since its last settlement;
- dead monitor: 6 consecutive runs on a ``continuous_monitor`` todo that observed nothing (no typed
  progress, no delivery outcome beyond ``surface_only``);
- monitor no-change streak: 5 consecutive monitor runs whose typed progress is ``unchanged``.

An open obligation is settled by the first later run whose typed progress is a semantic delta against
everything the agent tried before: a new surface, hypothesis or probe family; a new concrete blocker
with evidence; coverage-backed ``exploration_exhausted`` or ``no_followup``. Nothing else — another
equivalent fingerprint, a run without typed progress, prose — settles it. Other agents' runs and runs
with no agent never count for or against an agent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Final

from loopx_git.model.progress import ProgressObservation
from loopx_git.model.run import RunRecord, run_order_key

REPEATS: Final = 2
REVIEW_EVERY: Final = 20
DEAD_MONITOR: Final = 6
MONITOR_NO_CHANGE: Final = 5

OUTCOMES: Final = (
    "new_surface",
    "new_hypothesis",
    "new_probe_family",
    "new_runnable_successor",
    "coverage_backed_exploration_exhausted",
    "new_concrete_blocker",
    "coverage_backed_no_followup",
)
"""The required outcomes an obligation may be settled by (upstream's names, in its order)."""


@dataclass(frozen=True)
class Trigger:
    kind: str
    """repeated_progress | periodic_review | dead_monitor | monitor_no_change"""
    run_ids: tuple[str, ...]


@dataclass(frozen=True)
class OpenObligation:
    obligation_id: str
    agent_id: str
    triggers: tuple[Trigger, ...]
    baseline: ProgressObservation | None
    """The agent's latest typed progress when it opened: what a delta is measured against."""
    opened_at: str
    opened_by_run: str


@dataclass
class AgentFrontier:
    """What the fold keeps of one agent's history: enough to open and settle obligations exactly."""

    runs_since_settled: int = 0
    repeat_fingerprint: str | None = None
    repeat_runs: list[str] = field(default_factory=list)
    dead_monitor_runs: list[str] = field(default_factory=list)
    unchanged_monitor_runs: list[str] = field(default_factory=list)
    review_start: str | None = None
    """The first run since the last settlement (the periodic review names it and the last one)."""
    surfaces: set[str] = field(default_factory=set)
    hypotheses: set[str] = field(default_factory=set)
    probes: set[str] = field(default_factory=set)
    blockers: set[str] = field(default_factory=set)
    coverages: set[tuple[str, str]] = field(default_factory=set)
    """(result class, coverage scope) of every coverage claim made: the same claim again is no delta."""
    latest_progress: ProgressObservation | None = None
    open: OpenObligation | None = None
    settled: int = 0
    """Obligations settled so far (a count, for status)."""
    last_run: tuple[str, str] | None = None
    """The run order key of the agent's latest run folded: a run sorting before it needs a refold."""

    def copy(self) -> AgentFrontier:
        return AgentFrontier(
            self.runs_since_settled,
            self.repeat_fingerprint,
            list(self.repeat_runs),
            list(self.dead_monitor_runs),
            list(self.unchanged_monitor_runs),
            self.review_start,
            set(self.surfaces),
            set(self.hypotheses),
            set(self.probes),
            set(self.blockers),
            set(self.coverages),
            self.latest_progress,
            self.open,
            self.settled,
            self.last_run,
        )


def delta_outcomes(
    frontier: AgentFrontier, progress: ProgressObservation | None, *, successor: bool = False
) -> list[str]:
    """What ``progress`` achieves against everything the agent tried before (empty: no delta).
    ``successor``: its work item is a todo added for the open obligation (``todo add
    --replan-obligation-id``), runnable when the write gate checked it."""
    if progress is None:
        return []
    found = []
    cls = progress.result_class
    if cls == "advanced" and successor and progress.work_item_id:
        found.append("new_runnable_successor")
    if cls == "advanced":
        if progress.surface_id and progress.surface_id not in frontier.surfaces:
            found.append("new_surface")
        if progress.hypothesis_id and progress.hypothesis_id not in frontier.hypotheses:
            found.append("new_hypothesis")
        if progress.probe_kind and progress.probe_kind not in frontier.probes:
            found.append("new_probe_family")
    elif cls == "blocked":
        if progress.blocker_id and progress.evidence_ids and progress.blocker_id not in frontier.blockers:
            found.append("new_concrete_blocker")
    elif (cls, progress.coverage_scope_id or "") in frontier.coverages:
        return []  # the same coverage claim as before: an equivalent observation
    elif cls == "exploration_exhausted":
        if progress.coverage_complete and progress.coverage_scope_id and progress.evidence_ids:
            found.append("coverage_backed_exploration_exhausted")
    elif cls == "no_followup" and progress.coverage_scope_id and progress.evidence_ids:
        found.append("coverage_backed_no_followup")
    return found


def why_not(frontier: AgentFrontier, progress: ProgressObservation | None) -> str:
    """Why ``progress`` is no semantic delta (``delta_outcomes`` found none): what is missing."""
    if progress is None:
        return (
            "the write-back carries no typed progress: a read, an ACK or a prose classification is not a semantic delta"
        )
    cls = progress.result_class
    if cls == "unchanged":
        return "result class unchanged is not a delta"
    if cls == "advanced":
        named = [v for v in (progress.surface_id, progress.hypothesis_id, progress.probe_kind) if v]
        if not named:
            return "advanced names no surface, hypothesis or probe family: an ungrounded claim"
        return "advanced names only a surface, hypothesis and probe family the agent tried before (an equivalent fingerprint)"
    if cls == "blocked":
        if not progress.blocker_id or not progress.evidence_ids:
            return "a blocker without its id and evidence (--progress-blocker-id, --progress-evidence-id)"
        return f"blocker {progress.blocker_id} was reported before: not a new concrete blocker"
    if (cls, progress.coverage_scope_id or "") in frontier.coverages:
        return f"{cls} of scope {progress.coverage_scope_id} was claimed before (an equivalent observation)"
    return f"{cls} without evidence for its coverage scope (--progress-evidence-id)"


def obligation_id(agent_id: str, baseline: ProgressObservation | None, triggers: tuple[Trigger, ...]) -> str:
    """``replan-`` and 16 hex digits over (agent, frontier, trigger identities): the same history
    gives the same id on every clone and every call, until the obligation is settled."""
    body = {
        "agent_id": agent_id,
        "frontier": baseline.fingerprint if baseline is not None else None,
        "triggers": sorted([t.kind, *t.run_ids] for t in triggers),
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return "replan-" + hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _remember(frontier: AgentFrontier, progress: ProgressObservation) -> None:
    for value, seen in (
        (progress.surface_id, frontier.surfaces),
        (progress.hypothesis_id, frontier.hypotheses),
        (progress.probe_kind, frontier.probes),
        (progress.blocker_id, frontier.blockers),
    ):
        if value:
            seen.add(value)
    if progress.result_class in ("exploration_exhausted", "no_followup") and progress.coverage_scope_id:
        frontier.coverages.add((progress.result_class, progress.coverage_scope_id))
    frontier.latest_progress = progress


def _triggers(frontier: AgentFrontier, run: RunRecord, monitor: bool) -> list[Trigger]:
    """Advance the stall counters by ``run``; the triggers that fire with it."""
    fired = []
    progress = run.progress
    fingerprint = progress.fingerprint if progress and progress.result_class in ("unchanged", "blocked") else None
    if fingerprint is not None and fingerprint == frontier.repeat_fingerprint:
        frontier.repeat_runs = [*frontier.repeat_runs, run.run_id][-REPEATS:]
    else:
        frontier.repeat_fingerprint, frontier.repeat_runs = fingerprint, [run.run_id] if fingerprint else []
    if len(frontier.repeat_runs) >= REPEATS:
        fired.append(Trigger("repeated_progress", tuple(frontier.repeat_runs)))
    if frontier.review_start is None:
        frontier.review_start = run.run_id
    frontier.runs_since_settled += 1
    if frontier.runs_since_settled % REVIEW_EVERY == 0:
        fired.append(Trigger("periodic_review", (frontier.review_start, run.run_id)))
    if monitor:  # each streak keeps only the runs that can still fire it
        observed = progress is not None or run.delivery_outcome not in (None, "surface_only")
        frontier.dead_monitor_runs = [] if observed else [*frontier.dead_monitor_runs, run.run_id][-DEAD_MONITOR:]
        if len(frontier.dead_monitor_runs) >= DEAD_MONITOR:
            fired.append(Trigger("dead_monitor", tuple(frontier.dead_monitor_runs)))
        same = progress is not None and progress.result_class == "unchanged"
        kept = [*frontier.unchanged_monitor_runs, run.run_id][-MONITOR_NO_CHANGE:]
        frontier.unchanged_monitor_runs = kept if same else []
        if len(frontier.unchanged_monitor_runs) >= MONITOR_NO_CHANGE:
            fired.append(Trigger("monitor_no_change", tuple(frontier.unchanged_monitor_runs)))
    return fired


def _reset(frontier: AgentFrontier) -> None:
    frontier.runs_since_settled = 0
    frontier.repeat_fingerprint, frontier.repeat_runs = None, []
    frontier.dead_monitor_runs, frontier.unchanged_monitor_runs, frontier.review_start = [], [], None


def step(frontier: AgentFrontier, run: RunRecord, *, monitor: bool, successor_of: str | None = None) -> None:
    """Fold one of the agent's runs (in time order) into its frontier. ``successor_of``: the obligation
    the run's work item was added as a successor for, if any (a todo's binding never changes)."""
    frontier.last_run = run_order_key(run)
    successor = frontier.open is not None and successor_of == frontier.open.obligation_id
    if frontier.open is not None and delta_outcomes(frontier, run.progress, successor=successor):
        frontier.open = None  # settled by this run's delta
        frontier.settled += 1
        _reset(frontier)
        if run.progress is not None:
            _remember(frontier, run.progress)
        return
    fired = _triggers(frontier, run, monitor)
    if run.progress is not None:
        _remember(frontier, run.progress)
    if fired and frontier.open is None:
        assert run.agent_id is not None  # only an agent's own runs are folded here
        baseline = frontier.latest_progress
        triggers = tuple(fired)
        frontier.open = OpenObligation(
            obligation_id=obligation_id(run.agent_id, baseline, triggers),
            agent_id=run.agent_id,
            triggers=triggers,
            baseline=baseline,
            opened_at=run.generated_at,
            opened_by_run=run.run_id,
        )


def required_any_of(obligation: OpenObligation) -> list[str]:
    """What would settle it, in upstream's order: a new route when the agent repeated itself, else
    any semantic delta."""
    base = obligation.baseline
    if base is not None and base.result_class in ("unchanged", "advanced"):
        return ["new_surface", "new_hypothesis", "new_probe_family", "new_runnable_successor"]
    return list(OUTCOMES)

"""The replan action packet (seed 000): what an agent with an open replan obligation is told by
``quota should-run``, and what ``status`` lists. Read-only: obligations are folded from the runs
(model/frontier.py), never written."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from loopx_git.model.capability import CapabilityGuard
from loopx_git.model.frontier import OpenObligation, required_any_of
from loopx_git.model.progress import PROGRESS_SCHEMA
from loopx_git.model.record import Record
from loopx_git.model.state import GoalState

ALLOWED_TERMINAL: Final = ("exploration_exhausted", "blocked", "no_followup")


class FrontierBaseline(Record):
    """The agent's latest typed progress when the obligation opened: a delta is measured against it."""

    work_item_id: str | None = None
    surface_id: str | None = None
    hypothesis_id: str | None = None
    probe_kind: str | None = None
    result_class: str
    fingerprint: str


class UncoveredFrontier(Record):
    baseline: FrontierBaseline | None = None
    required_any_of: list[str]


class WritebackContract(Record):
    schema_version: Literal["typed_progress_observation_v0"] = PROGRESS_SCHEMA
    transport: Literal["loopx_refresh_state"] = "loopx_refresh_state"
    command_template: str


class TriggerCard(Record):
    kind: str
    """repeated_progress | periodic_review | dead_monitor | monitor_no_change"""
    run_ids: list[str]


class ReplanActionPacket(Record):
    decision: Literal["replan_required"] = "replan_required"
    obligation_id: str
    agent_id: str
    triggers: list[TriggerCard]
    opened_at: str | None
    """When the run that opened it was made; None for a research gap's capability obligation, which
    the current graph raises rather than a run."""
    uncovered_frontier: UncoveredFrontier
    required_outcome: Literal["semantic_delta"] = "semantic_delta"
    writeback_contract: WritebackContract
    allowed_terminal: list[str]
    capability_guard: CapabilityGuard | None = None
    """research_capability_guard_v0, for a research gap's capability obligation: the gap, its input
    observations, the coverage scope and the policy revision the obligation id pins."""
    capability_experiments: list[str] = Field(default_factory=list)
    """The gap's binary experiments: the successor names one (``--explore-result-node-ref``)."""


CAPABILITY_EXITS: Final = (
    "new_runnable_successor",
    "typed_observed_result",
    "evidence_backed_dismissal",
    "new_concrete_blocker",
)
"""The replan exits of a capability obligation (seed 002), in the seed's order."""
TURN: Final = "<turn-instance-id>"
"""Stands for the turn in a kept answer; ``quota should-run --turn-instance-id`` fills it in."""


def capability_packet(gs: GoalState, guard: CapabilityGuard, experiments: list[str]) -> ReplanActionPacket:
    """The packet of the research gap an idle agent owes (model/research_gate.py ``owed``)."""
    g, a, o = gs.goal_id, guard.agent_id, guard.obligation_id
    experiment = experiments[0] if experiments else "<experiment-node>"
    add = (
        ""
        if experiments
        else f"loopx explore node add -g {g} -a {a} --node-id <experiment-node> --kind experiment --title <title>, "
        "and two depends_on edges to its inputs; then "
    )
    return ReplanActionPacket(
        obligation_id=o,
        agent_id=a,
        triggers=[TriggerCard(kind="research_composition_gap", run_ids=[])],
        opened_at=None,
        uncovered_frontier=UncoveredFrontier(required_any_of=list(CAPABILITY_EXITS)),
        writeback_contract=WritebackContract(
            command_template=(
                f"{add}loopx todo add -g {g} -a {a} --replan-obligation-id {o} --action-kind joint_probe "
                f"--explore-result-node-ref {experiment} --turn-instance-id {TURN} --text <joint probe>; then loopx "
                f"explore observe -g {g} "
                f"-a {a} --observation-json <file> (execution_lineage: gap {guard.gap_id}, obligation {o}; "
                f"progress.coverage_scope_id {guard.coverage_scope_id})"
            )
        ),
        allowed_terminal=["dismissed", "deferred"],
        capability_guard=guard,
        capability_experiments=experiments,
    )


def _baseline(obligation: OpenObligation) -> FrontierBaseline | None:
    base = obligation.baseline
    if base is None:
        return None
    return FrontierBaseline(
        work_item_id=base.work_item_id,
        surface_id=base.surface_id,
        hypothesis_id=base.hypothesis_id,
        probe_kind=base.probe_kind,
        result_class=base.result_class,
        fingerprint=base.fingerprint,
    )


def settlement_identity(gs: GoalState, agent_id: str, obligation_id: str, preferred: str | None = None) -> str:
    """The one option a write-back settling ``obligation_id`` is bound with, as the write gate
    requires it: ``--todo-id`` of a todo the agent holds (``preferred`` where it is one), else
    ``--replan-obligation-id``."""
    selected = gs.selected_todos(agent_id)
    if selected:
        return f"--todo-id {preferred if preferred in selected else selected[0]}"
    return f"--replan-obligation-id {obligation_id}"


def command_template(goal_id: str, agent_id: str, identity: str) -> str:
    """``identity``: ``settlement_identity``'s option, exactly as the write gate takes it."""
    return (
        f"loopx refresh-state -g {goal_id} -a {agent_id} {identity} "
        "--classification <slug> --progress-result-class <typed-class> --progress-evidence-id <evidence-id> "
        "<typed-dimension-options: --progress-surface-id, --progress-hypothesis-id, --progress-probe-kind, "
        "--progress-blocker-id, --progress-coverage-scope-id, --progress-coverage-complete, "
        "--progress-work-item-id (a runnable successor todo)>"
    )


def replan_packet(gs: GoalState, agent_id: str) -> ReplanActionPacket | None:
    """The packet of the agent's open obligation, or None when it has none."""
    frontier = gs.frontiers.get(agent_id)
    obligation = frontier.open if frontier is not None else None
    if obligation is None:
        return None
    return ReplanActionPacket(
        obligation_id=obligation.obligation_id,
        agent_id=agent_id,
        triggers=[TriggerCard(kind=t.kind, run_ids=list(t.run_ids)) for t in obligation.triggers],
        opened_at=obligation.opened_at,
        uncovered_frontier=UncoveredFrontier(
            baseline=_baseline(obligation), required_any_of=required_any_of(obligation)
        ),
        writeback_contract=WritebackContract(
            command_template=command_template(
                gs.goal_id, agent_id, settlement_identity(gs, agent_id, obligation.obligation_id)
            )
        ),
        allowed_terminal=list(ALLOWED_TERMINAL),
    )


def open_packets(gs: GoalState, agent_id: str | None = None) -> list[ReplanActionPacket]:
    """Every agent's open obligation (or one agent's), by agent id."""
    agents = [agent_id] if agent_id is not None else sorted(gs.frontiers)
    return [p for a in agents if (p := replan_packet(gs, a)) is not None]

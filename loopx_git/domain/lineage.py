"""Execution lineage: the live research gate's attribution check of an observation (who ran what,
under which authority), and whether it may resolve its node."""

from __future__ import annotations

from typing import NoReturn

from loopx_git.errors import RuleError
from loopx_git.model.capability import JOINT_PROBE
from loopx_git.model.explore import (
    ExploreNode,
    NodeKind,
)
from loopx_git.model.goal import explore_policy
from loopx_git.model.progress import COVERAGE_CLASSES
from loopx_git.model.research import (
    ObservationFacts,
    ResearchObservation,
)
from loopx_git.model.research_gate import LiveGap, invalidation, live_gaps, retirement_contract, waiting
from loopx_git.model.state import GoalState
from loopx_git.model.todo import TodoItem

# --- execution lineage: the live research gate's attribution check ---------------------------------


def _refuse(what: str, rule: str, code: str, hint: str | None = None) -> NoReturn:
    raise RuleError(f"observation field 'execution_lineage{what}; rule: {rule}", code=code, hint=hint)


def check_execution(gs: GoalState, node: ExploreNode, observation: ResearchObservation, agent_id: str | None) -> None:
    """A new write under execution lineage (seed 002): by the lineage's own agent, on a binary
    experiment of the lineage's gap, for a successor todo that this agent holds as a runnable
    joint_probe admitted for exactly this obligation and this experiment, whose guard still holds.
    A read, an ACK or a result without evidence attributes nothing."""
    lineage = observation.execution_lineage
    assert lineage is not None
    progress = observation.progress
    if lineage.goal_id != gs.goal_id:
        _refuse(
            ".goal_id': " + repr(lineage.goal_id), f"the lineage names this goal ({gs.goal_id})", "lineage-mismatch"
        )
    if agent_id != lineage.agent_id:
        _refuse(
            f".agent_id': {lineage.agent_id!r}, but the observation is written by {agent_id or 'no agent'}",
            "explore observe --agent-id names the lineage's agent: attribution is by the actor itself",
            "lineage-mismatch",
        )
    depends = node.depends_on()
    if node.kind != NodeKind.experiment.value or len(depends) != 2:
        _refuse(
            f"': {node.node_id} is a {node.kind} with {len(depends)} depends_on edge(s)",
            "execution lineage is recorded on a binary experiment",
            "not-a-binary-experiment",
        )
    live = live_gaps(gs)
    gap = next((g for g in live if g.gap.gap_id == lineage.gap_id), None)
    if gap is None:
        _refuse(
            f".gap_id': {lineage.gap_id} is not a composition gap of this goal", "the gap is declared", "unknown-gap"
        )
    if tuple(sorted(depends)) != gap.gap.inputs:
        _refuse(
            f".gap_id': {node.node_id} depends on {' and '.join(sorted(depends))}, not on the gap's inputs "
            f"{' and '.join(gap.gap.inputs)}",
            "the experiment belongs to the gap its lineage names",
            "lineage-mismatch",
        )
    todo = gs.todos.get(lineage.successor_todo_id)
    guard = todo.capability_guard if todo is not None else None
    why = _no_authority(gs, node.node_id, lineage.replan_obligation_id, agent_id, todo)
    if why is not None:
        _refuse(
            f".successor_todo_id': {why}",
            "only this agent's joint_probe advancement_task admitted for the exact obligation, naming exactly "
            "this experiment in its result refs, supplies execution attribution",
            "no-execution-authority",
        )
    assert todo is not None and guard is not None  # _no_authority said why otherwise
    stale = invalidation(gs, guard, live)
    if stale:
        _refuse(
            f".replan_obligation_id': the duty's guard no longer holds ({'; '.join(stale)})",
            "a write under execution lineage is made while its admitted guard holds; an invalidated duty is retired",
            "stale-capability-duty",
            hint="retirement_contract: " + retirement_contract(gs, guard),
        )
    if gap.state not in ("pending", "scheduled"):
        _refuse(
            f".gap_id': gap {gap.gap.gap_id} is {gap.state} ({gap.detail})",
            "execution attributes a result to a gap still pending",
            "gap-not-pending",
        )
    if progress.result_class == "unchanged" or not progress.evidence_ids:
        _refuse(
            f"': progress is {progress.result_class}" + ("" if progress.evidence_ids else " without evidence"),
            "an execution result carries evidence and is not unchanged (a read or an ACK attributes nothing)",
            "not-an-execution-result",
        )
    _check_resolution(gs, node, observation, todo, gap)


def _no_authority(
    gs: GoalState, node_id: str, obligation: str, agent_id: str | None, todo: TodoItem | None
) -> str | None:
    if todo is None:
        return "no such todo"
    guard = todo.capability_guard
    if todo.superseded_by or todo.status == "done":
        return f"{todo.todo_id} is {'superseded' if todo.superseded_by else 'done'} (archived work attributes nothing)"
    if guard is None or guard.obligation_id != obligation or todo.replan_obligation_id != obligation:
        return f"{todo.todo_id} was not admitted for obligation {obligation}"
    if obligation in gs.retirements:
        return f"its duty {obligation} was retired by run {gs.retirements[obligation].run_id}"
    if guard.agent_id != agent_id or todo.claimed_by not in (None, agent_id):
        return f"{todo.todo_id} is {guard.agent_id}'s" + (f", held by {todo.claimed_by}" if todo.claimed_by else "")
    if todo.task_class != "advancement_task" or todo.action_kind != JOINT_PROBE:
        return f"{todo.todo_id} is a {todo.task_class} with action kind {todo.action_kind or 'none'}"
    if todo.explore_result_node_refs != [node_id]:
        return f"{todo.todo_id}'s result refs are {todo.explore_result_node_refs or 'none'}, not [{node_id}]"
    return None


def _check_resolution(
    gs: GoalState, node: ExploreNode, observation: ResearchObservation, todo: TodoItem, gap: LiveGap
) -> None:
    resolution = observation.composition_resolution
    progress = observation.progress
    disposition = resolution.disposition if resolution is not None else None
    if disposition == "deferred":
        if node.status != "blocked":
            _refuse(
                f"': deferral of {node.node_id}, which is {node.status}",
                "a deferred resolution is recorded on a blocked experiment",
                "deferral-not-held",
            )
        why = waiting(gs, ObservationFacts.of(observation))
        if why is not None:
            _refuse(
                f"': {why}",
                "a deferral holds only while the successor waits (resume_when=todo_done:<blocker>) on a live "
                "blocker todo of the same agent that names it in unblocks_todo_id",
                "deferral-not-held",
            )
        return
    if not gs.is_runnable(todo) or todo.status != "open":
        _refuse(
            f".successor_todo_id': {todo.todo_id} is {todo.status} and not runnable",
            "a result is attributed to a currently runnable successor (a deferral has its own resolution)",
            "no-execution-authority",
        )
    if disposition == "dismissed" and node.status != "dead_end":
        _refuse(
            f"': dismissal of {node.node_id}, which is {node.status}",
            "a dismissed candidate's experiment is dead_end (explore node update --status dead_end)",
            "dismissal-not-dead-end",
        )
    policy = explore_policy(gs.goal)
    if (
        disposition is None
        and progress.result_class in COVERAGE_CLASSES
        and progress.coverage_scope_id != policy.scope_id
    ):
        _refuse(
            f"': progress.coverage_scope_id is {progress.coverage_scope_id!r}",
            f"a terminal result under execution lineage names the goal's configured coverage scope ({policy.scope_id})",
            "scope-mismatch",
        )

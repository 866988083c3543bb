"""Writing run history: one compact run record per agent turn (``loopx refresh-state``)."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.progress import progress_observation
from loopx_git.domain.todo_rules import delivery_tier, not_claimed_by_other, require_agent, require_todo
from loopx_git.domain.write import EventMaker, Write, build, given, many
from loopx_git.errors import RuleError, ValidationError
from loopx_git.model.capability import CapabilityGuard, CapabilityRetirement, DutyCloseout
from loopx_git.model.event import RefreshState
from loopx_git.model.frontier import delta_outcomes, required_any_of, why_not
from loopx_git.model.ids import new_id
from loopx_git.model.patterns import require_id
from loopx_git.model.progress import ProgressObservation
from loopx_git.model.record import JsonScalar
from loopx_git.model.research_gate import duty_todos, invalidation, retirement_contract
from loopx_git.model.run import MAX_USABLE_RESOURCES, DeliveryOutcome, ResourceSetup, RunRecord
from loopx_git.model.state import GoalState, State, require_goal

MAX_BATCH_SCALE = 2**53 - 1


def refresh_state(
    state: State,
    *,
    goal_id: str,
    classification: str,
    agent_id: str | None = None,
    todo_id: str | None = None,
    recommended_action: str | None = None,
    delivery_outcome: str | None = None,
    delivery_batch_scale: int | None = None,
    evidence: Sequence[str] = (),
    run_id: str | None = None,
    resource_setup: str | None = None,
    usable_resources: Sequence[str] = (),
    progress_result_class: str | None = None,
    progress_work_item_id: str | None = None,
    progress_surface_id: str | None = None,
    progress_hypothesis_id: str | None = None,
    progress_probe_kind: str | None = None,
    progress_blocker_id: str | None = None,
    progress_coverage_scope_id: str | None = None,
    progress_evidence_ids: Sequence[str] = (),
    progress_coverage_complete: bool = False,
    replan_obligation_id: str | None = None,
    turn_instance_id: str | None = None,
    now: str,
) -> Write:
    """``resource_setup`` (success | partial_success | failed) with ``usable_resources``: how setting
    up an external resource ended, and what it left usable. A failure that left a usable resource is
    recorded as partial_success (seed 003); a partial success names what is usable."""
    gs = require_goal(state, goal_id)
    given(agent_id=agent_id, todo_id=todo_id, run_id=run_id, recommended_action=recommended_action)
    require_id(turn_instance_id=turn_instance_id)
    progress = progress_observation(
        result_class=progress_result_class,
        work_item_id=progress_work_item_id,
        surface_id=progress_surface_id,
        hypothesis_id=progress_hypothesis_id,
        probe_kind=progress_probe_kind,
        blocker_id=progress_blocker_id,
        coverage_scope_id=progress_coverage_scope_id,
        evidence_ids=progress_evidence_ids,
        coverage_complete=progress_coverage_complete,
    )
    many(evidence=evidence, usable_resources=usable_resources)
    delivery_outcome = delivery_tier(delivery_outcome)
    resources: list[str] = []
    for ref in usable_resources:  # one ref named twice is one resource
        if ref not in resources:
            resources.append(ref)
    reported = getattr(resource_setup, "value", resource_setup)
    setup = _resource_setup(reported, resources)
    if isinstance(delivery_batch_scale, int) and not 0 <= delivery_batch_scale <= MAX_BATCH_SCALE:
        raise ValidationError(
            f"field 'delivery_batch_scale': out of range; rule: a whole number from 0 to {MAX_BATCH_SCALE} "
            "(2^53 - 1, the largest a JSON reader keeps exact)",
            code="invalid-field",
        )
    if agent_id is not None:
        require_agent(gs, agent_id, field="agent_id")
    duty = _capability_duty(gs, agent_id, replan_obligation_id)
    retirement = None
    if duty is None:
        _write_gate(gs, agent_id, todo_id, replan_obligation_id, progress)
    elif duty.obligation_id in gs.retirements:  # the old turn again: the same no-debit closeout, nothing written
        same_shape = delivery_outcome == DeliveryOutcome.outcome_gap.value and todo_id is None
        closeout = _reentry(gs, duty.obligation_id, turn_instance_id if same_shape else None, progress)
        return Write("refresh-state", f"{duty.obligation_id} (retired before)", goal_id, agent_id, result=closeout)
    elif delivery_outcome == DeliveryOutcome.outcome_gap.value:
        retirement = _retirement(gs, duty, todo_id, progress, turn_instance_id)
    else:
        _bound_result(gs, duty, todo_id, progress)
    if todo_id is not None:  # a run on a todo another agent holds is that agent's to write back
        not_claimed_by_other(require_todo(gs, todo_id), agent_id, "write back on")
    if run_id is not None and run_id in gs.run_ids:
        raise RuleError(
            f"field 'run_id': '{run_id}' is already a run of goal '{goal_id}'; rule: run ids are unique",
            code="run-exists",
        )
    run = build(
        RunRecord,
        {
            "run_id": new_id("run") if run_id is None else run_id,
            "generated_at": now,
            "goal_id": goal_id,
            "agent_id": agent_id,
            "todo_id": todo_id,
            "classification": classification,
            "recommended_action": recommended_action,
            "delivery_outcome": delivery_outcome,
            "delivery_batch_scale": delivery_batch_scale,
            "evidence": list(evidence),
            "resource_setup": setup,
            "usable_resources": resources,
            "progress": progress.model_dump(mode="json") if progress is not None else None,
            "replan_obligation_id": replan_obligation_id,
            "turn_instance_id": turn_instance_id,
            "capability_retirement": retirement.model_dump(mode="json") if retirement is not None else None,
        },
        what="run",
    )
    details: dict[str, JsonScalar] = {"classification": classification}
    if delivery_outcome:
        details["delivery_outcome"] = run.delivery_outcome
    if progress is not None:  # the event joins the run's typed progress by fingerprint
        details["progress_result_class"] = progress.result_class
        details["progress_fingerprint"] = progress.fingerprint
    if retirement is not None:
        details["closeout_kind"] = retirement.closeout_kind
        details["retired_obligation_id"] = retirement.obligation_id
    if setup is not None:
        details["resource_setup"] = setup
        if setup != reported:  # what the run reported, beside what was recorded
            details["resource_setup_reported"] = reported
    event = EventMaker(gs, now).make(
        RefreshState,
        goal_id=goal_id,
        agent_id=agent_id,
        todo_id=todo_id,
        run_id=run.run_id,
        summary=f"run {classification}" + (f" ({run.delivery_outcome})" if run.delivery_outcome else ""),
        details=details,
    )
    return Write("refresh-state", f"{run.run_id} {classification}", goal_id, agent_id, [event], runs=[run], result=run)


def _resource_setup(reported: object, resources: list[str]) -> str | None:
    """The setup outcome to record for what the run ``reported``."""
    if reported is None:
        if resources:
            raise ValidationError(
                "field 'usable_resources' (--usable-resource): given without a resource setup; rule: usable "
                "resources are named with the --resource-setup they came from (success, partial_success or failed)",
                code="resource-setup-required",
            )
        return None
    if not isinstance(reported, str) or reported not in {s.value for s in ResourceSetup}:
        raise ValidationError(
            f"field 'resource_setup': {reported!r} is not a setup outcome; rule: one of "
            + ", ".join(s.value for s in ResourceSetup),
            code="invalid-field",
        )
    if len(resources) > MAX_USABLE_RESOURCES:
        raise ValidationError(
            f"field 'usable_resources' (--usable-resource): {len(resources)} given; rule: at most "
            f"{MAX_USABLE_RESOURCES} usable resources on one run",
            code="invalid-field",
        )
    if reported == ResourceSetup.failed.value and resources:
        return ResourceSetup.partial_success.value  # a usable resource is not a failure (seed 003)
    if reported == ResourceSetup.partial_success.value and not resources:
        raise ValidationError(
            "field 'usable_resources' (--usable-resource): partial_success names no usable resource; rule: a "
            "partial success names the usable resource it left (at least one --usable-resource), else it failed",
            code="usable-resource-required",
        )
    return reported


def _owned(gs: GoalState, agent_id: str) -> list[str]:
    """The runnable todos the agent holds and has not handed on: a selected todo owns the receipt."""
    return gs.selected_todos(agent_id)


def _write_gate(
    gs: GoalState,
    agent_id: str | None,
    todo_id: str | None,
    obligation: str | None,
    progress: ProgressObservation | None,
) -> None:
    """While the agent has an open replan obligation, only a typed semantic delta is written back,
    bound to one settlement identity: ``--todo-id`` when a selected todo (one the agent holds) owns
    the receipt, else ``--replan-obligation-id`` (seed 000). Everything else is refused, naming what
    is missing."""
    given(replan_obligation_id=obligation)
    frontier = gs.frontiers.get(agent_id) if agent_id is not None else None
    open_ = frontier.open if frontier is not None else None
    if obligation is not None:
        if todo_id is not None:
            raise ValidationError(
                "field 'replan_obligation_id': given with --todo-id; rule: one settlement identity, --todo-id "
                "when a selected todo owns the receipt, else --replan-obligation-id, never both",
                code="settlement-identity",
            )
        if open_ is None or open_.obligation_id != obligation:
            current = f"the open one is {open_.obligation_id}" if open_ is not None else "none is open"
            raise RuleError(
                f"field 'replan_obligation_id': {obligation!r} is not an open replan obligation of agent "
                f"{agent_id or '(none)'} ({current}); rule: a write-back settles the agent's current obligation",
                code="unknown-obligation",
                hint=f"`loopx quota should-run -g {gs.goal_id} -a AGENT` names the current one",
            )
    if open_ is None or frontier is None or agent_id is None:
        return
    item = progress.work_item_id if progress is not None else None
    work = gs.todos.get(item) if item else None
    successor = work is not None and work.replan_obligation_id == open_.obligation_id and gs.is_runnable(work)
    if not delta_outcomes(frontier, progress, successor=successor):
        accepted = ", ".join(required_any_of(open_))
        terminal = "coverage-backed exploration_exhausted or no_followup, a new concrete blocker with evidence"
        if work is not None and work.replan_obligation_id == open_.obligation_id and not successor:
            terminal += f"; successor {item} is not runnable now ({work.status})"
        elif item and work is not None and work.replan_obligation_id != open_.obligation_id:
            terminal += f"; {item} was not added for this obligation (todo add --replan-obligation-id)"
        raise RuleError(
            f"field 'progress': {why_not(frontier, progress)}; rule: while replan obligation "
            f"{open_.obligation_id} is open, a write-back by {agent_id} is a semantic delta ({accepted}; "
            f"or, to end the line, {terminal}); nothing was written",
            code="not-a-semantic-delta",
            hint=f"`loopx quota should-run -g {gs.goal_id} -a {agent_id}` shows the uncovered frontier",
        )
    owned = _owned(gs, agent_id)
    if owned:  # a selected todo owns the receipt: --todo-id only, and one of the agent's own
        if todo_id not in owned:
            raise ValidationError(
                f"field 'todo_id': {'missing' if todo_id is None else repr(todo_id)}; rule: agent {agent_id} "
                f"holds {', '.join(owned)}, so its write-back settling obligation {open_.obligation_id} is "
                f"bound with --todo-id {owned[0]} (a selected todo owns the receipt)",
                code="settlement-identity",
            )
    elif obligation is None:
        named = f"; {todo_id!r} is not a todo agent {agent_id} holds" if todo_id is not None else ""
        raise ValidationError(
            f"field 'replan_obligation_id': missing{named}; rule: a write-back that settles obligation "
            f"{open_.obligation_id} names it (--replan-obligation-id {open_.obligation_id}) when no selected "
            "todo owns the receipt",
            code="settlement-identity",
        )


# --- the capability duties of the live research gate (seed 002) -----------------------------------


def _capability_duty(gs: GoalState, agent_id: str | None, obligation: str | None) -> CapabilityGuard | None:
    """The guard of ``agent_id``'s admitted capability duty ``obligation`` (a live successor todo
    carries it, or a run retired it), or None when the obligation is no such duty (then it is the
    agent's stall obligation, or unknown: the write gate says which)."""
    if obligation is None or agent_id is None:
        return None
    frontier = gs.frontiers.get(agent_id)
    if frontier is not None and frontier.open is not None and frontier.open.obligation_id == obligation:
        return None
    guard = gs.duties.get(obligation)
    return guard if guard is not None and guard.agent_id == agent_id else None


def _reentry(gs: GoalState, obligation: str, turn: str | None, progress: ProgressObservation | None) -> DutyCloseout:
    """The retiring turn's write-back again: its closeout, nothing written. Anything else under a
    retired obligation is refused, never swallowed."""
    retired = gs.retirements[obligation]
    fingerprint = progress.fingerprint if progress is not None else None
    same = next(
        (
            r
            for r in gs.retiring_runs.values()
            if (r.obligation_id, r.turn_instance_id, r.progress_fingerprint) == (obligation, turn, fingerprint)
        ),
        None,
    )
    if same is None:  # each clone's retiring turn may ask again, after a merge too
        raise RuleError(
            f"field 'replan_obligation_id': capability duty {obligation} was retired by run {retired.run_id} (turn "
            f"{retired.turn_instance_id}); rule: a retired duty takes no new write-back (only its retiring turn's "
            "again, which writes nothing); the gap's next obligation has a new id",
            code="duty-retired",
            hint=f"`loopx quota should-run -g {gs.goal_id} -a {retired.agent_id}` names the current one",
        )
    return DutyCloseout(run_id=same.run_id, obligation_id=obligation)


def _retirement(
    gs: GoalState,
    duty: CapabilityGuard,
    todo_id: str | None,
    progress: ProgressObservation | None,
    turn: str | None,
) -> CapabilityRetirement:
    """loopx's own proof that current source facts invalidated ``duty``: the write-back is refused
    unless they do, and unless no runnable todo still holds the duty."""
    obligation = duty.obligation_id
    if todo_id is not None:
        raise ValidationError(
            "field 'todo_id': given with --replan-obligation-id; rule: a retirement is bound to the duty's "
            "obligation alone (--replan-obligation-id), never to a todo",
            code="settlement-identity",
        )
    if turn is None:
        raise ValidationError(
            f"field 'turn_instance_id': missing; rule: retiring capability duty {obligation} names the turn "
            "it closes (--turn-instance-id)",
            code="invalid-field",
        )
    todos = duty_todos(gs, obligation)
    if progress is None or progress.result_class != "blocked" or not progress.blocker_id or not progress.evidence_ids:
        raise ValidationError(
            "field 'progress': "
            + ("missing" if progress is None else f"{progress.result_class} progress")
            + "; rule: a retirement reuses the duty's blocked progress fields (--progress-result-class blocked, "
            "--progress-blocker-id, --progress-evidence-id, --progress-work-item-id of its todo)",
            code="invalid-field",
        )
    named = {t.todo_id for t in duty_todos(gs, obligation, done=True)}
    if progress.work_item_id not in named:
        raise RuleError(
            f"field 'progress.work_item_id': {progress.work_item_id!r} is not a todo admitted for {obligation}; "
            "rule: a retirement reports on the duty's own todo",
            code="not-own-duty",
        )
    runnable = [t.todo_id for t in todos if gs.is_runnable(t)]
    if runnable:
        raise RuleError(
            f"field 'replan_obligation_id': {', '.join(runnable)} still runnable for {obligation}; rule: runnable "
            "todos bound to a duty prevent its retirement until their lifecycle pauses them",
            code="duty-has-runnable-todo",
            hint=f"pause it first: loopx todo update -g {gs.goal_id} -t {runnable[0]} --status blocked --reason <why>",
        )
    reasons = invalidation(gs, duty)
    if not reasons:
        raise RuleError(
            f"field 'replan_obligation_id': capability duty {obligation} still holds (its gap, inputs, scope and "
            "policy are as admitted); rule: only current source facts that invalidate a duty retire it; its "
            "exits are a runnable joint_probe successor, its observed result, a dismissal or a deferral",
            code="capability-duty-current",
        )
    return CapabilityRetirement(
        obligation_id=obligation,
        agent_id=duty.agent_id,
        gap_id=duty.gap_id,
        successor_todo_ids=sorted(named),
        turn_instance_id=turn,
        invalidated_by=reasons,
        progress_fingerprint=progress.fingerprint,
    )


def _bound_result(
    gs: GoalState, duty: CapabilityGuard, todo_id: str | None, progress: ProgressObservation | None
) -> None:
    """A write-back for a capability duty repeats the complete generic progress of the result its
    experiment recorded under that obligation (``explore observe`` with execution lineage): omitted
    fields, other progress, a read or a stale input discharges nothing."""
    obligation = duty.obligation_id
    stale = invalidation(gs, duty)
    if stale:
        raise RuleError(
            f"field 'replan_obligation_id': capability duty {obligation} no longer holds ({'; '.join(stale)}); "
            "rule: stale writeback is rejected; an invalidated duty is retired",
            code="stale-capability-duty",
            hint="retirement_contract: " + retirement_contract(gs, duty),
        )
    found = None
    for todo in duty_todos(gs, obligation, done=True):
        for node_id in todo.explore_result_node_refs:
            node = gs.explore.get(node_id)
            fingerprint = node.current_observation if node is not None else None
            facts = gs.research.get(fingerprint) if fingerprint else None
            if facts is not None and facts.lineage is not None and facts.lineage.obligation_id == obligation:
                found = facts
    if found is None:
        raise RuleError(
            f"field 'replan_obligation_id': no result is recorded under capability duty {obligation}; rule: the "
            "duty's write-back follows its experiment's observation (explore observe with execution_lineage)",
            code="writeback-not-bound",
        )
    if progress is None or progress.fingerprint != found.progress_fingerprint or todo_id is not None:
        said = "no typed progress" if progress is None else f"progress {progress.fingerprint}"
        raise RuleError(
            f"field 'progress': {said}; rule: a capability duty's write-back repeats the complete generic "
            f"progress of its recorded result (fingerprint {found.progress_fingerprint}, work item "
            f"{found.lineage.todo_id if found.lineage else '?'}) with --replan-obligation-id alone",
            code="writeback-not-bound",
        )

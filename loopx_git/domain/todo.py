"""The todo lifecycle: add, claim, update, complete, supersede, suggest, promote, and the
wake-ups that a completed todo, a merged PR or freed capacity cause."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.todo_rules import (
    TODO_KEYS,
    UPDATE_STATUSES,
    delivery_tier,
    not_claimed_by_other,
    not_gate_held,
    require_agent,
    require_todo,
    still_open,
    transition,
    wake_dependents,
)
from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, many
from loopx_git.errors import NotFoundError, RuleError, ValidationError
from loopx_git.model.capability import JOINT_PROBE, CapabilityGuard
from loopx_git.model.event_head import EventBase
from loopx_git.model.goal import explore_policy
from loopx_git.model.ids import short_id
from loopx_git.model.patterns import require_id
from loopx_git.model.record import JsonScalar
from loopx_git.model.research_gate import (
    LiveGap,
    guard_for,
    invalidation,
    pending_obligations,
    retirement_contract,
)
from loopx_git.model.state import GoalState, State, require_goal
from loopx_git.model.todo import (
    ResumeCondition,
    SuggestedTodo,
    TodoAdd,
    TodoClaim,
    TodoComplete,
    TodoItem,
    TodoPromote,
    TodoStatus,
    TodoSuggest,
    TodoSupersede,
    TodoUpdate,
    canonical_resume,
)


def _canonical_resume(resume_when: str | None) -> str | None:
    """The condition as stored: a PR URL pasted into ``pr_merged:`` becomes ``owner/repo#N``."""
    if resume_when is None:
        return None
    try:
        return canonical_resume(resume_when)
    except ValueError as exc:
        raise ValidationError(f"field 'resume_when': {exc}", code="invalid-field") from exc


def _resume_condition(gs: GoalState, todo_id: str, resume_when: str, task_repository: str | None) -> ResumeCondition:
    try:
        condition = ResumeCondition.parse(resume_when)
    except ValueError as exc:
        raise ValidationError(f"field 'resume_when': {exc}", code="invalid-field") from exc
    if condition.kind == "todo_done":
        if condition.todo_id == todo_id:
            raise RuleError(f"field 'resume_when': todo '{todo_id}' cannot wait for itself", code="invalid-dependency")
        require_todo(gs, condition.todo_id or "", field="resume_when")
    if condition.kind == "pr_merged" and condition.repository is None and not task_repository:
        raise RuleError(
            f"field 'resume_when': '{resume_when}' is ambiguous: an unqualified PR ref binds to the todo's "
            "task_repository, and this todo has none; rule: give --task-repository owner/repo or write "
            "pr_merged:owner/repo#N",
            code="ambiguous-pr-ref",
        )
    return condition.bound_to(task_repository)


def _new_todo_id(gs: GoalState, todo_id: str | None) -> str:
    if todo_id is None:
        todo_id = short_id("todo")
        while todo_id in gs.todos or todo_id in gs.suggested:
            todo_id = short_id("todo")
    elif todo_id in gs.todos or todo_id in gs.suggested:
        raise RuleError(
            f"todo_id '{todo_id}' already exists in goal '{gs.goal_id}'; rule: todo ids are unique within a goal",
            code="todo-exists",
        )
    return todo_id


# --- operations ---------------------------------------------------------------------------


def add_todo(
    state: State,
    *,
    goal_id: str,
    text: str,
    role: str = "agent",
    task_class: str = "advancement_task",
    action_kind: str | None = None,
    priority: str = "P2",
    claimed_by: str | None = None,
    resume_when: str | None = None,
    unblocks_todo_id: str | None = None,
    task_repository: str | None = None,
    todo_id: str | None = None,
    replan_obligation_id: str | None = None,
    explore_result_node_refs: Sequence[str] = (),
    turn_instance_id: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    """``replan_obligation_id``: the agent's open replan obligation this todo answers, or the
    capability obligation of a pending research gap (then the todo is a joint_probe over one of the
    gap's experiments, named in ``explore_result_node_refs``, and carries the gap's guard)."""
    gs = require_goal(state, goal_id)
    given(
        claimed_by=claimed_by,
        resume_when=resume_when,
        unblocks_todo_id=unblocks_todo_id,
        replan_obligation_id=replan_obligation_id,
    )
    require_id(turn_instance_id=turn_instance_id)
    many(explore_result_node_refs=explore_result_node_refs)
    resume_when = _canonical_resume(resume_when)
    check_actor(gs, actor)
    todo_id = _new_todo_id(gs, todo_id)
    status, reason = TodoStatus.open.value, None
    data = {
        "todo_id": todo_id,
        "role": role,
        "text": text,
        "task_class": task_class,
        "action_kind": action_kind,
        "priority": priority,
        "task_repository": task_repository,
        "explore_result_node_refs": list(dict.fromkeys(explore_result_node_refs)),
        "created_at": now,
        "updated_at": now,
    }
    todo = build(TodoItem, data, what="todo")  # field shapes first, then the rules that need state
    for ref in todo.explore_result_node_refs:
        if ref not in gs.explore:
            raise RuleError(
                f"field 'explore_result_node_refs': {ref!r} is not an explore node of goal '{goal_id}'; rule: a "
                "todo's result refs name nodes of its goal's explore graph",
                code="unknown-node",
            )
    if claimed_by:
        require_agent(gs, claimed_by, field="claimed_by")
    if unblocks_todo_id:
        require_todo(gs, unblocks_todo_id, field="unblocks_todo_id")
    if resume_when:
        condition = _resume_condition(gs, todo_id, resume_when, todo.task_repository)
        if not gs.condition_holds(condition):
            status, reason = TodoStatus.deferred.value, f"waiting for {resume_when}"
    if claimed_by and status == TodoStatus.deferred.value:
        raise RuleError(
            f"field 'claimed_by': the todo would be deferred ({reason}); rule: a claim is taken on a runnable todo "
            "(its holder may defer it later and keep it), so a todo added waiting for its condition is claimed "
            "once it wakes",
            code="not-runnable",
            hint="leave --claimed-by out; `loopx todo claim` it when its condition comes true",
        )
    todo = build(
        TodoItem,
        {
            **data,
            "status": status,
            "reason": reason,
            "claimed_by": claimed_by,
            "resume_when": resume_when,
            "unblocks_todo_id": unblocks_todo_id,
            "replan_obligation_id": replan_obligation_id,
        },
        what="todo",
    )
    if replan_obligation_id is not None:
        guard = _check_successor(gs, todo, replan_obligation_id, actor, turn_instance_id)
        if guard is not None:
            todo = todo.model_copy(update={"capability_guard": guard})
    elif turn_instance_id is not None:
        raise ValidationError(
            "field 'turn_instance_id': given without --replan-obligation-id; rule: a todo names the turn that "
            "admitted it only as the successor of an obligation",
            code="invalid-field",
        )
    event = EventMaker(gs, now).make(
        TodoAdd,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=claimed_by or actor,
        summary=f"todo added: {text}"[:1000],
        state_transition={"to_state": status},
        changes=changes(None, todo, skip=(*TODO_KEYS, "capability_guard")),
        capability_guard=todo.capability_guard,
    )
    return Write("todo add", f"{todo_id}: {text}", goal_id, actor, [event], result=todo)


def claim_todo(state: State, *, goal_id: str, todo_id: str, agent_id: str, now: str) -> Write:
    gs = require_goal(state, goal_id)
    todo = require_todo(gs, todo_id)
    require_agent(gs, agent_id, field="agent_id")
    still_open(todo, "claimed")
    if todo.claimed_by and todo.claimed_by != agent_id:
        raise RuleError(
            f"todo '{todo_id}' is already claimed by '{todo.claimed_by}'; rule: claim only an open, "
            "unclaimed (or your own) todo",
            code="claim-held",
        )
    not_gate_held(gs, todo, "claimed")
    if not gs.is_runnable(todo):
        why = f" ({todo.reason})" if todo.reason else ""
        raise RuleError(
            f"todo '{todo_id}' is {todo.status}{why}; rule: claim only an open todo, or a deferred one "
            "whose resume_when has come true",
            code="not-runnable",
        )
    if todo.claimed_by == agent_id and todo.status == TodoStatus.open.value:
        return Write("todo claim", f"{todo_id} (already yours)", goal_id, agent_id, result=todo)
    claimed = todo.model_copy(update={"claimed_by": agent_id, "status": TodoStatus.open.value, "updated_at": now})
    event = EventMaker(gs, now).make(
        TodoClaim,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=agent_id,
        summary=f"{agent_id} claimed {todo_id}",
        lane=_lane(gs, agent_id),
        state_transition={"from_state": todo.status, "to_state": "claimed"},
        changes=changes(todo, claimed, skip=TODO_KEYS),
    )
    return Write("todo claim", f"{todo_id} by {agent_id}", goal_id, agent_id, [event], result=claimed)


def update_todo(
    state: State,
    *,
    goal_id: str,
    todo_id: str,
    status: str,
    reason: str | None = None,
    resume_when: str | None = None,
    clear_claim: bool = False,
    actor: str | None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    given(resume_when=resume_when)
    resume_when = _canonical_resume(resume_when)
    check_actor(gs, actor)
    todo = require_todo(gs, todo_id)
    if status not in UPDATE_STATUSES:
        raise ValidationError(
            f"field 'status': {status!r} is not allowed here; rule: update sets one of "
            f"{', '.join(UPDATE_STATUSES)} (use `todo complete` for done)",
            code="invalid-field",
        )
    still_open(todo, "updated")
    not_claimed_by_other(todo, actor, "update")
    if status in ("blocked", "deferred") and not reason:
        raise ValidationError(
            f"field 'reason': required when status is {status}; rule: blocked and deferred todos say why",
            code="reason-required",
        )
    if resume_when and status == "open":
        raise ValidationError(
            "field 'resume_when': only a blocked or deferred todo waits for a condition", code="invalid-field"
        )
    if resume_when:
        _resume_condition(gs, todo_id, resume_when, todo.task_repository)
    update = {"status": status, "reason": reason, "updated_at": now}
    if status == "open":
        update["resume_when"] = None
    elif resume_when:
        update["resume_when"] = resume_when
    elif todo.status == TodoStatus.open.value:
        # an open todo waits for nothing: a condition it still holds was met (a wake-up recorded by an
        # older version, or one already true when it was added), and a re-block must not show it as pending
        update["resume_when"] = None
    if clear_claim:
        update["claimed_by"] = None
    updated = build(TodoItem, {**todo.model_dump(mode="json"), **update}, what="todo")
    diff = changes(todo, updated, skip=TODO_KEYS)
    if [c.field for c in diff] == ["updated_at"]:
        return Write("todo update", f"{todo_id} (no change)", goal_id, actor, result=todo)
    event = EventMaker(gs, now).make(
        TodoUpdate,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor,
        summary=f"{todo_id} -> {status}" + (f": {reason}" if reason else ""),
        state_transition=transition(todo.status, status),
        changes=diff,
    )
    return Write("todo update", f"{todo_id} -> {status}", goal_id, actor, [event], result=updated)


def complete_todo(
    state: State,
    *,
    goal_id: str,
    todo_id: str,
    evidence: Sequence[str] = (),
    no_follow_up: bool = False,
    reason: str | None = None,
    successor_todo_ids: Sequence[str] = (),
    decision_outcome: str | None = None,
    delivery_outcome: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    """``decision_outcome`` (a ``user_gate`` todo only): approve | reject | cancel, recorded as the
    decision of the todo's gate; only an approval wakes what waits for the todo. ``delivery_outcome``:
    the result tier the completion delivered, kept on the todo and in the event's details."""
    from loopx_git.domain import gate as gate_ops  # only a user_gate completion needs the gates
    from loopx_git.domain import gate_todo

    gs = require_goal(state, goal_id)
    many(evidence=evidence, successor_todo_ids=successor_todo_ids)
    tier = delivery_tier(delivery_outcome)
    check_actor(gs, actor)
    todo = require_todo(gs, todo_id)
    still_open(todo, "completed")
    not_claimed_by_other(todo, actor, "complete")
    not_gate_held(gs, todo, "completed")
    if decision_outcome is not None:
        gate_todo.check_outcome(todo, decision_outcome)
    if no_follow_up and not reason:
        raise ValidationError(
            "field 'reason': --no-follow-up needs a reason; rule: completing without evidence says why nothing follows",
            code="reason-required",
        )
    if not evidence and not no_follow_up:
        raise ValidationError(
            "field 'evidence': at least one --evidence is required; rule: complete needs "
            "evidence unless --no-follow-up is given with a reason",
            code="evidence-required",
        )
    if todo.capability_guard is not None:
        _closeout_result(gs, todo)
    for successor in successor_todo_ids:
        if successor == todo_id:
            raise RuleError(f"field 'successor_todo_ids': '{todo_id}' cannot succeed itself", code="invalid-dependency")
        require_todo(gs, successor, field="successor_todo_ids")
    update = {
        "status": TodoStatus.done.value,
        "completed_at": now,
        "updated_at": now,
        "evidence": todo.evidence + [e for e in evidence if e not in todo.evidence],
        "successor_todo_ids": todo.successor_todo_ids
        + [s for s in successor_todo_ids if s not in todo.successor_todo_ids],
        "reason": reason,
        "delivery_outcome": tier,
    }
    done = build(TodoItem, {**todo.model_dump(mode="json"), **update}, what="todo")
    details: dict[str, JsonScalar] = {"no_follow_up": True} if no_follow_up else {}
    if tier is not None:
        details["delivery_outcome"] = tier
    maker = EventMaker(gs, now)
    event = maker.make(
        TodoComplete,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor or todo.claimed_by,
        summary=f"{todo_id} done" + (f" ({len(evidence)} evidence)" if evidence else " (no follow-up)"),
        state_transition=transition(todo.status, "done"),
        changes=changes(todo, done, skip=TODO_KEYS),
        details=details or None,
    )
    gated: list[EventBase] = []
    if decision_outcome is not None:
        gated, gate = gate_todo.todo_gate_decision(
            gs, maker, todo, decision_outcome, cause=event, reason=reason, actor=actor, now=now
        )
    woken: list[EventBase] = []
    if decision_outcome in (None, "approve"):  # a rejected or cancelled gate consumes no authority
        woken = wake_dependents(
            gs, maker, event, ResumeCondition("todo_done", todo_id=todo_id), unblocked=todo.unblocks_todo_id
        )
    if decision_outcome == "approve":  # and what a gate opened by hand for this todo unblocks
        done_already = {w.todo_id for w in woken}
        woken += [w for w in gate_ops.wake_unblocked(gs, maker, gated[-1], gate) if w.todo_id not in done_already]
    return Write(
        "todo complete",
        f"{todo_id}"
        + (f" ({decision_outcome})" if decision_outcome else "")
        + (f", woke {len(woken)}" if woken else ""),
        goal_id,
        actor or todo.claimed_by,
        [event, *gated, *woken],
        result=done,
    )


def supersede_todo(
    state: State, *, goal_id: str, todo_id: str, by: str, reason: str, actor: str | None, now: str
) -> Write:
    gs = require_goal(state, goal_id)
    check_actor(gs, actor)
    old = require_todo(gs, todo_id)
    new = require_todo(gs, by, field="by")
    if by == todo_id:
        raise RuleError(f"field 'by': todo '{todo_id}' cannot supersede itself", code="invalid-dependency")
    if not reason:
        raise ValidationError("field 'reason': required; rule: a supersede says why", code="reason-required")
    still_open(old, "superseded")
    not_gate_held(gs, old, "superseded")
    if old.capability_guard is not None:  # another terminal verb does not avoid the closeout check
        _closeout_result(gs, old)
    if new.superseded_by:
        raise RuleError(
            f"field 'by': todo '{by}' is itself superseded by '{new.superseded_by}'; rule: supersede with a live todo",
            code="todo-closed",
        )
    not_claimed_by_other(old, actor, "supersede")
    not_claimed_by_other(new, actor, "name as the replacement")  # the write records on it what it replaces
    replaced = build(
        TodoItem,
        {
            **old.model_dump(mode="json"),
            "superseded_by": by,
            "reason": reason,
            "claimed_by": None,
            "updated_at": now,
            "successor_todo_ids": old.successor_todo_ids + ([by] if by not in old.successor_todo_ids else []),
        },
        what="todo",
    )
    successor = new.model_copy(update={"supersedes": new.supersedes + [todo_id], "updated_at": now})
    maker = EventMaker(gs, now)
    first = maker.make(
        TodoSupersede,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor,
        summary=f"{todo_id} superseded by {by}: {reason}"[:1000],
        state_transition={"from_state": old.status, "to_state": "superseded"},
        changes=changes(old, replaced, skip=TODO_KEYS),
    )
    second = maker.make(
        TodoUpdate,
        goal_id=goal_id,
        todo_id=by,
        agent_id=actor,
        summary=f"{by} supersedes {todo_id}",
        causality={"caused_by": first.event_id},
        changes=changes(new, successor, skip=TODO_KEYS),
    )
    return Write("todo supersede", f"{todo_id} by {by}", goal_id, actor, [first, second], result=replaced)


def suggest_todo(
    state: State,
    *,
    goal_id: str,
    text: str,
    role: str = "agent",
    task_class: str = "advancement_task",
    action_kind: str | None = None,
    priority: str = "P2",
    task_repository: str | None = None,
    reason: str | None = None,
    todo_id: str | None = None,
    actor: str | None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    check_actor(gs, actor)
    todo_id = _new_todo_id(gs, todo_id)
    suggestion = build(
        SuggestedTodo,
        {
            "todo_id": todo_id,
            "role": role,
            "text": text,
            "task_class": task_class,
            "action_kind": action_kind,
            "priority": priority,
            "task_repository": task_repository,
            "reason": reason,
            "suggested_by": actor,
            "created_at": now,
            "updated_at": now,
        },
        what="suggestion",
    )
    event = EventMaker(gs, now).make(
        TodoSuggest,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor,
        summary=f"suggested: {text}"[:1000],
        state_transition={"to_state": "suggested"},
        changes=changes(None, suggestion, skip=TODO_KEYS),
    )
    return Write("todo suggest", f"{todo_id}: {text}", goal_id, actor, [event], result=suggestion)


def promote_todo(state: State, *, goal_id: str, todo_id: str, actor: str | None, now: str) -> Write:
    gs = require_goal(state, goal_id)
    check_actor(gs, actor)
    suggestion = gs.suggested.get(todo_id)
    if suggestion is None:
        raise NotFoundError(f"todo_id '{todo_id}': no suggested todo with this id in goal '{goal_id}'")
    if suggestion.promoted or todo_id in gs.todos:
        raise RuleError(
            f"todo_id '{todo_id}' was already promoted; rule: a suggestion is promoted once", code="already-promoted"
        )
    todo = build(
        TodoItem,
        {
            "todo_id": todo_id,
            "role": suggestion.role,
            "text": suggestion.text,
            "task_class": suggestion.task_class,
            "action_kind": suggestion.action_kind,
            "priority": suggestion.priority,
            "task_repository": suggestion.task_repository,
            "created_at": now,
            "updated_at": now,
        },
        what="todo",
    )
    event = EventMaker(gs, now).make(
        TodoPromote,
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=actor,
        summary=f"promoted {todo_id}: {suggestion.text}"[:1000],
        state_transition={"from_state": "suggested", "to_state": "open"},
        changes=changes(None, todo, skip=TODO_KEYS),
    )
    return Write("todo promote", todo_id, goal_id, actor, [event], result=todo)


def _lane(gs: GoalState, agent_id: str) -> dict | None:
    agent = gs.agents.get(agent_id)
    return {"lane_id": agent.lane} if agent and agent.lane else None


def _closeout_result(gs: GoalState, todo: TodoItem) -> None:
    """A joint_probe admitted for a research gap closes with its exact result: its experiment's
    current observation, made under execution lineage for this todo and its obligation, is a
    coverage-backed terminal result or a dismissal (seed 002), while its guard holds (a stale duty is
    retired first). Once its duty is retired, or with the gate off, it closes as any todo does. A
    done todo certifies nothing more: not the goal, not the gap beyond what that observation says."""
    guard = todo.capability_guard
    assert guard is not None
    if guard.obligation_id in gs.retirements or not explore_policy(gs.goal).active:
        return  # the duty is closed, or the gate is off: the todo closes as any todo does
    stale = invalidation(gs, guard)
    if stale:
        raise RuleError(
            f"field 'todo_id': {todo.todo_id}'s capability duty {guard.obligation_id} no longer holds "
            f"({'; '.join(stale)}); rule: a joint probe closes on the same current eligibility its result was "
            "attributed under; an invalidated duty is retired instead",
            code="stale-capability-duty",
            hint="retirement_contract: " + retirement_contract(gs, guard),
        )
    for node_id in todo.explore_result_node_refs:
        node = gs.explore.get(node_id)
        facts = gs.research.get(node.current_observation) if node is not None and node.current_observation else None
        lineage = facts.lineage if facts is not None else None
        if (
            facts is not None
            and lineage is not None
            and (lineage.todo_id, lineage.obligation_id) == (todo.todo_id, guard.obligation_id)
            and (facts.resolution == "dismissed" or (facts.resolution is None and facts.coverage_backed))
        ):
            return
    raise RuleError(
        f"field 'todo_id': {todo.todo_id} is a joint probe for capability obligation {guard.obligation_id} and "
        f"{', '.join(todo.explore_result_node_refs)} has no terminal result or dismissal recorded under it; rule: "
        "its closeout needs the task's exact terminal experiment or dismissal evidence (explore observe with "
        "execution_lineage first)",
        code="closeout-needs-result",
    )


def _check_successor(
    gs: GoalState, todo: TodoItem, obligation: str, actor: str | None, turn: str | None
) -> CapabilityGuard | None:
    """A successor todo for a replan obligation: added by the agent whose obligation it is, and
    runnable now (an agent todo, open, not held by a gate); else refused. For a research gap's
    capability obligation, the guard the todo carries."""
    frontier = gs.frontiers.get(actor) if actor is not None else None
    open_ = frontier.open if frontier is not None else None
    capability: LiveGap | None = None
    if open_ is None or open_.obligation_id != obligation:
        pending = pending_obligations(gs, actor) if actor is not None else {}
        capability = pending.get(obligation)
        if capability is None:
            current = f"its open one is {open_.obligation_id}" if open_ is not None else "it has none open"
            gaps = f"; {len(pending)} pending research gap(s) give other obligation ids" if pending else ""
            raise RuleError(
                f"field 'replan_obligation_id': {obligation!r} is not an open replan obligation of "
                f"{actor or 'the actor (none given: -a AGENT)'} ({current}{gaps}); rule: a successor is added by "
                "the agent whose obligation it answers, while it is open (a research gap's, while the gap is pending)",
                code="unknown-obligation",
                hint=f"`loopx quota should-run -g {gs.goal_id} -a {actor or 'AGENT'}` names the current one",
            )
    if todo.role != "agent" or todo.status != TodoStatus.open.value or gs.holding_gates(todo.todo_id):
        raise RuleError(
            f"field 'replan_obligation_id': todo {todo.todo_id} would be {todo.status}"
            f"{' (a user todo)' if todo.role != 'agent' else ''}; rule: a replan successor is an agent todo "
            "runnable now (not deferred, blocked or held by a gate)",
            code="successor-not-runnable",
        )
    if capability is None:
        return None
    assert actor is not None  # a capability obligation is always some agent's
    experiments = capability.gap.experiments
    if (
        todo.task_class != "advancement_task"
        or todo.action_kind != JOINT_PROBE
        or len(todo.explore_result_node_refs) != 1
        or todo.explore_result_node_refs[0] not in experiments
    ):
        named = (
            ", ".join(experiments)
            if experiments
            else "none yet: add one (explore node add --kind experiment, two depends_on edges)"
        )
        raise RuleError(
            f"field 'explore_result_node_refs': {todo.explore_result_node_refs or 'none'} with action kind "
            f"{todo.action_kind or 'none'}; rule: the successor of research gap {capability.gap.gap_id}'s obligation "
            "is an advancement_task with --action-kind joint_probe naming exactly one experiment over its two "
            f"inputs in --explore-result-node-ref (experiments: {named})",
            code="not-a-joint-probe",
        )
    if todo.claimed_by not in (None, actor):
        raise RuleError(
            f"field 'claimed_by': {todo.claimed_by}; rule: the successor of {actor}'s capability obligation is "
            f"{actor}'s to run (claimed by {actor}, or left unclaimed)",
            code="not-a-joint-probe",
        )
    return guard_for(gs, capability.gap, actor, explore_policy(gs.goal), turn)

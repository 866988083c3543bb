"""The todo lifecycle: add, claim, update, and the wake-ups that a completed todo, a merged PR or
freed capacity cause. Closing a todo (complete, supersede) is in ``todo_close.py``, suggestions in
``todo_suggest.py``; the rules they share in ``todo_rules.py``."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.todo_rules import (
    TODO_KEYS,
    UPDATE_STATUSES,
    not_claimed_by_other,
    not_gate_held,
    require_agent,
    require_todo,
    still_open,
    transition,
)
from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, many
from loopx_git.errors import RuleError, ValidationError
from loopx_git.model.capability import JOINT_PROBE, CapabilityGuard
from loopx_git.model.goal import explore_policy
from loopx_git.model.ids import short_id
from loopx_git.model.patterns import require_id
from loopx_git.model.research_gate import (
    LiveGap,
    guard_for,
    pending_obligations,
)
from loopx_git.model.state import GoalState, State, require_goal
from loopx_git.model.todo import (
    ResumeCondition,
    TodoAdd,
    TodoClaim,
    TodoItem,
    TodoStatus,
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


def new_todo_id(gs: GoalState, todo_id: str | None) -> str:
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
    todo_id = new_todo_id(gs, todo_id)
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


def _lane(gs: GoalState, agent_id: str) -> dict | None:
    agent = gs.agents.get(agent_id)
    return {"lane_id": agent.lane} if agent and agent.lane else None


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

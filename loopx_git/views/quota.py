"""``quota should-run``: before an automated turn spends compute, what it owes to whom.

Two read-only projections of the folded state (seed 003): ``interaction_contract_v0`` splits the
turn's obligations into the user's channel (what a person must decide or do, named concretely),
the agent's (whether it must attempt work, whether it may deliver, whether a quiet no-op is
allowed) and the CLI's (how to write the result back); ``agent_lane_next_action_v0`` is the one
runnable todo this agent should take, and why. The selection is the goal card's: each agent's own
claim first, then the best unclaimed runnable todo, and no todo is offered to two agents."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from loopx_git.model.record import Record
from loopx_git.model.state import GoalState, State, require_agent, require_goal
from loopx_git.views.budget import fit
from loopx_git.views.evidence_index import AgentEvidence
from loopx_git.views.replan import ReplanActionPacket, capability_packet, replan_packet, settlement_identity
from loopx_git.views.replan_context import ReplanContext, with_context
from loopx_git.views.status import gate_cards, next_actions, todo_order
from loopx_git.views.status_model import GateCard

SHOULD_RUN_SCHEMA: Final = "loopx_should_run_v0"


class UserTodo(Record):
    todo_id: str
    text: str
    task_class: str


class GateQuestion(Record):
    gate_id: str
    owner_class: str
    question: str
    blocks: list[str]


class UserChannel(Record):
    notify: bool
    action_required: bool
    user_todos: list[UserTodo]
    """The open user todos, best first (at most ``SHOWN``; ``user_todos_omitted`` counts the rest)."""
    user_todos_omitted: int = 0
    questions: list[GateQuestion]
    """Gates a person (the user or controller class) must decide, oldest first (at most ``SHOWN``)."""
    questions_omitted: int = 0


class AgentChannel(Record):
    must_attempt: bool
    delivery_allowed: bool
    delivery_blocked_reason: str | None = None
    quiet_noop_allowed: bool
    primary_action: str
    required_reads: list[str] = Field(default_factory=list)
    """The goal-state read every admitted turn receives (reading it grants nothing)."""


class SettlementContract(Record):
    """The one causal binding that settles the open replan obligation (seed 000)."""

    obligation_id: str
    settlement_bound: bool
    """False when a selected todo owns the receipt: the delta is written with --todo-id only."""
    identity_option: str
    """``--replan-obligation-id <id>`` or ``--todo-id <todo>``: never both."""


class CliChannel(Record):
    writeback_command: str
    replan_settlement_contract: SettlementContract | None = None


class InteractionContract(Record):
    schema_version: Literal["interaction_contract_v0"] = "interaction_contract_v0"
    mode: Literal["agent_work", "user_required", "agent_and_user", "idle"]
    user_channel: UserChannel
    agent_channel: AgentChannel
    cli_channel: CliChannel


class LaneNextAction(Record):
    schema_version: Literal["agent_lane_next_action_v0"] = "agent_lane_next_action_v0"
    agent_id: str
    lane: str | None = None
    todo_id: str | None = None
    text: str | None = None
    priority: str | None = None
    basis: Literal["gate", "claimed", "runnable", "handoff", "none"]
    basis_detail: str
    """Why this todo (or none): its claim, its rank among the runnable ones, a handoff to adopt, or
    what holds the work back."""
    handoff_id: str | None = None
    gate_id: str | None = None
    """A gate this agent owns and must decide (basis ``gate``): other work waits for it."""
    held_by_gates: list[GateCard] = Field(default_factory=list)
    """Gates that hold this agent's own claimed work: the decision it waits for."""


class WorkspaceGuard(Record):
    """agent_workspace_guard_v1: whether this agent may deliver from where it stands."""

    schema_version: Literal["agent_workspace_guard_v1"] = "agent_workspace_guard_v1"
    delivery_branch_pattern: str
    expected: str
    """The pattern with ``{agent_id}`` filled in for this agent."""
    branch: str | None = None
    compliant: bool
    reason: str | None = None


def workspace_guard(pattern: str, agent_id: str, branch: str | None) -> WorkspaceGuard:
    from fnmatch import fnmatchcase

    expected = pattern.replace("{agent_id}", agent_id)
    if branch is None:
        reason: str | None = "no branch is checked out (a detached HEAD or a bare repository)"
    elif not fnmatchcase(branch, expected):
        reason = f"on branch {branch!r}, which does not match the goal's delivery branch policy {expected!r}"
    else:
        reason = None
    return WorkspaceGuard(
        delivery_branch_pattern=pattern, expected=expected, branch=branch, compliant=reason is None, reason=reason
    )


class ShouldRun(Record):
    schema_version: Literal["loopx_should_run_v0"] = SHOULD_RUN_SCHEMA
    projection_is_writable: Literal[False] = False
    goal_id: str
    agent_id: str
    turn_instance_id: str | None = None
    decision: Literal["run", "wait_for_user", "idle", "replan_required"]
    replan_action_packet: ReplanActionPacket | None = None
    """Present when the agent has an open replan obligation: then the one thing its turn does."""
    replan_context: ReplanContext | None = None
    """replan_context_v0: the agent's own evidence, coverage ledger and uncovered frontier, with it."""
    interaction_contract: InteractionContract
    agent_lane_next_action: LaneNextAction
    agent_workspace_guard: WorkspaceGuard | None = None
    """Present when the goal names a delivery branch policy."""


PERSON_CLASSES = ("user", "controller")
SHOWN = 10
"""User todos and gate questions listed at most: the answer stays small however much waits."""


def _user_channel(gs: GoalState) -> UserChannel:
    live = sorted(gs.live_todos(), key=todo_order)
    user_todos = [
        UserTodo(todo_id=t.todo_id, text=t.text, task_class=t.task_class)
        for t in live
        if t.role == "user" and t.status == "open" and not t.claimed_by
    ]
    questions = [
        GateQuestion(gate_id=g.gate_id, owner_class=g.owner_class, question=g.question, blocks=g.blocks)
        for g in sorted(gs.gates.values(), key=lambda g: (g.created_at, g.gate_id))
        if g.status in ("open", "deferred") and g.owner_class in PERSON_CLASSES
    ]
    needed = bool(user_todos or questions)
    return UserChannel(
        notify=needed,
        action_required=needed,
        user_todos=user_todos[:SHOWN],
        user_todos_omitted=max(0, len(user_todos) - SHOWN),
        questions=questions[:SHOWN],
        questions_omitted=max(0, len(questions) - SHOWN),
    )


def _lane(gs: GoalState, agent_id: str) -> LaneNextAction:
    agent = gs.agents[agent_id]
    live = sorted(gs.live_todos(), key=todo_order)
    agents = sorted(gs.agents)
    pick = next_actions(gs, agents, live)[agents.index(agent_id)]  # chosen among all agents: none shares it
    held = [t for t in live if t.claimed_by == agent_id and gs.holding_gates(t.todo_id)]
    held_gates = {g.gate_id for t in held for g in gs.holding_gates(t.todo_id)}
    gates = [g for g in gate_cards(gs) if g.gate_id in held_gates][:SHOWN]
    owned = sorted(
        (
            g
            for g in gs.gates.values()
            if g.owner_class == "agent" and g.owner_agent_id == agent_id and g.status in ("open", "deferred")
        ),
        key=lambda g: (g.created_at, g.gate_id),
    )
    if owned:  # a decision this agent owes comes first: other work waits for it
        g = owned[0]
        return LaneNextAction(
            agent_id=agent_id,
            lane=agent.lane,
            basis="gate",
            gate_id=g.gate_id,
            basis_detail=f"gate {g.gate_id} waits for {agent_id}'s decision: {g.question} (it holds "
            f"{', '.join(g.blocks) or g.scope})",
            held_by_gates=gates,
        )
    if pick.todo_id is not None:
        detail = (
            f"claimed by {agent_id}"
            if pick.basis == "claimed"
            else "the best unclaimed runnable agent todo (priority, then age) not offered to another agent"
        )
        return LaneNextAction(
            agent_id=agent_id,
            lane=agent.lane,
            todo_id=pick.todo_id,
            text=pick.text,
            priority=pick.priority,
            basis=pick.basis,  # next_actions says claimed or runnable here
            basis_detail=detail,
            held_by_gates=gates,
        )
    waiting = sorted(
        (h for h in gs.handoffs.values() if h.waiting and h.to_agent_id == agent_id),
        key=lambda h: (h.prepared_at, h.handoff_id),
    )
    if waiting:
        h = waiting[0]
        return LaneNextAction(
            agent_id=agent_id,
            lane=agent.lane,
            basis="handoff",
            handoff_id=h.handoff_id,
            basis_detail=f"handoff {h.handoff_id} from {h.from_agent_id} waits for adoption "
            f"({', '.join(h.todo_ids) or h.scope}); stop condition: {h.stop_condition}",
            held_by_gates=gates,
        )
    if gates:
        detail = "its claimed work is held by " + ", ".join(f"gate {g.gate_id} ({g.owner_class})" for g in gates)
    else:
        held_any = sorted({g.gate_id for t in live if t.role == "agent" for g in gs.holding_gates(t.todo_id)})
        named = ", ".join(held_any[:SHOWN]) + (f" and {len(held_any) - SHOWN} more" if len(held_any) > SHOWN else "")
        detail = "no runnable agent todo" + (f"; gates holding work: {named}" if held_any else "")
    return LaneNextAction(agent_id=agent_id, lane=agent.lane, basis="none", basis_detail=detail, held_by_gates=gates)


def should_run(
    state: State,
    goal_id: str,
    agent_id: str,
    turn_instance_id: str | None = None,
    branch: str | None = None,
    agent_evidence: AgentEvidence | None = None,
) -> ShouldRun:
    """``branch``: the branch the agent's work tree has checked out (None: none), which the goal's
    delivery branch policy, when it names one, is checked against. ``agent_evidence``: the agent's
    evidence index, from which the replan context of an open obligation is built (None: the packet
    alone)."""
    gs = require_goal(state, goal_id)
    require_agent(gs, agent_id, rule="should-run answers for an agent registered on the goal")
    lane = _lane(gs, agent_id)
    user = _user_channel(gs)
    replan = replan_packet(gs, agent_id)
    capability = None
    if replan is None and lane.basis == "none" and not lane.held_by_gates and not user.action_required:
        capability = _capability(gs, agent_id)  # gates, runnable work and handoffs come first
        replan = capability
    must_attempt = replan is not None or lane.basis in ("gate", "claimed", "runnable", "handoff")
    if capability is not None and capability.capability_guard is not None:
        primary = (
            f"research gap {capability.capability_guard.gap_id}: obligation {capability.obligation_id} needs a "
            f"joint probe: {capability.writeback_contract.command_template}"
        )
    elif replan is not None:
        primary = (
            f"replan: obligation {replan.obligation_id} needs a semantic delta, one of "
            f"{', '.join(replan.uncovered_frontier.required_any_of)}: {replan.writeback_contract.command_template}"
        )
    elif lane.basis == "gate":
        primary = (
            f"decide gate {lane.gate_id}: loopx gate decide -g {goal_id} --gate-id {lane.gate_id} "
            f"--decision approve|reject|defer --reason TEXT --decided-by-class agent -a {agent_id}"
        )
    elif lane.basis == "handoff":
        primary = f"adopt handoff {lane.handoff_id}: loopx handoff adopt -g {goal_id} --handoff-id {lane.handoff_id} -a {agent_id}"
    elif must_attempt:
        primary = f"work on {lane.todo_id}: {lane.text}"
    elif user.action_required:
        named = [f"todo {t.todo_id}" for t in user.user_todos] + [f"gate {q.gate_id}" for q in user.questions]
        more = user.user_todos_omitted + user.questions_omitted
        primary = "wait for the user: " + ", ".join(named) + (f" and {more} more" if more else "")
    else:
        primary = "nothing to do: " + lane.basis_detail
    if must_attempt and user.action_required:
        mode = "agent_and_user"
    elif must_attempt:
        mode = "agent_work"
    else:
        mode = "user_required" if user.action_required else "idle"
    writeback = (
        replan.writeback_contract.command_template
        if replan is not None
        else f"loopx refresh-state -g {goal_id} -a {agent_id}"
        + (f" -t {lane.todo_id}" if lane.todo_id else "")
        + " --classification <progress|blocked|no_op> --delivery-outcome <tier> --evidence <ref>"
    )
    assert gs.goal is not None
    pattern = gs.goal.delivery_branch_pattern
    guard = workspace_guard(pattern, agent_id, branch) if pattern else None
    contract = InteractionContract(
        mode=mode,
        user_channel=user,
        agent_channel=AgentChannel(
            must_attempt=must_attempt,
            delivery_allowed=guard is None or guard.compliant,
            delivery_blocked_reason=guard.reason if guard else None,
            # work held by a gate is reported, never passed over in silence
            quiet_noop_allowed=not must_attempt and not user.action_required and not lane.held_by_gates,
            primary_action=primary,
            required_reads=[f"loopx --format json status --goal-id {goal_id} --agent-id {agent_id}"],
        ),
        cli_channel=CliChannel(writeback_command=writeback, replan_settlement_contract=_settlement(gs, replan, lane)),
    )
    decision = (
        "replan_required"
        if replan is not None
        else "run"
        if must_attempt
        else ("wait_for_user" if user.action_required else "idle")
    )
    answer = fit(
        ShouldRun(
            goal_id=goal_id,
            agent_id=agent_id,
            turn_instance_id=turn_instance_id,
            decision=decision,
            replan_action_packet=replan,
            interaction_contract=contract,
            agent_lane_next_action=lane,
            agent_workspace_guard=guard,
        )
    )
    if replan is None or agent_evidence is None or capability is not None:
        return answer
    return with_context(answer, gs, replan, agent_evidence)


def _capability(gs: GoalState, agent_id: str) -> ReplanActionPacket | None:
    """The capability obligation of the first pending research gap, with the goal's live gate on."""
    from loopx_git.model.research_gate import gate_on, live_gaps, owed

    if not gate_on(gs):
        return None  # the graph is not read at all with the gate off, nor for a paused or closed goal
    live = live_gaps(gs)
    guard = owed(gs, agent_id, live)
    if guard is None:
        return None
    gap = next(g for g in live if g.gap.gap_id == guard.gap_id)
    return capability_packet(gs, guard, gap.gap.experiments)


def _settlement(gs: GoalState, replan: ReplanActionPacket | None, lane: LaneNextAction) -> SettlementContract | None:
    if replan is None:
        return None
    identity = settlement_identity(gs, replan.agent_id, replan.obligation_id, lane.todo_id)
    return SettlementContract(
        obligation_id=replan.obligation_id,
        settlement_bound=identity.startswith("--replan-obligation-id"),  # else a selected todo owns the receipt
        identity_option=identity,
    )

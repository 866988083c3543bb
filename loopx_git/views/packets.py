"""Operator projections of seed 003, read-only and bounded: the review packet of one goal (what an
operator must look at: gates, handoffs, attention items, recent evidence, rollback candidates),
the todo index across every goal, and the global manager command (progress, gates, todos, risks
and next actions of every goal, read first). Every list is cut at a fixed length and says how many
it left out, so none grows with the branch: at 10k todos and 100k events each stays a few KiB."""

from __future__ import annotations

from typing import Final, Literal

from loopx_git.model.event_head import event_order_key
from loopx_git.model.record import Record
from loopx_git.model.state import GoalState, State, require_agent, require_goal
from loopx_git.views.budget import fit
from loopx_git.views.evidence_index import AgentEvidence
from loopx_git.views.replan import replan_packet
from loopx_git.views.replan_context import ReplanContext, with_context
from loopx_git.views.status import gate_cards, handoff_cards, next_actions, todo_order
from loopx_git.views.status_model import GateCard, HandoffCard, NextAction, RewardDigest

REVIEW_SCHEMA: Final = "loopx_review_packet_v0"
INDEX_SCHEMA: Final = "todo_index_v0"
MANAGER_SCHEMA: Final = "global_manager_command_v0"
SHOWN = 10
"""Items of one kind a packet lists at most (then the count it left out)."""
INDEX_PER_GOAL = 25
INDEX_GOALS = 20
MANAGER_GOALS = 12
EVIDENCE_KINDS = ("validation", "refresh_state", "pr_merge", "repair", "failure")


class Attention(Record):
    """One thing an operator must look at, and the record it comes from."""

    kind: Literal["gate", "handoff", "ledger", "conflict", "user_todo", "failure"]
    ref: str
    summary: str
    source_event_id: str | None = None


class EvidenceItem(Record):
    event_id: str
    event_kind: str
    recorded_at: str
    agent_id: str | None = None
    todo_id: str | None = None
    run_id: str | None = None
    summary: str | None = None


class RollbackCandidate(Record):
    """An open rollback plan (steps waiting), or a failure nothing has compensated: never executed here."""

    kind: Literal["open_plan", "failure"]
    ref: str
    summary: str


class ReviewPacket(Record):
    schema_version: Literal["loopx_review_packet_v0"] = REVIEW_SCHEMA
    projection_is_writable: Literal[False] = False
    goal_id: str
    objective: str
    goal_status: str
    agent_id: str | None = None
    handoff_only: bool = False
    latest_delivery_outcome: str | None = None
    """The result tier first: what was delivered, before how busy it was."""
    event_count: int
    attention: list[Attention]
    attention_omitted: int
    open_gates: list[GateCard]
    open_gates_omitted: int
    handoffs: list[HandoffCard]
    handoffs_omitted: int
    recent_evidence: list[EvidenceItem]
    recent_evidence_omitted: int = 0
    """Of the goal's latest events: the evidence among them left out (the packet stays under 16 KiB)."""
    latest_rewards: list[RewardDigest]
    latest_rewards_omitted: int = 0
    rollback_candidates: list[RollbackCandidate]
    rollback_candidates_omitted: int
    replan_context: ReplanContext | None = None
    """With --agent-id, when that agent has an open replan obligation (never with --handoff-only)."""


def _cut(items: list, limit: int = SHOWN) -> tuple[list, int]:
    return items[:limit], max(0, len(items) - limit)


def _attention(gs: GoalState, gates: list[GateCard], handoffs: list[HandoffCard]) -> list[Attention]:
    items = [Attention(kind="gate", ref=g.gate_id, summary=f"{g.status}: {g.question}") for g in gates]
    items += [
        Attention(kind="handoff", ref=h.handoff_id, summary=f"{h.from_agent_id} -> {h.to_agent_id}: {h.stop_condition}")
        for h in handoffs
    ]
    items += [
        Attention(kind="ledger", ref=e.id, summary=f"{e.verdict or '-'} / {e.next or '-'}: {e.question or e.claim}")
        for e in sorted(gs.ledger.values(), key=lambda e: e.created_at)
        if e.stops_the_loop
    ]
    items += [
        Attention(kind="conflict", ref=c.event_id, summary=f"{c.kind}: {c.message}", source_event_id=c.event_id)
        for c in gs.conflicts
    ]
    items += [
        Attention(kind="user_todo", ref=t.todo_id, summary=t.text)
        for t in sorted(gs.live_todos(), key=todo_order)
        if t.role == "user" and t.status == "open"
    ]
    return items


def review_packet(
    state: State,
    goal_id: str,
    agent_id: str | None = None,
    *,
    handoff_only: bool = False,
    agent_evidence: AgentEvidence | None = None,
) -> ReviewPacket:
    """``agent_evidence``: the agent's evidence index, when it has an open replan obligation: the packet then
    embeds its replan context (the same read model quota should-run delivers; not --handoff-only)."""
    gs = require_goal(state, goal_id)
    if agent_id is not None:
        require_agent(gs, agent_id, rule="a review packet is scoped to an agent registered on the goal")
    assert gs.goal is not None
    handoffs = handoff_cards(gs, agent_id)
    gates = [] if handoff_only else gate_cards(gs)
    attention = _attention(gs, gates, handoffs) if not handoff_only else []
    evidence = [
        EvidenceItem(**e.model_dump(include=set(EvidenceItem.model_fields), mode="json"))
        for e in reversed(gs.recent)
        if e.event_kind in EVIDENCE_KINDS and (agent_id is None or e.agent_id in (None, agent_id))
    ]
    candidates = [
        RollbackCandidate(kind="open_plan", ref=p.packet_id, summary=f"{p.trigger.kind}: {p.trigger.summary}")
        for p in sorted(gs.rollbacks.values(), key=lambda p: p.created_at)
        if p.is_open
    ] + [
        RollbackCandidate(kind="failure", ref=e.event_id, summary=e.summary or "failure")
        for e in reversed(gs.recent)
        if e.event_kind == "failure"
    ]
    rewards = sorted(gs.rewards.values(), key=lambda r: (r.judged_at, r.reward_id), reverse=True)
    shown_attention, attention_omitted = _cut(attention)
    shown_gates, gates_omitted = _cut(gates)
    shown_handoffs, handoffs_omitted = _cut(handoffs)
    shown_candidates, candidates_omitted = _cut([] if handoff_only else candidates)
    outcome = gs.latest_outcome_run
    shown_evidence, evidence_omitted = _cut([] if handoff_only else evidence)
    shown_rewards, rewards_omitted = _cut([] if handoff_only else [RewardDigest.of(r) for r in rewards], 3)
    packet = ReviewPacket(
        goal_id=goal_id,
        objective=gs.goal.objective,
        goal_status=gs.goal.status,
        agent_id=agent_id,
        handoff_only=handoff_only,
        latest_delivery_outcome=outcome.delivery_outcome if outcome else None,
        event_count=gs.event_count,
        attention=shown_attention,
        attention_omitted=attention_omitted,
        open_gates=shown_gates,
        open_gates_omitted=gates_omitted,
        handoffs=shown_handoffs,
        handoffs_omitted=handoffs_omitted,
        recent_evidence=shown_evidence,
        recent_evidence_omitted=evidence_omitted,
        latest_rewards=shown_rewards,
        latest_rewards_omitted=rewards_omitted,
        rollback_candidates=shown_candidates,
        rollback_candidates_omitted=candidates_omitted,
    )
    replan = replan_packet(gs, agent_id) if agent_id is not None and not handoff_only else None
    packet = fit(packet)
    return (
        with_context(packet, gs, replan, agent_evidence)
        if replan is not None and agent_evidence is not None
        else packet
    )


# --- the todo index across goals ---------------------------------------------------------------


class IndexedTodo(Record):
    todo_id: str
    status: str
    role: str
    task_class: str
    priority: str
    claimed_by: str | None = None
    text: str
    runnable: bool
    held_by_gates: list[str]
    source_event_id: str | None = None
    """The last event that wrote the todo."""


class GoalTodos(Record):
    goal_id: str
    open: int
    blocked: int
    deferred: int
    done: int
    superseded: int
    todos: list[IndexedTodo]
    """The live todos, best first (priority, then age)."""
    todos_omitted: int


class TodoIndex(Record):
    schema_version: Literal["todo_index_v0"] = INDEX_SCHEMA
    projection_is_writable: Literal[False] = False
    goals: list[GoalTodos]
    goals_omitted: int


def todo_index(state: State) -> TodoIndex:
    goals = sorted((gs for gs in state.goals.values() if gs.goal is not None), key=lambda gs: gs.goal_id)
    out = []
    for gs in goals[:INDEX_GOALS]:
        live = sorted(gs.live_todos(), key=todo_order)
        counts = {"open": 0, "blocked": 0, "deferred": 0}
        for todo in live:
            counts[todo.status] = counts.get(todo.status, 0) + 1
        out.append(
            GoalTodos(
                goal_id=gs.goal_id,
                open=counts["open"],
                blocked=counts["blocked"],
                deferred=counts["deferred"],
                done=gs.closed["done"],
                superseded=gs.closed["superseded"],
                todos=[
                    IndexedTodo(
                        todo_id=t.todo_id,
                        status=t.status,
                        role=t.role,
                        task_class=t.task_class,
                        priority=t.priority,
                        claimed_by=t.claimed_by,
                        text=t.text,
                        runnable=gs.is_runnable(t),
                        held_by_gates=[g.gate_id for g in gs.holding_gates(t.todo_id)],
                        source_event_id=gs.sources.get(f"todo:{t.todo_id}"),
                    )
                    for t in live[:INDEX_PER_GOAL]
                ],
                todos_omitted=max(0, len(live) - INDEX_PER_GOAL),
            )
        )
    return fit(TodoIndex(goals=out, goals_omitted=max(0, len(goals) - INDEX_GOALS)))


# --- the global manager command ----------------------------------------------------------------


class GoalProgress(Record):
    goal_id: str
    objective: str
    status: str
    latest_delivery_outcome: str | None = None
    todos_open: int
    todos_done: int
    gates_holding: list[str]
    gates_holding_omitted: int
    user_todos: list[str]
    user_todos_omitted: int
    risks: list[str]
    """Conflicts, ledger entries that stop the loop, failures nothing compensated."""
    risks_omitted: int
    next_actions: list[NextAction]
    next_actions_omitted: int
    latest_event_id: str | None = None
    """The goal's latest event: where its progress was last written."""


class ManagerCommand(Record):
    schema_version: Literal["global_manager_command_v0"] = MANAGER_SCHEMA
    projection_is_writable: Literal[False] = False
    read_first: Literal[True] = True
    """Read this before acting on any goal: it is the one view across all of them."""
    goals: list[GoalProgress]
    goals_omitted: int


def manager(state: State) -> ManagerCommand:
    goals = sorted((gs for gs in state.goals.values() if gs.goal is not None), key=lambda gs: gs.goal_id)
    out = []
    for gs in goals[:MANAGER_GOALS]:
        assert gs.goal is not None
        live = sorted(gs.live_todos(), key=todo_order)
        gates = [g.gate_id for g in gate_cards(gs)]
        users = [t.todo_id for t in live if t.role == "user" and t.status == "open"]
        risks = (
            [f"conflict {c.kind} ({c.event_id})" for c in gs.conflicts]
            + [f"ledger {e.id} stops the loop" for e in gs.ledger.values() if e.stops_the_loop]
            + [f"failure {e.event_id}: {e.summary or ''}".rstrip(": ") for e in gs.recent if e.event_kind == "failure"]
        )
        actions = [a for a in next_actions(gs, sorted(gs.agents), live) if a.todo_id is not None]
        outcome = gs.latest_outcome_run
        shown_gates, gates_omitted = _cut(gates, 5)
        shown_users, users_omitted = _cut(users, 5)
        shown_risks, risks_omitted = _cut(risks, 5)
        shown_actions, actions_omitted = _cut(actions, 5)
        out.append(
            GoalProgress(
                goal_id=gs.goal_id,
                objective=gs.goal.objective,
                status=gs.goal.status,
                latest_delivery_outcome=outcome.delivery_outcome if outcome else None,
                latest_event_id=max(gs.recent, key=event_order_key).event_id if gs.recent else None,
                todos_open=len(live),
                todos_done=gs.closed["done"],
                gates_holding=shown_gates,
                gates_holding_omitted=gates_omitted,
                user_todos=shown_users,
                user_todos_omitted=users_omitted,
                risks=shown_risks,
                risks_omitted=risks_omitted,
                next_actions=shown_actions,
                next_actions_omitted=actions_omitted,
            )
        )
    return fit(ManagerCommand(goals=out, goals_omitted=max(0, len(goals) - MANAGER_GOALS)))

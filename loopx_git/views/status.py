"""The goal card (``loopx status``): what a person or an agent needs on the first screen."""

from __future__ import annotations

from loopx_git.model.event_head import event_order_key
from loopx_git.model.run import DeliveryFlags
from loopx_git.model.state import GoalState, State, digest, require_agent, require_goal
from loopx_git.model.todo import TodoItem
from loopx_git.views.budget import fit
from loopx_git.views.explore import bounded_frontier
from loopx_git.views.replan import open_packets
from loopx_git.views.status_model import (
    ChannelClaim,
    ChannelEvent,
    ChannelGate,
    ChannelNextAction,
    ChannelTodo,
    Claim,
    CompletionOutcome,
    GateCard,
    GoalCard,
    GoalChannelProjection,
    HandoffCard,
    LastFire,
    LedgerAttention,
    NextAction,
    OpenRollback,
    RewardDigest,
    TodoCounts,
)

SECTION_LIMIT = 10
CHANNEL_LIMIT = 5
"""Rows per list of the channel projection: the first screen, not the whole backlog."""


REWARDS_SHOWN = 3
"""The latest rewards the goal card shows."""


def completion_outcome(gs: GoalState) -> CompletionOutcome | None:
    """The newest tiered completion, while its todo is still done with that tier (a rollback that
    reopened it takes it off the card)."""
    if gs.latest_tiered_completion is None:
        return None
    todo = gs.todos.get(gs.latest_tiered_completion[1])
    if todo is None or todo.status != "done" or todo.delivery_outcome is None:
        return None
    return CompletionOutcome(
        todo_id=todo.todo_id,
        delivery_outcome=todo.delivery_outcome,
        delivery_flags=DeliveryFlags.of(todo.delivery_outcome),
        completed_at=todo.completed_at,
        source_event_id=gs.sources.get(f"todo:{todo.todo_id}"),
    )


def todo_order(todo: TodoItem) -> tuple:
    return (todo.priority, todo.created_at or "", todo.todo_id)


def _counts(gs: GoalState, live: list[TodoItem]) -> TodoCounts:
    counts = dict.fromkeys(TodoCounts.model_fields, 0)
    for todo in live:
        counts[todo.status] += 1
        if todo.status == "open" and todo.claimed_by:
            counts["claimed"] += 1
        if todo.status == "deferred" and gs.resume_satisfied(todo):
            counts["runnable_deferred"] += 1
    counts["done"], counts["superseded"] = gs.closed["done"], gs.closed["superseded"]
    counts["suggested"] = sum(1 for s in gs.suggested.values() if not s.promoted)
    return TodoCounts(**counts)


def next_actions(gs: GoalState, agent_ids: list[str], live: list[TodoItem]) -> list[NextAction]:
    """Each agent's own claim first, else the best unclaimed runnable agent todo; no todo is
    offered to two agents. ``live`` is sorted best first."""
    runnable = [t for t in live if t.role == "agent" and gs.is_runnable(t)]
    taken: set[str] = set()
    out = []
    for agent_id in agent_ids:
        agent = gs.agents.get(agent_id)
        lane = agent.lane if agent else None
        handed = gs.handed_on(agent_id)  # offered in a handoff: the target's work now, not the giver's
        pick = next((t for t in runnable if t.claimed_by == agent_id and t.todo_id not in handed), None)
        basis = "claimed"
        if pick is None:
            pick = next((t for t in runnable if not t.claimed_by and t.todo_id not in taken), None)
            basis = "runnable"
        if pick is None:
            out.append(NextAction(agent_id=agent_id, lane=lane, basis="none"))
            continue
        taken.add(pick.todo_id)
        out.append(
            NextAction(
                agent_id=agent_id, lane=lane, todo_id=pick.todo_id, text=pick.text, priority=pick.priority, basis=basis
            )
        )
    return out


def gate_cards(gs: GoalState) -> list[GateCard]:
    """The gates that hold work, oldest first."""
    return [
        GateCard(
            **g.model_dump(
                include={
                    "gate_id",
                    "status",
                    "owner_class",
                    "owner_agent_id",
                    "question",
                    "blocks",
                    "scope",
                    "unblocks",
                    "next_safe_action",
                    "reason",
                },
                mode="json",
            ),
            source_event_id=gs.sources.get(f"gate:{g.gate_id}"),
        )
        for g in sorted(gs.gates.values(), key=lambda g: (g.created_at, g.gate_id))
        if g.holds
    ]


def handoff_cards(gs: GoalState, agent_id: str | None = None) -> list[HandoffCard]:
    """The handoffs not yet adopted, oldest first (with ``agent_id``: those it gives or is to take)."""
    return [
        HandoffCard(
            **h.model_dump(include=set(HandoffCard.model_fields), mode="json"),
            source_event_id=gs.sources.get(f"handoff:{h.handoff_id}"),
        )
        for h in sorted(gs.handoffs.values(), key=lambda h: (h.prepared_at, h.handoff_id))
        if h.waiting and (agent_id is None or agent_id in (h.from_agent_id, h.to_agent_id))
    ]


def goal_card(state: State, goal_id: str, agent_id: str | None = None) -> GoalCard:
    gs = require_goal(state, goal_id)
    if agent_id is not None:
        require_agent(gs, agent_id, rule="a card is scoped to an agent registered on the goal")
    live = sorted(gs.live_todos(), key=todo_order)
    scoped = [t for t in live if t.role == "user" or t.claimed_by in (None, agent_id)] if agent_id else live
    agents = [agent_id] if agent_id else sorted(gs.agents)
    claims = [
        Claim(todo_id=t.todo_id, agent_id=t.claimed_by, text=t.text, priority=t.priority)
        for t in scoped
        if t.claimed_by and (agent_id is None or t.claimed_by == agent_id)
    ]
    recent = [digest(e) for e in reversed(gs.recent) if agent_id is None or e.agent_id in (None, agent_id)]
    conflicts = [
        c
        for c in gs.conflicts
        if agent_id is None
        or c.agent_id == agent_id
        or c.todo_id in {t.todo_id for t in scoped if t.claimed_by == agent_id}
    ]
    assert gs.goal is not None
    actions = next_actions(gs, agents, live)
    users = [t for t in scoped if t.role == "user"]
    agent_todos = [t for t in scoped if t.role == "agent"]
    gates = gate_cards(gs)
    handoffs = handoff_cards(gs, agent_id)
    rollbacks = [
        OpenRollback(
            packet_id=p.packet_id,
            trigger=p.trigger.kind,
            summary=p.trigger.summary,
            pending_steps=[f"{st.step_id} ({st.kind})" for st in p.pending_steps],
        )
        for p in sorted(gs.rollbacks.values(), key=lambda p: p.created_at)
        if p.is_open
    ]
    attention = [
        LedgerAttention(entry_id=e.id, verdict=e.verdict, next=e.next, question=e.question)
        for e in sorted(gs.ledger.values(), key=lambda e: e.created_at)
        if e.stops_the_loop
    ]
    obligations = open_packets(gs, agent_id)
    n = SECTION_LIMIT
    card = GoalCard(
        goal_channel_projection=channel_projection(gs, scoped, claims, actions),
        goal=gs.goal,
        agent_id=agent_id,
        open_gates=gates[:n],
        open_gates_omitted=max(0, len(gates) - n),
        waiting_handoffs=handoffs[:n],
        waiting_handoffs_omitted=max(0, len(handoffs) - n),
        counts=_counts(gs, live),
        user_todos=users[:n],
        user_todos_omitted=max(0, len(users) - n),
        agent_todos=agent_todos[:n],
        agent_todos_omitted=max(0, len(agent_todos) - n),
        active_claims=claims[:n],
        active_claims_omitted=max(0, len(claims) - n),
        next_actions=actions,
        latest_events=recent[:n],
        latest_events_omitted=max(0, len(recent) - n),
        latest_delivery_outcome=gs.latest_outcome_run,
        latest_completion_outcome=completion_outcome(gs),
        replan_obligations=obligations[:n],
        replan_obligations_omitted=max(0, len(obligations) - n),
        latest_rewards=[
            RewardDigest.of(r)
            for r in sorted(gs.rewards.values(), key=lambda r: (r.judged_at, r.reward_id), reverse=True)[:REWARDS_SHOWN]
        ],
        conflicts=conflicts[-n:],  # the latest ones
        conflicts_omitted=max(0, len(conflicts) - n),
        open_rollbacks=rollbacks[:n],
        open_rollbacks_omitted=max(0, len(rollbacks) - n),
        ledger_attention=attention[:n],
        ledger_attention_omitted=max(0, len(attention) - n),
        last_fire=LastFire(
            **gs.last_fire.model_dump(
                include={"fire_id", "terminal_status", "stop_condition", "iterations_run", "ended_at"}, mode="json"
            )
        )
        if gs.last_fire
        else None,
        bounded_research_frontier=bounded_frontier(gs, agent_id),
        event_count=gs.event_count,
        run_count=gs.run_count,
    )
    return fit(card)


def _channel_todo(gs: GoalState, todo: TodoItem) -> ChannelTodo:
    return ChannelTodo(
        todo_id=todo.todo_id,
        text=todo.text,
        status=todo.status,
        priority=todo.priority,
        task_class=todo.task_class,
        claimed_by=todo.claimed_by,
        source_event_id=gs.sources.get(f"todo:{todo.todo_id}"),
    )


def channel_projection(
    gs: GoalState, scoped: list[TodoItem], claims: list[Claim], actions: list[NextAction]
) -> GoalChannelProjection:
    """The channel projection of the card's own rows (``scoped``: the todos the card shows)."""
    users = [t for t in scoped if t.role == "user"]
    agents = [t for t in scoped if t.role == "agent"]
    gates = gate_cards(gs)
    latest = max(gs.recent, key=event_order_key) if gs.recent else None
    action = next((a for a in actions if a.todo_id), None)
    n = CHANNEL_LIMIT
    return GoalChannelProjection(
        goal_id=gs.goal_id,
        user_todos=[_channel_todo(gs, t) for t in users[:n]],
        user_todos_omitted=max(0, len(users) - n),
        agent_todos=[_channel_todo(gs, t) for t in agents[:n]],
        agent_todos_omitted=max(0, len(agents) - n),
        open_gates=[
            ChannelGate(
                gate_id=g.gate_id,
                owner_class=g.owner_class,
                question=g.question,
                blocks=g.blocks,
                status=g.status,
                source_event_id=gs.sources.get(f"gate:{g.gate_id}"),
            )
            for g in gates[:n]
        ],
        open_gates_omitted=max(0, len(gates) - n),
        active_claims=[
            ChannelClaim(todo_id=c.todo_id, agent_id=c.agent_id, source_event_id=gs.sources.get(f"todo:{c.todo_id}"))
            for c in claims[:n]
        ],
        active_claims_omitted=max(0, len(claims) - n),
        latest_event=ChannelEvent(
            event_id=latest.event_id,
            event_kind=latest.event_kind,
            recorded_at=latest.recorded_at,
            agent_id=latest.agent_id,
            todo_id=latest.todo_id,
            summary=latest.summary,
        )
        if latest is not None
        else None,
        next_action=ChannelNextAction(
            agent_id=action.agent_id,
            todo_id=action.todo_id,
            text=action.text,
            basis=action.basis,
            source_event_id=gs.sources.get(f"todo:{action.todo_id}"),
        )
        if action is not None and action.todo_id is not None
        else None,
    )

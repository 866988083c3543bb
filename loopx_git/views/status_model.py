"""The goal card's records (status_contract_v2): what loopx status prints as JSON, and the channel
projection a chat or board shows of it."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from loopx_git.model.goal import Goal
from loopx_git.model.record import Record, without_none
from loopx_git.model.reward import HumanReward
from loopx_git.model.run import DeliveryFlags, RunRecord
from loopx_git.model.state import Conflict, EventDigest
from loopx_git.model.todo import TodoItem
from loopx_git.views.explore import BoundedResearchFrontier
from loopx_git.views.replan import ReplanActionPacket

CHANNEL_SCHEMA: Final = "goal_channel_projection_v0"
STATUS_SCHEMA = "status_contract_v2"
"""The seed's status envelope; it was ``loopx_status_v0`` (``loopx schema loopx_status_v0`` still
answers) and grew ``goal_channel_projection``, with every row's source event."""


class TodoCounts(Record):
    open: int = 0
    claimed: int = 0
    blocked: int = 0
    deferred: int = 0
    runnable_deferred: int = 0
    done: int = 0
    superseded: int = 0
    suggested: int = 0


class Claim(Record):
    todo_id: str
    agent_id: str
    text: str
    priority: str


class NextAction(Record):
    """The one runnable todo an agent should take next (its own claim first)."""

    agent_id: str
    lane: str | None = None
    todo_id: str | None = None
    text: str | None = None
    priority: str | None = None
    basis: str = Field(description="claimed | runnable | none")


class OpenRollback(Record):
    """A rollback plan with steps that wait for a gate or a person."""

    packet_id: str
    trigger: str
    summary: str
    pending_steps: list[str]


class LedgerAttention(Record):
    """A ledger entry that stops the loop until a person answers."""

    entry_id: str
    verdict: str | None = None
    next: str | None = None
    question: str | None = None


class GateCard(Record):
    """A gate that still holds work (undecided, rejected, deferred or cancelled): what it blocks,
    what an approval would unblock, and whose decision it waits for."""

    gate_id: str
    status: str
    owner_class: str
    owner_agent_id: str | None = None
    question: str
    blocks: list[str]
    scope: str | None = None
    unblocks: list[str]
    next_safe_action: str | None = None
    reason: str | None = None
    source_event_id: str | None = None
    """The last event that wrote the gate (its opening or its decision)."""


class RewardDigest(Record):
    """A reward as the history and the goal card show it."""

    reward_id: str
    run_id: str | None = None
    polarity: str
    label: str
    reason: str
    judged_at: str

    @classmethod
    def of(cls, reward: HumanReward) -> RewardDigest:
        return cls(**reward.model_dump(include=set(cls.model_fields), mode="json"))


class HandoffCard(Record):
    """A prepared handoff not yet adopted: who gives, who takes, what moves, who reviews."""

    handoff_id: str
    from_agent_id: str
    to_agent_id: str
    todo_ids: list[str]
    scope: str | None = None
    stop_condition: str
    evidence_refs: list[str]
    review_required: bool
    self_merge_allowed: bool
    source_event_id: str | None = None
    """The event that prepared it."""


class LastFire(Record):
    fire_id: str
    terminal_status: str
    stop_condition: str
    iterations_run: int
    ended_at: str


class ProjectionTruth(Record):
    """Seed 003's projection truth contract: this card is a read-only projection; the truth is the
    source state, changed only through these commands."""

    schema_version: Literal["long_horizon_agent_state_protocol_v0"] = "long_horizon_agent_state_protocol_v0"
    projection_is_writable: Literal[False] = False
    source_of_truth: list[str] = Field(
        default_factory=lambda: [
            "registry",
            "active_state",
            "todo_item_v0",
            "run_history",
            "rollout_event_log",
            "operator_gate",
            "human_reward",
        ]
    )
    write_apis: list[str] = Field(
        default_factory=lambda: [
            "loopx todo",
            "loopx refresh-state",
            "loopx operator-gate",
            "loopx reward",
            "loopx quota spend-slot",
            "loopx handoff",
            "loopx event append",
        ]
    )


class ChannelTodo(Record):
    todo_id: str
    text: str
    status: str
    priority: str
    task_class: str
    claimed_by: str | None = None
    source_event_id: str | None = None
    """The last event that wrote the todo (its claim included)."""


class ChannelGate(Record):
    gate_id: str
    owner_class: str
    question: str
    blocks: list[str]
    status: str
    source_event_id: str | None = None


class ChannelClaim(Record):
    todo_id: str
    agent_id: str
    source_event_id: str | None = None


class ChannelEvent(Record):
    event_id: str
    event_kind: str
    recorded_at: str
    agent_id: str | None = None
    todo_id: str | None = None
    summary: str | None = None


class ChannelNextAction(Record):
    agent_id: str
    todo_id: str
    text: str | None = None
    basis: str
    source_event_id: str | None = None


class GoalChannelProjection(Record):
    """goal_channel_projection_v0: the seed's first-screen goal card, each row naming the event it
    comes from. Read-only: it is recomputed from the events, never written back."""

    schema_version: Literal["goal_channel_projection_v0"] = CHANNEL_SCHEMA
    goal_id: str
    projection_is_writable: Literal[False] = False
    user_todos: list[ChannelTodo]
    user_todos_omitted: int = 0
    agent_todos: list[ChannelTodo]
    agent_todos_omitted: int = 0
    open_gates: list[ChannelGate]
    open_gates_omitted: int = 0
    active_claims: list[ChannelClaim]
    active_claims_omitted: int = 0
    latest_event: ChannelEvent | None = None
    next_action: ChannelNextAction | None = None
    """The first agent's next runnable todo (every agent's: ``next_actions`` on the card)."""


class CompletionOutcome(Record):
    """The result tier the newest tiered completion reported (``todo complete --delivery-outcome``)."""

    todo_id: str
    delivery_outcome: str
    delivery_flags: DeliveryFlags | None = None
    completed_at: str | None = None
    source_event_id: str | None = None


class GoalCard(Record):
    schema_version: str = STATUS_SCHEMA
    projection_is_writable: bool = False
    projection_truth: ProjectionTruth = Field(default_factory=ProjectionTruth)
    goal_channel_projection: GoalChannelProjection | None = None
    goal: Goal
    latest_delivery_outcome: RunRecord | None = None
    """The result tier first, before any activity count: the newest run that reported one."""
    latest_completion_outcome: CompletionOutcome | None = None
    """And the newest completion that reported one."""
    replan_obligations: list[ReplanActionPacket] = Field(default_factory=list)
    """Open replan obligations (with an agent: its own), folded from each agent's run history."""
    replan_obligations_omitted: int = 0
    agent_id: str | None = None
    open_gates: list[GateCard] = Field(default_factory=list)
    """First on the card: the decisions work waits for."""
    open_gates_omitted: int = 0
    waiting_handoffs: list[HandoffCard] = Field(default_factory=list)
    """Handoffs prepared and not yet adopted (with an agent: those it gives or is to take)."""
    waiting_handoffs_omitted: int = 0
    counts: TodoCounts
    user_todos: list[TodoItem]
    user_todos_omitted: int = 0
    agent_todos: list[TodoItem]
    agent_todos_omitted: int = 0
    active_claims: list[Claim]
    active_claims_omitted: int = 0
    next_actions: list[NextAction]
    latest_events: list[EventDigest]
    latest_events_omitted: int = 0
    latest_rewards: list[RewardDigest] = Field(default_factory=list)
    """The last few human judgments, newest first (compact: the history has them beside their runs)."""
    conflicts: list[Conflict]
    conflicts_omitted: int = 0
    open_rollbacks: list[OpenRollback] = Field(default_factory=list)
    open_rollbacks_omitted: int = 0
    ledger_attention: list[LedgerAttention] = Field(default_factory=list)
    ledger_attention_omitted: int = 0
    last_fire: LastFire | None = None
    bounded_research_frontier: BoundedResearchFrontier | None = None
    """With the goal's live research gate on (``configure-goal``) and an agent selected (``--agent-id``,
    or the goal's only agent): its live gap counts and at most three cards. Left out otherwise."""
    event_count: int
    run_count: int

    @model_serializer(mode="wrap")
    def _without_inactive(self, handler: SerializerFunctionWrapHandler):
        return without_none(handler(self), "bounded_research_frontier")

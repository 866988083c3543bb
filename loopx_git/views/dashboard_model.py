"""The dashboard's data: what loopx dashboard writes as data.json beside its pages, one record per
kind of thing a page draws (marks on the timeline, claim bars, gates, handoffs, rows)."""

from __future__ import annotations

from typing import Any, Final

from loopx_git.model.record import Record
from loopx_git.views.status_model import GoalCard

DASHBOARD_SCHEMA: Final = "loopx_dashboard_v0"
NO_AGENT: Final = "(no agent)"
"""The lane of events no agent wrote (a person's, or an imported line's)."""


class Mark(Record):
    """One event on its lane, or (``count`` > 1) the events of one lane in one time bucket."""

    lane: str
    at: str
    until: str | None = None
    kind: str
    count: int = 1
    event_id: str
    """The event, or the bucket's latest."""
    commit: str | None = None
    summary: str | None = None
    todo_id: str | None = None


class ClaimBar(Record):
    """A todo held by one agent: from its claim to what ended it (``ended_by`` open: it still holds)."""

    todo_id: str
    agent_id: str
    start: str
    end: str | None = None
    ended_by: str
    """done, superseded, released, taken (another agent claimed it), handed_off or open."""
    source_event_id: str
    end_event_id: str | None = None
    commit: str | None = None


class HandoffArrow(Record):
    handoff_id: str
    from_agent_id: str
    to_agent_id: str
    at: str
    adopted_at: str | None = None
    status: str
    todo_ids: list[str]
    source_event_id: str | None = None
    commit: str | None = None


class GateNode(Record):
    """A gate on the lanes' time axis, from its opening to its decision (``decided_at`` None: open)."""

    gate_id: str
    at: str
    decided_at: str | None = None
    status: str
    owner_class: str
    holds: bool
    blocks: list[str]
    scope: str | None = None
    unblocks: list[str]
    question: str
    source_event_id: str | None = None
    commit: str | None = None


class BridgeLine(Record):
    """A cause drawn to its effect: ``inferred`` when either event carries no join key (seed 003)."""

    from_event_id: str
    to_event_id: str
    from_lane: str
    to_lane: str
    from_at: str
    to_at: str
    relation: str
    confidence: str
    reason: str | None = None


class Lanes(Record):
    start: str | None
    end: str | None
    lanes: list[str]
    """One per agent; events no agent wrote are drawn on a track of their own below (``NO_AGENT``)."""
    unattributed: int = 0
    """How many events that track holds."""
    bucketed: bool
    marks: list[Mark]
    claims: list[ClaimBar]
    claims_omitted: int = 0
    handoffs: list[HandoffArrow]
    handoffs_omitted: int = 0
    gates: list[GateNode]
    gates_omitted: int = 0
    bridges: list[BridgeLine]
    bridges_omitted: int = 0


class TodoRow(Record):
    todo_id: str
    text: str
    state: str
    """open, claimed, blocked, deferred, done or superseded."""
    agent_id: str | None = None
    priority: str
    task_class: str
    role: str
    updated_at: str
    source_event_id: str | None = None
    commit: str | None = None


class HistoryRow(Record):
    event_id: str
    kind: str
    at: str
    agent_id: str | None = None
    summary: str | None = None
    commit: str | None = None


class RunRow(Record):
    run_id: str
    agent_id: str | None = None
    at: str
    classification: str | None = None
    delivery_outcome: str | None = None
    rewards: list[dict[str, Any]]
    """The human judgments of this run, beside it."""


class RollbackRow(Record):
    packet_id: str
    trigger: str
    summary: str
    steps: list[dict[str, Any]]
    open: bool


class Evidence(Record):
    validations: list[HistoryRow]
    runs: list[RunRow]
    rollbacks: list[RollbackRow]
    rollbacks_omitted: int = 0


class Dashboard(Record):
    schema_version: str = DASHBOARD_SCHEMA
    goal_id: str
    ref: str
    tip: str | None
    """The commit the page was built from."""
    tip_time: str | None = None
    card: GoalCard
    card_commits: dict[str, str]
    """The commit of each event the card names (its gates', handoffs' and completion's sources)."""
    lanes: Lanes
    todo_count: int
    todo_chunks: int
    evidence: Evidence


class Site(Record):
    """What the page is built from: the dashboard, and the chunks it loads on demand."""

    dashboard: Dashboard
    todo_chunks: list[list[TodoRow]]
    history_chunks: dict[str, dict[str, list[HistoryRow]]]
    """Chunk name -> todo id -> its events, oldest first."""

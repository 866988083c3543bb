"""The folded state: what every read and every validation sees.

``fold`` is pure: the same events give the same state whatever order they arrive in,
because they are applied in one total order (``event_order_key``).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from loopx_git.errors import NotFoundError
from loopx_git.model.capability import CapabilityGuard, RetiredDuty
from loopx_git.model.event import ENTITY_KINDS
from loopx_git.model.event_head import EventBase, EventHead, event_order_key
from loopx_git.model.explore import ExploreNode
from loopx_git.model.fire import FireSummary
from loopx_git.model.frontier import AgentFrontier
from loopx_git.model.gate import OperatorGate
from loopx_git.model.goal import Agent, Goal
from loopx_git.model.handoff import AgentHandoff
from loopx_git.model.ids import Id
from loopx_git.model.ledger import LedgerEntry
from loopx_git.model.record import Line, Record, Token
from loopx_git.model.research import ObservationFacts
from loopx_git.model.reward import HumanReward
from loopx_git.model.rollback import RollbackPacket
from loopx_git.model.run import RunRecord, run_order_key
from loopx_git.model.table import CowDict, CowSet, IdSet, RecordTable
from loopx_git.model.todo import ResumeCondition, SuggestedTodo, TodoItem, TodoStatus

RECENT_EVENTS = 20
FOLD_VERSION = "23"  # bump when the fold's meaning changes: cached folds of older versions are dropped


class Conflict(Record):
    """Two facts that cannot both hold (e.g. two offline claims); the fold order picked one."""

    kind: Token
    event_id: Id
    todo_id: Id | None = None
    agent_id: Id | None = None
    message: Line


def digest(event: EventHead) -> EventDigest:
    return EventDigest(
        event_id=event.event_id,
        event_kind=event.event_kind,
        recorded_at=event.recorded_at,
        lamport=event.lamport,
        agent_id=event.agent_id,
        todo_id=event.todo_id,
        run_id=event.run_id,
        summary=event.summary,
        has_join_key=event.has_join_key,
    )


class EventDigest(Record):
    """What status shows of a recent event, without keeping the whole stream in memory."""

    event_id: Id
    event_kind: Token
    recorded_at: str
    lamport: int
    agent_id: Id | None = None
    todo_id: Id | None = None
    run_id: Id | None = None
    summary: str | None = None
    has_join_key: bool = True


def closed_kind(todo: TodoItem) -> str | None:
    if todo.superseded_by:
        return "superseded"
    return "done" if todo.status == TodoStatus.done.value else None


@dataclass
class GoalState:
    goal_id: str
    goal: Goal | None = None
    agents: dict[str, Agent] = field(default_factory=dict)
    todos: RecordTable[TodoItem] = field(default_factory=lambda: RecordTable(TodoItem))
    live: CowSet = field(default_factory=CowSet)  # todos neither done nor superseded
    closed: Counter[str] = field(default_factory=Counter)  # done / superseded todos, by kind
    suggested: dict[str, SuggestedTodo] = field(default_factory=dict)
    merged_prs: set[tuple[str, int]] = field(default_factory=set)
    capacities: set[str] = field(default_factory=set)
    conflicts: list[Conflict] = field(default_factory=list)
    rollbacks: dict[str, RollbackPacket] = field(default_factory=dict)
    ledger: dict[str, LedgerEntry] = field(default_factory=dict)
    gates: dict[str, OperatorGate] = field(default_factory=dict)
    rewards: dict[str, HumanReward] = field(default_factory=dict)
    handoffs: dict[str, AgentHandoff] = field(default_factory=dict)
    explore: dict[str, ExploreNode] = field(default_factory=dict)
    """The explore graph's nodes (model/explore.py), with their edges, findings and observation refs."""
    research: dict[str, ObservationFacts] = field(default_factory=dict)
    """What the fold keeps of every research observation recorded on a node, by its fingerprint (the
    node names it; the envelope is in its ``explore_observe`` event)."""
    writebacks: dict[str, tuple[str | None, bool]] = field(default_factory=dict)
    """Run id -> (its agent, whether it is a compact write-back: a delivery outcome and evidence)."""
    spends: dict[str, tuple[str, str, str | None]] = field(default_factory=dict)
    """Run id -> (event id, when, agent) of the slot spent after it."""
    duties: dict[str, CapabilityGuard] = field(default_factory=dict)
    """Capability obligation id -> the guard of the first todo admitted for it (model/capability.py)."""
    duty_todo_ids: dict[str, list[str]] = field(default_factory=dict)
    """Capability obligation id -> every todo admitted for it, in fold order (done ones too)."""
    retirements: dict[str, RetiredDuty] = field(default_factory=dict)
    """Capability obligation id -> the first run that retired it (capability_obligation_retirement_v0)."""
    retiring_runs: dict[str, RetiredDuty] = field(default_factory=dict)
    """Run id -> the retirement it made: every such run, a second clone's too (none spends a slot, and
    each one's turn may ask again)."""
    dropped: set[str] = field(default_factory=set)
    """Events the fold recorded as a conflict and did not apply (a gate decision or a handoff step that
    lost to another clone's): what they caused in their own commit is not applied either."""
    sources: CowDict[str] = field(default_factory=CowDict)
    """``todo:<id>``, ``gate:<id>``, ``handoff:<id>`` -> the last event that wrote it (a claim too):
    the source event id a projection row names."""
    imported: set[str] = field(default_factory=set)
    frontiers: dict[str, AgentFrontier] = field(default_factory=dict)
    """Each agent's goal frontier, folded from its own runs in time order (model/frontier.py)."""
    latest_tiered_completion: tuple[tuple[int, str, str], str] | None = None
    """(fold key, todo id) of the newest ``todo complete --delivery-outcome``: the card's result tier
    of a completion (shown while that todo stays done with its tier)."""
    """The own event ids of the lines ``events import`` brought in: what imports are deduplicated by."""
    last_fire: FireSummary | None = None
    recent: deque[EventHead] = field(default_factory=lambda: deque(maxlen=RECENT_EVENTS))
    lamport: int = 0
    event_count: int = 0
    last_key: tuple[int, str, str] | tuple[()] = ()  # event_order_key of the last event folded
    run_count: int = 0
    latest_run: RunRecord | None = None
    latest_outcome_run: RunRecord | None = None
    event_ids: IdSet = field(default_factory=IdSet)  # every event folded: what a reference may name
    run_ids: IdSet = field(default_factory=IdSet)

    def copy(self) -> GoalState:
        """A copy whose containers can be changed without touching this one (records are frozen)."""
        return replace(
            self,
            agents=dict(self.agents),
            todos=self.todos.copy(),
            live=self.live.copy(),
            closed=Counter(self.closed),
            suggested=dict(self.suggested),
            merged_prs=set(self.merged_prs),
            capacities=set(self.capacities),
            conflicts=list(self.conflicts),
            rollbacks=dict(self.rollbacks),
            ledger=dict(self.ledger),
            gates=dict(self.gates),
            rewards=dict(self.rewards),
            handoffs=dict(self.handoffs),
            explore=dict(self.explore),
            research=dict(self.research),
            writebacks=dict(self.writebacks),
            spends=dict(self.spends),
            duties=dict(self.duties),
            duty_todo_ids={o: list(ids) for o, ids in self.duty_todo_ids.items()},
            retirements=dict(self.retirements),
            retiring_runs=dict(self.retiring_runs),
            dropped=set(self.dropped),
            sources=self.sources.copy(),
            imported=set(self.imported),
            frontiers={agent: f.copy() for agent, f in self.frontiers.items()},
            recent=deque(self.recent, maxlen=RECENT_EVENTS),
            event_ids=self.event_ids.copy(),
            run_ids=self.run_ids.copy(),
        )

    def put_todo(self, todo: TodoItem) -> None:
        """Store a todo and keep the live set and closed counts in step with it."""
        previous = self.todos.get(todo.todo_id) if todo.todo_id not in self.live else None
        was = closed_kind(previous) if previous is not None else None  # a stored todo that is not live is closed
        if was is not None:
            self.closed[was] -= 1
        self.todos[todo.todo_id] = todo
        kind = closed_kind(todo)
        if kind is None:
            self.live.add(todo.todo_id)
        else:
            self.live.discard(todo.todo_id)
            self.closed[kind] += 1

    def live_todos(self) -> list[TodoItem]:
        """The todos still in play, by id; done and superseded ones stay unbuilt in the cache."""
        return [self.todos[todo_id] for todo_id in sorted(self.live)]

    def record_conflict(self, event: EventBase, kind: str, message: str) -> None:
        self.conflicts.append(
            Conflict(
                kind=kind, event_id=event.event_id, todo_id=event.todo_id, agent_id=event.agent_id, message=message
            )
        )

    def check_before(self, event: EventBase, entity: Record | None) -> None:
        """Record a conflict where an event's ``before`` no longer matches (a concurrent edit merged in)."""
        if entity is None:
            return
        for change in event.changes:
            current = getattr(entity, change.field, None)
            if current != change.before:
                self.record_conflict(
                    event,
                    "concurrent_update",
                    f"{event.event_kind} changed {change.field} from {change.before!r}, but it was {current!r}",
                )

    def resume_satisfied(self, todo: TodoItem) -> bool:
        """Whether a todo's ``resume_when`` has come true in this state."""
        condition = todo.resume_condition
        if condition is None:
            return False
        return self.condition_holds(condition)

    def condition_holds(self, condition: ResumeCondition) -> bool:
        if condition.kind == "todo_done":
            target = self.todos.get(condition.todo_id or "")
            return target is not None and target.status == TodoStatus.done.value
        if condition.kind == "pr_merged":
            return condition.repository is not None and (condition.repository, condition.pr_number) in self.merged_prs
        return condition.capacity in self.capacities

    def handed_on(self, agent_id: str) -> set[str]:
        """The todos ``agent_id`` has offered in a handoff not yet adopted: the target's work now."""
        return {t for h in self.handoffs.values() if h.waiting and h.from_agent_id == agent_id for t in h.todo_ids}

    def selected_todos(self, agent_id: str) -> list[str]:
        """The runnable todos ``agent_id`` holds and has not handed on, by id: a selected todo owns
        the receipt of the agent's write-back (``--todo-id``), and the obligation id does not
        (seed 000). The write gate and every projected write-back command read it here."""
        handed = self.handed_on(agent_id)
        return sorted(
            t.todo_id
            for t in self.live_todos()
            if t.claimed_by == agent_id and t.todo_id not in handed and self.is_runnable(t)
        )

    def holding_gates(self, todo_id: str) -> list[OperatorGate]:
        """The gates that block ``todo_id`` now: open, rejected, deferred or cancelled ones naming it,
        opened after the last approved gate that names it (a new gate asks again: its approval lifts
        what the earlier ones held). A gate names a todo by its id, or by a scope equal to the todo's
        ``action_kind`` (a ``deploy`` gate holds every todo added with ``--action-kind deploy``)."""
        todo = self.todos.get(todo_id)
        kind = todo.action_kind if todo is not None else None
        naming = [g for g in self.gates.values() if todo_id in g.blocks or (kind is not None and g.scope == kind)]
        approved = [(g.created_at, g.gate_id) for g in naming if not g.holds]
        lifted = max(approved) if approved else None
        return [g for g in naming if g.holds and (lifted is None or (g.created_at, g.gate_id) > lifted)]

    def is_runnable(self, todo: TodoItem) -> bool:
        """Open and not superseded, or deferred with its resume condition met; and no gate holds it."""
        if todo.superseded_by or (self.gates and self.holding_gates(todo.todo_id)):
            return False
        if todo.status == TodoStatus.open.value:
            return True
        return todo.status == TodoStatus.deferred.value and self.resume_satisfied(todo)


@dataclass
class State:
    goals: dict[str, GoalState] = field(default_factory=dict)

    def goal_state(self, goal_id: str) -> GoalState:
        found = self.goals.get(goal_id)
        if found is None:
            found = self.goals[goal_id] = GoalState(goal_id=goal_id)
        return found

    def copy_for(self, goal_ids: Iterable[str]) -> State:
        """A state that shares every goal but ``goal_ids``, which are copied so a write can try them."""
        goals = dict(self.goals)
        for goal_id in goal_ids:
            if goal_id in goals:
                goals[goal_id] = goals[goal_id].copy()
        return State(goals=goals)

    def runs_in_order(self, runs: Iterable[RunRecord]) -> bool:
        """True when every agent's run sorts after that agent's latest run: folding them onto this state
        gives the frontiers a cold fold gives (it folds each agent's runs in time order; the rest of
        what runs fold is a maximum, the same in any order)."""
        for run in runs:
            folded = self.goals.get(run.goal_id)
            agent = folded.frontiers.get(run.agent_id) if folded is not None and run.agent_id else None
            if agent is not None and agent.last_run is not None and run_order_key(run) <= agent.last_run:
                return False
        return True

    def accepts_in_order(self, events: Iterable[EventHead]) -> bool:
        """True when every event sorts after what its goal already folded (incremental apply is exact)."""
        return all(event_order_key(e) > self.goals[e.goal_id].last_key for e in events if e.goal_id in self.goals)


PAYLOAD_KINDS = ENTITY_KINDS | {"pr_merge", "quota", "fire", "quota_spend", "rollout_import"}
"""Event kinds whose payload (changes, code refs, details) the fold reads; of the others it
reads only the head (``EventHead``)."""
ORDER_FREE_KINDS = frozenset({"rollout_import"})
"""Payload kinds whose fold step is the same in any order (an imported line only joins a set): one
that interleaves with what was folded still extends the state exactly."""


LIST_LIMIT = 10
"""How many known ids a refusal lists before it says how many more there are."""


def listed(ids: Iterable[str], limit: int = LIST_LIMIT) -> str:
    """``a, b, c`` (sorted), ``a, b ... and 12 more``, or ``none yet``: the known ids a refusal names."""
    ordered = sorted(ids)
    if not ordered:
        return "none yet"
    shown = ", ".join(ordered[:limit])
    return shown + (f" and {len(ordered) - limit} more" if len(ordered) > limit else "")


def require_goal(state: State, goal_id: str) -> GoalState:
    """The goal's folded state, or a NotFoundError that lists the goals there are."""
    found = state.goals.get(goal_id)
    if found is None or found.goal is None:
        known = listed(g for g, s in state.goals.items() if s.goal)
        raise NotFoundError(
            f"goal '{goal_id}' does not exist (known goals: {known})",
            hint=f"create it with `loopx goal create --goal-id {goal_id} --objective TEXT`",
        )
    return found


def require_agent(
    gs: GoalState,
    agent_id: str,
    *,
    field: str = "agent_id",
    rule: str = "an agent named by a command is registered on the goal",
) -> str:
    """``agent_id`` when it is registered on the goal, else a refusal that lists the agents there are."""
    if agent_id not in gs.agents:
        raise NotFoundError(
            f"{field} '{agent_id}': agent is not registered in goal '{gs.goal_id}' "
            f"(registered: {listed(gs.agents)}); rule: {rule}",
            code="unknown-agent",
            hint=f"register it with `loopx agent register --goal-id {gs.goal_id} --agent-id {agent_id}`",
        )
    return agent_id


def require_event(gs: GoalState, event_id: str, *, field: str) -> str:
    """``event_id`` when it is an event of the goal (the refusal lists the latest ones)."""
    if event_id not in gs.event_ids:
        latest = [e.event_id for e in reversed(gs.recent)][:5]
        raise NotFoundError(
            f"{field} '{event_id}': no such event in goal '{gs.goal_id}' "
            f"(latest: {', '.join(latest) or 'none yet'}); rule: an event named by a command exists",
            code="unknown-event",
            hint=f"`loopx events --goal-id {gs.goal_id}` lists them",
        )
    return event_id


def require_run(gs: GoalState, run_id: str, *, field: str = "run_id") -> str:
    """``run_id`` when it is a run record of the goal."""
    if run_id not in gs.run_ids:
        latest = gs.latest_run.run_id if gs.latest_run else "none yet"
        raise NotFoundError(
            f"{field} '{run_id}': no such run in goal '{gs.goal_id}' ({gs.run_count} run(s), latest: {latest}); "
            "rule: a run named by a command exists",
            code="unknown-run",
            hint=f"`loopx history --goal-id {gs.goal_id}` lists them",
        )
    return run_id

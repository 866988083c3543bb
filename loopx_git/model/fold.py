"""The fold: events and runs applied to the state in their one order, each kind by the apply
function of its family (the ``FOLD`` table), and a folded state extended by what a write adds."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, cast

from loopx_git.model import explore as explore_family
from loopx_git.model import frontier as frontier_family
from loopx_git.model import gate as gate_family
from loopx_git.model import goal as goal_family
from loopx_git.model import handoff as handoff_family
from loopx_git.model import ledger as ledger_family
from loopx_git.model import reward as reward_family
from loopx_git.model import rollback as rollback_family
from loopx_git.model import todo as todo_family
from loopx_git.model.capability import RetiredDuty
from loopx_git.model.event import FireRecord, PrMerge, Quota, RolloutImport
from loopx_git.model.event_head import EventBase, EventHead, event_order_key
from loopx_git.model.explore import ExploreEvent
from loopx_git.model.frontier import AgentFrontier
from loopx_git.model.gate import GateEvent
from loopx_git.model.handoff import HandoffEntityEvent
from loopx_git.model.run import RunRecord, run_order_key
from loopx_git.model.state import ORDER_FREE_KINDS, PAYLOAD_KINDS, RECENT_EVENTS, GoalState, State
from loopx_git.model.todo import TodoEvent


def _apply_fact(state: GoalState, event: EventHead) -> None:
    kind = event.event_kind
    if kind == "pr_merge":
        pr_ref = cast(PrMerge, event).code_refs.pr_ref
        if pr_ref:
            repo, _, number = pr_ref.partition("#")
            state.merged_prs.add((repo, int(number)))
    elif kind == "fire":
        state.last_fire = cast(FireRecord, event).fire
    elif kind == "rollout_import":
        state.imported.add(cast(RolloutImport, event).origin.event_id)
    elif kind == "quota_spend" and event.run_id is not None:
        if event.run_id in state.spends:  # two clones spent after one run: the first in fold order counts
            state.record_conflict(
                cast(EventBase, event), "double_spend", f"a second slot was spent after run {event.run_id}"
            )
        else:
            state.spends[event.run_id] = (event.event_id, event.recorded_at, event.agent_id)
    elif kind == "quota":
        details = cast(Quota, event).details
        capacity = details.get("capacity")
        if isinstance(capacity, str):
            if details.get("available", True):
                state.capacities.add(capacity)
            else:
                state.capacities.discard(capacity)


FOLD: dict[str, Callable[[GoalState, Any], None]] = {
    kind: family.apply
    for family in (
        goal_family,
        todo_family,
        rollback_family,
        ledger_family,
        gate_family,
        handoff_family,
        reward_family,
        explore_family,
    )
    for kind in family.FOLDS
}
"""Event kind -> the step of the family that folds it (each family's ``FOLDS``). The store reads an
event of these kinds whole, as the class its kind names; any other kind comes as a head and is a fact
(``_apply_fact``: notes, validations, merged PRs, quota, ...)."""


def _apply_family(state: GoalState, event: EventHead) -> None:
    FOLD.get(event.event_kind, _apply_fact)(state, event)


def _source_key(event: EventHead) -> str | None:
    kind = event.event_kind
    if kind.startswith("todo_") and event.todo_id:
        return f"todo:{event.todo_id}"
    if kind.startswith("gate_"):
        return f"gate:{cast(GateEvent, event).gate_id}"
    if kind.startswith("handoff_"):
        return f"handoff:{cast(HandoffEntityEvent, event).handoff_id}"
    if kind.startswith("explore_"):
        return f"explore:{cast(ExploreEvent, event).node_id}"
    return None


def apply_event(state: State, event: EventHead) -> None:
    goal_state = state.goal_state(event.goal_id)
    _apply_family(goal_state, event)
    key = _source_key(event)
    if key is not None and event.event_id not in goal_state.dropped:  # a losing decision is no row's source
        goal_state.sources[key] = event.event_id
    if event.event_kind == "todo_complete" and cast(TodoEvent, event).details.get("delivery_outcome"):
        order = event_order_key(event)
        latest = goal_state.latest_tiered_completion
        if latest is None or order > latest[0]:
            goal_state.latest_tiered_completion = (order, cast(TodoEvent, event).todo_id)
    goal_state.lamport = max(goal_state.lamport, event.lamport)
    goal_state.event_count += 1
    goal_state.event_ids.add(event.event_id)
    _remember_recent(goal_state, event)
    goal_state.last_key = max(goal_state.last_key, event_order_key(event))


def _remember_recent(goal_state: GoalState, event: EventHead) -> None:
    """Keep the goal's latest events, in fold order, whatever order they arrive in: a fold in order
    appends (digested only when shown: the fold stays cheap per event); an event that sorts before
    the latest (an imported line's own clock, a write folded onto a cached state) takes its place
    among them, or none when older than all of them, as a cold fold would have it."""
    recent = goal_state.recent
    key = event_order_key(event)
    if not recent or key >= goal_state.last_key:
        recent.append(event)
    elif len(recent) < RECENT_EVENTS or key > event_order_key(recent[0]):
        goal_state.recent = deque(sorted([*recent, event], key=event_order_key)[-RECENT_EVENTS:], maxlen=RECENT_EVENTS)


def apply_run(state: State, run: RunRecord) -> None:
    goal_state = state.goal_state(run.goal_id)
    goal_state.run_count += 1
    goal_state.run_ids.add(run.run_id)
    goal_state.writebacks[run.run_id] = (run.agent_id, bool(run.delivery_outcome and run.evidence))
    retirement = run.capability_retirement
    if retirement is not None:  # two clones retiring one duty: the first in time order stands
        retired = RetiredDuty(
            retirement.obligation_id,
            run.run_id,
            retirement.gap_id,
            retirement.agent_id,
            retirement.turn_instance_id,
            retirement.progress_fingerprint,
        )
        goal_state.retiring_runs[run.run_id] = retired
        goal_state.retirements.setdefault(retirement.obligation_id, retired)
    if goal_state.latest_run is None or run_order_key(run) > run_order_key(goal_state.latest_run):
        goal_state.latest_run = run
    latest = goal_state.latest_outcome_run
    if run.delivery_outcome and (latest is None or run_order_key(run) > run_order_key(latest)):
        goal_state.latest_outcome_run = run
    if run.agent_id is not None:  # an agent's own history only: unattributed runs never count
        todo = goal_state.todos.get(run.todo_id) if run.todo_id else None
        monitor = todo is not None and todo.task_class == "continuous_monitor"
        item = run.progress.work_item_id if run.progress is not None else None
        work = goal_state.todos.get(item) if item else None
        frontier_family.step(
            goal_state.frontiers.setdefault(run.agent_id, AgentFrontier()),
            run,
            monitor=monitor,
            successor_of=work.replan_obligation_id if work is not None else None,
        )


def fold(events: Iterable[EventHead], runs: Iterable[RunRecord] = (), state: State | None = None) -> State:
    """Apply events in fold order, and run records, onto ``state`` (a new one by default)."""
    state = state if state is not None else State()
    for event in sorted(events, key=event_order_key):
        apply_event(state, event)
    for run in sorted(runs, key=run_order_key):  # an agent's frontier is folded in time order
        apply_run(state, run)
    return state


def extend(state: State, events: list[EventHead], runs: list[RunRecord]) -> bool:
    """Apply records added after ``state`` was folded; False (state untouched) when that would not
    give what a full fold gives.

    An event that sorts after everything its goal folded is applied in order. One that sorts
    before (two clones' events interleave after a merge) is exact too when the fold reads only its
    head (a kind outside ``PAYLOAD_KINDS``): such an event changes nothing but the goal's counters,
    its id set and the recent events, none of which depends on the order it is applied in, and the
    recent events are re-picked by fold order. An interleaving event whose payload the fold reads
    (a todo's change, a claim) may change what the events after it meant: only a full fold is
    exact then."""
    if not state.runs_in_order(runs):  # an agent's frontier folds its runs in time order: refold
        return False
    late: dict[str, list[EventHead]] = {}
    for event in events:
        folded = state.goals.get(event.goal_id)
        if folded is not None and event_order_key(event) <= folded.last_key:
            if event.event_kind in PAYLOAD_KINDS and event.event_kind not in ORDER_FREE_KINDS:
                return False
            late.setdefault(event.goal_id, [])
    for event in events:  # the goal's incoming events, to re-pick its recent ones from
        if event.goal_id in late:
            late[event.goal_id].append(event)
    before = {goal_id: list(state.goals[goal_id].recent) for goal_id in late}
    fold(events, runs, state)
    for goal_id, incoming in late.items():
        # the last RECENT_EVENTS in fold order are among the ones kept before and the incoming ones
        latest = sorted([*before[goal_id], *incoming], key=event_order_key)[-RECENT_EVENTS:]
        state.goals[goal_id].recent = deque(latest, maxlen=RECENT_EVENTS)
    return True

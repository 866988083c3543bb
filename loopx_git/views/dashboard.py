"""The data of ``loopx dashboard``: one goal's lanes over time, its card, its todos and its evidence,
each element naming the event (and the commit) it comes from.

Built from the state branch alone, in one pass over the goal's event files (the heads the fold
reads; a whole event only where it carries a cause) and one walk of the commit messages (each write
names its events in ``Loopx-Event:`` trailers). Bounded whatever the history: past ``MARKS_SHOWN``
events a lane shows its events counted in ``BUCKETS`` time buckets, only the newest ``CLAIMS_SHOWN``
claims are drawn, and the todos and each todo's history go to chunks the page loads when asked.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from loopx_git.model.event_head import EventHead, event_order_key
from loopx_git.model.run import RunRecord
from loopx_git.model.state import GoalState, State, require_goal
from loopx_git.views.dashboard_model import (
    NO_AGENT,
    BridgeLine,
    ClaimBar,
    Dashboard,
    Evidence,
    GateNode,
    HandoffArrow,
    HistoryRow,
    Lanes,
    Mark,
    RollbackRow,
    RunRow,
    Site,
    TodoRow,
)
from loopx_git.views.status import goal_card, todo_order
from loopx_git.views.task_graph import bridge_confidence

MARKS_SHOWN = 1500
"""Events drawn one mark each; a longer history is drawn as counts per lane and time bucket."""
BUCKETS = 200
CLAIMS_SHOWN = 400
BRIDGES_SHOWN = 200
HANDOFFS_SHOWN = 200
GATES_SHOWN = 100
ROLLBACKS_SHOWN = 50
VALIDATIONS_SHOWN = 20
RUNS_SHOWN = 20
TODO_CHUNK = 1000
"""Todos per chunk file; the page loads the first at once and the others when a filter asks."""
HISTORY_CHUNKS = 64
"""Each todo's history goes to one of this many chunk files (by a hash of its id)."""
CLAIM_ENDS: Final = {
    "todo_complete": "done",
    "todo_supersede": "superseded",
}
TRAILER = re.compile(r"^Loopx-Event: (\S+)$", re.MULTILINE)


def history_chunk(todo_id: str) -> str:
    """The chunk holding one todo's history (the page computes the same name)."""
    return f"{int(hashlib.sha1(todo_id.encode()).hexdigest()[:4], 16) % HISTORY_CHUNKS:02d}"


def todo_state(todo: Any) -> str:
    if todo.superseded_by:
        return "superseded"
    if todo.status == "open" and todo.claimed_by:
        return "claimed"
    return str(todo.status)


def build(
    state: State,
    goal_id: str,
    events: Iterable[EventHead],
    causes: dict[str, tuple[str, str]],
    commits: dict[str, str],
    runs: Iterable[RunRecord] = (),
    *,
    ref: str,
    tip: str | None,
    tip_time: str | None,
) -> Site:
    """The site's data. ``events``: the goal's events (heads, or whole where the fold reads them);
    ``causes``: event id -> (relation, cause id) for those that name one; ``commits``: event id ->
    the commit that wrote it; ``runs``: the run records to show (the newest, and those rewarded)."""
    gs = require_goal(state, goal_id)
    ordered = sorted(events, key=event_order_key)
    lanes = _lanes(gs, ordered, causes, commits)
    todos = sorted(gs.todos.values(), key=lambda t: (_STATE_ORDER.get(todo_state(t), 9), *todo_order(t)))
    rows = [_todo_row(gs, t, commits) for t in todos]
    chunks = [rows[i : i + TODO_CHUNK] for i in range(0, len(rows), TODO_CHUNK)] or [[]]
    card = goal_card(state, goal_id)
    named = [g.source_event_id for g in card.open_gates] + [h.source_event_id for h in card.waiting_handoffs]
    if card.latest_completion_outcome is not None:
        named.append(card.latest_completion_outcome.source_event_id)
    dashboard = Dashboard(
        goal_id=goal_id,
        ref=ref,
        tip=tip,
        tip_time=tip_time,
        card=card,
        card_commits={e: commits[e] for e in named if e and e in commits},
        lanes=lanes,
        todo_count=len(rows),
        todo_chunks=len(chunks),
        evidence=_evidence(gs, ordered, list(runs), commits),
    )
    return Site(dashboard=dashboard, todo_chunks=chunks, history_chunks=_histories(ordered, commits))


_STATE_ORDER = {"claimed": 0, "open": 1, "blocked": 2, "deferred": 3, "done": 4, "superseded": 5}


def _lane(event: EventHead) -> str:
    return event.agent_id or NO_AGENT


def _lanes(
    gs: GoalState, events: list[EventHead], causes: dict[str, tuple[str, str]], commits: dict[str, str]
) -> Lanes:
    names = sorted(gs.agents)
    names += sorted({e.agent_id for e in events if e.agent_id and e.agent_id not in gs.agents})
    start = min((e.recorded_at for e in events), default=None)
    end = max((e.recorded_at for e in events), default=None)
    bucketed = len(events) > MARKS_SHOWN
    marks = _bucketed(events, start, end, commits) if bucketed else [_mark(e, commits) for e in events]
    # what the fold recorded as a conflict or dropped (a second clone's claim of a held todo, a
    # decision that lost) changed nothing: it draws no bar
    lost = {c.event_id for c in gs.conflicts} | set(gs.dropped)
    claims = _claims([e for e in events if e.event_id not in lost], commits)
    bridges = _bridges(events, causes)
    handoffs = _handoffs(gs, commits)
    gates = _gates(gs, commits)
    return Lanes(
        start=start,
        end=end,
        lanes=names,
        unattributed=sum(1 for e in events if e.agent_id is None),
        bucketed=bucketed,
        marks=marks,
        claims=claims[-CLAIMS_SHOWN:],
        claims_omitted=max(0, len(claims) - CLAIMS_SHOWN),
        handoffs=handoffs[-HANDOFFS_SHOWN:],
        handoffs_omitted=max(0, len(handoffs) - HANDOFFS_SHOWN),
        gates=gates[-GATES_SHOWN:],
        gates_omitted=max(0, len(gates) - GATES_SHOWN),
        bridges=bridges[-BRIDGES_SHOWN:],
        bridges_omitted=max(0, len(bridges) - BRIDGES_SHOWN),
    )


def _mark(event: EventHead, commits: dict[str, str]) -> Mark:
    return Mark(
        lane=_lane(event),
        at=event.recorded_at,
        kind=event.event_kind,
        event_id=event.event_id,
        commit=commits.get(event.event_id),
        summary=event.summary,
        todo_id=event.todo_id,
    )


def seconds(at: str) -> float:
    """A record's UTC timestamp as seconds since the epoch (the lanes' time axis)."""
    return datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()


def _bucketed(events: list[EventHead], start: str | None, end: str | None, commits: dict[str, str]) -> list[Mark]:
    """Per lane and time bucket: how many events, of which kind most, and the latest of them."""
    if start is None or end is None:
        return []
    t0, span = seconds(start), max(seconds(end) - seconds(start), 1.0)
    buckets: dict[tuple[str, int], list[EventHead]] = {}
    for event in events:
        index = min(int((seconds(event.recorded_at) - t0) / span * BUCKETS), BUCKETS - 1)
        buckets.setdefault((_lane(event), index), []).append(event)
    marks = []
    for (lane, _), inside in sorted(buckets.items()):
        kinds: dict[str, int] = {}
        for event in inside:
            kinds[event.event_kind] = kinds.get(event.event_kind, 0) + 1
        latest = inside[-1]
        marks.append(
            Mark(
                lane=lane,
                at=inside[0].recorded_at,
                until=latest.recorded_at,
                kind=max(kinds, key=lambda k: (kinds[k], k)),
                count=len(inside),
                event_id=latest.event_id,
                commit=commits.get(latest.event_id),
                summary=f"{len(inside)} events: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())),
            )
        )
    return marks


def _claims(events: list[EventHead], commits: dict[str, str]) -> list[ClaimBar]:
    """Claim bars in fold order, from the ``claimed_by`` changes the events carry: a claim runs until
    the todo is done or superseded, another agent claims it, it is released (``claimed_by``
    cleared) or handed on (moved to another agent: a handoff's adoption, whose claim starts there)."""
    held: dict[str, ClaimBar] = {}
    out: list[ClaimBar] = []

    def close(todo_id: str, event: EventHead, how: str) -> None:
        bar = held.pop(todo_id, None)
        if bar is not None:
            out.append(
                bar.model_copy(update={"end": event.recorded_at, "ended_by": how, "end_event_id": event.event_id})
            )

    for event in events:
        kind, todo_id = event.event_kind, event.todo_id
        if not todo_id:
            continue
        if kind in CLAIM_ENDS:
            close(todo_id, event, CLAIM_ENDS[kind])
            continue
        holder = _new_holder(event)
        if holder is None:
            continue
        if not holder:
            close(todo_id, event, "released")
            continue
        # a claim, or an update that moves the claim (a handoff's adoption writes one): the holder's
        # bar ends, the new one's starts
        close(todo_id, event, "taken" if kind == "todo_claim" else "handed_off")
        held[todo_id] = ClaimBar(
            todo_id=todo_id,
            agent_id=holder,
            start=event.recorded_at,
            ended_by="open",
            source_event_id=event.event_id,
            commit=commits.get(event.event_id),
        )
    out.extend(held.values())
    return sorted(out, key=lambda b: (b.start, b.todo_id))


def _new_holder(event: EventHead) -> str | None:
    """The agent an event makes the todo's holder, "" when it clears the claim, None when it does
    not touch the claim."""
    for change in getattr(event, "changes", None) or []:
        if change.field == "claimed_by" and change.after != change.before:
            return str(change.after) if change.after else ""
    return None


def _handoffs(gs: GoalState, commits: dict[str, str]) -> list[HandoffArrow]:
    out = []
    for h in sorted(gs.handoffs.values(), key=lambda h: (h.prepared_at, h.handoff_id)):
        source = gs.sources.get(f"handoff:{h.handoff_id}")
        out.append(
            HandoffArrow(
                handoff_id=h.handoff_id,
                from_agent_id=h.from_agent_id,
                to_agent_id=h.to_agent_id,
                at=h.prepared_at,
                adopted_at=h.adopted_at,
                status=str(h.status),
                todo_ids=list(h.todo_ids),
                source_event_id=source,
                commit=commits.get(source or ""),
            )
        )
    return out


def _gates(gs: GoalState, commits: dict[str, str]) -> list[GateNode]:
    out = []
    for g in sorted(gs.gates.values(), key=lambda g: (g.created_at, g.gate_id)):
        source = gs.sources.get(f"gate:{g.gate_id}")
        out.append(
            GateNode(
                gate_id=g.gate_id,
                at=g.created_at,
                decided_at=g.decided_at,
                status=str(g.status),
                owner_class=str(g.owner_class),
                holds=g.holds,
                blocks=list(g.blocks),
                scope=g.scope,
                unblocks=list(g.unblocks),
                question=g.question,
                source_event_id=source,
                commit=commits.get(source or ""),
            )
        )
    return out


def _bridges(events: list[EventHead], causes: dict[str, tuple[str, str]]) -> list[BridgeLine]:
    by_id = {e.event_id: e for e in events}
    out = []
    for event in events:
        relation, cause_id = causes.get(event.event_id, ("", ""))
        cause = by_id.get(cause_id)
        if cause is None:
            continue  # caused_by may be a reason, not an event id: only links to events count
        confidence, reason = bridge_confidence(cause, event)
        out.append(
            BridgeLine(
                from_event_id=cause.event_id,
                to_event_id=event.event_id,
                from_lane=_lane(cause),
                to_lane=_lane(event),
                from_at=cause.recorded_at,
                to_at=event.recorded_at,
                relation=relation,
                confidence=confidence,
                reason=reason,
            )
        )
    return out


def _todo_row(gs: GoalState, todo: Any, commits: dict[str, str]) -> TodoRow:
    source = gs.sources.get(f"todo:{todo.todo_id}")
    return TodoRow(
        todo_id=todo.todo_id,
        text=todo.text,
        state=todo_state(todo),
        agent_id=todo.claimed_by,
        priority=str(todo.priority),
        task_class=str(todo.task_class),
        role=str(todo.role),
        updated_at=todo.updated_at,
        source_event_id=source,
        commit=commits.get(source or ""),
    )


def _history_row(event: EventHead, commits: dict[str, str]) -> HistoryRow:
    return HistoryRow(
        event_id=event.event_id,
        kind=event.event_kind,
        at=event.recorded_at,
        agent_id=event.agent_id,
        summary=event.summary,
        commit=commits.get(event.event_id),
    )


def _histories(events: list[EventHead], commits: dict[str, str]) -> dict[str, dict[str, list[HistoryRow]]]:
    chunks: dict[str, dict[str, list[HistoryRow]]] = {}
    for event in events:
        if event.todo_id:
            chunk = chunks.setdefault(history_chunk(event.todo_id), {})
            chunk.setdefault(event.todo_id, []).append(_history_row(event, commits))
    return chunks


def _evidence(gs: GoalState, events: list[EventHead], runs: list[RunRecord], commits: dict[str, str]) -> Evidence:
    validations = [_history_row(e, commits) for e in events if e.event_kind == "validation"][-VALIDATIONS_SHOWN:]
    rewards: dict[str, list[dict[str, Any]]] = {}
    for reward in sorted(gs.rewards.values(), key=lambda r: (r.judged_at, r.reward_id)):
        if reward.run_id:
            rewards.setdefault(reward.run_id, []).append(
                {"reward_id": reward.reward_id, "polarity": str(reward.polarity), "label": reward.label}
            )
    rows = [
        RunRow(
            run_id=run.run_id,
            agent_id=run.agent_id,
            at=run.generated_at,
            classification=run.classification,
            delivery_outcome=run.delivery_outcome,
            rewards=rewards.get(run.run_id, []),
        )
        for run in sorted(runs, key=lambda r: (r.generated_at, r.run_id), reverse=True)
    ]
    rollbacks = [
        RollbackRow(
            packet_id=p.packet_id,
            trigger=p.trigger.kind,
            summary=p.trigger.summary,
            steps=[
                {
                    "step_id": s.step_id,
                    "kind": str(s.kind),
                    "waits": bool(s.requires_gate or not s.automatable_by_agent),
                }
                for s in p.plan
            ],
            open=p.is_open,
        )
        for p in sorted(gs.rollbacks.values(), key=lambda p: (p.created_at, p.packet_id))
    ]
    return Evidence(
        validations=list(reversed(validations)),
        runs=rows,
        rollbacks=rollbacks[-ROLLBACKS_SHOWN:],
        rollbacks_omitted=max(0, len(rollbacks) - ROLLBACKS_SHOWN),
    )

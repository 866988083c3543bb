"""The task graph of a derived view (task_graph_projection_v0): bridges from an event to what caused
it, observed or inferred, and the edges between todos, agents and gates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from loopx_git.model.event_head import EventBase, EventHead
from loopx_git.model.record import Record
from loopx_git.model.state import GoalState

GRAPH_SCHEMA: Final = "task_graph_projection_v0"


def event_kind(event: EventBase) -> str:
    origin = getattr(event, "origin", None)
    return origin.kind if origin is not None else event.event_kind


class Bridge(Record):
    from_event_id: str
    to_event_id: str
    relation: Literal["caused_by", "source_event"]
    confidence: Literal["observed", "inferred"]
    reason: str | None = None
    """Why a bridge is inferred: which end carries no join key."""


class GraphEdge(Record):
    edge_kind: Literal["blocks", "validates", "repairs", "hands_off_to", "supersedes"]
    from_ref: str
    """``todo:<id>``, ``gate:<id>``, ``agent:<id>``, ``run:<id>`` or ``event:<id>``."""
    to_ref: str
    source_event_ids: list[str]
    confidence: Literal["observed", "inferred"]


class TaskGraph(Record):
    schema_version: Literal["task_graph_projection_v0"] = GRAPH_SCHEMA
    projection_is_writable: Literal[False] = False
    edges: list[GraphEdge]
    edges_omitted: int = 0


def causes(event: EventBase) -> list[tuple[str, str]]:
    c = event.causality
    if c is None:
        return []
    out = []
    if c.source_event_id:
        out.append(("source_event", c.source_event_id))
    if c.caused_by and c.caused_by != c.source_event_id:
        out.append(("caused_by", c.caused_by))
    return out


def bridge_confidence(cause: EventHead, event: EventHead) -> tuple[str, str | None]:
    """``observed`` when both ends carry a join key; else ``inferred``, and which end has none."""
    bare = [x.event_id for x in (cause, event) if not x.has_join_key]
    return ("inferred", f"no join key on {', '.join(bare)}") if bare else ("observed", None)


def bridges(selected: Sequence[EventBase], by_id: dict[str, EventBase]) -> list[Bridge]:
    """The causal links that touch the view's events, each observed or inferred."""
    chosen = {e.event_id for e in selected}
    out: list[Bridge] = []
    for event in {id(e): e for e in by_id.values()}.values():  # each event once (imports are indexed twice)
        for relation, cause_id in causes(event):
            cause = by_id.get(cause_id)
            if cause is None or not ({event.event_id, cause.event_id} & chosen):
                continue  # caused_by may be a reason, not an event id: only links to events count
            confidence, reason = bridge_confidence(cause, event)
            out.append(
                Bridge(
                    from_event_id=cause.event_id,
                    to_event_id=event.event_id,
                    relation=relation,
                    confidence=confidence,
                    reason=reason,
                )
            )
    return out


def _edge(kind: str, a: str, b: str, event: EventBase) -> GraphEdge:
    return GraphEdge(
        edge_kind=kind,
        from_ref=a,
        to_ref=b,
        source_event_ids=[event.event_id],
        confidence="observed" if event.has_join_key else "inferred",
    )


def _state_edge(gs: GoalState, kind: str, a: str, b: str, source_key: str) -> GraphEdge:
    """An edge the folded state shows, naming the event that last wrote its gate, handoff or todo."""
    source = gs.sources.get(source_key)
    return GraphEdge(
        edge_kind=kind,
        from_ref=a,
        to_ref=b,
        source_event_ids=[source] if source else [],
        confidence="observed",
    )


def task_graph(gs: GoalState, selected: Sequence[EventBase]) -> tuple[list[GraphEdge], set[str]]:
    """The task-graph edges the view's events show, and the todos they touch."""
    edges: list[GraphEdge] = []
    for e in selected:
        kind = event_kind(e)
        c = e.causality
        blocker = f"gate:{c.gate_id}" if c and c.gate_id else (f"todo:{e.todo_id}" if e.todo_id else None)
        for blocked in c.blocks if c else []:
            if blocker and blocker != f"todo:{blocked}":
                edges.append(_edge("blocks", blocker, f"todo:{blocked}", e))
        if kind == "validation" and e.todo_id:
            edges.append(
                _edge("validates", f"run:{e.run_id}" if e.run_id else f"event:{e.event_id}", f"todo:{e.todo_id}", e)
            )
        if kind == "repair" and e.todo_id:
            edges.append(_edge("repairs", f"event:{e.event_id}", f"todo:{e.todo_id}", e))
        target = e.handoff.to_agent_id if e.handoff else None
        if target and e.agent_id and target != e.agent_id:
            edges.append(_edge("hands_off_to", f"agent:{e.agent_id}", f"agent:{target}", e))
        if kind == "todo_supersede" and e.todo_id:
            todo = gs.todos.get(e.todo_id)
            if todo is not None and todo.superseded_by:
                edges.append(_edge("supersedes", f"todo:{todo.superseded_by}", f"todo:{e.todo_id}", e))
    touched = {e.todo_id for e in selected if e.todo_id}
    return edges, touched


def _in_scope(gs: GoalState, scope: str | None, todo_id: str) -> bool:
    todo = gs.todos.get(todo_id)
    return scope is not None and todo is not None and todo.action_kind == scope


def state_edges(gs: GoalState, todos: set[str], agent: str | None) -> list[GraphEdge]:
    """What the folded state says about the view's todos (or agent): gates that block them, handoffs,
    supersessions."""
    edges = []
    for gate in sorted((g for g in gs.gates.values() if g.holds), key=lambda g: g.gate_id):
        for blocked in sorted(t for t in todos if t in gate.blocks or _in_scope(gs, gate.scope, t)):
            edges.append(_state_edge(gs, "blocks", f"gate:{gate.gate_id}", f"todo:{blocked}", f"gate:{gate.gate_id}"))
    for h in sorted(gs.handoffs.values(), key=lambda h: h.handoff_id):
        if agent in (h.from_agent_id, h.to_agent_id) or set(h.todo_ids) & todos:
            key = f"handoff:{h.handoff_id}"
            edges.append(_state_edge(gs, "hands_off_to", f"agent:{h.from_agent_id}", f"agent:{h.to_agent_id}", key))
    for tid in sorted(todos):
        todo = gs.todos.get(tid)
        if todo is not None and todo.superseded_by:
            edges.append(_state_edge(gs, "supersedes", f"todo:{todo.superseded_by}", f"todo:{tid}", f"todo:{tid}"))
    return edges

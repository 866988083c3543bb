"""``loopx view agent|todo|case|benchmark|run ID``: the seed's derived views over the one event
stream of a goal, filtered by a stable join key, each row naming its source event.

Per agent and per todo a view shows the activity; per case, benchmark and run it shows the results
(validations, run write-backs, completions, merges, failures, repairs), as the seed words it. A
bridge between two events is ``observed`` when both carry a join key and ``inferred`` when either
carries none (the seed: a projection never passes off a bridge from such an event as observed).
``--include-task-graph`` adds ``task_graph_projection_v0``: the blocks, validates, repairs,
hands_off_to and supersedes edges the view's events and the goal's gates and todos show.

Read-only and bounded: the newest rows only, each list with a count of what it left out, and the
whole under 16 KiB of JSON however long its texts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final, Literal, Protocol

from loopx_git.errors import NotFoundError
from loopx_git.model.event_head import EventBase, event_order_key
from loopx_git.model.record import Record
from loopx_git.model.state import GoalState
from loopx_git.store.records import holding, parse_event
from loopx_git.views.task_graph import (
    Bridge,
    TaskGraph,
    bridges,
    causes,
    event_kind,
    state_edges,
    task_graph,
)

VIEW_SCHEMA: Final = "loopx_derived_view_v0"
ViewKind = Literal["agent", "todo", "case", "benchmark", "run"]
VIEW_KINDS: tuple[str, ...] = ("agent", "todo", "case", "benchmark", "run")
JOIN_FIELD: Final = {
    "agent": "agent_id",
    "todo": "todo_id",
    "case": "case_id",
    "benchmark": "benchmark_id",
    "run": "run_id",
}
"""The join key each view filters by."""
EVENTS_SHOWN = 30
BRIDGES_SHOWN = 20
EDGES_SHOWN = 40
BUDGET = 16 * 1024 - 64
"""Bytes of printed JSON a view stays under: 16 KiB, with a margin for the line end."""
RESULT_KINDS = frozenset(
    {
        "validation",
        "refresh_state",
        "todo_complete",
        "pr_merge",
        "failure",
        "repair",
        "compact_case_result",
        "benchmark_status",
        "failure_attribution",
    }
)
"""What a per-case, per-benchmark or per-run view shows: the seed's "validation/result events"
(an imported line counts by the kind it had where it was written)."""


class ViewEvent(Record):
    event_id: str
    event_kind: str
    """The kind as written where the event happened (an imported line's own kind, not rollout_import)."""
    imported: bool = False
    origin_event_id: str | None = None
    """An imported line's own event id (what its log's other lines cite)."""
    recorded_at: str
    lamport: int
    agent_id: str | None = None
    todo_id: str | None = None
    run_id: str | None = None
    case_id: str | None = None
    benchmark_id: str | None = None
    lane_id: str | None = None
    summary: str | None = None
    has_join_key: bool


class DerivedView(Record):
    schema_version: Literal["loopx_derived_view_v0"] = VIEW_SCHEMA
    projection_is_writable: Literal[False] = False
    goal_id: str
    view_id: str
    view_kind: Literal["per_agent", "per_todo", "per_case", "per_benchmark", "per_run"]
    filter_keys: dict[str, str]
    event_count: int
    """Events the filter selects (all of them; ``events`` holds the newest)."""
    source_event_ids: list[str]
    """The ids of ``events``, in fold order."""
    events: list[ViewEvent]
    events_omitted: int = 0
    bridges: list[Bridge]
    bridges_omitted: int = 0
    task_graph: TaskGraph | None = None


def _origin_id(event: EventBase) -> str | None:
    origin = getattr(event, "origin", None)
    return origin.event_id if origin is not None else None


def _lane(event: EventBase) -> str | None:
    return event.lane.lane_id if event.lane else None


def _row(event: EventBase) -> ViewEvent:
    return ViewEvent(
        event_id=event.event_id,
        event_kind=event_kind(event),
        imported=event.event_kind == "rollout_import",
        origin_event_id=_origin_id(event),
        recorded_at=event.recorded_at,
        lamport=event.lamport,
        agent_id=event.agent_id,
        todo_id=event.todo_id,
        run_id=event.run_id,
        case_id=event.case_id,
        benchmark_id=event.benchmark_id,
        lane_id=_lane(event),
        summary=event.summary,
        has_join_key=event.has_join_key,
    )


def _filter(gs: GoalState, kind: str, subject: str) -> tuple[dict[str, str], object]:
    """The view's filter keys and its predicate over events."""
    if kind == "agent":
        agent = gs.agents.get(subject)
        lane = agent.lane if agent else None
        keys = {"agent_id": subject, **({"lane_id": lane} if lane else {})}
        # an agent's events in another lane are work it moved there (a handoff): that lane's view
        return keys, lambda e: e.agent_id == subject and (lane is None or _lane(e) in (None, lane))
    if kind == "todo":
        return {"todo_id": subject}, lambda e: e.todo_id == subject
    field = JOIN_FIELD[kind]
    return {field: subject}, lambda e: getattr(e, field) == subject and event_kind(e) in RESULT_KINDS


def _known(gs: GoalState, carrying: Sequence[EventBase], kind: str, subject: str) -> bool:
    """Whether the goal knows the id at all: a record of it, or an event carrying it (a case whose
    events are not results yet is known)."""
    if carrying:
        return True
    if kind == "agent":
        return subject in gs.agents
    if kind == "todo":
        return subject in gs.todos
    return kind == "run" and subject in gs.run_ids


class RecordSource(Protocol):
    """Where a view reads the goal's event files: their (path, blob id) pairs, and a blob's bytes."""

    def read_blob(self, oid: str) -> bytes: ...


_CITE = re.compile(rb'"(?:source_event_id|caused_by)"\s*:\s*"([^"]+)"')
_IDS = re.compile(rb'"event_id"\s*:\s*"([^"]+)"')  # a record's own id, and an imported line's


def _scan(
    source: RecordSource, files: Sequence[tuple[str, str]], kind: str, subject: str
) -> tuple[list[EventBase], list[EventBase]]:
    """The events whose stored bytes name ``subject`` in the view's field, and the events linked to
    them by a cause (either way), reading every file once and parsing only those: a view of one todo
    of 100k events parses a handful of records, not all of them."""
    key = holding(JOIN_FIELD[kind], subject)
    candidates: list[EventBase] = []
    where: dict[str, int] = {}  # event id (own, and an imported line's) -> its file
    citing: dict[str, list[int]] = {}  # cited id -> the files that cite it
    for n, (path, oid) in enumerate(files):
        data = source.read_blob(oid)
        for found in _IDS.findall(data):
            where.setdefault(found.decode(), n)
        for cited in _CITE.findall(data):
            citing.setdefault(cited.decode(), []).append(n)
        if key.search(data):
            candidates.append(parse_event(data, path))
    chosen = {e.event_id: e for e in candidates}
    linked: set[int] = set()
    for event in candidates:
        ids = [i for i in (event.event_id, _origin_id(event)) if i is not None]
        linked.update(n for i in ids for n in citing.get(i, []))  # what it caused
        linked.update(where[c] for _, c in causes(event) if c in where)  # what caused it
    neighbours = [parse_event(source.read_blob(files[n][1]), files[n][0]) for n in sorted(linked)]
    return candidates, [e for e in neighbours if e.event_id not in chosen]


def derived_view(
    gs: GoalState,
    source: RecordSource,
    files: Sequence[tuple[str, str]],
    kind: str,
    subject: str,
    *,
    include_task_graph: bool = False,
) -> DerivedView:
    """The view of ``subject`` (an agent, todo, case, benchmark or run id) over the goal's event
    files. Unknown when nothing on the goal has that id."""
    keys, wanted = _filter(gs, kind, subject)
    candidates, neighbours = _scan(source, files, kind, subject)
    candidates.sort(key=event_order_key)
    carrying = [e for e in candidates if getattr(e, JOIN_FIELD[kind]) == subject]
    selected = [e for e in carrying if wanted(e)]  # type: ignore[operator]  # the predicate _filter made
    if not selected and not _known(gs, carrying, kind, subject):
        raise NotFoundError(
            f"{kind} '{subject}': nothing on goal '{gs.goal_id}' has this {kind} id; rule: a view is of an id an "
            "event or record of the goal carries",
            code="unknown-" + kind,
            hint=f"`loopx events --goal-id {gs.goal_id}` lists the events and their join keys",
        )
    shown = selected[-EVENTS_SHOWN:]
    nearby = sorted({e.event_id: e for e in [*carrying, *neighbours]}.values(), key=event_order_key)
    by_id = {e.event_id: e for e in nearby}
    # an imported log's lines cite each other by their own ids
    by_id.update((origin, e) for e in nearby if (origin := _origin_id(e)) and origin not in by_id)
    links = bridges(selected, by_id)
    graph = None
    if include_task_graph:
        edges, todos = task_graph(gs, selected)
        if kind == "todo":
            todos.add(subject)
        seen: set[tuple[str, str, str]] = set()
        unique = []
        for edge in [*edges, *state_edges(gs, todos, subject if kind == "agent" else None)]:
            key = (edge.edge_kind, edge.from_ref, edge.to_ref)
            if key not in seen:
                seen.add(key)
                unique.append(edge)
        graph = TaskGraph(edges=unique[:EDGES_SHOWN], edges_omitted=max(0, len(unique) - EDGES_SHOWN))
    return _fit(
        DerivedView(
            goal_id=gs.goal_id,
            view_id=f"{kind}_{subject}",
            view_kind=f"per_{kind}",
            filter_keys=keys,
            event_count=len(selected),
            source_event_ids=[e.event_id for e in shown],
            events=[_row(e) for e in shown],
            events_omitted=len(selected) - len(shown),
            bridges=links[-BRIDGES_SHOWN:],
            bridges_omitted=max(0, len(links) - BRIDGES_SHOWN),
            task_graph=graph,
        )
    )


def _printed(view: DerivedView) -> int:
    # as --format json prints it, where it is longest: indented, every non-ASCII character escaped
    return len(json.dumps(view.model_dump(mode="json"), indent=2, ensure_ascii=True))


def _fit(view: DerivedView) -> DerivedView:
    """``view`` under BUDGET bytes of printed JSON: the oldest events (and their ids), then the oldest
    bridges, then the last task-graph edges left out, each counted in its ``_omitted``. Rarely more
    than a few rounds: only long texts (summaries of up to 1000 characters) get a view this far."""
    while _printed(view) > BUDGET:
        graph = view.task_graph
        if len(view.events) > 1:
            update = {
                "events": view.events[1:],
                "source_event_ids": view.source_event_ids[1:],
                "events_omitted": view.events_omitted + 1,
            }
        elif view.bridges:
            update = {"bridges": view.bridges[1:], "bridges_omitted": view.bridges_omitted + 1}
        elif graph is not None and graph.edges:
            edges = graph.model_copy(update={"edges": graph.edges[:-1], "edges_omitted": graph.edges_omitted + 1})
            update = {"task_graph": edges}
        else:
            break
        view = view.model_copy(update=update)
    return view

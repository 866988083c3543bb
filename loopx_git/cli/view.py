"""``loopx view agent|todo|case|benchmark|run ID``: derived views over a goal's one event stream."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loopx_git.cli import context, render
from loopx_git.cli.context import GOAL_ID
from loopx_git.cli.params import Argument, Context, Group, Option

app = Group(
    help="Read-only views of one agent, todo, case, benchmark or run over the goal's events.", no_args_is_help=True
)

TASK_GRAPH = Option(
    False,
    "--include-task-graph",
    help="Add task_graph_projection_v0: blocks, validates, repairs, hands_off_to and supersedes edges.",
)


def _text(view) -> None:
    keys = ", ".join(f"{k}={v}" for k, v in view.filter_keys.items())
    render.line(f"{view.view_kind} view of {keys} on {view.goal_id}: {view.event_count} event(s)", style="bold")
    if view.events_omitted:
        render.line(f"  (the newest {len(view.events)} shown; {view.events_omitted} older left out)")
    render.table(
        ["#", "event", "recorded", "kind", "agent", "todo", "summary"],
        [
            (
                place,  # the row's place: Lamport clocks repeat across clones that wrote offline
                e.event_id,
                e.recorded_at,
                e.event_kind + (" (imported)" if e.imported else ""),
                e.agent_id,
                e.todo_id,
                (e.summary or "") + ("" if e.has_join_key else "  (no join key)"),
            )
            for place, e in enumerate(view.events, 1)
        ],
    )
    for b in view.bridges:
        why = f" ({b.reason})" if b.reason else ""
        render.line(f"  bridge {b.from_event_id} -> {b.to_event_id}: {b.relation}, {b.confidence}{why}")
    if view.task_graph is not None:
        render.line(f"task graph: {len(view.task_graph.edges)} edge(s)", style="bold")
        for edge in view.task_graph.edges:
            sources = ", ".join(edge.source_event_ids) or "state"
            render.line(f"  {edge.from_ref} {edge.edge_kind} {edge.to_ref} [{edge.confidence}; {sources}]")
        if view.task_graph.edges_omitted:
            render.line(f"  ({view.task_graph.edges_omitted} more edges left out)")


def _command(kind: str, what: str) -> Callable[..., Any]:
    def command(
        ctx: Context,
        subject: str = Argument(..., metavar="ID", help=f"The {what} id."),
        goal_id: str | None = GOAL_ID,
        include_task_graph: bool = TASK_GRAPH,
    ) -> None:
        c = context.get(ctx)
        with c.session() as repo:
            view = repo.view(c.goal(repo, goal_id), kind, subject, include_task_graph=include_task_graph)
        render.emit(c, view, _text)

    command.__name__ = f"view_{kind}"
    command.__doc__ = (
        f"The events of one {what}, with the bridges between them (observed, or inferred where an event "
        f"carries no join key).\n\n    Example: loopx view {kind} ID -g G --include-task-graph --format json\n    "
    )
    return command


for _kind, _what in (
    ("agent", "agent (its own lane's events)"),
    ("todo", "todo"),
    ("case", "case (its validation and result events)"),
    ("benchmark", "benchmark (its validation and result events)"),
    ("run", "run (its validation and result events)"),
):
    app.command(_kind)(_command(_kind, _what))

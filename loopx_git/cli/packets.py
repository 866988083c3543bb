"""``loopx review-packet`` and ``loopx manager``: the operator's read-only views of one goal and of
every goal (seed 003's review packet and global manager command)."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.context import AGENT_FILTER, GOAL_ID
from loopx_git.cli.params import Context, Group, Option


def _more(n: int) -> str:
    return f" (+{n} more)" if n else ""


def _packet_text(p) -> None:
    render.line(f"{p.goal_id} [{p.goal_status}]: {p.objective}", style="bold")
    render.line(f"latest delivery outcome: {p.latest_delivery_outcome or 'none yet'}; {p.event_count} events")
    if p.attention:
        render.table(
            ["kind", "ref", "summary"],
            [(a.kind, a.ref, a.summary) for a in p.attention],
            title="Attention" + _more(p.attention_omitted),
        )
    if p.handoffs:
        render.table(
            ["handoff", "from", "to", "todos", "stop condition", "review"],
            [
                (
                    h.handoff_id,
                    h.from_agent_id,
                    h.to_agent_id,
                    ", ".join(h.todo_ids),
                    h.stop_condition,
                    "required" if h.review_required else "self-merge",
                )
                for h in p.handoffs
            ],
            title="Handoffs waiting" + _more(p.handoffs_omitted),
        )
    if p.recent_evidence:
        render.table(
            ["event", "kind", "agent", "todo", "summary"],
            [(e.event_id, e.event_kind, e.agent_id, e.todo_id, e.summary) for e in p.recent_evidence],
            title="Recent evidence",
        )
    if p.rollback_candidates:
        render.table(
            ["kind", "ref", "summary"],
            [(r.kind, r.ref, r.summary) for r in p.rollback_candidates],
            title="Rollback candidates (never run from here)" + _more(p.rollback_candidates_omitted),
        )


def _manager_text(m) -> None:
    for g in m.goals:
        render.line(
            f"{g.goal_id} [{g.status}] {g.latest_delivery_outcome or 'no outcome yet'}: {g.todos_open} open, "
            f"{g.todos_done} done — {g.objective}",
            style="bold",
        )
        for label, items, omitted in (
            ("gates holding work", g.gates_holding, g.gates_holding_omitted),
            ("user todos", g.user_todos, g.user_todos_omitted),
            ("risks", g.risks, g.risks_omitted),
        ):
            if items:
                render.line(f"  {label}: {', '.join(items)}{_more(omitted)}")
        for a in g.next_actions:
            render.line(f"  next for {a.agent_id}: {a.todo_id} {a.text or ''}".rstrip())
    if m.goals_omitted:
        render.line(f"({m.goals_omitted} more goals not shown)")


def register(root: Group) -> None:
    @root.command("review-packet")
    def review_packet(
        ctx: Context,
        goal_id: str | None = GOAL_ID,
        agent_id: str | None = AGENT_FILTER,
        handoff_only: bool = Option(False, "--handoff-only", help="Only the handoffs waiting."),
    ) -> None:
        """The operator's packet for a goal: attention items, gates, handoffs, recent evidence, rollback candidates.

        Example: loopx review-packet -g parser -a bob --handoff-only
        """
        c = context.get(ctx)
        with c.session() as repo:
            packet = repo.projection_data(
                "review-packet", c.goal(repo, goal_id), agent_id, "handoff-only" if handoff_only else None
            )
        render.emit(c, packet, lambda data: _packet_text(render.attributes(data)))

    @root.command("manager")
    def manager(ctx: Context) -> None:
        """Every goal at a glance, read first: progress, gates, user todos, risks, next actions.

        Example: loopx manager --format json
        """
        c = context.get(ctx)
        with c.session() as repo:
            answer = repo.projection_data("manager")
        render.emit(c, answer, lambda data: _manager_text(render.attributes(data)))

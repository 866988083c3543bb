"""``loopx status``: the goal card."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.params import Context, Group


def _flags(flags) -> str:
    """What a tier means, beside it: material, accountable, follow-through required."""
    if flags is None:
        return ""
    named = [
        name.replace("_", " ")
        for name in ("material", "accountable", "follow_through_required")
        if getattr(flags, name)
    ]
    return "; " + ", ".join(named) if named else ""


def _more(card, field: str, where: str) -> None:
    """Say what a list of the card left out (it stays under 16 KiB), and where the rest is."""
    left = getattr(card, f"{field}_omitted", 0)
    if left:
        render.line(f"  and {left} more ({where})")


def show_card(card) -> None:
    goal = card.goal
    render.line(f"{goal.goal_id} [{goal.status}]: {goal.objective}", style="bold")
    if card.open_gates:  # first: what the work waits for
        render.table(
            ["gate", "status", "owner", "blocks", "unblocks", "question / reason"],
            [
                (
                    g.gate_id,
                    g.status,
                    g.owner_class + (f":{g.owner_agent_id}" if g.owner_agent_id else ""),
                    ", ".join([*g.blocks, *([f"scope {g.scope}"] if g.scope else [])]),
                    ", ".join(g.unblocks) or g.next_safe_action or "",
                    g.question + (f" — {g.reason}" if g.reason else ""),
                )
                for g in card.open_gates
            ],
            title="Gates holding work",
        )
        _more(card, "open_gates", "loopx gate list")
    if card.replan_obligations:
        render.table(
            ["obligation", "agent", "triggers", "settle with one of"],
            [
                (
                    o.obligation_id,
                    o.agent_id,
                    ", ".join(t.kind for t in o.triggers),
                    ", ".join(o.uncovered_frontier.required_any_of),
                )
                for o in card.replan_obligations
            ],
            title="Replan obligations",
        )
        _more(card, "replan_obligations", "loopx quota should-run -a AGENT")
    if getattr(card, "bounded_research_frontier", None) is not None:
        from loopx_git.cli.explore import live_frontier

        live_frontier(card.bounded_research_frontier)
    outcome = card.latest_delivery_outcome
    render.line(
        "latest delivery outcome: "
        + (
            f"{outcome.delivery_outcome} (run {outcome.run_id}{_flags(outcome.delivery_flags)})"
            if outcome
            else "none yet"
        )
    )
    done = card.latest_completion_outcome
    if done is not None:
        render.line(
            f"latest completion outcome: {done.delivery_outcome} (todo {done.todo_id}{_flags(done.delivery_flags)})"
        )
    if card.waiting_handoffs:
        render.table(
            ["handoff", "from", "to", "todos", "stop condition", "review"],
            [
                (
                    h.handoff_id,
                    h.from_agent_id,
                    h.to_agent_id,
                    ", ".join([*h.todo_ids, *([f"scope {h.scope}"] if h.scope else [])]),
                    h.stop_condition,
                    "review required" if h.review_required else "self-merge allowed",
                )
                for h in card.waiting_handoffs
            ],
            title="Handoffs waiting",
        )
        _more(card, "waiting_handoffs", "loopx handoff list")
    if card.latest_rewards:
        render.line(
            "latest rewards: "
            + "; ".join(
                f"{w.polarity} {w.label}" + (f" (run {w.run_id})" if w.run_id else "") for w in card.latest_rewards
            )
        )
    n = card.counts
    render.line(
        f"todos: {n.open} open ({n.claimed} claimed), {n.blocked} blocked, {n.deferred} deferred "
        f"({n.runnable_deferred} ready), {n.done} done, {n.superseded} superseded, {n.suggested} suggested"
    )
    render.table(
        ["agent", "lane", "todo", "next action", "basis"],  # the todo apart: an id is never folded into text
        [(a.agent_id, a.lane, a.todo_id or "-", a.text or "", a.basis) for a in card.next_actions],
        title="Next action per agent",
    )
    if card.user_todos:
        render.table(
            ["todo", "pri", "status", "text"],
            [(t.todo_id, t.priority, t.status, t.text) for t in card.user_todos],
            title="User todos",
        )
        _more(card, "user_todos", "loopx todo list --role user")
    if card.agent_todos:
        render.table(
            ["todo", "pri", "status", "claimed by", "text"],
            [(t.todo_id, t.priority, t.status, t.claimed_by, t.text) for t in card.agent_todos],
            title="Agent todos",
        )
        _more(card, "agent_todos", "loopx todo list")
    if card.conflicts:
        render.table(
            ["kind", "todo", "agent", "message"],
            [(c.kind, c.todo_id, c.agent_id, c.message) for c in card.conflicts],
            title="Conflicts",
        )
        _more(card, "conflicts", "loopx events")
    if card.ledger_attention:
        render.table(
            ["entry", "verdict", "next", "question"],
            [(a.entry_id, a.verdict, a.next, a.question) for a in card.ledger_attention],
            title="Ledger entries waiting for a person",
        )
        _more(card, "ledger_attention", "loopx ledger list")
    if card.last_fire:
        f = card.last_fire
        render.line(
            f"last fire: {f.terminal_status} ({f.stop_condition}, {f.iterations_run} iteration(s)) at {f.ended_at}"
        )
    if card.open_rollbacks:
        render.table(
            ["packet", "trigger", "waiting steps", "summary"],
            [(r.packet_id, r.trigger, ", ".join(r.pending_steps), r.summary) for r in card.open_rollbacks],
            title="Open rollback plans",
        )
        _more(card, "open_rollbacks", "loopx rollback list")
    render.table(
        ["#", "kind", "agent", "todo", "summary"],
        [(n, e.event_kind, e.agent_id, e.todo_id, e.summary) for n, e in enumerate(card.latest_events, 1)],
        title="Latest events",
    )
    _more(card, "latest_events", "loopx events")


def register(root: Group) -> None:
    @root.command("status")
    def status(
        ctx: Context,
        goal_id: str | None = context.GOAL_ID,
        agent_id: str | None = context.AGENT_FILTER,
    ) -> None:
        """The goal card: objective, todos, claims, next action per agent, latest events and outcome.

        Examples:
          loopx status -g parser -a alice
          loopx status --json            # the default goal (docs/cli.md), as JSON
        """
        c = context.get(ctx)
        with c.session() as repo:
            card = repo.status_data(c.goal(repo, goal_id), agent_id)
        render.emit(c, card, lambda data: show_card(render.attributes(data)))

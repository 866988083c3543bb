"""``loopx event append`` and ``loopx events``: the append-only rollout log."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import AppendableKind, EventKind
from loopx_git.cli.context import AGENT_FILTER, AGENT_ID, GOAL_ID, LIMIT, TODO_FILTER, TODO_REF
from loopx_git.cli.params import Context, Group, Option

app = Group(help="Append facts to the rollout event log.", no_args_is_help=True)


def _details(pairs: list[str]) -> dict:
    from loopx_git.domain.event import parse_details

    return parse_details(pairs)


@app.command("append")
def append(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    kind: AppendableKind = Option(..., "--kind", help="The kind of fact."),
    agent_id: str | None = AGENT_ID,
    todo_id: str | None = TODO_REF,
    run_id: str | None = Option(None, "--run-id"),
    case_id: str | None = Option(None, "--case-id"),
    lane_id: str | None = Option(None, "--lane-id"),
    summary: str | None = Option(None, "--summary"),
    pr_ref: str | None = Option(None, "--pr-ref", help="#N, owner/repo#N or a GitHub PR URL."),
    commit_ref: str | None = Option(None, "--commit-ref"),
    revert_of: str | None = Option(None, "--revert-of"),
    to_agent_id: str | None = Option(None, "--to-agent-id", help="Handoff target."),
    caused_by: str | None = Option(None, "--caused-by", help="Event id that caused this one."),
    source_event_id: str | None = Option(None, "--source-event-id"),
    gate_id: str | None = Option(None, "--gate-id"),
    decision_id: str | None = Option(None, "--decision-id"),
    label: list[str] = Option([], "--label"),
    artifact_ref: list[str] = Option([], "--artifact-ref"),
    detail: list[str] = Option([], "--detail", help="KEY=VALUE scalar detail (repeatable)."),
    redact: bool = context.REDACT,
) -> None:
    """Append one event (a PR merge wakes the todos waiting for it).

    Examples:
      loopx event append -g parser --kind pr_merge --pr-ref org/parser#12 --summary 'tokenizer merged'
      loopx event append -g parser --kind validation -a alice -t todo-tok --artifact-ref tests/test_tok.py
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.event_append(
            goal_id,
            kind,
            agent_id=agent_id,
            todo_id=todo_id,
            run_id=run_id,
            case_id=case_id,
            lane_id=lane_id,
            summary=summary,
            pr_ref=pr_ref,
            commit_ref=commit_ref,
            revert_of=revert_of,
            to_agent_id=to_agent_id,
            caused_by=caused_by,
            source_event_id=source_event_id,
            gate_id=gate_id,
            decision_id=decision_id,
            labels=label,
            artifact_refs=artifact_ref,
            details=_details(detail),
        )

    def text(r) -> None:
        render.line(f"appended {r.record.event_kind} {r.record.event_id}")
        for woke in r.write.events[1:]:
            render.line(f"  woke {woke.todo_id} ({woke.summary})")

    render.write_result(c, result, text)


def event_rows(events) -> None:
    render.table(
        ["#", "event", "recorded", "kind", "agent", "todo", "summary"],  # the id: what `rollback --event` takes
        [
            (
                e.lamport,
                e.event_id,
                e.recorded_at,
                e.event_kind,
                e.agent_id,
                e.todo_id,
                (e.summary or "") + ("" if e.has_join_key else "  (no join key)"),
            )
            for e in events
        ],
    )


def register(root: Group) -> None:
    @root.command("events")
    def events(
        ctx: Context,
        goal_id: str | None = GOAL_ID,
        agent_id: str | None = AGENT_FILTER,
        todo_id: str | None = TODO_FILTER,
        run_id: str | None = Option(None, "--run-id", help="Only this run."),
        case_id: str | None = Option(None, "--case-id", help="Only this case."),
        kind: EventKind | None = Option(None, "--kind", help="Only this kind."),
        since: str | None = Option(None, "--since", help="2026-01-31 or 2026-01-31T12:00:00Z (UTC)."),
        limit: int | None = LIMIT,
    ) -> None:
        """List rollout events in fold order (Lamport clock, time, id).

        Example: loopx events -g parser -t todo-tok -n 20 --format json
        """
        c = context.get(ctx)
        with c.session() as repo:
            items = repo.events(
                c.goal(repo, goal_id),
                agent_id=agent_id,
                todo_id=todo_id,
                run_id=run_id,
                case_id=case_id,
                kind=kind,
                since=since,
                limit=limit,
            )
        render.emit(c, items, event_rows)

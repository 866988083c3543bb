"""``loopx event append`` and ``loopx events``: the append-only rollout log."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import AppendableKind, ExportFormat, ListedKind
from loopx_git.cli.context import AGENT_FILTER, AGENT_ID, GOAL_ID, LIMIT, TODO_FILTER, TODO_REF
from loopx_git.cli.params import Argument, Context, Group, Option
from loopx_git.errors import BadParameter

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
    run_id: str | None = Option(None, "--run-id", help="The run it belongs to."),
    case_id: str | None = Option(None, "--case-id", help="The evaluation case it concerns."),
    benchmark_id: str | None = Option(None, "--benchmark-id", help="The benchmark it concerns."),
    lane_id: str | None = Option(None, "--lane-id", help="The lane it happened in."),
    summary: str | None = Option(None, "--summary", help="One line saying what happened."),
    pr_ref: str | None = Option(None, "--pr-ref", help="#N, owner/repo#N or a GitHub PR URL."),
    commit_ref: str | None = Option(None, "--commit-ref", help="A commit sha it concerns."),
    revert_of: str | None = Option(None, "--revert-of", help="The commit this one reverts."),
    to_agent_id: str | None = Option(None, "--to-agent-id", help="Handoff target."),
    caused_by: str | None = Option(None, "--caused-by", help="Event id that caused this one."),
    source_event_id: str | None = Option(None, "--source-event-id", help="The event this one follows from."),
    gate_id: str | None = Option(None, "--gate-id", help="The operator gate it concerns."),
    decision_id: str | None = Option(None, "--decision-id", help="The decision it records or follows."),
    label: list[str] = Option([], "--label", help="A label (repeatable)."),
    artifact_ref: list[str] = Option([], "--artifact-ref", help="A file, URL or digest it produced (repeatable)."),
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
            benchmark_id=benchmark_id,
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
    """One row an event, in fold order. ``#`` is the row's place in that order: the Lamport clock
    (in the JSON) repeats across clones that wrote offline, a place never does."""
    render.table(
        ["#", "event", "recorded", "kind", "agent", "todo", "summary"],  # the id: what `rollback --event` takes
        [
            (
                place,
                e.event_id,
                e.recorded_at,
                e.event_kind,
                e.agent_id,
                e.todo_id,
                (e.summary or "") + ("" if e.has_join_key else "  (no join key)"),
            )
            for place, e in enumerate(events, 1)
        ],
    )


events_app = Group(help="The rollout event log: list, export and import.", invoke_without_command=True)


@events_app.callback(invoke_without_command=True)
def events(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    agent_id: str | None = AGENT_FILTER,
    todo_id: str | None = TODO_FILTER,
    run_id: str | None = Option(None, "--run-id", help="Only this run."),
    case_id: str | None = Option(None, "--case-id", help="Only this case."),
    benchmark_id: str | None = Option(None, "--benchmark-id", help="Only this benchmark."),
    kind: ListedKind | None = Option(None, "--kind", help="Only this kind (an imported line's own kind too)."),
    since: str | None = Option(None, "--since", help="2026-01-31 or 2026-01-31T12:00:00Z (UTC)."),
    limit: int | None = LIMIT,
) -> None:
    """List rollout events in fold order (Lamport clock, time, id); `export` and `import` move a
    goal's log as loopx_rollout_event_v0 JSON Lines.

    Examples:
      loopx events -g parser -t todo-tok -n 20 --format json
      loopx events export -g parser --format jsonl > parser-events.jsonl
      loopx events import -g parser rollout-event-log.jsonl
    """
    if getattr(ctx, "invoked_subcommand", None):  # `events export|import`: the subcommand runs
        filters: dict[str, object] = {"goal_id": goal_id, "agent_id": agent_id, "todo_id": todo_id}
        filters |= {"run_id": run_id, "case_id": case_id, "benchmark_id": benchmark_id, "kind": kind}
        filters |= {"since": since, "limit": limit}
        given = [name for name, value in filters.items() if value is not None]
        if given:  # they would be dropped, and the subcommand would run on the default goal
            raise BadParameter(
                f"{', '.join('--' + g.replace('_', '-') for g in given)} before `{ctx.invoked_subcommand}` "
                f"would be ignored; put the options after it: loopx events {ctx.invoked_subcommand} -g GOAL ...",
                param_hint="'events'",
            )
        return
    c = context.get(ctx)
    with c.session() as repo:
        items = repo.events(
            c.goal(repo, goal_id),
            agent_id=agent_id,
            todo_id=todo_id,
            run_id=run_id,
            case_id=case_id,
            benchmark_id=benchmark_id,
            kind=kind,
            since=since,
            limit=limit,
        )
    render.emit(c, items, event_rows)


@events_app.command("export")
def export(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    fmt: ExportFormat | None = Option(
        None, "--format", "-f", help="jsonl (the default: one event per line) | json | yaml (one list)."
    ),
) -> None:
    """Write the goal's events to stdout as loopx_rollout_event_v0 records, in fold order: JSON
    Lines by default, what `loopx events import` (and upstream LoopX's rollout log) reads.

    Examples:
      loopx events export -g parser --format jsonl > parser-events.jsonl
      loopx events export -g parser --format json | jq length
    """
    import sys

    c = context.get(ctx)
    with c.session() as repo:
        goal_id = c.goal(repo, goal_id)
        chosen = fmt or ("jsonl" if c.format.value == "text" else c.format.value)
        if chosen == "jsonl":
            for line in repo.events_export(goal_id):
                sys.stdout.write(line + "\n")
            return
        items = repo.events(goal_id)
    from dataclasses import replace

    render.emit(replace(c, format=context.OutputFormat(chosen)), items, event_rows)


@events_app.command("import")
def import_(
    ctx: Context,
    path: str = Argument(..., metavar="FILE.jsonl", help="A rollout-event log (JSON Lines); - reads stdin."),
    goal_id: str | None = GOAL_ID,
    redact: bool = context.REDACT,
) -> None:
    """Append another rollout-event log to the goal: upstream LoopX's rollout-event-log.jsonl, or
    a loopx export. Each line becomes a rollout_import event (its id, time and join keys kept; it
    changes no todo, gate or handoff). Every line is checked and safety-scanned before anything is
    written; a refusal names the line and the field, and writes nothing. Then one commit per 500
    lines; event ids the goal already holds are skipped, so importing a file again adds nothing.

    Examples:
      loopx events import -g parser rollout-event-log.jsonl
      loopx events export -g parser | loopx events import -g parser-copy -
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo, render.Progress() as progress:
        goal_id = c.goal(repo, goal_id)
        report = repo.events_import(
            goal_id,
            _log_lines(path),
            progress=(lambda done, total: progress("import", done, total)) if progress else None,
        )

    def text(r) -> None:
        render.line(
            f"imported {r.imported} event(s) of {r.lines} into {r.goal_id}"
            + (f", {r.already_present} already present" if r.already_present else "")
            + (f", {r.differing} imported before with other content (skipped)" if r.differing else "")
            + (f" ({len(r.commits)} commit(s))" if r.commits else "")
        )

    render.emit(c, report, text)


def _log_lines(path: str):
    """The file's lines as bytes, refused past MAX_LOG_BYTES (a runaway file is not read to the end)."""
    import sys

    from loopx_git.domain.interop import MAX_LOG_BYTES
    from loopx_git.errors import ValidationError

    try:
        handle = sys.stdin.buffer if path == "-" else open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ValidationError(
            f"field 'file': {path!r} cannot be read ({exc.strerror or exc})", code="invalid-field"
        ) from None
    total = 0
    try:
        for raw in handle:
            total += len(raw)
            if total > MAX_LOG_BYTES:
                raise ValidationError(
                    f"field 'file': larger than {MAX_LOG_BYTES >> 20} MiB; rule: a log is imported in files of at "
                    f"most {MAX_LOG_BYTES >> 20} MiB (split it: chunks of lines import independently)",
                    code="invalid-field",
                )
            yield raw
    finally:
        if handle is not sys.stdin.buffer:
            handle.close()


def register(root: Group) -> None:
    root.add_typer(events_app, name="events")

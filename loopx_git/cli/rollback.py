"""``loopx rollback``: compensate an event or a commit; ``rollback list|show|record``."""

from __future__ import annotations

from pathlib import Path

from loopx_git.cli import context, render
from loopx_git.cli.choices import RollbackTrigger
from loopx_git.cli.context import AGENT_ID, GOAL_ID
from loopx_git.cli.params import Context, Group, Option
from loopx_git.errors import BadParameter

app = Group(
    help="Rollback as compensation: a rollback_packet_v0 plus compensating events; history stays.",
    invoke_without_command=True,
    no_args_is_help=True,
)


def _transitions(write) -> list[dict]:
    return [
        {
            "event_kind": e.event_kind,
            "todo_id": e.todo_id,
            "compensates": getattr(e, "compensates", None),
            "changes": [{"field": c.field, "from": c.before, "to": c.after} for c in e.changes],
        }
        for e in write.events
        if e.event_kind != "rollback_plan"
    ]


@app.callback()
def rollback(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    event: str | None = Option(None, "--event", help="The event to undo (with the events it caused)."),
    commit: str | None = Option(
        None,
        "--commit",
        help="A commit: of the state branch (compensated), or of the project (a gated git_revert plan and a todo).",
    ),
    reason: str | None = Option(None, "--reason", help="Why: the packet's trigger summary and decision reason."),
    trigger: RollbackTrigger = Option("mistaken_transition", "--trigger", help="What made the rollback needed."),
    dry_run: bool = Option(
        False, "--dry-run", help="Print the packet and the compensating transitions; write nothing."
    ),
    force_later_changes: bool = Option(
        False, "--force-later-changes", help="Compensate even though the entities changed since the target."
    ),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Undo an event or a commit by compensation: one commit of a rollback_packet_v0 and the events that restore
    the affected entities (a claim released, a completed todo reopened, a superseded todo restored).

    The original events stay. Rolling back an entity that changed since refuses unless --force-later-changes.
    A rollback of a rollback restores the compensated state again.

    Examples:
      loopx rollback -g parser --event evt_01h... --reason 'claimed by mistake' --dry-run
      loopx rollback -g parser --commit 1a2b3c4 --reason 'wrong todo completed'
      loopx rollback list -g parser
    """
    if ctx.invoked_subcommand is not None:  # a group callback: a subcommand runs instead
        return
    if (event is None) == (commit is None):  # judged from the command line alone: a usage error
        raise BadParameter("give exactly one of --event and --commit", param_hint="'--event' / '--commit'")
    context.check_revision(commit, field="commit")
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.rollback(
            goal_id,
            event_id=event,
            commit=commit,
            reason=reason,
            trigger=trigger,
            dry_run=dry_run,
            force_later_changes=force_later_changes,
            actor=agent_id,
        )
    if dry_run:
        from loopx_git.views.outputs import RollbackDryRun

        data = RollbackDryRun.model_validate(
            {"dry_run": True, "packet": render.to_data(result.record), "transitions": _transitions(result.write)}
        ).model_dump(mode="json", by_alias=True)

        def text(d: dict) -> None:
            render.line(f"would write rollback {d['packet']['packet_id']} ({d['packet']['trigger']['kind']}):")
            _show_transitions(d["transitions"])
            render.note("dry run: nothing written")

        render.emit(c, data, text)
        return

    def said(r) -> None:
        render.line(f"rollback {r.write.summary}")
        _show_transitions(_transitions(r.write))

    render.write_result(c, result, said)


def _show_transitions(transitions: list[dict]) -> None:
    for t in transitions:
        fields = ", ".join(
            f"{ch['field']}: {render.scalar(ch['from'])} -> {render.scalar(ch['to'])}"
            for ch in t["changes"]
            if ch["field"] != "updated_at"
        )
        what = " ".join(part for part in (t["event_kind"], t["todo_id"]) if part)
        undoes = f" (compensates {t['compensates']})" if t["compensates"] else ""  # a project revert's todo: none
        render.line(f"  {what}{undoes}: {fields}")


@app.command("list")
def list_packets(ctx: Context, goal_id: str | None = GOAL_ID) -> None:
    """Rollback packets of a goal, oldest first; `open` when a step waits for a gate or a person.

    Example: loopx rollback list -g parser
    """
    c = context.get(ctx)
    with c.session() as repo:
        packets = repo.rollbacks(c.goal(repo, goal_id))
    render.emit(
        c,
        packets,
        lambda ps: render.table(
            ["packet", "created", "trigger", "open", "steps", "summary"],
            [
                (
                    p.packet_id,
                    p.created_at,
                    p.trigger.kind,
                    "yes" if p.is_open else "no",
                    ", ".join(s.kind for s in p.plan),
                    p.trigger.summary,
                )
                for p in ps
            ],
        ),
    )


@app.command("show")
def show(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    packet_id: str = Option(..., "--packet-id", help="Packet id."),
) -> None:
    """One rollback packet. Example: loopx rollback show -g parser --packet-id rb_01h..."""
    from loopx_git.errors import NotFoundError

    c = context.get(ctx)
    with c.session() as repo:
        goal_id = c.goal(repo, goal_id)
        found = {p.packet_id: p for p in repo.rollbacks(goal_id)}
    if packet_id not in found:
        raise NotFoundError(f"packet_id '{packet_id}' is not a rollback packet of goal '{goal_id}'", code="not-found")
    render.emit(c, found[packet_id], render.fields)


@app.command("record")
def record(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    packet: Path = Option(..., "--packet", help="A rollback_packet_v0 JSON file."),  # read_input refuses (1)
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Record a packet written elsewhere, as it is. Nothing in it runs: its steps wait for their owners, and a
    history_rewrite step is never executed by loopx.

    Example: loopx rollback record -g parser --packet plans/rollback.json
    """
    from loopx_git.errors import ValidationError
    from loopx_git.model.canonical import parse_json

    raw = context.read_input(packet, field="packet", source=packet.name)
    data = parse_json(raw, field="packet", source=packet.name)
    if not isinstance(data, dict):
        raise ValidationError(
            f"field 'packet': {packet.name} holds {type(data).__name__}, not a JSON object; rule: a "
            "packet is one rollback_packet_v0 object",
            code="invalid-field",
        )
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.record_rollback(goal_id, data, actor=c.actor(repo, goal_id, agent_id))
    render.write_result(
        c,
        result,
        lambda r: render.line(
            f"recorded rollback {r.record.packet_id} ({len(r.record.pending_steps)} step(s) left to their owners)"
        ),
    )

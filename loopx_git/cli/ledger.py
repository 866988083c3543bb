"""``loopx ledger``: the loop ledger (project-telos.loop-ledger/v1) and its iteration protocol."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import ApproverCeiling, LedgerNext, LedgerWriteBack, Verdict
from loopx_git.cli.context import AGENT_ID, GOAL_ID
from loopx_git.cli.params import Argument, Context, Group, Option
from loopx_git.errors import BadParameter, Exit

app = Group(
    help="The loop ledger: durable memory of fresh-context iterations (one action each, evidence first).",
    no_args_is_help=True,
)


def _entry_rows(entries) -> None:
    render.table(
        # "belief" on screen (the option's name); the record's field keeps the seed's name, claim
        ["entry", "status", "verdict", "next", "evidence", "action", "belief"],
        [(e.id, e.status, e.verdict, e.next, len(e.evidence), e.action, e.claim) for e in entries],
    )


def _show(entry) -> None:
    data = entry.model_dump(mode="json")
    data["evidence"] = [
        f"{e['kind']}:{e['ref']}" + (f" ({e['summary']})" if e.get("summary") else "") for e in data["evidence"]
    ]
    render.fields(data)


@app.command("add")
def add(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    belief: str | None = Option(
        None, "--belief", help="Required: what is believed and must be verified (the entry's claim)."
    ),
    claim: str | None = Option(None, "--claim", hidden=True, help="The old name of --belief."),
    action: str = Option(..., "--action", help="The one action an iteration takes for it."),
    entry_id: str | None = Option(None, "--entry-id", help="Choose the id (default: generated)."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Add a pending ledger entry.

    Example: loopx ledger add -g parser --entry-id fix-ci --belief 'CI fails on a stale asset check' --action update_asset_check
    """
    # --belief, not --claim: a ledger claim is a belief to verify, nothing like `todo claim`; the old
    # name still works, hidden, so scripts written against it do not break
    if belief is not None and claim is not None and belief != claim:
        raise BadParameter("give --belief once (--claim is its old name)", param_hint="'--belief'")
    belief = belief if belief is not None else claim
    if belief is None:
        raise BadParameter("missing: what is believed and must be verified", param_hint="'--belief'")
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.ledger_add(goal_id, belief, action, entry_id=entry_id, actor=agent_id)
    render.write_result(c, result, lambda r: render.line(f"added {r.record.id} (pending): {r.record.action}"))


@app.command("list")
def list_entries(ctx: Context, goal_id: str | None = GOAL_ID) -> None:
    """Ledger entries, oldest first. Example: loopx ledger list -g parser"""
    c = context.get(ctx)
    with c.session() as repo:
        entries = repo.ledger(c.goal(repo, goal_id))
    render.emit(c, entries, _entry_rows)


@app.command("show")
def show(
    ctx: Context, goal_id: str | None = GOAL_ID, entry_id: str = Option(..., "--entry-id", help="Entry id.")
) -> None:
    """One ledger entry. Example: loopx ledger show -g parser --entry-id fix-ci"""
    c = context.get(ctx)
    with c.session() as repo:
        entry = repo.ledger_entry(c.goal(repo, goal_id), entry_id)
    render.emit(c, entry, _show)


@app.command("next")
def next_(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Select exactly one runnable entry (pending, or next=resume|retry), mark it active and print its action
    contract. Refused while this agent's previous selection has no write-back, or while an entry waits for a
    person (UNVERIFIABLE or ask_user).

    Example: loopx ledger next -g parser -a alice --format json
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.ledger_next(goal_id, agent_id=c.actor(repo, goal_id, agent_id))
    if result.record is None:
        render.emit(c, {"selected": None}, lambda d: render.line("nothing runnable in the ledger"))
        return
    contract = result.record

    def text(d) -> None:
        entry = d["entry"]
        render.line(f"selected {entry['id']} (iteration {d['iteration']}): {entry['action']}")
        render.line(f"  belief: {entry['claim']}")
        render.line(f"  rule: {d['rule']}")

    render.emit(c, contract, text)


@app.command("record")
def record(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    entry_id: str = Option(..., "--entry-id", help="Entry id."),
    status: LedgerWriteBack = Option(..., "--status", help="Where the entry stands after this iteration."),
    verdict: Verdict = Option(..., "--verdict", help="What the evidence says about the belief."),
    next_: LedgerNext = Option(..., "--next", help="What the loop does next."),
    evidence: list[str] = Option(
        [],
        "--evidence",
        help="KIND:REF, repeatable; KIND is test_path, diff_ref, "
        "command_output (sha256:<hex>), url, artifact_id or receipt_hash.",
    ),
    question: str | None = Option(None, "--question", help="With --next ask_user: what the person must answer."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Write an iteration's result back. `done` needs evidence; an UNVERIFIABLE entry becomes MATCH only with new
    evidence; UNVERIFIABLE and ask_user stop the loop until a person answers.

    Example:
      loopx ledger record -g parser --entry-id fix-ci --status done --verdict MATCH --next resume \\
        --evidence test_path:tests/test_assets.py
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.ledger_record(
            goal_id,
            entry_id,
            status=status,
            verdict=verdict,
            next=next_,
            evidence=evidence,
            agent_id=agent_id,
            question=question,
        )
    render.write_result(c, result, lambda r: render.line(f"recorded {r.write.summary}"))


def register_fire(root: Group) -> None:
    # options end at COMMAND's first word, `--` or not: what follows is COMMAND's own (its --json, -f, -v)
    @root.command("fire", context_settings={"allow_extra_args": True, "allow_interspersed_args": False})
    def fire_cmd(
        ctx: Context,
        goal_id: str | None = GOAL_ID,
        max_iterations: int | None = Option(None, "--max-iterations", help="Required: at most this many iterations."),
        timeout: float | None = Option(None, "--timeout", help="Required: seconds for the whole fire."),
        iteration_timeout: float | None = Option(
            None, "--iteration-timeout", help="Seconds for one run of COMMAND (default: --timeout)."
        ),
        approver_ceiling: ApproverCeiling | None = Option(
            None, "--approver-ceiling", help="Required: the most the iterations may approve."
        ),
        agent_id: str | None = AGENT_ID,
        command: list[str] = Argument(None, metavar="-- COMMAND [ARGS]...", help="Run once per iteration."),
    ) -> None:
        """One bounded headless run of the loop, for a scheduler: each iteration selects one ledger entry, runs
        COMMAND with its action contract (JSON) on stdin and LOOPX_LEDGER_ENTRY set, and writes COMMAND's JSON answer
        back before the next selection.

        Ends with one terminal status, recorded on the state branch: ok (exit 0), error (1), needs_attention (4),
        cancelled (130). Dangerous actions (history_rewrite, force_push, delete_branch, deploy, publish,
        credential_access) are always denied; others above --approver-ceiling too.

        Example: loopx fire -g parser --max-iterations 3 --timeout 900 --approver-ceiling workspace_write -- ./agent-step.sh
        """
        from loopx_git.fire import Bounds, exit_code, fire

        c = context.get(ctx)
        bounds = Bounds(max_iterations, timeout, iteration_timeout, approver_ceiling)
        with c.session() as repo:
            goal_id = c.goal(repo, goal_id)
            agent_id = c.actor(repo, goal_id, agent_id)
            extra = ctx.args  # type: ignore[attr-defined]  # typer's context: fire takes extra arguments, so typer parses it
            summary = fire(repo, goal_id, list(command or []) + list(extra), bounds, agent_id=agent_id)

        def text(s) -> None:
            render.line(
                f"fire {s.fire_id}: {s.terminal_status} ({s.stop_condition}) after {s.iterations_run} "
                f"iteration(s) in {s.duration_seconds:.1f} s"
            )
            for row in s.entries:
                render.line(
                    f"  {row.entry_id}: {row.outcome} -> {row.status} {row.verdict or ''} next={row.next or ''}"
                )
            for d in s.denials:
                render.line(f"  denied {d.kind} ({d.level}): {d.reason}", style="yellow")
            why = s.reason
            if why is not None:
                render.line(f"  reason: {why.message}", style="red")
                named = [f"{k} {v}" for k, v in (("code", why.code), ("field", why.field)) if v]
                if named:
                    render.line(f"    {', '.join(named)}")
                if why.rule and why.rule not in why.message:
                    render.line(f"    rule: {why.rule}")
                if why.stderr_tail:
                    render.line(f"    stderr (last {len(why.stderr_tail)} line(s), redacted):")
                    for tail_line in why.stderr_tail:
                        render.line(f"      {tail_line}")

        render.emit(c, summary, text)
        raise Exit(exit_code(summary))


@app.command("conformance")
def conformance(
    ctx: Context,
    file: str = Argument(
        ..., metavar="FILE.json", help="The seed's contract document, one case, or a `loopx fire` record (JSON)."
    ),
) -> None:
    """Check a document against the loop-ledger contract and print the seed's failure codes (exit 1 if any).

    Examples:
      loopx ledger conformance examples/loop-ledger/seed-conformance.json
      loopx --format json fire ... > fire.json; loopx ledger conformance fire.json
    """
    from pathlib import Path

    from loopx_git.errors import ValidationError
    from loopx_git.model.canonical import parse_json
    from loopx_git.views.conformance import check

    data = context.read_input(Path(file), field="file", source=file)
    document = parse_json(data, field="file", source=file)
    if not isinstance(document, dict):
        raise ValidationError(
            f"field 'file': {file} holds {type(document).__name__}, not a JSON object", code="invalid-field"
        )
    report = check(document)
    c = context.get(ctx)

    def text(r: dict) -> None:
        for name, codes in r["cases"].items():
            render.line(f"{name}: {'pass' if not codes else ', '.join(codes)}", style=None if not codes else "red")
        render.line("conformant" if r["ok"] else f"failure codes: {', '.join(r['failure_codes'])}")

    render.emit(c, report, text)
    if not report["ok"]:
        raise Exit(1)

"""``loopx protocol check``: the long-horizon protocol's acceptance checks, run against the branch."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.params import Context, Group, Option
from loopx_git.errors import Exit

app = Group(help="Check the state branch against the protocol seeds' acceptance checks.", no_args_is_help=True)


def _text(report) -> None:
    for check in report.checks:
        verdict = "FAIL" if not check.ok else ("pass" if check.applicable else "n/a ")
        render.line(f"{verdict}  {check.check_id}: {check.statement}")
        render.line(f"      {check.evidence}")
    idle = sum(1 for c in report.checks if not c.applicable)
    shown = f"{len(report.checks)} checks" + (f", {idle} not applicable yet" if idle else "")
    render.line(f"{report.seed}: {'ok' if report.ok else 'failed'} ({shown})", style="bold")


@app.command("check")
def check(
    ctx: Context,
    goal_id: str | None = Option(None, "--goal-id", "-g", help="Only this goal (default: every goal)."),
) -> None:
    """Run seed 003's acceptance checks (after verify) and print each with pass or fail and its evidence.

    Exit 1 when a check fails. Example: loopx protocol check -g parser --format json
    """
    c = context.get(ctx)
    with c.session() as repo:
        report = repo.protocol_check(goal_id)
    render.emit(c, report, _text)
    if not report.ok:
        raise Exit(1)

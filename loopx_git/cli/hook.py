"""``loopx check`` and ``loopx hook run``: the public-safety and local-state checks."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.params import Argument, Context, Group, Option
from loopx_git.errors import BadParameter, Exit

app = Group(help="Git hook entry points (the shims `loopx connect` installs call these).", no_args_is_help=True)


@app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: Context,
    name: str = Argument(..., help="pre-commit | pre-push | commit-msg | boundary | public-safety | prepush"),
    args: list[str] = Argument(
        None, help="What git or pre-commit passes: remote and URL, the message file, or file names."
    ),
    strict: bool = Option(False, "--strict", help="Warnings fail the hook too."),
) -> None:
    """Run one hook now. Findings print as `path:line:col: rule-id (severity) fp=<16hex>`, never the value.

    Exit 1 on a blocking finding (or any finding with --strict).

    Examples:
      loopx hook run pre-commit
      loopx hook run public-safety docs/setup.md notes.jsonl
    """
    from loopx_git.hooks.runner import HOOKS
    from loopx_git.hooks.runner import run as run_hook

    if name not in HOOKS:
        raise BadParameter(f"{name!r} is not one of {', '.join(HOOKS)}", param_hint="NAME")
    raise Exit(run_hook(name, list(args or []), repo=context.get(ctx).repo, strict=strict))


def register(root: Group) -> None:
    @root.command("check")
    def check(
        ctx: Context,
        strict: bool = Option(False, "--strict", help="Warnings fail the check too."),
        rules: bool = Option(False, "--rules", help="List the rules (ids, severity, what they find) and exit."),
    ) -> None:
        """Scan the tracked tree for secrets and local state (exit 1 on a blocking finding).

        Reports tracked local state, local state in the work tree that is not ignored, and every finding of the
        public-safety rules (a team's own included) in the tracked files as staged and in their paths. `loopx safety
        rules` lists the rules.

        Examples:
          loopx check
          loopx --format json check --strict
        """
        c = context.get(ctx)
        if rules:
            _list_rules(c)
            return
        from loopx_git.hooks.runner import print_report

        with c.session() as repo:
            report = repo.check()
        for note in report.notes:
            render.note(f"note: {note}")
        if c.format == context.OutputFormat.text:
            import sys

            print_report(report, sys.stdout, label="check", strict=strict)
        else:
            render.emit(c, report.to_json(strict), lambda d: None)
        if report.failed(strict):
            raise Exit(1)


def _list_rules(c) -> None:
    """``check --rules``: the shorter listing of ``loopx safety rules`` (what each finds, how it
    may be allowlisted), from the same rows."""
    from loopx_git.safety.listing import rows as rule_rows

    rows = [
        {"rule": r["rule"], "severity": r["severity"], "finds": r["description"], "allowlist": r["allowlist"]}
        for r in rule_rows()
    ]
    render.emit(
        c, rows, lambda rs: render.table(["rule", "severity", "finds", "allowlist"], [list(r.values()) for r in rs])
    )

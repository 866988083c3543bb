"""``loopx safety``: the public-safety rules, built-in and the team's own."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.params import Context, Group

app = Group(help="The public-safety rules: what each finds, and a team's own rules.", no_args_is_help=True)


@app.command("rules")
def rules(ctx: Context) -> None:
    """List every rule: id, severity, family, what it finds, and where its format is documented.

    A team's own rules ([[tool.loopx.safety.rules]] in pyproject.toml, [[rules]] in .loopx-safety.toml, the
    [[rules]] of the gitleaks configuration named by gitleaks_config) are listed too, with family `custom` and the
    file each came from; what was left out of a gitleaks configuration is said on stderr.

    Examples:
      loopx safety rules
      loopx safety rules --format json
    """
    from loopx_git.safety.listing import rows

    c = context.get(ctx)
    policy = _policy(c.repo)
    for note in policy.notes:
        render.note(f"note: {note}")
    render.emit(
        c,
        rows(policy),
        lambda rs: render.table(
            ["rule", "severity", "family", "description", "reference"],
            [[r["rule"], r["severity"], r["family"], r["description"], r["reference"]] for r in rs],
        ),
    )


def _policy(repo: str):
    """The policy the hooks use (the staged files, else the work tree's); outside any work tree,
    when no --repo was given, the built-in rules alone."""
    from loopx_git.errors import StoreError
    from loopx_git.hooks.checks import policy_of
    from loopx_git.safety.policy import DEFAULT_POLICY
    from loopx_git.store.plumbing import IndexReader

    try:
        index = IndexReader.discover(repo)
    except StoreError as exc:
        if exc.code == "no-repo" and repo == ".":
            return DEFAULT_POLICY
        raise
    try:
        return policy_of(index)
    finally:
        index.close()

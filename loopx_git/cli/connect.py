"""``loopx connect`` and ``loopx disconnect``: the state branch, the hook shims, the ignore block."""

from __future__ import annotations

import typer

from loopx_git.cli import context, render


def register(root: typer.Typer) -> None:
    @root.command("connect")
    def connect(
        ctx: typer.Context,
        state_branch: str | None = typer.Option(
            None, "--state-branch", help="Branch to keep state on (default loopx/state)."
        ),
        goal_id: str | None = typer.Option(None, "--goal-id", help="Also create this goal (with --objective)."),
        objective: str | None = typer.Option(None, "--objective"),
        hooks: bool = typer.Option(True, "--hooks/--no-hooks", help="Install the pre-commit and pre-push shims."),
        ignore: bool = typer.Option(True, "--ignore/--no-ignore", help="Keep the local-state block in .gitignore."),
        remote: str | None = typer.Option(
            None, "--remote", help="Also make `git fetch REMOTE` bring the state branch."
        ),
        redact: bool = context.REDACT,
    ) -> None:
        """Connect this repository: the state branch, the safety hooks and the .gitignore block.

        Creates the state branch if it is missing, installs the pre-commit and pre-push shims (beside any
        hooks you have; core.hooksPath is honoured) and adds the local-state block to .gitignore.
        Running it again only updates what changed.

        Under the pre-commit framework (.pre-commit-config.yaml present) it prints the hooks to add instead.

        Examples:
          loopx connect --goal-id parser --objective 'A streaming JSON parser'
          loopx connect --no-hooks
          loopx connect --remote origin && loopx sync
        """
        from loopx_git.errors import StoreError, ValidationError

        c = context.get(ctx)
        if (goal_id is None) != (objective is None):
            raise ValidationError("fields 'goal_id' and 'objective': give both or neither", code="invalid-field")
        with c.session(redact=redact) as repo:
            if remote:  # an unknown or malformed remote is refused before anything is written
                repo.remote(remote)
            result = repo.connect(state_branch=state_branch or c.state_branch)
            created = None
            if goal_id and not repo.goal_exists(goal_id):
                created = repo.goal_create(goal_id, objective or "")
            try:
                worktree = repo.connect_worktree(hooks=hooks, ignore=ignore)
            except StoreError as exc:  # the branch (and goal) stand: say so, as a rerun finishes the rest
                raise StoreError(
                    f"{exc.message}; the state branch {repo.ref} is connected"
                    + (f" and goal '{created.record.goal_id}' created" if created else "")
                    + ", the hooks and ignore block are not done yet: run `loopx connect` again once fixed",
                    code=exc.code,
                    hint=exc.hint,
                ) from exc
            tracked = repo.track(remote) if remote else None
            data = {
                "state_ref": repo.ref,
                "created": result.changed,
                "tip": repo.tip,
                "goal_created": created.record.goal_id if created else None,
                **worktree.to_json(),
                "remote": remote,
                "refspec_added": tracked,
            }

        def text(d: dict) -> None:
            render.line(("created " if d["created"] else "already connected: ") + d["state_ref"])
            if d["goal_created"]:
                render.line(f"created goal {d['goal_created']}")
            for name, did in d["hooks"].items():
                render.line(f"{name} hook: {did}")
            if d["ignore_block"]:
                render.line(f".gitignore local-state block: {d['ignore_block']}")
            if d["remote"]:
                render.line(
                    f"remote {d['remote']}: fetch refspec " + ("added" if d["refspec_added"] else "already there")
                )
            if d["framework_snippet"]:
                render.line(
                    "this repository uses the pre-commit framework; add to .pre-commit-config.yaml under repos:"
                )
                render.line(d["framework_snippet"].rstrip())

        render.emit(c, data, text)

    @root.command("disconnect")
    def disconnect(ctx: typer.Context) -> None:
        """Remove loopx's sections from the pre-commit and pre-push hooks; your own hooks stay as they were.

        The state branch and the .gitignore block stay too (local state should stay out of commits).

        Example: loopx disconnect
        """
        c = context.get(ctx)
        with c.session() as repo:
            done = repo.disconnect()
        render.emit(c, {"hooks": done}, lambda d: [render.line(f"{n} hook: {what}") for n, what in d["hooks"].items()])

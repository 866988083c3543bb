"""``loopx connect`` and ``loopx disconnect``: the state branch, the hook shims, the ignore block."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.params import Context, Group, Option


def register(root: Group) -> None:
    @root.command("connect")
    def connect(
        ctx: Context,
        state_branch: str | None = Option(
            None, "--state-branch", help="Branch to keep state on (default loopx/state)."
        ),
        goal_id: str | None = context.DEFAULT_GOAL,
        objective: str | None = Option(None, "--objective", help="Create the -g goal with this objective."),
        hooks: bool = Option(True, "--hooks/--no-hooks", help="Install the pre-commit, pre-push and commit-msg shims."),
        ignore: bool = Option(True, "--ignore/--no-ignore", help="Keep the local-state block in .gitignore."),
        remote: str | None = context.TRACK_REMOTE,
        redact: bool = context.REDACT,
    ) -> None:
        """Connect this repository: the state branch, the safety hooks and the .gitignore block.

        Creates the state branch if it is missing, installs the pre-commit, pre-push and commit-msg shims (beside any
        hooks you have; core.hooksPath is honoured) and adds the local-state block to .gitignore.
        Running it again only updates what changed.

        Under the pre-commit framework (.pre-commit-config.yaml present) it prints the hooks to add instead.

        With -g it also makes that goal the default of this clone (git config loopx.goal), so later commands
        may leave -g out; with -g and --objective it first creates the goal when it does not exist.

        Examples:
          loopx connect -g parser --objective 'A streaming JSON parser'
          loopx connect -g parser          # an existing goal: only make it the default
          loopx connect --no-hooks
          loopx connect --remote origin && loopx sync
        """
        from loopx_git.errors import StoreError, ValidationError

        c = context.get(ctx)
        if objective is not None and goal_id is None:
            raise ValidationError(
                "field 'goal_id': --objective creates a goal, so it needs -g/--goal-id; rule: give both",
                code="invalid-field",
            )
        with c.session(redact=redact) as repo:
            if goal_id is not None:  # before anything is written: the branch, its config, an adoption
                from loopx_git.defaults import check_connect_goal

                check_connect_goal(repo, goal_id, objective, state_branch=state_branch or c.state_branch, remote=remote)
            with render.Progress() as progress:  # adopting a remote's copy checks all of it first
                result = repo.connect(state_branch=state_branch or c.state_branch, remote=remote, progress=progress)
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
            if goal_id is not None:  # last: the default names a goal that exists on a connected branch
                repo.set_default_goal(goal_id)
            data = {
                "state_ref": repo.ref,
                "created": result.changed,
                "adopted_from": str(result.record) if result.record else None,
                "tip": repo.tip,
                "goal_created": created.record.goal_id if created else None,
                **worktree.to_json(),
                "remote": remote,
                "refspec_added": tracked,
            }

        def text(d: dict) -> None:
            if d["adopted_from"]:
                render.line(f"created {d['state_ref']} from {d['adopted_from']} (tip {d['tip'][:12]}, verified)")
            else:
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
        if goal_id is not None and c.format == context.OutputFormat.text:
            render.note(f"default goal of this clone: {goal_id} (git config loopx.goal)")

    @root.command("disconnect")
    def disconnect(ctx: Context) -> None:
        """Remove loopx's sections from the pre-commit, pre-push and commit-msg hooks; your own hooks stay as they were.

        The state branch and the .gitignore block stay too (local state should stay out of commits).

        Example: loopx disconnect
        """
        c = context.get(ctx)
        with c.session() as repo:
            done = repo.disconnect()

        def text(d: dict[str, dict[str, str]]) -> None:
            for name, what in d["hooks"].items():
                render.line(f"{name} hook: {what}")

        render.emit(c, {"hooks": done}, text)

"""``loopx connect``: create the state branch (idempotent), optionally with a first goal."""
from __future__ import annotations

from typing import Optional

import typer

from loopx_git.cli import context, render


def register(root: typer.Typer) -> None:
    @root.command("connect")
    def connect(
        ctx: typer.Context,
        state_branch: Optional[str] = typer.Option(None, "--state-branch", help="Branch to keep state on (default loopx/state)."),
        goal_id: Optional[str] = typer.Option(None, "--goal-id", help="Also create this goal (with --objective)."),
        objective: Optional[str] = typer.Option(None, "--objective"),
        redact: bool = context.REDACT,
    ) -> None:  # fmt: skip
        """Connect this repository: create the state branch if it is missing. Running it again changes nothing.

        Example: loopx connect --goal-id parser --objective 'A streaming JSON parser'
        """
        from loopx_git.errors import ValidationError

        c = context.get(ctx)
        if (goal_id is None) != (objective is None):
            raise ValidationError("fields 'goal_id' and 'objective': give both or neither", code="invalid-field")
        with c.session(redact=redact) as repo:
            result = repo.connect(state_branch=state_branch or c.state_branch)
            created = None
            if goal_id and not repo.goal_exists(goal_id):
                created = repo.goal_create(goal_id, objective or "")
            data = {"state_ref": repo.ref, "created": result.changed, "tip": repo.tip,
                    "goal_created": created.record.goal_id if created else None}  # fmt: skip

        def text(d: dict) -> None:
            render.line(("created " if d["created"] else "already connected: ") + d["state_ref"])
            if d["goal_created"]:
                render.line(f"created goal {d['goal_created']}")

        render.emit(c, data, text)

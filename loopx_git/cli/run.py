"""``loopx refresh-state`` (write a run record) and ``loopx history`` (read run history)."""

from __future__ import annotations

import typer

from loopx_git.cli import context, render


def register(root: typer.Typer) -> None:
    @root.command("refresh-state")
    def refresh_state(
        ctx: typer.Context,
        goal_id: str = typer.Option(..., "--goal-id", "-g"),
        classification: str = typer.Option(..., "--classification", help="A slug, e.g. progress, blocked, no_op."),
        delivery_outcome: str | None = typer.Option(
            None, "--delivery-outcome", help="surface_only | outcome_gap | outcome_progress | primary_goal_outcome"
        ),
        agent_id: str | None = typer.Option(None, "--agent-id"),
        todo_id: str | None = typer.Option(None, "--todo-id"),
        recommended_action: str | None = typer.Option(None, "--recommended-action"),
        delivery_batch_scale: int | None = typer.Option(None, "--delivery-batch-scale", min=0),
        evidence: list[str] = typer.Option([], "--evidence"),
        redact: bool = context.REDACT,
    ) -> None:
        """Record one run in the run history.

        Example: loopx refresh-state -g parser --classification progress --delivery-outcome outcome_progress --agent-id alice
        """
        c = context.get(ctx)
        with c.session(redact=redact) as repo:
            result = repo.refresh_state(
                goal_id,
                classification,
                delivery_outcome=delivery_outcome,
                agent_id=agent_id,
                todo_id=todo_id,
                recommended_action=recommended_action,
                delivery_batch_scale=delivery_batch_scale,
                evidence=evidence,
            )
        render.write_result(
            c,
            result,
            lambda r: render.line(
                f"recorded run {r.record.run_id}: {r.record.classification}"
                + (f" ({r.record.delivery_outcome})" if r.record.delivery_outcome else "")
            ),
        )

    @root.command("history")
    def history(
        ctx: typer.Context,
        goal_id: str = typer.Option(..., "--goal-id", "-g"),
        agent_id: str | None = typer.Option(None, "--agent-id"),
        limit: int | None = typer.Option(None, "--limit", min=1),
    ) -> None:
        """Run history, newest first. Example: loopx history -g parser --agent-id alice --limit 5"""
        c = context.get(ctx)
        with c.session() as repo:
            runs = repo.history(goal_id, agent_id=agent_id, limit=limit)
        render.emit(
            c,
            runs,
            lambda rs: render.table(
                ["run", "generated", "agent", "todo", "classification", "outcome"],
                [(r.run_id, r.generated_at, r.agent_id, r.todo_id, r.classification, r.delivery_outcome) for r in rs],
            ),
        )

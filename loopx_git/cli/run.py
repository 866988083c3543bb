"""``loopx refresh-state`` (write a run record) and ``loopx history`` (read run history)."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import MAX_BATCH_SCALE, DeliveryOutcome, ProgressResultClass, ResourceSetup
from loopx_git.cli.context import AGENT_FILTER, AGENT_ID, GOAL_ID, LIMIT, TODO_REF
from loopx_git.cli.params import Context, Group, Option


def register(root: Group) -> None:
    @root.command("refresh-state")
    def refresh_state(
        ctx: Context,
        goal_id: str | None = GOAL_ID,
        classification: str = Option(..., "--classification", help="A slug, e.g. progress, blocked, no_op."),
        delivery_outcome: DeliveryOutcome | None = Option(None, "--delivery-outcome", help="What the run delivered."),
        agent_id: str | None = AGENT_ID,
        todo_id: str | None = TODO_REF,
        recommended_action: str | None = Option(None, "--recommended-action", help="What to do next."),
        delivery_batch_scale: int | None = Option(
            None, "--delivery-batch-scale", min=0, max=MAX_BATCH_SCALE, help="How large the delivered batch was."
        ),
        evidence: list[str] = Option([], "--evidence", help="A public-safe evidence ref (repeatable)."),
        run_id: str | None = Option(None, "--run-id", help="Choose the run id (default: generated)."),
        resource_setup: ResourceSetup | None = Option(
            None,
            "--resource-setup",
            help="How setting up an external resource ended; failed with a usable resource is recorded as "
            "partial_success.",
        ),
        usable_resource: list[str] = Option(
            [],
            "--usable-resource",
            help="A usable resource the setup left: a relative ref or opaque id (repeatable, at most 12).",
        ),
        progress_result_class: ProgressResultClass | None = Option(
            None, "--progress-result-class", help="Typed progress: what the run's work came to."
        ),
        progress_work_item_id: str | None = Option(None, "--progress-work-item-id", help="The work item (a todo id)."),
        progress_surface_id: str | None = Option(None, "--progress-surface-id", help="The surface it worked on."),
        progress_hypothesis_id: str | None = Option(None, "--progress-hypothesis-id", help="The hypothesis tried."),
        progress_probe_kind: str | None = Option(None, "--progress-probe-kind", help="The kind of probe used."),
        progress_blocker_id: str | None = Option(None, "--progress-blocker-id", help="The concrete blocker met."),
        progress_coverage_scope_id: str | None = Option(
            None, "--progress-coverage-scope-id", help="The coverage scope a terminal result closes."
        ),
        progress_evidence_id: list[str] = Option(
            [], "--progress-evidence-id", help="An evidence id behind the result (repeatable, at most 12)."
        ),
        progress_coverage_complete: bool = Option(
            False, "--progress-coverage-complete", help="The coverage scope is covered completely."
        ),
        replan_obligation_id: str | None = Option(
            None,
            "--replan-obligation-id",
            help="The open replan obligation this write-back settles (quota should-run names it); not with -t.",
        ),
        turn_instance_id: str | None = Option(
            None,
            "--turn-instance-id",
            help="The turn this write-back closes (the one quota should-run was asked for); a retirement "
            "of an invalidated capability duty names it.",
        ),
        redact: bool = context.REDACT,
    ) -> None:
        """Record one run in the run history, with its typed progress (typed_progress_observation_v0).

        Examples:
          loopx refresh-state -g parser --classification progress --delivery-outcome outcome_progress -a alice
          loopx refresh-state -g parser -a alice --classification no_change --progress-result-class unchanged \\
            --progress-work-item-id todo-tok --progress-surface-id tokenizer --progress-evidence-id ci-1234
        """
        c = context.get(ctx)
        with c.session(redact=redact) as repo:
            goal_id = c.goal(repo, goal_id)
            agent_id = c.actor(repo, goal_id, agent_id)
            result = repo.refresh_state(
                goal_id,
                classification,
                delivery_outcome=delivery_outcome,
                agent_id=agent_id,
                todo_id=todo_id,
                recommended_action=recommended_action,
                delivery_batch_scale=delivery_batch_scale,
                evidence=evidence,
                run_id=run_id,
                resource_setup=resource_setup,
                usable_resources=usable_resource,
                progress_result_class=progress_result_class,
                progress_work_item_id=progress_work_item_id,
                progress_surface_id=progress_surface_id,
                progress_hypothesis_id=progress_hypothesis_id,
                progress_probe_kind=progress_probe_kind,
                progress_blocker_id=progress_blocker_id,
                progress_coverage_scope_id=progress_coverage_scope_id,
                progress_evidence_ids=progress_evidence_id,
                progress_coverage_complete=progress_coverage_complete,
                replan_obligation_id=replan_obligation_id,
                turn_instance_id=turn_instance_id,
            )

        def said(r) -> None:
            run = r.record
            if getattr(run, "closeout_kind", None) is not None:  # the retirement again: its closeout
                render.line(
                    f"capability duty {run.obligation_id} was retired by run {run.run_id} ({run.closeout_kind}); "
                    "nothing written"
                )
                return
            render.line(
                f"recorded run {run.run_id}: {run.classification}"
                + (f" ({run.delivery_outcome})" if run.delivery_outcome else "")
            )
            if run.progress is not None:
                render.line(f"  typed progress: {run.progress.result_class} (fingerprint {run.progress.fingerprint})")
            if run.capability_retirement is not None:
                retired = run.capability_retirement
                render.line(
                    f"  retired capability duty {retired.obligation_id} ({retired.closeout_kind}): "
                    + "; ".join(retired.invalidated_by)
                )
            if run.resource_setup is None:
                return
            usable = ", ".join(run.usable_resources)
            if run.resource_setup != resource_setup:
                render.line(
                    f"  resource setup: {resource_setup}, recorded as {run.resource_setup}: "
                    f"a usable resource is left ({usable})"
                )
            else:
                render.line(f"  resource setup: {run.resource_setup}" + (f" ({usable})" if usable else ""))

        render.write_result(c, result, said)

    @root.command("history")
    def history(
        ctx: Context,
        goal_id: str | None = GOAL_ID,
        agent_id: str | None = AGENT_FILTER,
        limit: int | None = LIMIT,
        evidence_ref: str | None = Option(
            None, "--evidence-ref", help="Exactly the run a replan context's evidence_ref names (with -a)."
        ),
    ) -> None:
        """Run history, newest first.

        Examples:
          loopx history -g parser -a alice -n 5
          loopx --format json history --goal-id parser --agent-id alice --evidence-ref evr:run_01...:0123456789abcdef
        """
        c = context.get(ctx)
        with c.session() as repo:
            runs = repo.history(c.goal(repo, goal_id), agent_id=agent_id, limit=limit, evidence_ref=evidence_ref)
        render.emit(
            c,
            runs,
            lambda rs: render.table(
                ["run", "generated", "agent", "todo", "classification", "outcome", "resource setup", "rewards"],
                [
                    (
                        r.run_id,
                        r.generated_at,
                        r.agent_id,
                        r.todo_id,
                        r.classification,
                        r.delivery_outcome,
                        (r.resource_setup or "") + (f": {', '.join(r.usable_resources)}" if r.usable_resources else ""),
                        "; ".join(f"{w.polarity}: {w.label}" for w in r.rewards),
                    )
                    for r in rs
                ],
            ),
        )

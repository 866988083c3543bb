"""``loopx reward``: a person's judgment of a run, recorded beside it (never a grant of authority)."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import LessonKind, RewardPolarity
from loopx_git.cli.context import AGENT_ID, GOAL_ID
from loopx_git.cli.params import Context, Group, Option

app = Group(
    help="Human rewards: a person's judgment of a run, shown beside it in history; it grants no authority.",
    no_args_is_help=True,
)


def _rows(rewards) -> None:
    render.table(
        ["reward", "run", "judged", "polarity", "label", "reason", "lesson"],
        [
            (
                r.reward_id,
                r.run_id or "-",
                r.judged_at,
                r.polarity,
                r.label,
                r.reason,
                f"{r.lesson.kind}: {r.lesson.summary}" if r.lesson else "",
            )
            for r in rewards
        ],
    )


@app.command("add")
def add(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    run_id: str | None = Option(None, "--run-id", help="The judged run (default: bound to the time it is given)."),
    label: str = Option(..., "--label", help="The decision label (accept, needs_rework, ...)."),
    polarity: RewardPolarity = Option(..., "--polarity", help="How the run was judged."),
    reason: str = Option(..., "--reason", help="Why (public-safe summary)."),
    follow_up: str | None = Option(None, "--follow-up", help="What should follow."),
    lesson_kind: LessonKind | None = Option(None, "--lesson-kind", help="What kind of lesson it teaches."),
    lesson_summary: str | None = Option(None, "--lesson-summary", help="The lesson (with --lesson-kind)."),
    lesson_avoid: list[str] = Option([], "--lesson-avoid", help="What to avoid next time (repeatable)."),
    lesson_prefer: list[str] = Option([], "--lesson-prefer", help="What to prefer next time (repeatable)."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Record a judgment of a run: label, polarity, reason, optional lesson.

    A reward is an overlay on the run history: it changes no todo, claim or gate.

    Example: loopx reward add -g parser --run-id run_01 --label accept --polarity positive --reason 'tests cover the edge cases'
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.reward_add(
            goal_id,
            run_id=run_id,
            label=label,
            polarity=polarity,
            reason=reason,
            follow_up=follow_up,
            lesson_kind=lesson_kind,
            lesson_summary=lesson_summary,
            lesson_avoid=lesson_avoid,
            lesson_prefer=lesson_prefer,
            actor=c.actor(repo, goal_id, agent_id),
        )
    render.write_result(c, result, lambda r: render.line(f"recorded reward {r.record.reward_id}: {r.write.summary}"))


@app.command("list")
def list_rewards(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    run_id: str | None = Option(None, "--run-id", help="Only the rewards of this run."),
) -> None:
    """The goal's rewards, newest first. Example: loopx reward list -g parser --run-id run_01"""
    c = context.get(ctx)
    with c.session() as repo:
        rewards = repo.rewards(c.goal(repo, goal_id), run_id=run_id)
    render.emit(c, rewards, _rows)

"""Human rewards: a person's judgment of a run, recorded beside it. A reward is bound to a run that
exists (or, without one, to the time it was given) and changes nothing else: no todo, claim, gate or
agent's authority moves because of it."""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.write import EventMaker, Write, build, check_actor, given, many
from loopx_git.errors import NotFoundError, ValidationError
from loopx_git.model.ids import new_id
from loopx_git.model.reward import HumanReward, RewardAdd
from loopx_git.model.state import GoalState, State, listed, require_goal, require_run


def require_reward(gs: GoalState, reward_id: str) -> HumanReward:
    reward = gs.rewards.get(reward_id)
    if reward is None:
        raise NotFoundError(
            f"reward_id '{reward_id}': no such reward in goal '{gs.goal_id}' (rewards: {listed(gs.rewards)})",
            code="not-found",
            hint=f"`loopx reward list --goal-id {gs.goal_id}` lists them",
        )
    return reward


def _lesson(
    kind: str | None, summary: str | None, avoid: Sequence[str], prefer: Sequence[str]
) -> dict[str, object] | None:
    if kind is None and summary is None and not avoid and not prefer:
        return None
    if kind is None or summary is None:
        missing = "lesson_kind" if kind is None else "lesson_summary"
        raise ValidationError(
            f"field '{missing}': a lesson has a kind and a summary; rule: give --lesson-kind and --lesson-summary "
            "together (--lesson-avoid and --lesson-prefer add to them)",
            code="invalid-field",
        )
    return {"kind": kind, "summary": summary, "avoid": list(avoid), "prefer": list(prefer)}


def add_reward(
    state: State,
    *,
    goal_id: str,
    label: str,
    polarity: str,
    reason: str,
    run_id: str | None = None,
    follow_up: str | None = None,
    lesson_kind: str | None = None,
    lesson_summary: str | None = None,
    lesson_avoid: Sequence[str] = (),
    lesson_prefer: Sequence[str] = (),
    actor: str | None = None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    many(lesson_avoid=lesson_avoid, lesson_prefer=lesson_prefer)
    given(run_id=run_id, lesson_kind=lesson_kind, lesson_summary=lesson_summary)
    check_actor(gs, actor)
    if run_id is not None:
        require_run(gs, run_id)
    reward_id = new_id("reward")
    reward = build(
        HumanReward,
        {
            "reward_id": reward_id,
            "run_id": run_id,
            "judged_at": now,
            "label": label,
            "polarity": polarity,
            "reason": reason,
            "follow_up": follow_up,
            "lesson": _lesson(lesson_kind, lesson_summary, lesson_avoid, lesson_prefer),
            "given_by": actor,
        },
        what="reward",
    )
    event = EventMaker(gs, now).make(
        RewardAdd,
        goal_id=goal_id,
        run_id=run_id,
        agent_id=actor,
        summary=f"reward {reward.polarity} ({reward.label})" + (f" for run {run_id}" if run_id else ""),
        reward=reward,
    )
    bound = f"run {run_id}" if run_id else f"judged at {now}"
    return Write("reward add", f"{reward.polarity} {reward.label} for {bound}", goal_id, actor, [event], result=reward)

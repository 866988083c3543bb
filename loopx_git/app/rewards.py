"""Human rewards: a person's judgment of a run, recorded and listed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_git.app.core import Core
from loopx_git.app.result import WriteResult

if TYPE_CHECKING:
    from collections.abc import Sequence


class Rewards(Core):
    def reward_add(
        self,
        goal_id: str,
        *,
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
        now: str | None = None,
    ) -> WriteResult:
        """Record a person's judgment of run ``run_id`` (or, without one, of now); ``record`` is the reward."""
        from loopx_git.domain import reward as ops

        return self.apply(
            lambda s: ops.add_reward(
                s,
                goal_id=goal_id,
                label=label,
                polarity=polarity,
                reason=reason,
                run_id=run_id,
                follow_up=follow_up,
                lesson_kind=lesson_kind,
                lesson_summary=lesson_summary,
                lesson_avoid=lesson_avoid,
                lesson_prefer=lesson_prefer,
                actor=actor,
                now=self._now(now),
            )
        )

    def rewards(self, goal_id: str, *, run_id: str | None = None) -> list:
        """The goal's rewards, newest first (``run_id``: those of one run)."""
        gs = self._goal_state(goal_id)
        found = sorted(gs.rewards.values(), key=lambda r: (r.judged_at, r.reward_id), reverse=True)
        return [r for r in found if run_id is None or r.run_id == run_id]

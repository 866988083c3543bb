"""Quota: whether a turn should run, and the slot spent after its write-back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_git.app.core import Core
from loopx_git.app.result import WriteResult

if TYPE_CHECKING:
    pass


class Quota(Core):
    def should_run(self, goal_id: str, agent_id: str, *, turn_instance_id: str | None = None):
        """``interaction_contract_v0`` and ``agent_lane_next_action_v0`` for this agent (read-only),
        with ``agent_workspace_guard_v1`` against the branch this work tree has checked out."""
        from loopx_git.views.quota import should_run

        state = self.state()
        branch = self.git.current_branch()
        return self._with_evidence(
            state,
            goal_id,
            agent_id,
            lambda evidence: should_run(
                state, goal_id, agent_id, turn_instance_id, branch=branch, agent_evidence=evidence
            ),
        )

    def spend_slot(self, goal_id: str, agent_id: str, run_id: str, *, now: str | None = None) -> WriteResult:
        """Spend a compute slot after run ``run_id``, which must be this agent's compact write-back."""
        from loopx_git.domain import quota as ops

        return self.apply(
            lambda s: ops.spend_slot(s, goal_id=goal_id, agent_id=agent_id, run_id=run_id, now=self._now(now))
        )

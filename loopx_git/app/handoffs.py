"""Handoffs: prepared by the agent that holds the todos, adopted by the one it names, or cancelled."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_git.app.core import Core
from loopx_git.app.result import WriteResult

if TYPE_CHECKING:
    from collections.abc import Sequence


class Handoffs(Core):
    def handoff_prepare(
        self,
        goal_id: str,
        handoff_id: str,
        *,
        from_agent_id: str,
        to_agent_id: str,
        stop_condition: str,
        todo_ids: Sequence[str] = (),
        scope: str | None = None,
        evidence_refs: Sequence[str] = (),
        review_required: bool = True,
        actor: str | None = None,
        as_operator: bool = False,
        now: str | None = None,
    ) -> WriteResult:
        """The source agent offers the todos it holds to ``to_agent_id``; ``record`` is the handoff.
        ``actor``: the agent this is done as, refused unless it is the source (None: the source);
        ``as_operator``: a person prepares it for the source, and the event says so."""
        from loopx_git.domain import handoff as ops

        return self.apply(
            lambda s: ops.prepare_handoff(
                s,
                goal_id=goal_id,
                handoff_id=handoff_id,
                from_agent_id=from_agent_id,
                to_agent_id=to_agent_id,
                todo_ids=todo_ids,
                scope=scope,
                stop_condition=stop_condition,
                evidence_refs=evidence_refs,
                review_required=review_required,
                actor=actor,
                as_operator=as_operator,
                now=self._now(now),
            )
        )

    def handoff_adopt(self, goal_id: str, handoff_id: str, agent_id: str, *, now: str | None = None) -> WriteResult:
        """The target takes the handoff: every claim moves to it in this one commit."""
        from loopx_git.domain import handoff as ops

        return self.apply(
            lambda s: ops.adopt_handoff(
                s, goal_id=goal_id, handoff_id=handoff_id, agent_id=agent_id, now=self._now(now)
            )
        )

    def handoffs(self, goal_id: str, *, agent_id: str | None = None, status: str | None = None) -> list:
        """The goal's handoffs, oldest first (``agent_id``: from or to it; ``status``: only those in it)."""
        gs = self._goal_state(goal_id)
        found = sorted(gs.handoffs.values(), key=lambda h: (h.prepared_at, h.handoff_id))
        return [
            h
            for h in found
            if (agent_id is None or agent_id in (h.from_agent_id, h.to_agent_id))
            and (status is None or h.status == status)
        ]

    def handoff(self, goal_id: str, handoff_id: str):
        from loopx_git.domain.handoff import require_handoff

        return require_handoff(self._goal_state(goal_id), handoff_id)

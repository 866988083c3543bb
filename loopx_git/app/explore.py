"""The explore graph and research observations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.app.core import Core, answer_key, whole
from loopx_git.app.result import WriteResult

if TYPE_CHECKING:
    from collections.abc import Sequence

    from loopx_git.model.state import State


class Explore(Core):
    def explore_node_add(
        self,
        goal_id: str,
        node_id: str,
        *,
        kind: str,
        title: str,
        parent_id: str | None = None,
        evidence_ids: Sequence[str] = (),
        status: str | None = None,
        reason: str | None = None,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.add_node(
                s,
                goal_id=goal_id,
                node_id=node_id,
                kind=kind,
                title=title,
                parent_id=parent_id,
                evidence_ids=evidence_ids,
                status=status,
                reason=reason,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_node_update(
        self,
        goal_id: str,
        node_id: str,
        *,
        status: str | None = None,
        reason: str | None = None,
        evidence_ids: Sequence[str] = (),
        title: str | None = None,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """A new revision of the node. Anything but closing it (resolved or dead_end) leaves its
        observation stale until a fresh one is recorded."""
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.update_node(
                s,
                goal_id=goal_id,
                node_id=node_id,
                status=status,
                reason=reason,
                evidence_ids=evidence_ids,
                title=title,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_edge_add(
        self,
        goal_id: str,
        from_node_id: str,
        to_node_id: str,
        edge_type: str,
        *,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.add_edge(
                s,
                goal_id=goal_id,
                from_node_id=from_node_id,
                to_node_id=to_node_id,
                edge_type=edge_type,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_finding_add(
        self,
        goal_id: str,
        node_id: str,
        finding_id: str,
        *,
        state: str,
        evidence_ids: Sequence[str],
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.add_finding(
                s,
                goal_id=goal_id,
                node_id=node_id,
                finding_id=finding_id,
                finding_state=state,
                evidence_ids=evidence_ids,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_observe(
        self,
        goal_id: str,
        observation: bytes | str | dict[str, Any],
        *,
        agent_id: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """Record a typed_research_observation_v0 envelope (JSON text or data) on its node. The record
        is a ``research_observation_receipt_v0``: an exact replay writes nothing and says so."""
        from loopx_git.domain import observe as ops

        envelope = ops.parse_observation(observation)
        result = self.apply(
            lambda s: ops.observe(s, goal_id=goal_id, observation=envelope, agent_id=agent_id, now=self._now(now))
        )
        result.write.result = result.record.model_copy(update={"commit": result.commit})
        return result

    def explore_nodes(self, goal_id: str, *, kind: str | None = None, status: str | None = None) -> list:
        gs = self._goal_state(goal_id)
        return [
            n
            for _, n in sorted(gs.explore.items())
            if (kind is None or n.kind == kind) and (status is None or n.status == status)
        ]

    def explore_node(self, goal_id: str, node_id: str):
        from loopx_git.domain.explore import require_node

        return require_node(self._goal_state(goal_id), node_id)

    def explore_summary(self, goal_id: str, agent_id: str | None = None):
        """research_frontier_v0: totals, the composition gaps' shadow states, at most three cards; with
        the live gate on, the selected agent's research_execution_frontier too."""
        from loopx_git.views.explore import summary

        return summary(self.state(), goal_id, agent_id)

    def explore_summary_data(self, goal_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """``explore summary``'s JSON, answered from the answers kept by tip when it was asked for at
        this tip before (as ``status_data``). Shared data: do not change it."""
        from loopx_git import upkeep

        def compute(state: State) -> dict[str, Any]:
            from loopx_git.views.explore import summary

            return summary(state, goal_id, agent_id).model_dump(mode="json")

        data = self.answer(answer_key("explore-summary", goal_id, agent_id), compute)
        self.note(upkeep.read_warning(whole(self)))
        return data

    def explore_graph(self, goal_id: str, graph_format: str) -> str:
        """The goal's explore graph as mermaid, dot or JSON text."""
        from loopx_git.views.explore import graph

        return graph(self.state(), goal_id, graph_format)

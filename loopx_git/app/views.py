"""The read-only projections: the goal card, the brief, packets, the dashboard; answered from the answers kept by tip where they can be."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopx_git.app.core import Core, answer_key, whole

if TYPE_CHECKING:
    from loopx_git.model.state import State


class Views(Core):
    def status(self, goal_id: str, agent_id: str | None = None):
        """The goal card. When the branch moved past the last verified tip, what arrived is checked
        too (records only, no documents): a card built on records edited by hand says so."""
        from loopx_git import upkeep
        from loopx_git.views.status import goal_card

        card = goal_card(self.state(), goal_id, agent_id)
        self.note(upkeep.read_warning(whole(self)))
        return card

    def status_data(self, goal_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """The goal card as the JSON data ``status --format json`` prints (``GoalCard.model_dump``),
        answered from the cache when this tip's card was asked for before: the command line's read,
        which then loads no models at all. The data is shared: do not change it."""
        from loopx_git import upkeep

        def compute(state: State) -> dict[str, Any]:
            from loopx_git.views.status import goal_card

            return goal_card(state, goal_id, agent_id).model_dump(mode="json")

        data = self.answer(answer_key("status", goal_id, agent_id), compute)
        self.note(upkeep.read_warning(whole(self)))
        return data

    def prime(self, goal_id: str, agent_id: str | None = None):
        """The brief a fresh agent context reads first (``views/prime.py``): at most 4 KiB."""
        from loopx_git.views.prime import prime

        return prime(self.state(), goal_id, agent_id, self.git.current_branch())

    def prime_data(self, goal_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """``prime``'s JSON, kept per tip and branch (an agent asks for it at the start of every turn).
        Shared data: do not change it."""
        return self.projection_data("prime", goal_id, agent_id, self.git.current_branch())

    def dashboard(self, goal_ids: list[str] | None, out: Path, *, commit_url: str | None = None):
        """Write the static dashboard of ``goal_ids`` (None: every goal) into the folder ``out``
        (``dashboard/build.py``); refused, with nothing written, on a blocking safety finding."""
        from loopx_git import upkeep
        from loopx_git.dashboard.build import write_dashboard

        result = write_dashboard(whole(self), goal_ids, out, commit_url=commit_url)
        self.note(upkeep.read_warning(whole(self)))  # as status: a page of records changed by hand says so
        return result

    def review_packet(self, goal_id: str, agent_id: str | None = None, *, handoff_only: bool = False):
        """The operator's packet for one goal: attention items, gates, handoffs, evidence, rollback candidates."""
        from loopx_git.views.packets import review_packet

        state = self.state()
        return self._with_evidence(
            state,
            goal_id,
            None if handoff_only else agent_id,
            lambda evidence: review_packet(
                state, goal_id, agent_id, handoff_only=handoff_only, agent_evidence=evidence
            ),
        )

    def manager(self):
        """global_manager_command_v0: progress, gates, todos, risks and next actions of every goal."""
        from loopx_git.views.packets import manager

        return manager(self.state())

    def projection_data(self, name: str, *args: str | None) -> dict[str, Any]:
        """A read-only projection as the JSON its command prints, answered from the answers kept by tip
        when it was asked for at this tip before (as ``status_data``): ``should-run`` (goal, agent),
        ``review-packet`` (goal, agent, "handoff-only" or None), ``prime`` (goal, agent or None, branch),
        ``todo-index``, ``manager``. The
        data is shared: do not change it."""
        from loopx_git import upkeep

        def compute(state: State) -> dict[str, Any]:
            from loopx_git.views import packets, quota

            if name == "should-run":  # (goal, agent, the work tree's branch)
                goal, agent = args[0] or "", args[1] or ""
                return self._with_evidence(
                    state,
                    goal,
                    agent,
                    lambda evidence: quota.should_run(state, goal, agent, branch=args[2], agent_evidence=evidence),
                ).model_dump(mode="json")
            if name == "review-packet":
                scope, handoff_only = args[1], bool(args[2])
                found = self._with_evidence(
                    state,
                    args[0] or "",
                    None if handoff_only else scope,
                    lambda evidence: packets.review_packet(
                        state, args[0] or "", scope, handoff_only=handoff_only, agent_evidence=evidence
                    ),
                )
                return found.model_dump(mode="json")
            if name == "prime":  # (goal, agent or None, the work tree's branch)
                from loopx_git.views.prime import prime

                return prime(state, args[0] or "", args[1], args[2]).model_dump(mode="json")
            if name == "todo-index":
                return packets.todo_index(state).model_dump(mode="json")
            if name == "manager":
                return packets.manager(state).model_dump(mode="json")
            raise ValueError(f"no projection {name!r}")

        data = self.answer(answer_key(name, *args), compute)
        self.note(upkeep.read_warning(whole(self)))
        return data

    def should_run_data(self, goal_id: str, agent_id: str) -> dict[str, Any]:
        """``quota should-run``'s JSON for this work tree (its checked-out branch is part of the
        question: the answer is kept per branch). Shared data: do not change it."""
        return self.projection_data("should-run", goal_id, agent_id, self.git.current_branch())

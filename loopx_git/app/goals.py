"""Goals and their agents: written, read, and the defaults a caller falls back on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git import defaults
from loopx_git.app.core import Core, OnFirstUse, answer_key, whole
from loopx_git.app.result import WriteResult

goal_ops = OnFirstUse("loopx_git.domain.goal")

if TYPE_CHECKING:
    from loopx_git.model.state import State


class Goals(Core):
    def goal_create(
        self, goal_id: str, objective: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: goal_ops.create_goal(
                s, goal_id=goal_id, objective=objective, actor=actor, now=self._now(now), **kw
            )
        )

    def goal_update(self, goal_id: str, *, actor: str | None = None, now: str | None = None, **kw: Any) -> WriteResult:
        return self.apply(lambda s: goal_ops.update_goal(s, goal_id=goal_id, actor=actor, now=self._now(now), **kw))

    def goal_configure(
        self,
        goal_id: str,
        *,
        execute: bool = False,
        actor: str | None = None,
        now: str | None = None,
        **kw: Any,
    ) -> WriteResult:
        """The goal's explore policy (``explore_harness_enabled``, ``explore_composition_mode``,
        ``explore_composition_scope_id``): a preview of what would change, written only with
        ``execute``. The record says before and after, whether it changed and whether it was written."""
        from dataclasses import replace

        result = self._write_or_preview(
            not execute,
            lambda s: goal_ops.configure_goal(s, goal_id=goal_id, actor=actor, now=self._now(now), **kw),
        )
        change = result.record.model_copy(update={"executed": execute, "commit": result.commit})
        return replace(result, write=replace(result.write, result=change))

    def agent_register(
        self, goal_id: str, agent_id: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: goal_ops.register_agent(
                s, goal_id=goal_id, agent_id=agent_id, actor=actor, now=self._now(now), **kw
            )
        )

    def goals(self) -> list:
        return [g.goal for g in sorted(self.state().goals.values(), key=lambda g: g.goal_id) if g.goal is not None]

    def goal_exists(self, goal_id: str) -> bool:
        return goal_id in self.goal_ids()

    def goal_ids(self) -> list[str]:
        """The ids of the goals on the branch, sorted (an answer cached by tip: no fold to read them)."""
        return list(
            self.answer(answer_key("goal-ids"), lambda state: sorted(g for g, gs in state.goals.items() if gs.goal))
        )

    def agent_ids(self, goal_id: str) -> list[str] | None:
        """The agents registered on ``goal_id``, sorted; None when there is no such goal (cached by tip)."""

        def compute(state: State) -> list[str] | None:
            gs = state.goals.get(goal_id)
            return sorted(gs.agents) if gs is not None and gs.goal is not None else None

        found = self.answer(answer_key("agent-ids", goal_id), compute)
        return None if found is None else list(found)

    def resolve_goal(
        self, goal_id: str | None = None, *, env: str | None = None, check: bool = True
    ) -> defaults.Resolved:
        """The goal a caller means, with its source: ``goal_id`` when given, else ``env`` (what the
        caller's LOOPX_GOAL_ID holds: the API reads no environment), else `git config loopx.goal`, else
        the only goal; refused (``goal-required``) when none of them names one."""
        return defaults.resolve_goal(whole(self), goal_id, env=env, check=check)

    def resolve_agent(
        self,
        goal_id: str,
        agent_id: str | None = None,
        *,
        env: str | None = None,
        check: bool = True,
        required: bool = False,
    ) -> defaults.Resolved | None:
        """The agent acting on ``goal_id``, with its source (given, ``env``, `git config loopx.agent`),
        or None when none is named (a person acts); see ``defaults.resolve_agent``."""
        return defaults.resolve_agent(whole(self), goal_id, agent_id, env=env, check=check, required=required)

    def set_default_goal(self, goal_id: str) -> bool:
        """Make an existing goal this clone's default (`git config loopx.goal`); True when it changed."""
        return defaults.set_goal(whole(self), goal_id)

    def set_default_agent(self, goal_id: str, agent_id: str) -> bool:
        """Make a registered agent this clone's default (`git config loopx.agent`); True when it changed."""
        return defaults.set_agent(whole(self), goal_id, agent_id)

    def goal(self, goal_id: str):
        return self._goal_state(goal_id).goal

    def agents(self, goal_id: str) -> list:
        return sorted(self._goal_state(goal_id).agents.values(), key=lambda a: a.agent_id)

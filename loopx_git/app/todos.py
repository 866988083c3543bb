"""Todos: added, claimed, moved through their statuses, suggested and promoted; listed and indexed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.app.core import Core, OnFirstUse
from loopx_git.app.result import WriteResult

todo_ops = OnFirstUse("loopx_git.domain.todo")
close_ops = OnFirstUse("loopx_git.domain.todo_close")
suggest_ops = OnFirstUse("loopx_git.domain.todo_suggest")

if TYPE_CHECKING:
    pass


class Todos(Core):
    def todo_add(
        self, goal_id: str, text: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.add_todo(s, goal_id=goal_id, text=text, actor=actor, now=self._now(now), **kw)
        )

    def todo_claim(self, goal_id: str, todo_id: str, agent_id: str, *, now: str | None = None) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.claim_todo(s, goal_id=goal_id, todo_id=todo_id, agent_id=agent_id, now=self._now(now))
        )

    def todo_update(
        self,
        goal_id: str,
        todo_id: str,
        status: str,
        *,
        actor: str | None = None,
        now: str | None = None,
        **kw: Any,
    ) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.update_todo(
                s, goal_id=goal_id, todo_id=todo_id, status=status, actor=actor, now=self._now(now), **kw
            )
        )

    def todo_complete(
        self, goal_id: str, todo_id: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        result = self.apply(
            lambda s: close_ops.complete_todo(
                s, goal_id=goal_id, todo_id=todo_id, actor=actor, now=self._now(now), **kw
            )
        )
        return self._with_evidence_notes(result, kw.get("evidence", ()))

    def todo_supersede(
        self,
        goal_id: str,
        todo_id: str,
        by: str,
        reason: str,
        *,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        return self.apply(
            lambda s: close_ops.supersede_todo(
                s, goal_id=goal_id, todo_id=todo_id, by=by, reason=reason, actor=actor, now=self._now(now)
            )
        )

    def todo_suggest(
        self, goal_id: str, text: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: suggest_ops.suggest_todo(s, goal_id=goal_id, text=text, actor=actor, now=self._now(now), **kw)
        )

    def todos(self, goal_id: str, **filters: Any) -> list:
        from loopx_git.views.listing import list_todos

        return list_todos(self.state(), goal_id, **filters)

    def suggestion_prompt(self, goal_id: str):
        """todo_suggestion_prompt_v0: the packet a user's agent fills to propose candidate todos."""
        from loopx_git.views.suggest import suggestion_prompt

        return suggestion_prompt(self.state(), goal_id)

    def suggestions(self, goal_id: str) -> list:
        from loopx_git.views.listing import list_suggested

        return list_suggested(self.state(), goal_id)

    def todo(self, goal_id: str, todo_id: str):
        from loopx_git.domain.todo_rules import require_todo

        return require_todo(self._goal_state(goal_id), todo_id)

    def todo_index(self):
        """todo_index_v0: the live todos of every goal, best first, bounded."""
        from loopx_git.views.packets import todo_index

        return todo_index(self.state())

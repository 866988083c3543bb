"""The loop ledger: entries added, the next one selected, an iteration's result written back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.app.core import Core
from loopx_git.app.result import WriteResult

if TYPE_CHECKING:
    from collections.abc import Sequence


class Ledger(Core):
    def ledger_add(
        self,
        goal_id: str,
        claim: str,
        action: str,
        *,
        entry_id: str | None = None,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import ledger as ops

        return self.apply(
            lambda s: ops.add_entry(
                s, goal_id=goal_id, claim=claim, action=action, entry_id=entry_id, actor=actor, now=self._now(now)
            )
        )

    def ledger_next(self, goal_id: str, *, agent_id: str | None = None, now: str | None = None) -> WriteResult:
        """Select exactly one runnable entry (marked active); ``record`` is its action contract, or
        None when nothing is runnable."""
        from loopx_git.domain import ledger as ops

        return self.apply(lambda s: ops.select_next(s, goal_id=goal_id, agent_id=agent_id, now=self._now(now)))

    def ledger_record(
        self,
        goal_id: str,
        entry_id: str,
        *,
        status: str,
        verdict: str,
        next: str,
        evidence: Sequence = (),
        agent_id: str | None = None,
        question: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """Write an iteration's result back. ``evidence`` items are ``Evidence`` or ``KIND:REF`` strings."""
        from loopx_git.domain import ledger as ops

        items = [evidence_item(e) for e in evidence]
        result = self.apply(
            lambda s: ops.record_result(
                s,
                goal_id=goal_id,
                entry_id=entry_id,
                status=status,
                verdict=verdict,
                next_=next,
                evidence=items,
                agent_id=agent_id,
                question=question,
                now=self._now(now),
            )
        )
        return self._with_evidence_notes(result, items)

    def ledger(self, goal_id: str) -> list:
        gs = self._goal_state(goal_id)
        return sorted(gs.ledger.values(), key=lambda e: (e.created_at, e.id))

    def ledger_entry(self, goal_id: str, entry_id: str):
        from loopx_git.domain.ledger import require_entry

        return require_entry(self._goal_state(goal_id), entry_id)


def evidence_item(item: Any):
    """An ``Evidence`` from itself, a dict, or ``KIND:REF``; a bad one is refused naming the field."""
    import pydantic

    from loopx_git.errors import ValidationError
    from loopx_git.model.ledger import Evidence
    from loopx_git.model.record import first_error

    if isinstance(item, Evidence):
        return item
    try:
        return Evidence.model_validate(item) if isinstance(item, dict) else Evidence.parse(str(item))
    except pydantic.ValidationError as exc:
        raise ValidationError(f"field 'evidence': {first_error(exc, 'evidence')}", code="invalid-field") from exc
    except ValueError as exc:
        raise ValidationError(f"field 'evidence': {exc}", code="invalid-field") from exc

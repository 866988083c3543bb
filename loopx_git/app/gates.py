"""Operator gates, read (``gate_open`` and ``gate_decide`` are declared operations: ``domain/gate.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_git.app.core import Core

if TYPE_CHECKING:
    pass


class Gates(Core):
    def gates(self, goal_id: str, *, status: str | None = None) -> list:
        """The goal's gates, oldest first (``status``: only those in it)."""
        gs = self._goal_state(goal_id)
        found = sorted(gs.gates.values(), key=lambda g: (g.created_at, g.gate_id))
        return [g for g in found if status is None or g.status == status]

    def gate(self, goal_id: str, gate_id: str):
        from loopx_git.domain.gate import require_gate

        return require_gate(self._goal_state(goal_id), gate_id)

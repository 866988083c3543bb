"""Every declared write operation, by its ``StateRepo`` method name (``gate_open``).

The one list of the families whose operations are declared (``domain/operation.py``); loaded only
when an operation is looked up by name, so a read that needs none never imports them."""

from __future__ import annotations

from loopx_git.domain import claim, gate, handoff, todo_suggest
from loopx_git.domain.operation import Operation, declared

FAMILIES = (claim, gate, handoff, todo_suggest)

OPERATIONS: dict[str, type[Operation]] = {op.method: op for family in FAMILIES for op in declared(family)}

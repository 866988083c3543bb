"""The ``StateRepo`` method of a declared operation (``domain/operation.py``), made from its
declaration: the same fields, in the same order, with the same defaults, as its command and its
MCP tool."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loopx_git.app.core import Core
    from loopx_git.app.result import WriteResult
    from loopx_git.domain.operation import Operation


def operation_method(op: type[Operation]) -> Callable[..., WriteResult]:
    """``StateRepo``'s method for a declared operation: its positional fields by position (``goal_id``,
    then ``gate_id``...), the others by keyword, and ``now`` (the time stamped on its events)."""
    import inspect

    positional = op.positional

    def method(self: Core, *args: Any, now: str | None = None, **values: Any) -> WriteResult:
        if len(args) > len(positional):
            raise TypeError(f"{op.method}() takes {len(positional)} positional arguments ({', '.join(positional)})")
        for name, value in zip(positional, args):
            if name in values:
                raise TypeError(f"{op.method}() got two values for {name!r}")
            values[name] = value
        return self.run(op.of(**values), now=now)

    fields = op.model_fields
    kind = inspect.Parameter
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # help() and editors read it
        [kind("self", kind.POSITIONAL_OR_KEYWORD)]
        + [kind(name, kind.POSITIONAL_OR_KEYWORD, annotation=fields[name].annotation) for name in positional]
        + [
            kind(
                name,
                kind.KEYWORD_ONLY,
                annotation=info.annotation,
                default=kind.empty if info.is_required() else info.default,
            )
            for name, info in fields.items()
            if name not in positional
        ]
        + [kind("now", kind.KEYWORD_ONLY, annotation=str | None, default=None)]
    )
    method.__name__ = method.__qualname__ = op.method
    method.__doc__ = op.__doc__
    return method

"""A write operation as a value, declared once (as git-bug declares its operations).

Each family module declares its operations as frozen pydantic models: the fields, with their help
text, defaults and the command line's spelling (``Cli``), and the words of its command. One function
applies it (``@applies(OpenGate)``): it reads the state and returns the ``Write``, the events of one
commit. The command line, the MCP tool, the Python API method and docs/cli.md's table are built from
the model, so an operation is never described a second time:

- ``cli/declared.py`` makes the command, its options and help from the fields;
- the MCP tool's input schema is read from that command's options, which come from here;
- ``StateRepo`` answers ``repo.gate_open(goal_id, gate_id, ...)`` for every declared operation;
- tests/docs check docs/cli.md's rows against the declarations.

Only the fields' shape is checked here, before the state is read (a list where a list belongs, a
value among its choices, the declared type); the rules that need the state (a goal that exists, a
claim held) stay in the apply function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from loopx_git.errors import ValidationError

if TYPE_CHECKING:
    from loopx_git.domain.write import Write
    from loopx_git.model.state import State

Op = TypeVar("Op", bound="Operation")


class Cli:
    """How the command line spells a field: its option names, and how a value is read.

    ``role`` names a field the command line resolves rather than passes: ``goal`` (``-g``, else the
    defaults), ``actor`` (``-a``, else the agent default; none is a person). ``ids``: a repeatable
    option whose values are also split at commas. ``choices``: the values it takes (a usage error
    lists them); the field itself stays a string, and is checked against them before the state is read."""

    __slots__ = ("choices", "decls", "ids", "role")

    def __init__(
        self, *decls: str, role: str | None = None, ids: bool = False, choices: tuple[str, ...] | None = None
    ) -> None:
        self.decls, self.role, self.ids, self.choices = decls, role, ids, choices

    @property
    def param(self) -> str:
        """The command's parameter (and the MCP argument) it becomes: the long option's name."""
        if self.role == "goal":
            return "goal_id"
        if self.role == "actor":
            return "agent_id"
        return next(d for d in self.decls if d.startswith("--"))[2:].replace("-", "_")


GoalId = Annotated[str, Cli(role="goal")]
"""The goal a write goes to; the command line resolves ``-g`` against the defaults."""
Actor = Annotated[str | None, Cli(role="actor")]
"""The agent acting: ``-a`` or the agent default on the command line; None is a person."""


def ids(*decls: str) -> Cli:
    return Cli(*decls, ids=True)


class Operation(BaseModel):
    """The base of every declared write. A subclass's docstring is its command's help (the first
    paragraph is the summary; ``Example:`` lines run as printed, the docs tests check)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    words: ClassVar[tuple[str, ...]]
    """The command: ``("gate", "open")`` is ``loopx gate open``."""
    method: ClassVar[str]
    """The ``StateRepo`` method: ``gate_open``."""
    positional: ClassVar[tuple[str, ...]] = ("goal_id",)
    """The fields the API method takes by position, in order; the others are keywords."""
    redact: ClassVar[bool] = True
    """The command takes ``--redact`` (write secrets as [REDACTED:<rule>] instead of refusing): every
    write does, so far."""
    use_when: ClassVar[str | None] = None
    """When an agent calls it, the first sentence of its MCP tool's description ("Use when ..."):
    an operation that says so is served as a tool (``mcp/tools.py``)."""
    done: ClassVar[str] = "{summary}"
    """The line the command prints when it wrote: formatted with ``summary`` (the write's) and
    ``record`` (what it returns)."""
    applier: ClassVar[Callable[[State, Any, str], Write]]

    @classmethod
    def of(cls: type[Op], **values: Any) -> Op:
        """The operation from keyword values; bad input is refused naming the field, the problem and
        the rule (``ValidationError``, nothing written)."""
        what = " ".join(cls.words)
        for name in values:
            if name not in cls.model_fields:
                raise ValidationError(
                    f"field '{name}': {what} takes no such field; rule: it takes {', '.join(cls.model_fields)}",
                    code="invalid-field",
                )
        for name, info in cls.model_fields.items():
            if info.is_required() and values.get(name) is None:
                raise ValidationError(
                    f"field '{name}': is missing; rule: {what} needs a value for it", code="invalid-field"
                )
        for name, value in values.items():
            spec = cli_of(cls, name)
            if spec is None or value is None:
                continue
            if spec.ids and isinstance(value, (str, bytes)):
                raise ValidationError(
                    f"field '{name}': one string where a list belongs; rule: give a list of values",
                    code="invalid-field",
                )
            if spec.choices is not None and value not in spec.choices:
                raise ValidationError(
                    f"field '{name}': {value!r} is not one of {', '.join(spec.choices)}", code="invalid-field"
                )
        try:
            return cls(**values)
        except pydantic.ValidationError as exc:
            from loopx_git.model.record import first_error

            raise ValidationError(f"field {first_error(exc, 'operation')}", code="invalid-field") from exc

    def apply(self, state: State, now: str) -> Write:
        return type(self).applier(state, self, now)


def applies(op: type[Op]) -> Callable[[Callable[[State, Op, str], Write]], Callable[[State, Op, str], Write]]:
    """Mark the function that applies ``op``: ``@applies(OpenGate) def open_gate(state, op, now)``."""

    def mark(func: Callable[[State, Op, str], Write]) -> Callable[[State, Op, str], Write]:
        op.applier = staticmethod(func)
        return func

    return mark


def cli_of(op: type[Operation], name: str) -> Cli | None:
    field = op.model_fields.get(name)
    if field is None:
        return None
    return next((m for m in field.metadata if isinstance(m, Cli)), None)


def declared(module: Any) -> list[type[Operation]]:
    """The operations a family module declares, in the order it declares them."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Operation) and value.__module__ == module.__name__
    ]


__all__ = ["Actor", "Cli", "Field", "GoalId", "Operation", "applies", "cli_of", "declared", "ids"]

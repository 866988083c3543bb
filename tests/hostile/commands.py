"""The command line as declared: every command and option of ``loopx``, walked from the app the
CLI builds, so a new option is fed hostile values without anyone listing it here."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Iterator
from typing import Any

from loopx_git.cli.main import app
from loopx_git.cli.params import Arg, Group, Opt


class Param(typing.NamedTuple):
    path: tuple[str, ...]
    name: str
    decl: Any
    annotation: Any

    @property
    def flag(self) -> str | None:
        """The long option (None for a positional argument)."""
        if isinstance(self.decl, Arg):
            return None
        longs = [d.split("/")[0].strip() for d in self.decl.decls if d.startswith("--")]
        return longs[0] if longs else "--" + self.name.replace("_", "-")

    @property
    def required(self) -> bool:
        return self.decl.default is ...

    @property
    def takes_text(self) -> bool:
        return self.annotation in (str, str | None, list[str], list[str] | None)

    def __str__(self) -> str:
        return f"{' '.join(self.path) or '(root)'} {self.flag or self.name}"


def commands(group: Group = app, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, declared command) for the root callback and every command and group callback."""
    if group.callback_func is not None:
        yield path, group.callback_func
    for command in group.commands:
        yield (*path, command.name), command
    for name, sub in group.groups:
        yield from commands(sub, (*path, name))


def params(func: Any, path: tuple[str, ...]) -> list[Param]:
    hints = typing.get_type_hints(func, include_extras=True)
    return [
        Param(path, p.name, p.default, hints.get(p.name))
        for p in inspect.signature(func).parameters.values()
        if isinstance(p.default, (Opt, Arg))
    ]


def all_params() -> list[Param]:
    return [param for path, command in commands() for param in params(command.func, path)]


def choice(annotation: Any) -> str | None:
    """The first value a Literal (or an optional Literal, or an Enum) allows."""
    for arg in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(arg) is typing.Literal:
            return str(typing.get_args(arg)[0])
        if isinstance(arg, type) and hasattr(arg, "__members__"):
            return str(next(iter(arg.__members__.values())).value)
    return None

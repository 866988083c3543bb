"""The commands and their options as plain declarations, read by two parsers.

Every command module declares its options with ``Option``/``Argument`` and its commands with a
``Group``, in typer's own spelling, but nothing here loads typer. ``cli/fast.py`` parses the
common, well-formed command line from these declarations alone and runs the command; whatever it
does not settle for certain — help, completion, a mistake to explain, an unusual form — goes to the
typer app that ``cli/app.py`` builds from the same declarations. So there is one description of
the command line, and the ~75 ms typer spends loading and building itself is paid only when its
answer is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

REQUIRED: Any = ...
"""The default of an option that must be given (typer's ``...``)."""


class Opt:
    """An option as typer would declare it: ``typer.Option(default, *decls, **settings)``."""

    __slots__ = ("decls", "default", "settings")

    def __init__(self, default: Any, decls: tuple[str, ...], settings: dict[str, Any]) -> None:
        self.default, self.decls, self.settings = default, decls, settings

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


class Arg:
    """A positional argument: ``typer.Argument(default, **settings)``. A command that takes one is
    always parsed by typer (its forms — ``--``, extra arguments — are typer's to judge)."""

    __slots__ = ("default", "settings")

    def __init__(self, default: Any, settings: dict[str, Any]) -> None:
        self.default, self.settings = default, settings


def Option(default: Any = None, *decls: str, **settings: Any) -> Any:
    return Opt(default, decls, settings)


def Argument(default: Any = None, **settings: Any) -> Any:
    return Arg(default, settings)


class Command:
    """A command: its name, its function, and typer's settings for it. A command made from a declared
    operation (``cli/declared.py``) is given ``load`` instead, and makes its function on first use."""

    __slots__ = ("_func", "_load", "name", "settings")

    def __init__(
        self,
        name: str,
        func: Callable[..., Any] | None,
        settings: dict[str, Any],
        *,
        load: Callable[[], Callable[..., Any]] | None = None,
    ) -> None:
        self.name, self._func, self.settings, self._load = name, func, settings, load

    @property
    def func(self) -> Callable[..., Any]:
        if self._func is None:
            assert self._load is not None  # one of the two is always given
            self._func = self._load()
        return self._func


class Group:
    """A command group as typer would declare it: ``typer.Typer(**settings)``, its commands, its
    sub-groups and at most one callback."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        self._entries: list[Command | Callable[[], list[Command]]] = []
        self.groups: list[tuple[str, Group]] = []
        self.callback_func: Command | None = None

    @property
    def commands(self) -> list[Command]:
        """The group's commands in the order they are listed; a family of declared operations
        (``cli/declared.py``) is loaded here, the first time the group's commands are read."""
        if not all(isinstance(entry, Command) for entry in self._entries):
            self._entries = [
                made for entry in self._entries for made in ([entry] if isinstance(entry, Command) else entry())
            ]
        return self._entries  # type: ignore[return-value]  # all loaded above

    def command_named(self, name: str) -> Command | None:
        """The command ``name``: the commands declared here are searched first, so finding one of
        them (``todo list``) loads no family of declared operations."""
        for entry in self._entries:
            if isinstance(entry, Command) and entry.name == name:
                return entry
        return next((c for c in self.commands if c.name == name), None)

    def add(self, command: Command) -> None:
        self._entries.append(command)

    def add_family(self, load: Callable[[], list[Command]]) -> None:
        """Commands known only once ``load`` has run (it imports the family that declares them)."""
        self._entries.append(load)

    def command(self, name: str | None = None, **settings: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add(Command(name or func.__name__.lower().replace("_", "-"), func, settings))
            return func

        return register

    def callback(self, **settings: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.callback_func = Command("", func, settings)
            return func

        return register

    def add_typer(self, group: Group, *, name: str) -> None:
        self.groups.append((name, group))


class Context:
    """What a command receives as ``ctx``: under typer, typer's context; on the fast path, this.
    Commands only ever ask it for the root's ``obj`` (``context.get``)."""

    invoked_subcommand: str | None = None
    """Always None here: the fast path runs a group's own callback only when no command follows."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def find_root(self) -> Context:
        return self


def id_list(values: list[str]) -> list[str]:
    """A repeatable option's ids, each value also split at commas: ``-t a -t b`` or ``-t a,b``."""
    return [part for value in values for part in value.split(",") if part]


def declared(func: Callable[..., Any]) -> list[tuple[str, Any]]:
    """A command's parameters in order, each with its declaration (an ``Opt``, an ``Arg``; ``ctx``
    has none): what the fast parser, typer's app and the MCP tools all read a command's shape from.
    ``Unsure`` for a function taking ``*args``/``**kwargs``, which no declaration describes."""
    from loopx_git.errors import Unsure

    made = getattr(func, "loopx_options", None)
    if made is not None:  # a command made from a declared operation (cli/declared.py) lists them
        return list(made)
    code = func.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    positional = dict(zip(names[code.co_argcount - len(func.__defaults__ or ()) :], func.__defaults__ or ()))
    positional.update(func.__kwdefaults__ or {})
    if code.co_flags & 0x0C:  # *args or **kwargs: not a command typer built from its signature
        raise Unsure
    return [(name, positional.get(name, Arg(None, {}))) for name in names]

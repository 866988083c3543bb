"""The command line parsed without typer, from the declarations in ``cli/params.py``.

It settles only what it is sure of: a known command, long options as ``--name value`` or
``--name=value``, short ones as ``-n value``, flags, values of the declared types and in range, every
required option given. Anything else — help, completion, ``--``, a clustered short option, a value
that starts with ``-``, an unknown option or a bad value — returns None and typer parses the same
command line, so what typer accepts, refuses and explains stays the definition. The test suite
checks that both parsers hand every command the same arguments.
"""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Callable, Collection
from typing import Any, Literal, get_args, get_origin

from loopx_git.cli.params import Command, Group, Opt, declared
from loopx_git.errors import Unsure

_INT = re.compile(r"[0-9]{1,18}")
_HELP = frozenset(("-h", "--help"))


class Param:
    """One option of a command: how its value is read, and where it goes."""

    __slots__ = ("choices", "default", "kind", "name", "settings")

    def __init__(self, name: str, kind: str, default: Any, settings: dict[str, Any], choices: Any = None):
        self.name, self.kind, self.default, self.settings, self.choices = name, kind, default, settings, choices

    def convert(self, value: str) -> Any:
        if self.kind == "str":
            return value
        if self.kind == "int":
            if not _INT.fullmatch(value):
                raise Unsure
            number = int(value)
            low, high = self.settings.get("min"), self.settings.get("max")
            if (low is not None and number < low) or (high is not None and number > high):
                raise Unsure
            return number
        if self.kind == "choice":
            if value not in self.choices:
                raise Unsure
            return value
        if self.kind == "enum":
            try:
                return self.choices(value)
            except ValueError:
                raise Unsure from None
        raise Unsure  # pragma: no cover - kinds are checked when the table is made


def options(func: Callable[..., Any]) -> tuple[dict[str, Param], dict[str, Param]]:
    """A command's options by every name they answer to, and by parameter; Unsure when the command
    takes a positional argument or an option of a type this parser does not read."""
    hints = typing.get_type_hints(func)
    by_decl: dict[str, Param] = {}
    by_name: dict[str, Param] = {}
    for name, default in declared(func):
        if name == "ctx":
            continue
        if not isinstance(default, Opt):
            raise Unsure  # an Argument, or a parameter typer fills some other way
        param = _param(name, hints[name], default)
        by_name[name] = param
        decls = default.decls
        if not decls:  # typer names it after the parameter; a flag so named also gets a --no- twin
            if param.kind == "flag":
                raise Unsure
            decls = ("--" + name.replace("_", "-"),)
        for decl in decls:
            if "/" in decl or not re.fullmatch(r"--[a-z][a-z0-9-]*|-[a-zA-Z]", decl):
                raise Unsure  # a --flag/--no-flag pair, or a spelling this parser leaves to typer
            by_decl[decl] = param
    return by_decl, by_name


def _param(name: str, hint: Any, opt: Opt) -> Param:
    args = get_args(hint)
    if get_origin(hint) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise Unsure
        hint = rest[0]
    origin = get_origin(hint)
    if hint is bool:
        return Param(name, "flag", opt.default, opt.settings)
    if hint is str:
        return Param(name, "str", opt.default, opt.settings)
    if hint is int:
        return Param(name, "int", opt.default, opt.settings)
    if origin is Literal and all(isinstance(v, str) for v in get_args(hint)):
        return Param(name, "choice", opt.default, opt.settings, frozenset(get_args(hint)))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return Param(name, "enum", opt.default, opt.settings, hint)
    if origin is list and get_args(hint) == (str,):
        return Param(name, "list", opt.default, opt.settings)
    raise Unsure


class Parsed:
    __slots__ = ("command", "format", "kwargs", "root")

    def __init__(self, command: Command, root: dict[str, Any], kwargs: dict[str, Any], format: Any) -> None:
        self.command, self.root, self.kwargs, self.format = command, root, kwargs, format


def parse(argv: list[str], root: Group, shared: dict[str, str], formatless: Collection[str] = ()) -> Parsed:
    """``argv`` as typer would hand it over: the root callback's options, the command, and its
    arguments. ``shared`` maps the options every command also takes (``--format``/``-f``/``--json``)
    to what they set, except the commands in ``formatless``. Raises Unsure for anything it does not
    settle."""
    if root.callback_func is None:
        raise Unsure
    root_decls, root_names = options(root.callback_func.func)
    given: dict[str, Any] = {}
    rest = _read(argv, root_decls, given, stop_at_word=True)
    if not rest:
        raise Unsure  # no command: help, --version, or a usage error
    command = _command(rest, root)
    by_decl, by_name = options(command.func)
    if " ".join(_path(rest, root)) in formatless:
        shared = {}
    for meaning in set(shared.values()):  # as click: one the command declares itself is its own
        decls = [decl for decl, what in shared.items() if what == meaning]
        if not any(decl in by_decl for decl in decls):
            by_decl.update((decl, Param(meaning, "shared", None, {})) for decl in decls)
    values: dict[str, Any] = {}
    if _read(rest[len(_path(rest, root)) :], by_decl, values, stop_at_word=False):
        raise Unsure  # an argument no option takes
    # click runs option callbacks in the order each option first appears, each with its last value:
    # of --format and --json after the command, the one that first appears later has the last word
    order = values.pop("__order__", [])
    if "json" in order and "format" in order and values.get("__format__") != "json":
        raise Unsure  # two formats asked for at once: typer refuses it, with the usage line
    fmt = max(set(order), key=order.index) if order else None
    kwargs = {}
    for name, param in by_name.items():
        if name in values:
            kwargs[name] = values[name]
        elif param.kind == "list":
            kwargs[name] = list(param.default) if param.default else []
        elif param.default is Ellipsis:
            raise Unsure  # a required option left out: typer says so
        else:
            kwargs[name] = param.default
    chosen = None if fmt is None else ("json" if fmt == "json" else values.get("__format__"))
    root_values = {name: given.get(name, param.default) for name, param in root_names.items()}
    return Parsed(command, root_values, kwargs, chosen)


def _read(tokens: list[str], by_decl: dict[str, Param], values: dict[str, Any], *, stop_at_word: bool) -> list[str]:
    """Read options from the front of ``tokens`` into ``values``; return what is left: everything from
    the first word on (``stop_at_word``), else the words among the options."""
    words: list[str] = []
    order: list[str] = values.setdefault("__order__", [])
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in _HELP or token == "--" or token == "-":
            raise Unsure
        if not token.startswith("-"):
            if stop_at_word:
                return tokens[i:]
            words.append(token)
            i += 1
            continue
        decl, eq, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        param = by_decl.get(decl)
        if param is None:
            raise Unsure
        if param.kind == "flag" or (param.kind == "shared" and param.name == "json"):
            if eq:
                raise Unsure  # a flag takes no value: typer explains
            if param.kind == "shared":
                order.append("json")
            else:
                values[param.name] = True
            i += 1
            continue
        if eq:
            value, i = attached, i + 1
        else:
            if i + 1 >= len(tokens) or tokens[i + 1].startswith("-"):
                raise Unsure  # a missing value, or one typer may read as an option
            value, i = tokens[i + 1], i + 2
        if param.kind == "shared":
            from loopx_git.cli.context import OutputFormat

            try:
                values["__format__"] = OutputFormat(value)
            except ValueError:
                raise Unsure from None
            order.append("format")
        elif param.kind == "list":
            values.setdefault(param.name, []).append(value)
        else:
            values[param.name] = param.convert(value)
    return words


def _path(rest: list[str], root: Group) -> list[str]:
    """The command's words: ``status``, or a group's name and its command's (``todo add``, and
    through a sub-group ``explore node add``), or a group's name alone when the group itself runs
    (``events -g G``)."""
    first = rest[0]
    if root.command_named(first) is not None:
        return [first]
    for name, group in root.groups:
        if name == first:
            if _runs_itself(group, rest):
                return [first]
            if len(rest) >= 2 and any(sub == rest[1] for sub, _ in group.groups):
                return [first, *_path(rest[1:], group)]
            return rest[:2]
    raise Unsure


def _runs_itself(group: Group, rest: list[str]) -> bool:
    """A group whose callback runs without a command (``invoke_without_command``), given options
    only: ``loopx events -g G`` lists, ``loopx events export`` does not."""
    callback = group.callback_func
    return (
        callback is not None
        and bool(callback.settings.get("invoke_without_command"))
        and (len(rest) < 2 or rest[1].startswith("-"))
    )


def _command(rest: list[str], root: Group) -> Command:
    first = rest[0]
    command = root.command_named(first)
    if command is not None:
        return _plain(command)
    for name, group in root.groups:
        if name == first:
            if _runs_itself(group, rest):
                return group.callback_func  # type: ignore[return-value]  # _runs_itself saw it
            if group.callback_func is not None or len(rest) < 2:
                raise Unsure  # a group that runs something of its own, or a group alone (its help)
            return _command(rest[1:], group)  # its command, or one of a sub-group's
    raise Unsure


def _plain(command: Command) -> Command:
    if command.settings:  # context settings (extra arguments, no interspersed options): typer's to read
        raise Unsure
    return command

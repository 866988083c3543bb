"""Commands made from declared operations (``domain/operation.py``): the options, their help and the
command's help come from the operation's fields and docstring, the body is the same for every write:
resolve the goal and the actor, build the operation, run it as one commit, print what it did.

A family's command module names its operations where its commands are listed (``write(app, "open",
load)``); ``load`` imports the family's module only when the command is parsed, helped or served over
MCP, so printing the version and the commands of other families never load pydantic for it.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from loopx_git.cli import context
from loopx_git.cli.params import REQUIRED, Command, Context, Group, Opt, Option, id_list

if TYPE_CHECKING:
    from loopx_git.domain.operation import Cli, Operation


def family(group: Group, words: tuple[str, ...], load: Callable[[], ModuleType]) -> None:
    """Add to ``group`` (the command the words spell) a command for every operation the family
    module ``load`` imports declares under it, in the order declared: adding an operation to the
    family adds its command. The module is imported when the group's commands are first read."""

    def commands() -> list[Command]:
        from loopx_git.domain.operation import declared

        return [
            Command(op.words[-1], None, {}, load=functools.partial(command_for, op))
            for op in declared(load())
            if op.words[:-1] == words
        ]

    group.add_family(commands)


def write(group: Group, name: str, load: Callable[[], type[Operation]]) -> None:
    """Add the command ``name`` to ``group``, made from the operation ``load`` returns (a command of
    the root, whose commands are read on every run: naming it keeps its family unloaded until it runs)."""
    group.add(Command(name, None, {}, load=lambda: command_for(load())))


class _Option:
    """One field of the operation as the command takes it."""

    __slots__ = ("field", "spec")

    def __init__(self, field: str, spec: Cli) -> None:
        self.field, self.spec = field, spec


def command_for(op: type[Operation]) -> Callable[..., None]:
    """The command function typer and the fast parser read: its parameters are the operation's
    fields as options (``--redact`` last where the operation takes it), its docstring the operation's."""
    from loopx_git.domain.operation import cli_of

    fields: list[_Option] = []
    declared: list[tuple[str, Any]] = []
    annotations: dict[str, Any] = {"ctx": Context}
    for name, info in op.model_fields.items():
        spec = cli_of(op, name)
        if spec is None:  # pragma: no cover - declarations are checked by tests/domain/test_operations.py
            raise TypeError(f"{op.__name__}.{name} has no Cli spelling")
        fields.append(_Option(name, spec))
        param, (annotation, default) = spec.param, _option(info, spec)
        declared.append((param, default))
        annotations[param] = annotation
    if op.redact:
        declared.append(("redact", context.REDACT))
        annotations["redact"] = bool

    def command(ctx: Any, **values: Any) -> None:
        from loopx_git.cli import render

        c = context.get(ctx)
        with c.session(redact=values.pop("redact", False)) as repo:
            given: dict[str, Any] = {}
            goal_id = None
            for option in fields:
                value = values[option.spec.param]
                if option.spec.role == "goal":
                    goal_id = value = c.goal(repo, value)
                elif option.spec.role == "actor":
                    value = c.actor(repo, typing.cast(str, goal_id), value)
                elif option.spec.ids:
                    value = id_list(value)
                given[option.field] = value
            result = repo.run(op.of(**given))
        render.write_result(c, result, lambda r: render.line(op.done.format(summary=r.write.summary, record=r.record)))

    command.__name__ = command.__qualname__ = op.method
    command.__doc__ = op.__doc__
    command.__module__ = op.__module__
    command.__annotations__ = annotations
    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # typer reads it
        [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)]
        + [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotations[name])
            for name, default in declared
        ]
    )
    command.loopx_options = [("ctx", None), *declared]  # type: ignore[attr-defined]  # the fast parser reads it
    return command


def _option(info: Any, spec: Cli) -> tuple[Any, Opt]:
    """A field's type on the command line and its option: goal and actor as every command spells them."""
    if spec.role == "goal":
        return str | None, context.GOAL_ID
    if spec.role == "actor":
        return str | None, context.AGENT_ID
    required = info.is_required()
    default = REQUIRED if required else info.default
    if spec.ids:
        return list[str], Option([] if default in ((), None) else list(default), *spec.decls, help=info.description)
    annotation: Any = Literal[spec.choices] if spec.choices else _plain(info.annotation)
    if not required and default is None:
        annotation = annotation | None
    return annotation, Option(default, *spec.decls, help=info.description)


def _plain(annotation: Any) -> Any:
    """``str | None`` is ``str``: whether None is allowed the default says."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    return args[0] if args and len(args) == 1 else annotation


REFERENCE_START = "<!-- write operations: generated by python -m loopx_git.cli.declared -->"
REFERENCE_END = "<!-- end of write operations -->"
"""The markers around docs/cli.md's table of declared writes, which the test suite regenerates."""


def reference() -> str:
    """docs/cli.md's table: every declared write, what it does and the options it takes."""
    from loopx_git.domain.catalog import OPERATIONS
    from loopx_git.domain.operation import cli_of

    lines = [REFERENCE_START, "", "| command | what it does | options |", "| --- | --- | --- |"]
    for op in sorted(OPERATIONS.values(), key=lambda o: o.words):
        summary = " ".join((op.__doc__ or "").strip().split("\n\n")[0].split())
        options = [_spelled(cli_of(op, name), info) for name, info in op.model_fields.items()]  # type: ignore[arg-type]
        options += ["`--redact`"] if op.redact else []
        lines.append(f"| `loopx {' '.join(op.words)}` | {summary.replace('|', chr(92) + '|')} | {', '.join(options)} |")
    return "\n".join([*lines, "", REFERENCE_END]) + "\n"


def _spelled(spec: Cli, info: Any) -> str:
    if spec.role == "goal":
        return "`-g`"
    if spec.role == "actor":
        return "`-a`"
    flag = "/".join(sorted(spec.decls, key=len))
    if spec.choices:
        flag += " " + "\\|".join(spec.choices)
    notes = ["required"] if info.is_required() else []
    notes += ["repeatable"] if spec.ids else []
    return f"`{flag}`" + (f" ({', '.join(notes)})" if notes else "")


if __name__ == "__main__":  # python -m loopx_git.cli.declared docs/cli.md
    import sys

    from loopx_git.docblock import rewrite

    for target in sys.argv[1:] or ["docs/cli.md"]:
        changed = rewrite(target, REFERENCE_START, REFERENCE_END, reference())
        print(f"{target}: {'rewritten' if changed else 'up to date'}")

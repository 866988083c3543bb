"""The typer app, built from the declarations in ``cli/params.py`` when typer's answer is needed:
help, completion, a usage error to explain, or a command line the fast parser leaves to it."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Collection, Iterator
from typing import Any

import typer

from loopx_git.cli.context import output_options
from loopx_git.cli.params import Arg, Context, Group, Opt
from loopx_git.errors import BadParameter, Exit

Call = Callable[[Callable[..., Any], tuple, dict], Any]
"""How a command's function is called (tests record the arguments typer passes instead)."""


def typer_app(group: Group, call: Call | None = None) -> typer.Typer:
    app = typer.Typer(**group.settings)
    if group.callback_func is not None:
        app.callback(**group.callback_func.settings)(typed(group.callback_func.func, call))
    for command in group.commands:
        app.command(command.name, **command.settings)(typed(command.func, call))
    for name, sub in group.groups:
        app.add_typer(typer_app(sub, call), name=name)
    return app


def typed(func: Callable[..., Any], call: Call | None = None) -> Callable[..., Any]:
    """``func`` as typer reads a command: typer's Option/Argument as defaults, typer.Context for
    ``Context``; our Exit and BadParameter raised as typer's, so typer reports them as before."""
    hints = typing.get_type_hints(func, include_extras=True)
    parameters = []
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if annotation is Context:
            annotation = typer.Context
        default = param.default
        if isinstance(default, Opt):
            default = typer.Option(default.default, *default.decls, **default.settings)
        elif isinstance(default, Arg):
            default = typer.Argument(default.default, **default.settings)
        parameters.append(param.replace(annotation=annotation, default=default))

    def command(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs) if call is None else call(func, args, kwargs)
        except Exit as exc:
            raise typer.Exit(exc.exit_code) from None
        except BadParameter as exc:
            raise typer.BadParameter(exc.message, param_hint=exc.param_hint) from None

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__name__, command.__qualname__, command.__doc__ = func.__name__, func.__qualname__, func.__doc__
    command.__module__ = func.__module__
    return command


def build_command(root: Group, call: Call | None = None, formatless: Collection[str] = ()) -> Any:
    """The app's click command tree, finished in one place rather than in each command: every command
    takes ``--format/-f`` and ``--json`` after its name too (one that declares its own ``--format``,
    like review-diff, keeps it), and flags show no ``<bool>`` value in help, since they take none."""
    _whole_option_names()
    command = typer.main.get_command(typer_app(root, call))
    shared = output_options()
    for path, cmd in walk(command):
        acts = not hasattr(cmd, "commands") or getattr(cmd, "invoke_without_command", False)
        if acts and path not in formatless:
            taken = {opt for param in cmd.params for opt in param.opts}
            cmd.params.extend(param for param in shared if not taken & set(param.opts))
        _plain_flags(cmd)
    return command


def _plain_flags(command: Any) -> None:
    """Typer renders a type for every option, ``<bool>`` for a flag too, which reads as if the flag took
    a value; an empty metavar shows none. The help option is made on first use, so it is caught then."""
    for param in command.params:
        if getattr(param, "is_flag", False):
            param.metavar = ""
    made = command.get_help_option

    def get_help_option(ctx: Any) -> Any:
        option = made(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = get_help_option


def _whole_option_names() -> None:
    """Help draws each option's names whole (``--progress-hypothesis-id``, never ``--progress-hypothes…``)
    on any width: of the columns typer's help tables lay out, only the type and the help text wrap.
    Typer fills its tables through rich's ``Table`` looked up in ``typer.rich_utils``; the table
    put there instead makes every other column no-wrap, so rich narrows the help text first."""
    import typer.rich_utils as rich_utils
    from rich.table import Table

    if getattr(rich_utils.Table, "keeps_names_whole", False):
        return

    class NamesWhole(Table):
        keeps_names_whole = True

        def add_row(self, *renderables: Any, **settings: Any) -> None:
            if not self.columns:  # an options row ends with the type and the help, a commands row with the help
                wrapped = len(renderables) - (2 if len(renderables) >= 5 else 1)
                for i in range(len(renderables)):
                    self.add_column(no_wrap=i < wrapped)
            super().add_row(*renderables, **settings)

    rich_utils.Table = NamesWhole  # type: ignore[misc]


def walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """(``"todo add"``, command) for the root (``""``) and every group and command below it."""
    yield " ".join(path), command
    for name, sub in getattr(command, "commands", {}).items():
        yield from walk(sub, (*path, name))

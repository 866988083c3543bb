"""Assembles the ``loopx`` command line: one group per command family, one callback for the global
options, and the one error boundary that maps exceptions to exit codes. A command line is parsed by
``cli/fast.py`` when it can settle it, else by the typer app built from the same declarations."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

from loopx_git.arguments import refuse_nul, refuse_too_many
from loopx_git.cli import (
    connect,
    dashboard,
    event,
    explore,
    gate,
    goal,
    handoff,
    hook,
    ledger,
    maintenance,
    mcp,
    packets,
    prime,
    protocol,
    quota,
    review,
    reward,
    rollback,
    safety,
    status,
    sync,
    todo,
    view,
)
from loopx_git.cli import run as run_command  # `run` is this module's entry point (below)
from loopx_git.cli.context import Ctx, OutputFormat
from loopx_git.cli.params import Context, Group, Option
from loopx_git.defaults import AGENT_ENV, GOAL_ENV
from loopx_git.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, BadParameter, Exit, Unsure, clipped, outcome

app = Group(
    name="loopx",
    help="Durable state for long-running agent work, kept on a git state branch.\n\n"
    "Every change is one commit on refs/heads/loopx/state; nothing is lost, everything can be reviewed.\n\n"
    "Exit codes: 0 done, 1 refused (invalid input, broken rule, conflict; nothing written), 2 usage error, "
    "3 internal error (always a bug: please report it).",
    epilog="Examples:  loopx connect --goal-id demo --objective 'Ship v1'   ·   "
    "loopx todo add --goal-id demo --text 'Write the parser'   ·   loopx --format json status --goal-id demo",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback(invoke_without_command=True)
def main(
    ctx: Context,
    repo: str = Option(".", "--repo", help="Repository to use (any folder inside it).", metavar="PATH"),
    format: OutputFormat | None = Option(
        None, "--format", "-f", help="Output: text for people (the default), json/yaml for scripts."
    ),
    as_json: bool = Option(False, "--json", help="Shorthand for --format json."),
    state_branch: str | None = Option(
        None, "--state-branch", help="State branch (default: as connected, else loopx/state)."
    ),
    version: bool = Option(False, "--version", help="Print the version and exit."),
) -> None:
    # runs under typer only (the fast path reads these options itself). --version is a plain option,
    # not an eager callback: an eager one exits before the parser sees what follows it, so
    # `loopx --version true` would print the version instead of failing
    if version:
        _print_version()
        raise Exit()
    if ctx.invoked_subcommand is None:
        ctx.fail("Missing command.")  # type: ignore[attr-defined]
    try:
        ctx.obj = root_ctx(repo, format, as_json, state_branch)
    except BadParameter as exc:
        ctx.fail(exc.message)  # type: ignore[attr-defined]
    ctx.call_on_close(ctx.obj.flush_notices)  # type: ignore[attr-defined]


def root_ctx(repo: str, format: OutputFormat | None, as_json: bool, state_branch: str | None) -> Ctx:
    if as_json and format not in (None, OutputFormat.json):
        raise BadParameter(f"--json and --format {format.value} ask for two formats; give one")
    if state_branch is not None:  # refused for every command, whether or not it reads the branch
        from loopx_git.api import check_state_branch

        check_state_branch(repo, state_branch)
    return Ctx(
        repo=repo,
        format=OutputFormat.json if as_json else (format or OutputFormat.text),
        state_branch=state_branch,
        goal_env=os.environ.get(GOAL_ENV) or None,
        agent_env=os.environ.get(AGENT_ENV) or None,
        commands=app,
    )


def _print_version() -> None:
    from loopx_git.version import __version__

    sys.stdout.write(f"loopx {__version__}\n")


connect.register(app)
app.add_typer(goal.goal_app, name="goal")
app.add_typer(goal.agent_app, name="agent")
app.add_typer(todo.app, name="todo")
app.add_typer(event.app, name="event")
app.add_typer(hook.app, name="hook")
app.add_typer(rollback.app, name="rollback")
app.add_typer(ledger.app, name="ledger")
app.add_typer(safety.app, name="safety")
app.add_typer(gate.app, name="gate")
app.add_typer(gate.app, name="operator-gate")  # the seed's name for the same commands
app.add_typer(reward.app, name="reward")
app.add_typer(handoff.app, name="handoff")
app.add_typer(explore.app, name="explore")
app.add_typer(quota.app, name="quota")
app.add_typer(protocol.app, name="protocol")
app.add_typer(view.app, name="view")
ledger.register_fire(app)
hook.register(app)
event.register(app)
run_command.register(app)
status.register(app)
sync.register(app)
review.register(app)
maintenance.register(app)
packets.register(app)
dashboard.register(app)
prime.register(app)
mcp.register(app)
goal.register_configure(app)

FORMATLESS = {
    "hook run": "git's entry point; its findings have one fixed form, and it runs without the app",
    "mcp": "it speaks the Model Context Protocol on stdin and stdout; it prints nothing of its own",
}
"""Commands whose output has one form: they do not offer --format/--json after the command."""

SHARED_OPTIONS = {"--format": "format", "-f": "format", "--json": "json"}
"""The output options every command takes after its name too (``context.output_options``)."""


def build_command(call: Any = None) -> Any:
    """The typer app's click command tree (``cli/app.py``)."""
    from loopx_git.cli.app import build_command as build

    return build(app, call, FORMATLESS)


def run_cli(argv: list[str] | None = None) -> int:
    """The command line run to its exit code (``errors.outcome``: a refusal 1 with ``error[code]:
    message``, a usage error 2, a bug 3). Everything it prints passes one mask (``cli/masking.py``)."""
    from loopx_git.cli import masking

    argv = list(sys.argv[1:] if argv is None else argv)
    _tolerant_output()
    _closed_streams_to_devnull()
    if argv == ["--version"]:  # the one answer that quotes nothing: no mask to load for it
        _print_version()
        return EXIT_OK
    try:  # everything printed from here on passes the mask, refusals and usage errors included
        with masking.masked_output(masking.new_mask(argv)):
            return _guarded(argv)
    except BrokenPipeError:  # the last of the output found its reader gone
        from loopx_git.cli.render import reader_gone

        reader_gone()
        return EXIT_REFUSED


def _guarded(argv: list[str]) -> int:
    """The command, whatever it ends with said as ``errors.outcome`` says it, on one line each."""
    try:
        rc = _run_fast(argv)
        return _run_typer(argv) if rc is None else rc
    except BrokenPipeError:
        # whoever read a read's output left (`| head`): nothing more to say, and the exit is 1, as
        # rich made it; a write that landed says so in render.write_result and exits 0
        from loopx_git.cli.render import reader_gone

        reader_gone()
        return EXIT_REFUSED
    except (Exception, KeyboardInterrupt) as exc:  # the boundary: never a traceback full of locals
        said = outcome(exc)
        if said.code == "aborted":
            sys.stderr.write("\n")  # not on the line the terminal echoed ^C on
        for line in said.lines():
            _say(line)
        return said.exit_code


def _run_fast(argv: list[str]) -> int | None:
    """The command run from the fast parser's reading, or None when typer is to parse it (also when
    the command finds a usage error before it writes anything: typer reports it with the usage)."""
    from loopx_git.cli import fast

    if os.environ.get("_LOOPX_COMPLETE"):  # shell completion is typer's
        return None
    if argv == ["--version"]:
        _print_version()
        return EXIT_OK
    try:
        parsed = fast.parse(argv, app, SHARED_OPTIONS, FORMATLESS)
    except Unsure:
        return None
    refuse_nul(parsed.root)
    refuse_nul(parsed.kwargs)
    refuse_too_many(parsed.kwargs)
    root = dict(parsed.root)
    if root.pop("version"):  # --version before a command: typer's reading of it stands
        return None
    try:
        obj = root_ctx(**root)
    except BadParameter:
        return None  # typer reports it, with the usage line
    if parsed.format is not None:
        from dataclasses import replace

        obj = replace(obj, format=OutputFormat(parsed.format))
    try:
        rc = parsed.command.func(Context(obj), **parsed.kwargs)
    except BadParameter:
        return None
    finally:
        obj.flush_notices()
    return rc if isinstance(rc, int) else EXIT_OK


def _run_typer(argv: list[str]) -> int:
    import typer

    try:  # newer typer vendors click as typer._click; older ones use click itself
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - depends on the installed typer
        from click import exceptions as click_errors  # type: ignore[import-not-found, no-redef, unused-ignore]  # installed or not

    command = build_command(_checked_call)
    try:
        rc = command.main(args=argv, prog_name="loopx", standalone_mode=False)
    except typer.Exit as exc:
        raise Exit(exc.exit_code) from None
    except typer.Abort:
        raise KeyboardInterrupt from None
    except click_errors.ClickException as exc:
        if isinstance(exc, click_errors.BadParameter):  # typer checks a Literal choice with pydantic,
            exc.message = exc.message.removeprefix("Value error, ")  # whose message keeps its own prefix
        exc.message = _one_line(exc.message)  # it may quote the value whole, line breaks and all
        exc.show()
        return EXIT_USAGE if isinstance(exc, click_errors.UsageError) else EXIT_REFUSED
    return rc if isinstance(rc, int) else EXIT_OK


def _checked_call(func: Any, args: tuple, kwargs: dict) -> Any:
    """How typer calls a command: after the same checks the fast path makes."""
    refuse_nul(kwargs)
    refuse_too_many(kwargs)
    return func(*args, **kwargs)


def _closed_streams_to_devnull() -> None:
    """Started with stdout or stderr closed (``loopx ... >&-``), Python has None there: output goes
    nowhere instead of failing a command whose write has landed."""
    import os

    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115


def _tolerant_output() -> None:
    """A character stdout cannot encode (an emoji under LANG=C, a file name that is not UTF-8) is
    printed as an escape, never a failure: a write that landed must not end in an internal error."""
    import codecs

    try:
        codecs.lookup_error(_ESCAPE)
    except LookupError:
        codecs.register_error(_ESCAPE, _escape)
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) in ("strict", "surrogateescape") and hasattr(stream, "reconfigure"):
            with contextlib.suppress(ValueError, OSError):  # a stream that refuses is left as it is
                stream.reconfigure(errors=_ESCAPE)


_ESCAPE = "loopx-escape"


def _escape(exc: UnicodeError):
    """An undecodable byte kept as a surrogate (a file name) goes out as that byte again, as
    ``surrogateescape`` would; any other character the encoding lacks becomes ``\\u....``."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for char in exc.object[exc.start : exc.end]:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(bytes([code - 0xDC00]))
        else:
            out.append(char.encode("ascii", "backslashreplace"))
    return b"".join(out), exc.end


def _say(message: str) -> None:
    """One line to stderr, whatever the message quotes: bytes that are not UTF-8 (an argument in
    another encoding) are escaped, so it cannot itself fail, and so are line breaks and control
    characters, so a value cannot forge a line of its own in a log (``error[...]``, ``hint:``)."""
    sys.stderr.write(_one_line(message) + "\n")


def _one_line(message: str) -> str:
    from loopx_git.cli.text import one_line
    from loopx_git.model.canonical import printable

    return clipped(one_line(printable(message)))


def run() -> None:
    sys.exit(run_cli())

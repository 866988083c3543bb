"""The fast parser (cli/fast.py) hands every command exactly what typer would, and leaves to typer
everything it is not sure of."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from loopx_git.cli import fast
from loopx_git.cli.main import SHARED_OPTIONS, app, build_command
from loopx_git.cli.params import Context, Group, Option


def commands(group: Group = app, path: tuple[str, ...] = ()):
    for command in group.commands:
        yield (*path, command.name), command
    for name, sub in group.groups:
        yield from commands(sub, (*path, name))


def fast_commands():
    out = []
    for path, command in commands():
        try:
            fast.options(command.func)
        except fast.Unsure:
            continue
        if not command.settings and all(g.callback_func is None for n, g in app.groups if n == path[0]):
            out.append((path, command))
    return out


def typer_kwargs(argv: list[str]) -> list[tuple[str, dict]]:
    """What typer passes each function it calls for ``argv`` (root callback, then the command)."""
    seen: list[tuple[str, dict]] = []

    def record(func, args, kwargs):
        seen.append((func.__name__, {k: v for k, v in kwargs.items() if k != "ctx"}))

    build_command(record).main(args=argv, prog_name="loopx", standalone_mode=False)
    return seen


def sample_value(name: str, param, hint):
    if param.kind == "int":
        return str(param.settings.get("min") or 3)
    if param.kind == "choice":
        return sorted(param.choices)[-1]
    if param.kind == "enum":
        return list(param.choices)[-1].value
    return f"{name}-value"


def argvs_for(path, command):
    """Three command lines: only what is required; every option once (long names); every option
    given by its short name where it has one, lists twice, flags, and ``--name=value`` forms."""
    by_decl, by_name = fast.options(command.func)
    hints = typing.get_type_hints(command.func)
    required, every, short = [], [], []
    for name, param in by_name.items():
        decls = [d for d, p in by_decl.items() if p is param]
        long = next(d for d in decls if d.startswith("--"))
        shortest = min(decls, key=len)
        if param.kind == "flag":
            every += [long]
            short += [shortest, shortest]
            continue
        value = sample_value(name, param, hints[name])
        if param.default is Ellipsis:
            required += [long, value]
        every += [long, value]
        if param.kind == "list":
            short += [shortest, value, f"{long}={value}-2"]
        else:
            short += [f"{long}={value}"] if len(shortest) > 2 else [shortest, value]
    return [list(path) + required, list(path) + every, list(path) + short]


CASES = [(path, command, argv) for path, command in fast_commands() for argv in argvs_for(path, command)]


def test_the_fast_path_serves_the_everyday_commands():
    served = {" ".join(path) for path, _ in fast_commands()}
    for everyday in ("status", "todo add", "todo claim", "todo complete", "todo list", "event append", "history"):
        assert everyday in served


@pytest.mark.parametrize("path,command,argv", CASES, ids=[" ".join(c[2]) for c in CASES])
def test_both_parsers_hand_a_command_the_same_arguments(path, command, argv):
    for prefix in ([], ["--repo", "elsewhere", "--state-branch", "x/y", "-f", "yaml"], ["--json"]):
        full = prefix + argv
        parsed = fast.parse(full, app, SHARED_OPTIONS)
        (_root, root_kwargs), (name, kwargs) = typer_kwargs(full)
        assert parsed.root == root_kwargs, full
        assert name == command.func.__name__
        assert parsed.kwargs == kwargs, full


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["status", "-h"],
        ["todo"],
        ["todo", "add"],  # --text is required
        ["todo", "add", "--text"],  # no value
        ["todo", "add", "--text", "--priority"],  # a value that looks like an option
        ["todo", "add", "--text", "x", "--priority", "P9"],  # not a choice
        ["todo", "add", "--text", "x", "--bogus"],
        ["todo", "add", "--text", "x", "extra"],
        ["todo", "add", "--", "--text", "x"],
        ["todo", "list", "--limit", "0"],  # out of range
        ["todo", "list", "--limit", "-1"],
        ["todo", "list", "--limit", "٣"],  # a digit, but not one click reads
        ["todo", "claim", "-t", "x", "--sync=yes"],  # a flag takes no value
        ["status", "-fjson"],  # a clustered short option
        ["--version", "status"],
        ["rollback", "--event", "e"],  # a group with a callback of its own
        ["hook", "run", "pre-commit"],  # arguments
        ["nope"],
    ],
)
def test_what_it_is_not_sure_of_goes_to_typer(argv):
    with pytest.raises(fast.Unsure):
        parsed = fast.parse(argv, app, SHARED_OPTIONS)
        if parsed.root["version"]:  # read, but handed to typer by run_cli
            raise fast.Unsure


def test_the_format_after_the_command_follows_clicks_order():
    """Of --format and --json after the command, the one whose first appearance comes later wins,
    with its last value: the order click runs the options' callbacks in. --json beside a --format
    that is not json asks for two formats (issue 32): left to typer, which refuses it (exit 2)."""
    cases = {
        ("--json",): "json",
        ("--format", "yaml"): "yaml",
        ("--format", "json", "--json"): "json",
        ("--json", "--format", "json"): "json",
        ("-f", "yaml", "-f", "text"): "text",
    }
    for tail, expected in cases.items():
        assert fast.parse(["status", *tail], app, SHARED_OPTIONS).format == expected, tail
    for tail in (("--format", "yaml", "--json"), ("--json", "--format", "yaml"), ("--json", "-f", "text")):
        with pytest.raises(fast.Unsure):
            fast.parse(["status", *tail], app, SHARED_OPTIONS)


def test_a_read_loads_neither_typer_nor_rich_nor_the_write_path(repo, git_repo):
    """`loopx status`, piped, is answered through the fast path: typer, rich, the domain operations
    and the document renderer stay unloaded."""
    code = (
        "import sys; from loopx_git.cli.main import run_cli; "
        f"rc = run_cli(['--repo', {str(git_repo)!r}, 'status']); "
        "print(rc, sorted({m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'ruamel') "
        "or m.startswith('loopx_git.domain')}), file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Ship the parser" in proc.stdout
    assert proc.stderr.strip().splitlines()[-1] == "0 []", proc.stderr


def test_a_command_with_its_own_format_option_keeps_it_whole():
    """As click attaches the shared output options: a command that declares --format keeps its own,
    and the shared -f is not attached beside it; a formatless command takes neither."""
    root = Group()

    @root.callback()
    def main(ctx: Context, repo: str = Option(".", "--repo"), version: bool = Option(False, "--version")) -> None:
        """Root."""

    @root.command("diff")
    def diff(ctx: Context, format: str = Option("text", "--format")) -> None:
        """Own --format."""

    @root.command("plain")
    def plain(ctx: Context, name: str = Option("x", "--name")) -> None:
        """Formatless."""

    assert fast.parse(["diff", "--format", "patch"], root, SHARED_OPTIONS).kwargs == {"format": "patch"}
    for argv in (["diff", "-f", "json"], ["plain", "--json"]):
        with pytest.raises(fast.Unsure):
            fast.parse(argv, root, SHARED_OPTIONS, {"plain"})
    assert fast.parse(["diff", "--json"], root, SHARED_OPTIONS).format == "json"


def test_version_loads_nothing_but_the_entry_point():
    code = (
        "import sys; from loopx_git.cli.main import run_cli; rc = run_cli(['--version']); "
        "print(rc, sorted({m.split('.')[0] for m in sys.modules} & {'pygit2', 'pydantic', 'typer', 'rich', 'ruamel'}), "
        "file=sys.stderr)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.startswith("loopx ") and proc.stderr.strip() == "0 []", proc.stderr

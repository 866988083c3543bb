"""The global options every command sees, held in one small frozen object (no module state)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from loopx_git.cli.params import Context, Option

if TYPE_CHECKING:
    from loopx_git.api import StateRepo


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


@dataclass(frozen=True)
class Ctx:
    repo: str = "."
    format: OutputFormat = OutputFormat.text
    state_branch: str | None = None
    goal_env: str | None = None
    """``LOOPX_GOAL_ID`` as the command started (read here, in the CLI, and passed down)."""
    agent_env: str | None = None
    """``LOOPX_AGENT_ID`` as the command started."""
    commands: Any = field(default=None, compare=False)
    """The command tree this command runs in (``cli/main.py``'s app): ``loopx mcp`` serves its tools."""
    notices: list = field(default_factory=list, compare=False)
    """Notices (``errors.Notice``) a command's repository handed back when it closed: a write's
    JSON envelope carries them as ``warnings``; whatever is left is printed to stderr at the end."""

    def goal(self, repo: StateRepo, goal_id: str | None, *, check: bool = True) -> str:
        """The goal a command means: -g, then LOOPX_GOAL_ID, `git config loopx.goal`, the only goal.
        ``check=False``: a default is passed on unchecked, for a command that pulls before it reads."""
        return repo.resolve_goal(goal_id, env=self.goal_env, check=check).value

    def actor(self, repo: StateRepo, goal_id: str, agent_id: str | None) -> str | None:
        """The agent a command acts as: -a, then LOOPX_AGENT_ID, `git config loopx.agent`; None is a
        person. Only for commands that act: a read's --agent-id filter never takes a default."""
        found = repo.resolve_agent(goal_id, agent_id, env=self.agent_env)
        return found.value if found else None

    def agent(self, repo: StateRepo, goal_id: str, agent_id: str | None, *, check: bool = True) -> str:
        """The agent of a command that only an agent runs (``todo claim``): as ``actor``, but refused
        (``agent-required``) when none is named, and a configured default must be registered."""
        from loopx_git.defaults import require_agent_id

        found = repo.resolve_agent(goal_id, agent_id, env=self.agent_env, check=check, required=True)
        return require_agent_id(found)

    def open(self, *, redact: bool = False) -> StateRepo:
        from loopx_git.api import StateRepo  # lazy: `loopx --help` must not load git
        from loopx_git.cli import masking
        from loopx_git.errors import LoopxError

        try:
            repo = StateRepo.open(self.repo, state_ref=self.state_branch, redact=redact)
        except LoopxError:  # a refusal may quote the configuration it could not use: learn it first
            masking.learn_repo(_discovered(self.repo))
            raise
        masking.learn_repo(repo.git)
        return repo

    @contextmanager
    def session(self, *, redact: bool = False) -> Iterator[StateRepo]:
        """The repository for one command; closing it saves the fold cache and packs if due."""
        repo = self.open(redact=redact)
        try:
            yield repo
        finally:
            self.notices.extend(n for n in repo.close() if n not in self.notices)

    def flush_notices(self) -> None:
        """Print the notices no envelope carried (stderr, so JSON on stdout stays clean)."""
        import sys

        from loopx_git.cli.text import one_line

        while self.notices:
            sys.stderr.write(one_line(f"warning: {self.notices.pop(0).describe()}") + "\n")


def _discovered(path: str) -> Any:
    """The git repository at ``path``, or None where there is none."""
    from loopx_git.errors import LoopxError
    from loopx_git.store.git import GitRepo

    try:
        return GitRepo.discover(path)
    except LoopxError:
        return None


REDACT = Option(False, "--redact", help="Write secrets and private paths as [REDACTED:<rule>] instead of refusing.")
"""Every writing command takes it: refusing is the default, redacting is asked for."""

# The options many commands share, declared once so each long option has the same short one everywhere
# (docs/cli.md has the table; tests/cli/test_options.py checks every command against it).
GOAL_ID = Option(
    None, "--goal-id", "-g", help="Goal id (default: LOOPX_GOAL_ID, git config loopx.goal, or the only goal)."
)
NEW_GOAL_ID = Option(..., "--goal-id", "-g", help="Goal id.")
"""Where the goal is created, so never a default: ``goal create``."""
DEFAULT_GOAL = Option(
    None,
    "--goal-id",
    "-g",
    help="Make this goal the clone's default (git config loopx.goal); with --objective, create it first.",
)
"""``connect``: the goal it sets as the default, so never a default itself."""
AGENT_ID = Option(
    None,
    "--agent-id",
    "-a",
    help="The agent acting (default: LOOPX_AGENT_ID or git config loopx.agent; none: a person acts).",
)
"""The actor of a write: takes the agent default."""
CLAIMANT = Option(
    None,
    "--agent-id",
    "-a",
    help="The registered agent acting; required (default: LOOPX_AGENT_ID or git config loopx.agent).",
)
"""The agent of a command that only an agent runs (``todo claim``)."""
AGENT_FILTER = Option(None, "--agent-id", "-a", help="Only this agent (a read is never scoped by default).")
"""A read's filter: never takes the agent default, so a person reading the whole card gets all of it."""
CREATOR = Option(None, "--agent-id", "-a", help="Who is acting (default: a person; a new goal has no agents).")
NAMED_AGENT = Option(..., "--agent-id", "-a", help="Agent id.")
TODO_ID = Option(..., "--todo-id", "-t", help="Todo id.")
NEW_TODO_ID = Option(None, "--todo-id", "-t", help="Choose the id (default: generated).")
TODO_REF = Option(None, "--todo-id", "-t", help="The todo it concerns.")
TODO_FILTER = Option(None, "--todo-id", "-t", help="Only this todo.")
REMOTE = Option("origin", "--remote", "-r", help="The git remote.")
TRACK_REMOTE = Option(None, "--remote", "-r", help="Also make `git fetch REMOTE` bring the state branch.")
LIMIT = Option(None, "--limit", "-n", min=1, max=1_000_000, help="Only the newest N.")


def _format_given(ctx: Any, value: OutputFormat | None) -> None:
    if value is not None:
        ctx.meta["loopx.format"] = value
        _one_format(ctx)
        _set_format(ctx, value)


def _json_given(ctx: Any, value: bool) -> None:
    if value:
        ctx.meta["loopx.json"] = True
        _one_format(ctx)
        _set_format(ctx, OutputFormat.json)


def _one_format(ctx: Any) -> None:
    """``--json`` and ``--format yaml`` after one command ask for two formats: a usage error."""
    chosen = ctx.meta.get("loopx.format")
    if ctx.meta.get("loopx.json") and chosen not in (None, OutputFormat.json):
        ctx.fail(f"--json and --format {chosen.value} ask for two formats; give one")


def _set_format(ctx: Any, value: OutputFormat) -> None:
    from dataclasses import replace

    root = ctx.find_root()
    if isinstance(root.obj, Ctx):  # the root callback runs before a command's options (not while completing)
        root.obj = replace(root.obj, format=value)


def output_options() -> list:
    """``--format/-f`` and ``--json`` as click parameters, which main.py attaches to every command: the
    format may follow the command (``loopx status -g G --format json``, as gh and the seeds write it),
    and there it wins over one given before the command. Built through typer, like every other option
    (``cli/fast.py`` reads the same two options itself)."""
    import typer

    holder = typer.Typer(add_completion=False)

    @holder.command()
    def options(
        fmt: OutputFormat | None = typer.Option(
            None,
            "--format",
            "-f",
            help="Output: text for people, json/yaml for scripts (here or before the command).",
            callback=_format_given,
            expose_value=False,
        ),
        as_json: bool = typer.Option(
            False, "--json", help="Shorthand for --format json.", callback=_json_given, expose_value=False
        ),
    ) -> None:
        """Never run: it only carries the options."""

    return list(typer.main.get_command(holder).params)


def get(ctx: Context) -> Ctx:
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, Ctx) else Ctx()


MAX_INPUT_BYTES = 16 << 20
"""A JSON file given to a command (a packet, a conformance document) is read up to this size:
/dev/zero or a runaway file is refused, not read until memory runs out."""


def read_input(path, *, field: str, source: str) -> bytes:
    """The bytes of an input file, or a ValidationError naming ``field``: unreadable, or too large."""
    from loopx_git.errors import ValidationError

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise ValidationError(
            f"field '{field}': {source} cannot be read ({exc.strerror or exc})", code="invalid-field"
        ) from exc
    if len(data) > MAX_INPUT_BYTES:
        raise ValidationError(
            f"field '{field}': {source} is larger than {MAX_INPUT_BYTES >> 20} MiB; rule: a JSON input "
            f"file is at most {MAX_INPUT_BYTES >> 20} MiB",
            code="invalid-field",
        )
    return data


MAX_REVISION = 1024
"""The longest revision an option naming a commit takes: git's own bound on a ref name."""


def check_revision(spec: str | None, *, field: str) -> None:
    """Refuse (ValidationError naming ``field``) a revision no commit can have: git takes it as one
    argument, and past 128 KiB the system refuses to start git at all."""
    from loopx_git.errors import ValidationError

    if spec is not None and len(spec) > MAX_REVISION:
        raise ValidationError(
            f"field '{field}': is {len(spec)} characters long; rule: a commit is named by a sha or a "
            f"revision of at most {MAX_REVISION} characters",
            code="invalid-field",
        )

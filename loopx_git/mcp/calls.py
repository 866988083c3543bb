"""One tool call: a ``loopx`` command run in-process with ``--format json``, its printed JSON handed
back as data, and every way it can fail turned into a ``Refusal`` (code, message, field, hint), never
a traceback. Synchronous and SDK-free: the server runs it in a worker thread, one call at a time.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as ArgumentError

from loopx_git.errors import Refusal
from loopx_git.mcp.tools import Tool

if TYPE_CHECKING:
    from loopx_git.cli.params import Group

Progress = Callable[[str, int, int], None]
"""``(stage, done, total)``, as ``render.Progress`` reports long work (a sync over a big history)."""


@dataclass(frozen=True)
class Defaults:
    """What the server was started with: the commands it serves (the CLI's tree, handed over by
    ``loopx mcp``), the repository, and the goal and agent a call falls back on (as
    ``LOOPX_GOAL_ID`` / ``LOOPX_AGENT_ID`` do for the CLI; a tool's own argument wins)."""

    commands: Group
    repo: str = "."
    state_branch: str | None = None
    goal_id: str | None = None
    agent_id: str | None = None


@dataclass
class Answer:
    data: Any
    """The JSON the command printed, parsed."""
    text: str
    """The same JSON as the command printed it."""
    warnings: list[str] = field(default_factory=list)
    """Notices the command printed to stderr beside its result (a chore after a commit that stands)."""


def refusal(code: str, message: str, *, field: str | None = None, hint: str | None = None, data=None) -> Refusal:
    """A ``Refusal`` whose message, hint and field are shown as the CLI's stderr shows them: cut
    when a quoted value makes them long, control characters escaped, and anything a safety rule
    matches masked (a caller's argument name may be the secret itself)."""
    return Refusal(
        code, shown(message), field=shown(field) if field else field, hint=shown(hint) if hint else hint, data=data
    )


def shown(text: str) -> str:
    """A message as the CLI's stderr shows it: masked (by the mask of the call under way, which
    knows the values the call was handed, else by the rules alone), then cut and escaped."""
    from loopx_git.cli.masking import current
    from loopx_git.errors import clipped
    from loopx_git.model.canonical import printable
    from loopx_git.safety.mask import masked

    mask = current()
    return clipped(printable(mask.text(text) if mask is not None else masked(text)))


_FIELD = re.compile(r"field '([^']{1,200})'")
_ABOUT = re.compile(r"([a-z][a-z_]{0,60}) '")


def field_of(message: str, names: Collection[str] | None = None) -> str | None:
    """The field a loopx error message names, as one of ``names`` (a tool's arguments) where it is
    one: ``field 'text': ...`` (how a refusal of bad input is written: a field of a record, such as
    ``lane.lane_id`` or ``todo_ids``, is the argument that filled it), or the thing a message starts
    with (``todo 'x' is already claimed``: ``todo_id``). A named field that is no argument (one
    inside an observation document) is given as the message names it."""
    named = _FIELD.search(message)
    raw = named.group(1) if named else None
    if raw is None:
        about = _ABOUT.match(message)
        if about is None or names is None:
            return None
        return next((c for c in _candidates(about.group(1)) if c in names), None)
    if names is None:
        return raw
    return next((c for c in _candidates(raw) if c in names), raw)


def _candidates(raw: str) -> Iterator[str]:
    word = raw.split(" ")[0]  # "agent_id (from LOOPX_AGENT_ID)"
    last = re.sub(r"(\.[0-9]+)+$", "", word).split(".")[-1]  # "explore_result_node_refs.0", "lane.lane_id"
    yield word
    yield last
    if last.endswith("s"):
        yield last[:-1]  # todo_ids: the argument is todo_id (repeatable)
    yield f"{last}_id"  # "todo 'x'": todo_id


def call(tool: Tool, arguments: dict[str, Any] | None, defaults: Defaults, progress: Progress | None = None) -> Answer:
    """Run ``tool`` with ``arguments``; an Answer, or a Refusal saying why not."""
    try:
        checked = tool.model.model_validate(arguments or {})
    except ArgumentError as exc:
        raise _bad_argument(tool, exc) from None
    kwargs = tool.kwargs(checked)
    if "agent_id" in kwargs and kwargs["agent_id"] is None and tool.agent_required:
        if defaults.agent_id is None:
            raise refusal(
                "invalid-field",
                f"field 'agent_id': is required; rule: {tool.spec.name} acts for an agent, named in the call or "
                "by the server (loopx mcp -a AGENT)",
                field="agent_id",
            )
        kwargs["agent_id"] = defaults.agent_id
    with _inline_files(tool, kwargs):
        return run_command(tool.command.func, kwargs, defaults, progress, tool.names)


def run_command(
    func: Callable[..., Any],
    kwargs: dict[str, Any],
    defaults: Defaults,
    progress: Progress | None = None,
    names: Collection[str] | None = None,
) -> Answer:
    """``func`` (a command) with ``kwargs``, as ``loopx ... --format json`` runs it; ``names`` are
    the calling tool's arguments, which a refusal's field is given as."""
    from loopx_git.arguments import refuse_nul
    from loopx_git.cli import masking, render
    from loopx_git.cli.context import Ctx, OutputFormat
    from loopx_git.cli.params import Context
    from loopx_git.errors import BadParameter, outcome

    obj = Ctx(
        repo=defaults.repo,
        format=OutputFormat.json,
        state_branch=defaults.state_branch,
        goal_env=defaults.goal_id or os.environ.get("LOOPX_GOAL_ID") or None,
        agent_env=defaults.agent_id,  # -a, or LOOPX_AGENT_ID as the server started (loopx mcp)
    )
    rc: Any = 0
    handed = [v for value in kwargs.values() for v in (value if isinstance(value, (list, tuple)) else [value])]
    handed += [defaults.goal_id, defaults.agent_id, defaults.state_branch, defaults.repo]
    # what the command prints passes the CLI's mask, and so does a refusal's message (``shown``)
    with _captured() as (out, err), masking.masked_output(masking.new_mask(handed)), render.progress_to(progress):
        try:
            refuse_nul(kwargs)
            rc = func(Context(obj), **kwargs)
        except BadParameter as exc:
            raise refusal("usage", exc.message, field=_hinted(exc.param_hint, names)) from None
        except Exception as exc:  # the boundary, as the CLI's: a bug says what it was, never a traceback
            said = outcome(exc)
            if said.internal:
                raise refusal(said.code, said.message) from None
            if said.code != "exit":
                field = field_of(said.message, names)
                raise refusal(
                    said.code, said.message, field=field, hint=said.hint, data=_parsed(out.getvalue())
                ) from None
            rc = said.exit_code
        warnings = [f"warning: {n.describe()}" for n in obj.notices]
        warnings += [line for line in err.getvalue().splitlines() if line.strip()]
    text = out.getvalue()
    data = _parsed(text)
    if isinstance(rc, int) and rc != 0:
        raise refusal("failed", f"the command ended with exit code {rc}", data=data)
    return Answer(data, text.strip(), warnings)


def internal(exc: BaseException) -> Refusal:
    """A bug, said as the CLI says one (exit 3 there): its type and text, never a traceback."""
    from loopx_git.errors import outcome

    return refusal("internal", outcome(exc).message)


def _hinted(param_hint: str | None, names: Collection[str] | None) -> str | None:
    """``'--self-merge-allowed'`` (click's spelling of an option) as the argument's name."""
    if not param_hint:
        return None
    name = param_hint.split(" / ")[0].strip("'\" ").lstrip("-").replace("-", "_")
    return name if names is None or name in names else None


def _parsed(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except json.JSONDecodeError:
        return {"output": text}  # a command whose answer is not JSON (none of the tools' is)


@contextmanager
def _captured() -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """stdout and stderr as the command writes them. Process-wide, so calls run one at a time; the
    protocol itself is not on ``sys.stdout`` (the SDK's stdio transport holds its own stream)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    was = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        yield _Reader(out), _Reader(err)  # type: ignore[misc]
    finally:
        sys.stdout, sys.stderr = was


class _Reader:
    """What a captured stream holds so far, as text."""

    def __init__(self, stream: io.TextIOWrapper) -> None:
        self.stream = stream

    def getvalue(self) -> str:
        self.stream.flush()
        buffer = self.stream.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue().decode("utf-8", "replace")


@contextmanager
def _inline_files(tool: Tool, kwargs: dict[str, Any]) -> Iterator[None]:
    """A tool argument that carries a file's content inline (``observation`` for ``explore observe``)
    is written to a private temporary file, and the command reads it from there, as from a path."""
    paths = []
    try:
        for inline, param in tool.spec.inline.items():
            value = kwargs.pop(inline, None)
            if value is None:
                continue
            handle, path = tempfile.mkstemp(prefix="loopx-mcp-", suffix=".json")
            paths.append(path)
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(value, file)
            kwargs[param] = path
        yield
    finally:
        for path in paths:
            os.unlink(path)


def _bad_argument(tool: Tool, exc: ArgumentError) -> Refusal:
    """The first problem pydantic found, as the CLI words one: the field, the problem, the rule. The
    value itself is never quoted back (it may be the secret a safety rule is about)."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or None
    problem = first["msg"]
    if first["type"] == "extra_forbidden":
        problem = "is not an argument of this tool"
    elif first["type"] == "missing":
        problem = "is required"
    return refusal(
        "invalid-field",
        f"field '{where}': {problem}; rule: the arguments follow {tool.spec.name}'s input schema",
        field=str(first["loc"][0]) if first["loc"] else None,  # the argument, even for "evidence.0"
        hint="list the tools (tools/list) for each argument's type and description",
    )

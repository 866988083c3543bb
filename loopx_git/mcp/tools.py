"""The MCP tools: which ``loopx`` commands are served, when an agent uses each, and each one's input
schema, built from the command's own option declarations (``cli/params.py``) as a pydantic model.

Nothing here loads the SDK: the table, the schemas and ``docs/mcp.md``'s tool list come from the
commands alone, so the list cannot drift from what the CLI takes.
"""

from __future__ import annotations

import enum
import functools
import json
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from loopx_git.cli import fast
from loopx_git.cli.params import Command, Group, Opt, declared


@dataclass(frozen=True)
class ToolSpec:
    words: tuple[str, ...]
    """The command it runs: ``("todo", "add")`` is ``loopx todo add``."""
    use_when: str
    """When an agent calls it: the first sentence of its description."""
    read_only: bool = False
    inline: dict[str, str] = field(default_factory=dict)
    """Arguments that carry a file's content as JSON, in place of the option naming the file: an
    agent passes the document, and the call writes it to a temporary file for the command."""

    @property
    def name(self) -> str:
        return "loopx_" + "_".join(self.words).replace("-", "_")


DECLARED = ""
"""The ``use_when`` of a tool whose operation is declared (``domain/operation.py``): the declaration
says when to use it. The table places such a tool; a declared operation it does not name is served
after the table's tools, in the catalogue's order."""

_TABLE: tuple[ToolSpec, ...] = (
    ToolSpec(
        ("prime",),
        "Call first at the start of every turn: a brief of at most 4 KiB with the goal, your next action "
        "and contract, what waits for you and how to write back.",
        read_only=True,
    ),
    ToolSpec(
        ("status",),
        "Use to see a goal's whole card: its todos by state, agents, gates, handoffs, conflicts and the "
        "latest delivery outcome.",
        read_only=True,
    ),
    ToolSpec(
        ("quota", "should-run"),
        "Use before starting work: says whether this agent should run now, on what, and under which "
        "contract (it reads the state; spend-slot records the run).",
        read_only=True,
    ),
    ToolSpec(
        ("quota", "spend-slot"),
        "Use once you start a run that should-run allowed: records the run against the agent's quota.",
    ),
    ToolSpec(
        ("todo", "list"),
        "Use to find work: the goal's todos, filtered by status, role or claimant.",
        read_only=True,
    ),
    ToolSpec(("todo", "show"), "Use to read one todo in full before acting on it.", read_only=True),
    ToolSpec(
        ("todo", "add"),
        "Use when you find work that is not yet recorded: adds a formal todo (one commit).",
    ),
    ToolSpec(
        ("todo", "claim"),
        "Use before you work on a todo: claims it for you; a todo another agent holds is refused "
        "(code rule), so two agents never work on one todo.",
    ),
    ToolSpec(
        ("todo", "update"),
        "Use when a todo you hold is blocked, deferred until a condition, or must be released.",
    ),
    ToolSpec(
        ("todo", "complete"),
        "Use when a todo's work is done: closes it with evidence (a file, commit, PR or digest).",
    ),
    ToolSpec(
        ("event", "append"),
        "Use to record a fact worth keeping that no other tool records: a note, a decision, a PR, a validation.",
    ),
    ToolSpec(
        ("refresh-state",),
        "Use at the end of a turn: records the run's classification, delivery outcome, evidence and typed "
        "progress (the progress_* fields).",
    ),
    ToolSpec(
        ("history",),
        "Use to see what earlier runs did, or which run an evidence reference (evidence_ref) came from.",
        read_only=True,
    ),
    ToolSpec(
        ("ledger", "next"),
        "Use when the loop ledger drives the work: the next entry to act on, by priority.",
    ),
    ToolSpec(
        ("ledger", "record"),
        "Use after acting on a ledger entry: records its status, verdict and next step.",
    ),
    ToolSpec(("ledger", "list"), "Use to read the whole loop ledger of a goal.", read_only=True),
    ToolSpec(("gate", "open"), DECLARED),
    ToolSpec(("gate", "decide"), DECLARED),
    ToolSpec(
        ("handoff", "prepare"),
        "Use to hand todos to another agent: names the scope, the stop condition and the evidence.",
    ),
    ToolSpec(
        ("handoff", "adopt"),
        "Use when a handoff to you is waiting (prime lists it): takes over its todos.",
    ),
    ToolSpec(
        ("reward", "add"),
        "Use to record a person's judgement of a run, and the lesson to keep from it.",
    ),
    ToolSpec(
        ("explore", "observe"),
        "Use in research work to record an observation: the typed_research_observation_v0 envelope, as `observation`.",
        inline={"observation": "observation_json"},
    ),
    ToolSpec(
        ("explore", "summary"),
        "Use in research work to see what has been observed, the open gaps and the next probe.",
        read_only=True,
    ),
    ToolSpec(
        ("review-packet",),
        "Use to prepare a review for the operator: attention items, gates, handoffs, evidence and rollback candidates.",
        read_only=True,
    ),
    ToolSpec(
        ("sync",),
        "Use to meet the other clones: pulls the remote state branch, merges, then pushes (never a force push).",
    ),
)


def _with_declared(table: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
    """The table, each declared operation's sentence in its place, then the declared operations it
    does not name: adding an operation to a family serves it as a tool."""
    from loopx_git.domain.catalog import OPERATIONS

    declared = {op.words: op.use_when for op in OPERATIONS.values() if op.use_when}
    placed = tuple(
        ToolSpec(spec.words, declared[spec.words], spec.read_only, spec.inline) if spec.use_when == DECLARED else spec
        for spec in table
    )
    named = {spec.words for spec in table}
    return placed + tuple(ToolSpec(words, use) for words, use in declared.items() if words not in named)


TOOLS: tuple[ToolSpec, ...] = _with_declared(_TABLE)
BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in TOOLS}


def command(words: tuple[str, ...], commands: Group) -> Command:
    """The declared command ``words`` name in ``commands``, the command tree the server was started
    from (``loopx mcp`` hands it its own: the tools are the CLI's commands)."""
    found = _find(commands, words)
    if found is None:  # pragma: no cover - the table names commands that exist (tests check every one)
        raise LookupError(" ".join(words))
    return found


def _find(group: Group, words: tuple[str, ...]) -> Command | None:
    if len(words) == 1:
        return group.command_named(words[0])
    sub = next((g for name, g in group.groups if name == words[0]), None)
    return None if sub is None else _find(sub, words[1:])


@dataclass(frozen=True)
class Argument:
    """One tool argument: its name in the schema (the long option's, ``--todo-id`` is ``todo_id``)
    and the command's parameter it fills."""

    name: str
    param: str
    kind: str
    enum_type: type[enum.Enum] | None = None
    required: bool = False


@dataclass(frozen=True)
class Tool:
    spec: ToolSpec
    command: Command
    model: type[BaseModel]
    arguments: tuple[Argument, ...]

    @property
    def description(self) -> str:
        doc = (self.command.func.__doc__ or "").strip().split("\n\n")[0]
        return f"{self.spec.use_when}\n\n`loopx {' '.join(self.spec.words)}`: {' '.join(doc.split())}"

    @property
    def names(self) -> frozenset[str]:
        """The names of its arguments, as its input schema has them."""
        return frozenset(self.model.model_fields)

    @property
    def agent_required(self) -> bool:
        """The command requires -a (quota should-run): the server's agent stands in for it."""
        return any(arg.param == "agent_id" and arg.required for arg in self.arguments)

    def input_schema(self) -> dict[str, Any]:
        schema = self.model.model_json_schema()
        schema.setdefault("type", "object")  # MCP: the root of an input schema is an object
        return schema

    def kwargs(self, arguments: BaseModel) -> dict[str, Any]:
        """The command's keyword arguments from validated tool arguments."""
        values = {}
        for arg in self.arguments:
            value = getattr(arguments, arg.name)
            if arg.enum_type is not None and value is not None:
                value = arg.enum_type(value)
            elif arg.kind == "list":
                value = list(value or [])
            values[arg.param] = value
        for inline in self.spec.inline:
            values[inline] = getattr(arguments, inline)
        return values


@functools.cache
def tool(name: str, commands: Group) -> Tool:
    spec = BY_NAME[name]
    cmd = command(spec.words, commands)
    hints = typing.get_type_hints(cmd.func)
    _, by_param = fast.options(cmd.func)
    fields: dict[str, Any] = {}
    arguments = []
    for param_name, param in by_param.items():
        opt = _declared(cmd, param_name)
        arg = Argument(
            _long_name(param_name, opt), param_name, param.kind, _enum_of(hints[param_name]), required=opt.required
        )
        fields[arg.name] = _field(param, opt, arg)
        arguments.append(arg)
    if "agent_id" in fields and by_param["agent_id"].default is Ellipsis:
        # a command only an agent runs (quota should-run) requires -a; a server started for an agent
        # (loopx mcp -a A) fills it in, as LOOPX_AGENT_ID does where the CLI takes a default
        described = fields["agent_id"][1].description
        fields["agent_id"] = (
            str | None,
            Field(default=None, description=f"{described} Required unless the server was started with -a."),
        )
    for inline, option in spec.inline.items():
        # the document itself, never a path: a server reading paths it is handed could be pointed at a
        # FIFO or /dev/zero, or at files outside the project
        del fields[option]
        arguments = [arg for arg in arguments if arg.param != option]
        fields[inline] = (dict[str, Any], Field(description="The document itself, as a JSON object."))
    model = create_model(  # fields are built at run time
        _model_name(spec.words),
        __config__=ConfigDict(extra="forbid", strict=True, title=spec.name),  # "5" is no number, 1 no flag
        **fields,
    )
    return Tool(spec, cmd, model, tuple(arguments))


def tools(commands: Group) -> list[Tool]:
    return [tool(spec.name, commands) for spec in TOOLS]


def _declared(cmd: Command, param_name: str) -> Opt:
    for name, default in declared(cmd.func):
        if name == param_name and isinstance(default, Opt):
            return default
    raise LookupError(param_name)  # pragma: no cover - fast.options read the same declarations


def _long_name(param_name: str, opt: Opt) -> str:
    """``--explore-result-node-ref`` is ``explore_result_node_ref``, ``--all`` is ``all`` (the
    parameter behind it is ``all_``): an agent writes the names the CLI's help shows."""
    long = next((d for d in opt.decls if d.startswith("--")), None)
    return long[2:].replace("-", "_") if long else param_name


def _enum_of(hint: Any) -> type[enum.Enum] | None:
    for candidate in (hint, *typing.get_args(hint)):
        if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
            return candidate
    return None


def _field(param: fast.Param, opt: Opt, arg: Argument) -> tuple[Any, Any]:
    help_text = " ".join(str(opt.settings.get("help", "")).split()) or None
    required = opt.required
    default = None if required else param.default
    kind = param.kind
    if kind == "flag":
        return bool, Field(default=bool(default), description=help_text)
    if kind == "list":
        return list[str], Field(default_factory=list, description=help_text)
    if kind == "int":
        bounds = {k: v for k, v in (("ge", opt.settings.get("min")), ("le", opt.settings.get("max"))) if v is not None}
        annotation: Any = int
        return (annotation if required else annotation | None), _default(required, default, help_text, **bounds)
    if kind == "choice":
        annotation = Literal[tuple(sorted(param.choices))]
    elif kind == "enum" and arg.enum_type is not None:
        annotation = Literal[tuple(m.value for m in arg.enum_type)]
        default = default.value if isinstance(default, enum.Enum) else default
    else:
        annotation = str
    if required or default is not None:
        return annotation, _default(required, default, help_text)
    return annotation | None, _default(required, None, help_text)


def _default(required: bool, default: Any, description: str | None, **bounds: Any) -> Any:
    if required:
        return Field(description=description, **bounds)
    return Field(default=default, description=description, **bounds)


def _model_name(words: tuple[str, ...]) -> str:
    return "".join(part.capitalize() for word in words for part in word.split("-")) + "Arguments"


REFERENCE_START, REFERENCE_END = "<!-- tools: generated by python -m loopx_git.mcp.tools -->", "<!-- end of tools -->"
"""The markers around the tool reference in docs/mcp.md, which the test suite regenerates and compares."""


def reference(commands: Group) -> str:
    """The tool reference as Markdown: per tool, when to use it, its command and its arguments."""
    lines = [REFERENCE_START, ""]
    for item in tools(commands):
        schema = item.input_schema()
        required = set(schema.get("required", []))
        lines += [f"### `{item.spec.name}`", "", item.spec.use_when, ""]
        lines += [f"Runs `loopx {' '.join(item.spec.words)}`." + (" Reads only." if item.spec.read_only else ""), ""]
        lines += ["| argument | type | default | meaning |", "| --- | --- | --- | --- |"]
        for name, prop in schema["properties"].items():
            default = "required" if name in required else f"`{json.dumps(prop.get('default'))}`"
            meaning = (prop.get("description") or "").replace("|", "\\|")
            lines.append(f"| `{name}` | {_type(prop)} | {default} | {meaning} |")
        lines.append("")
    lines.append(REFERENCE_END)
    return "\n".join(lines) + "\n"


def _type(prop: dict[str, Any]) -> str:
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    if "anyOf" in prop:
        return " or ".join(_type(p) for p in prop["anyOf"] if p.get("type") != "null")
    if prop.get("type") == "array":
        return f"list of {_type(prop.get('items', {}))}"
    return str(prop.get("type", "any"))


def rewrite(path: str, commands: Group) -> bool:
    """Put the current reference between the markers of the file at ``path``; True when it changed."""
    from loopx_git.docblock import rewrite as put

    return put(path, REFERENCE_START, REFERENCE_END, reference(commands))


if __name__ == "__main__":  # python -m loopx_git.mcp.tools docs/mcp.md
    import sys

    from loopx_git.cli.main import app  # run as a script, this module is not the one the server imports

    for target in sys.argv[1:] or ["docs/mcp.md"]:
        print(f"{target}: {'rewritten' if rewrite(target, app) else 'up to date'}")

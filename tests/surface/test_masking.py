"""Nothing loopx prints carries a secret it was handed, or one already on the branch (issue 32,
items 3 and 6), proved over the whole command line rather than command by command:

- every command and every option or argument that takes text (walked from the app the CLI
  builds, so a new option is covered the day it is added) is fed a planted secret in each shape —
  as it is, with a word character before it, cut over a folded YAML scalar, split by ``+`` — the
  rule families taking turns across the options; in text and in JSON; refused or accepted;
- every context default (``LOOPX_GOAL_ID``, ``LOOPX_AGENT_ID``, ``git config loopx.goal``,
  ``loopx.agent``, ``loopx.stateRef``) is set to one, for every command;
- a secret written to the branch with plain git is masked by every read of it;
- the mask itself is shown to hold every family in every shape, however a message quotes it.

A failure names the command, the option, the shape and the run of characters that got out.
"""

from __future__ import annotations

import io
import json
import string
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_git.cli.main import run_cli
from loopx_git.safety.output import PIECE, OutputMask
from loopx_git.safety.rules import FAMILIES
from tests.conftest import GOAL, git
from tests.hostile.commands import commands
from tests.hostile.test_cli_options import SKIPPED, TEXT_PARAMS, argv
from tests.surface.tokens import FAMILY_TOKENS, SHAPED, Shaped, check_planted, leaked

SHAPES = ("plain", "word-glued", "folded", "plus")
BY_SHAPE = {shape: [s for s in SHAPED if s.name.startswith(shape + " ")] for shape in SHAPES}


def test_the_planted_values_cover_every_rule_family_and_are_found():
    check_planted()
    assert {name.split(" ")[0] for name in FAMILY_TOKENS} == set(FAMILIES)


def _turn(index: int, shape: str) -> Shaped:
    """The value an option gets in ``shape``: the families take turns across the options."""
    values = BY_SHAPE[shape]
    return values[(index + SHAPES.index(shape)) % len(values)]


def _run(shared, args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    import os

    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = run_cli(["--repo", str(shared.path), *args])
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if args[:1] == ["connect"] or args[2:3] == ["connect"]:
        shared.restore()
    return code, out.getvalue() + err.getvalue()


def _line(param, value: str) -> list[str]:
    line = argv(param, value)
    return line + ["status"] if not param.path else line  # a global option, before a command


CASES = [(param, shape, _turn(i, shape)) for i, param in enumerate(TEXT_PARAMS) for shape in SHAPES]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_no_option_of_any_command_prints_a_secret_it_was_handed(shared, fmt, surface):
    leaks, codes = [], {}
    for param, _shape, shaped in CASES:
        args = (["--format", "json"] if fmt == "json" else []) + _line(param, shaped.value)
        code, printed = _run(shared, args)
        codes[code] = codes.get(code, 0) + 1
        assert code in (0, 1, 2), (str(param), shaped.name, printed[-500:])
        found = leaked(shaped, printed)
        if found:
            leaks.append(f"{param} [{shaped.name}]: {found[0]!r} in {printed[:300]!r}")
    ran = {p.path for p, _, _ in CASES}
    surface(
        f"{fmt}: {len(ran)} commands x {len(TEXT_PARAMS)} text options x {len(SHAPES)} shapes "
        f"({len({s.name for _, _, s in CASES})} planted values, {len(FAMILY_TOKENS)} families in turn) "
        f"= {len(CASES)} runs; exit codes {dict(sorted(codes.items()))}"
    )
    assert not leaks, f"{len(leaks)} of {len(CASES)} runs printed a secret:\n" + "\n".join(leaks[:20])


def _written_redacted(shared) -> list[tuple[str, Shaped]]:
    """Commands that accept a secret with --redact: a success, whose output must not show it."""
    out = []
    for i, param in enumerate(TEXT_PARAMS):
        if param.flag in ("--text", "--summary", "--reason", "--objective", "--stop-condition"):
            out.append((param, _turn(i, "plain")))
    return out


def test_a_write_that_redacts_a_secret_prints_no_part_of_it(shared, surface):
    leaks, runs = [], 0
    for param, shaped in _written_redacted(shared):
        line = _line(param, shaped.value)
        if "--redact" not in {o for p in TEXT_PARAMS if p.path == param.path for o in [p.flag]}:
            line = [*line[: len(param.path)], "--redact", *line[len(param.path) :]]
        for fmt in ([], ["--format", "json"]):
            code, printed = _run(shared, [*fmt, *line])
            runs += 1
            if leaked(shaped, printed):
                leaks.append(f"{param} [{shaped.name}] exit {code}: {printed[:300]!r}")
    surface(f"{runs} redacting writes checked")
    assert runs > 20 and not leaks, "\n".join(leaks[:20])


DEFAULTS = {
    "LOOPX_GOAL_ID": ("env", None),
    "LOOPX_AGENT_ID": ("env", None),
    "loopx.goal": ("config", None),
    "loopx.agent": ("config", None),
    "loopx.stateRef": ("config", None),
}


def _every_command() -> list[tuple[str, ...]]:
    return [path for path, _ in commands() if path and not any(path[: len(k)] == k for k in SKIPPED)]


@pytest.mark.slow
def test_no_context_default_is_printed_by_any_command(shared, surface):
    """A default set to a secret (an agent id pasted from the wrong clipboard) is quoted by many
    refusals ("agent_id (from LOOPX_AGENT_ID) '…' is not registered"): masked in every one."""
    paths = _every_command()
    leaks, runs = [], 0
    for d, (name, (kind, _)) in enumerate(DEFAULTS.items()):
        for i, path in enumerate(paths):
            shape = SHAPES[(i + d) % len(SHAPES)]
            shaped = _turn(i + d, shape)
            args = list(path) + _required(path)
            if kind == "env":
                _code, printed = _run(shared, args, env={name: shaped.value})
            else:
                git(shared.path, "config", name, shaped.value)
                try:
                    _code, printed = _run(shared, args)
                finally:
                    git(shared.path, "config", "--unset", name)
                    shared.restore()
            runs += 1
            if leaked(shaped, printed):
                leaks.append(f"{name} [{shaped.name}] {' '.join(path)}: {printed[:300]!r}")
    surface(f"{len(DEFAULTS)} context defaults x {len(paths)} commands = {runs} runs")
    assert not leaks, "\n".join(leaks[:20])


def _required(path: tuple[str, ...]) -> list[str]:
    """Workable values for the command's required options, as the hostile-input test gives them."""
    from tests.hostile.commands import all_params

    mine = [p for p in all_params() if p.path == path]
    if not mine:
        return []
    line = argv(mine[0], "x")[len(path) :]
    return line


# --- secrets already on the branch ------------------------------------------------------------------


def test_reads_mask_a_secret_that_plain_git_put_on_the_branch(shared, tmp_path):
    """Written by plain git (or by an older loopx): ``status``, ``events``, ``todo list`` and ``show``
    print it masked, in text and JSON (review-diff masks it and the dashboard refuses, as before)."""
    shared = _Copy(shared, tmp_path)
    work = tmp_path / "state"
    git(shared.path, "worktree", "add", "-q", str(work), "loopx/state")
    try:
        events = sorted(work.glob("goals/g1/events/**/*.json"))
        event = json.loads(events[-1].read_text())
        planted = FAMILY_TOKENS["hosting"][0]
        event["summary"] = f"leaked {planted} here"
        events[-1].write_text(json.dumps(event, indent=2, sort_keys=True) + "\n")
        git(
            work, "commit", "-q", "--no-verify", "-am", "a secret by plain git"
        )  # past any hook: the plant is the point
    finally:
        git(shared.path, "worktree", "remove", "--force", str(work))
    shaped = Shaped("on the branch", planted, (planted,))
    for args in (["events", "-g", GOAL], ["status", "-g", GOAL], ["history", "-g", GOAL]):
        for fmt in ([], ["--format", "json"]):
            _code, printed = _run(shared, [*fmt, *args])
            assert not leaked(shaped, printed), (args, fmt, printed[:500])
    assert "[REDACTED:github-token]" in _run(shared, ["events", "-g", GOAL])[1]


class _Copy:
    """A copy of the shared repository, for a test that damages its branch on purpose."""

    def __init__(self, shared, tmp_path):
        import shutil

        self.path = tmp_path / "copy" / "project"
        shutil.copytree(shared.path, self.path, symlinks=True)

    def restore(self) -> None:
        pass


def _plant(shared, tmp_path, **fields) -> None:
    """Fields of the goal's newest event rewritten by plain git (as an older loopx, or a hand, would)."""
    work = tmp_path / "plant"
    git(shared.path, "worktree", "add", "-q", str(work), "loopx/state")
    try:
        newest = sorted(work.glob("goals/g1/events/**/*.json"))[-1]
        event = json.loads(newest.read_text())
        event.update(fields)
        newest.write_text(json.dumps(event, indent=2, sort_keys=True) + "\n")
        git(work, "commit", "-q", "--no-verify", "-am", "by plain git")  # past any hook: the plant is the point
    finally:
        git(shared.path, "worktree", "remove", "--force", str(work))


@pytest.mark.parametrize(
    "summary",
    [
        "sent header Authorization: Bearer {tok} to the api",  # a table wraps it over two lines at 60 columns
        "sent header Authorization: Bearer\x0b{tok}",  # a control character printed escaped splits it
        "x" * 199 + " {ghp} tail",  # a brief cuts a line at 240 characters
        "token: >-\n  {half1}\n  {half2}",  # cut over a folded scalar: JSON and YAML escape its breaks
        "'password: \"{tok}\"' it's",  # quotes JSON escapes and YAML doubles around the value
    ],
    ids=[
        "wrapped-in-a-table",
        "escaped-control-character",
        "cut-by-the-brief",
        "folded-in-the-summary",
        "quoted-in-the-summary",
    ],
)
def test_a_secret_on_the_branch_survives_no_layout(shared, tmp_path, summary):
    from tests.safety.parts import rand
    from tests.surface.tokens import _R

    tok, ghp = rand(_R, 40), FAMILY_TOKENS["hosting"][0]
    shared = _Copy(shared, tmp_path)
    _plant(shared, tmp_path, summary=summary.format(tok=tok, ghp=ghp, half1=ghp[:20], half2=ghp[20:]))
    secrets = Shaped("planted", summary, (tok, ghp[:20], ghp[20:]) if "half1" in summary else (tok, ghp))
    for env in ({"COLUMNS": "60"}, {"COLUMNS": "200"}):
        for args in (["status", "-g", GOAL], ["events", "-g", GOAL], ["view", "agent", "-g", GOAL, "alice"]):
            for fmt in ([], ["--format", "json"], ["--format", "yaml"]):
                code, printed = _run(shared, [*fmt, *args], env=env)
                assert code in (0, 1) and not leaked(secrets, printed), (args, fmt, env, printed[-800:])
    assert _run(shared, ["verify"])[0] == 1  # the branch does not verify: a write would refuse to build on it


def test_the_brief_masks_before_it_cuts(cli, git_repo, tmp_path):
    """``prime`` cuts a long objective at 240 characters: the secret in it is redacted first (cut, it
    would be too short for its rule and too long to show)."""
    ghp = FAMILY_TOKENS["hosting"][0]
    objective = "x" * 199 + f" {ghp} tail"
    work = tmp_path / "goal"
    git(git_repo, "worktree", "add", "-q", str(work), "loopx/state")
    try:
        for path in work.glob("goals/g1/events/**/*.json"):
            event = json.loads(path.read_text())
            if event["event_kind"] == "goal_create":
                for change in event["changes"]:
                    if change["field"] == "objective":
                        change["after"] = objective
                path.write_text(json.dumps(event, indent=2, sort_keys=True) + "\n")
        git(work, "commit", "-q", "--no-verify", "-am", "by plain git")  # past any hook: the plant is the point
    finally:
        git(git_repo, "worktree", "remove", "--force", str(work))
    secrets = Shaped("objective", objective, (ghp,))
    for fmt in (None, "json"):
        for agent in ("alice", "bob"):
            result = cli("prime", "-g", GOAL, "-a", agent, fmt=fmt)
            printed = result.out + result.err
            assert result.code == 0 and "x" * 100 in printed and not leaked(secrets, printed), printed[:600]


# --- the mask itself: every family, every shape, however a message quotes it --------------------------


QUOTINGS = {
    "as it is": lambda v: f"error[x]: field 'y': {v} is bad",
    "repr": lambda v: f"error[x]: field 'y': {v!r} is bad",
    "json": lambda v: json.dumps({"error": {"message": v}}),
    "clipped": lambda v: f"todo '{v[:30]}...' not found",
    "in a hint": lambda v: f"hint: run `loopx agent register --agent-id {v}`",
    "twice": lambda v: f"{v} and again {v}",
}


@pytest.mark.parametrize("quoting", sorted(QUOTINGS))
def test_the_mask_holds_every_family_in_every_shape_however_it_is_quoted(quoting):
    for shaped in SHAPED:
        mask = OutputMask()
        mask.learn(shaped.value)
        shown = mask.text(QUOTINGS[quoting](shaped.value))
        assert not leaked(shaped, shown), (shaped.name, quoting, shown)


@settings(max_examples=300)
@given(
    pick=st.integers(min_value=0, max_value=len(SHAPED) - 1),
    before=st.text(alphabet=string.printable, max_size=20),
    after=st.text(alphabet=string.printable, max_size=20),
    cut=st.integers(min_value=PIECE, max_value=200),
)
def test_the_mask_holds_a_learned_secret_in_any_surrounding_text(pick, before, after, cut):
    shaped = SHAPED[pick]
    mask = OutputMask()
    mask.learn(shaped.value)
    message = (before + repr(shaped.value) + after)[:cut]
    assert not leaked(shaped, mask.text(message))


# --- the MCP server's answers pass the same mask ----------------------------------------------------


def test_no_tool_argument_of_the_mcp_server_comes_back_in_an_answer_or_a_refusal(shared, surface):
    """Every string argument of every tool, fed a planted secret (families and shapes in turn): the
    answer's text and data, a refusal's message, hint and data hold no part of it."""
    pytest.importorskip("mcp")  # the tool table needs nothing of the SDK, but its schemas need pydantic only
    from loopx_git.cli.main import app
    from loopx_git.errors import Refusal
    from loopx_git.mcp.calls import Defaults, call
    from loopx_git.mcp.tools import tools

    defaults = Defaults(app, repo=str(shared.path), goal_id=GOAL, agent_id="alice")
    leaks, runs = [], 0
    for t_index, tool in enumerate(tools(app)):
        schema = tool.model.model_json_schema()
        for a_index, (name, spec) in enumerate(schema.get("properties", {}).items()):
            kinds = {spec.get("type"), *(s.get("type") for s in spec.get("anyOf", []))}
            if "string" not in kinds and "array" not in kinds:
                continue
            shape = SHAPES[(t_index + a_index) % len(SHAPES)]
            shaped = _turn(t_index + a_index, shape)
            value = [shaped.value] if "string" not in kinds else shaped.value
            tip = shared.tip()
            try:
                answer = call(tool, {name: value}, defaults)
                printed = answer.text + json.dumps(answer.data) + " ".join(answer.warnings)
            except Refusal as refusal:
                printed = json.dumps(refusal.to_json())
            runs += 1
            if shared.tip() != tip:
                git(shared.path, "update-ref", "refs/heads/loopx/state", tip)
            if leaked(shaped, printed):
                leaks.append(f"{tool.spec.name}({name}) [{shaped.name}]: {printed[:300]!r}")
    surface(f"{len(tools(app))} tools: {runs} string arguments fed a planted secret")
    assert runs > 50 and not leaks, "\n".join(leaks[:20])

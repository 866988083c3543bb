"""Hostile values for every option of every command (issue 16, item 4): control characters, NUL,
bytes that are not UTF-8, 10 MB values, path-traversal ids and look-alike Unicode. Each one is
refused cleanly — exit 1 naming the option's field (2 for a malformed command line), the state ref
where it was — or, where the value is legitimately free text, accepted, round-tripped and verified.
Never exit 3, never a traceback, never a message as long as the value.

The options come from the command line as declared (``tests/hostile/commands.py``): a new option is
covered the day it is added. Commands run in-process through ``run_cli`` (the CLI's own error
boundary, about 30 ms a run); NUL can only arrive that way, since no operating system passes one in
argv. Bytes that are not UTF-8 arrive as ``surrogateescape`` characters, exactly as Python decodes
them from a real argv, and a few cases run a real subprocess where the argv bytes themselves matter.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_git.cli.app import walk
from loopx_git.cli.main import build_command, run_cli
from tests.conftest import GOAL, git, hermetic
from tests.hostile.commands import Param, all_params, choice

STATE = "refs/heads/loopx/state"
SKIPPED = {
    ("hook", "run"): "git's entry point; it takes what git passes (tests/hooks)",
    ("fire",): "runs a program once per iteration; its refusals are in tests/cli/test_bad_input.py",
    ("demo",): "builds its own throwaway repository and takes no text",
    ("mcp",): "serves the protocol on stdin until it closes; its options' refusals are in tests/mcp",
}
"""Commands left out, each with the reason."""

REQUIRED = {
    ("event", "append"): ["--kind", "note"],
    ("todo", "update"): ["--status", "deferred", "--reason", "r"],
    ("todo", "complete"): ["--evidence", "e"],
    ("todo", "supersede"): ["--by", "t1", "--reason", "r"],
    ("ledger", "record"): ["--status", "blocked", "--verdict", "DRIFT", "--next", "retry"],
    ("refresh-state",): ["--classification", "progress"],
    ("handoff", "prepare"): ["--from-agent-id", "alice", "--to-agent-id", "bob", "--stop-condition", "s"],
}
"""Values for required options that let a command reach the option under test (else: the id the
shared repository has for it, a Literal's first choice, or "x")."""
IDS = {"goal_id": GOAL, "agent_id": "alice", "todo_id": "t1", "entry_id": "e1"}

ALIASES = {
    "belief": ["claim"],
    "add_acceptance": ["acceptance_criteria"],
    "add_non_goal": ["non_goals"],
    "path": ["file"],
    "policy_from": ["commit"],  # upkeep.review_policy names the revision 'commit' (reported, not ours to edit)
    "subject": ["agent", "todo", "case", "benchmark", "run"],
    "range_": ["BASE..HEAD"],
    "name": ["schema"],
    "todo_ids": ["todo_id"],
    "evidence_refs": ["evidence_ref"],
    "evidence_ids": ["evidence_id"],
    "evidence": ["evidence"],
}
"""Fields a refusal names differently from the option's parameter (the record's own field name)."""


def text_params() -> list[Param]:
    return [
        p
        for p in all_params()
        if p.takes_text and not any(p.path[: len(k)] == k for k in SKIPPED) and p.name != "command"
    ]


class Shared:
    """One connected repository for the whole module, with g1, alice, bob, todo t1 and entry e1."""

    def __init__(self, path: Path):
        import pygit2  # a ref read per run: a git process each time would double the file's run time

        self.path = path
        self._repo = pygit2.Repository(str(path))

    def tip(self) -> str:
        return str(self._repo.references[STATE].target)

    def run(self, *args: str, repo: bool = True) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run_cli([*(["--repo", str(self.path)] if repo else []), *args])
        return code, out.getvalue(), err.getvalue()

    def restore(self) -> None:
        """What ``connect`` may change besides the branch: the connected ref and the default goal."""
        git(self.path, "config", "loopx.stateRef", STATE)
        git(self.path, "config", "loopx.goal", GOAL)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:  # the autouse hermetic fixture is per test: set up here too
        hermetic(env, tmp_path_factory.mktemp("home"))
        path = tmp_path_factory.mktemp("hostile") / "work" / "project"
        path.mkdir(parents=True)
        # a command that writes where it is told (``dashboard --out ../../x``) writes in the test's folders
        env.chdir(path.parent)
        git(path, "init", "-q", "-b", "main")
        (path / "README.md").write_text("project\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "init")
        repo = Shared(path)
        for args in (
            ["connect", "-g", GOAL, "--objective", "o", "--no-hooks"],
            ["agent", "register", "-g", GOAL, "-a", "alice"],
            ["agent", "register", "-g", GOAL, "-a", "bob"],
            ["todo", "add", "-g", GOAL, "--text", "seed", "-t", "t1"],
            ["ledger", "add", "-g", GOAL, "--entry-id", "e1", "--belief", "b", "--action", "a"],
        ):
            assert repo.run(*args)[0] == 0, args
        yield repo


def argv(param: Param, value: str) -> list[str]:
    """The command with ``value`` for ``param`` and workable values for every other required one."""
    line, positional = list(param.path), []
    given = REQUIRED.get(param.path, [])
    for other in all_params():
        if other.path != param.path:
            continue
        if other.flag is None:
            if other.name == param.name:
                positional.append(value)
            elif other.required:
                positional.append("x")
            continue
        if other.name == param.name:
            line += [other.flag, value]
        elif other.required and other.flag not in given:
            line += [other.flag, choice(other.annotation) or IDS.get(other.name, "x")]
    line += [g for i, g in enumerate(given) if not (given[i - 1 : i] == [param.flag] or g == param.flag)]
    return line + (["--", *positional] if positional else [])


def names(param: Param) -> list[str]:
    return [param.name, *([param.flag] if param.flag else []), *ALIASES.get(param.name, [])]


def assert_clean(shared: Shared, param: Param, value: str) -> tuple[int, str, str]:
    """Run ``param`` = ``value``: never 3, no traceback, a bounded message, the ref unmoved unless
    the command succeeded, and a refusal of the value names its field."""
    before = shared.tip()
    code, out, err = shared.run(*argv(param, value))
    if param.path[:1] == ("connect",):
        shared.restore()
    assert code in (0, 1, 2), (str(param), repr(value[:40]), code, err[:500])
    assert "Traceback" not in out + err and "internal error" not in err, err[:500]
    assert len(err) < 20_000, f"{param}: a {len(err)}-character message for a {len(value)}-character value"
    if code != 0:
        assert shared.tip() == before, f"{param}: refused with exit {code} but the state ref moved"
    if code == 1 and not any(n in err for n in names(param)):
        # refused, but for something else? the same command with a plain value must be refused alike
        benign, _, benign_err = shared.run(*argv(param, "plain1"))
        if param.path[:1] == ("connect",):
            shared.restore()
        assert benign != 0 and benign_err.split(":")[0] == err.split(":")[0], (
            f"{param}: {value[:40]!r} refused without naming the field: {err[:300]}"
        )
    return code, out, err


TEXT_PARAMS = text_params()

HOSTILE = {
    "nul": "a\x00b",
    "not-utf8": "caf\udce9",  # b"caf\xe9" as Python decodes a Latin-1 argv
    # traversal, terminal escapes, a Cyrillic a, a zero-width joiner and a right-to-left override in one
    "control-traversal-lookalike": "../../\x1b[2J\r\n\x07t\u0430sk\u200d\u202e1",
}


def test_the_walk_sees_every_option_the_cli_builds():
    """The declared tree and the click tree typer builds agree: nothing is left out of the walk."""
    declared = {(p.path, p.flag) for p in all_params() if p.flag}
    built = {
        (tuple(path.split()) if path else (), next(o for o in param.opts if o.startswith("--")))
        for path, cmd in walk(build_command())
        for param in cmd.params
        if param.opts and any(o.startswith("--") for o in param.opts)
    }
    extra = {"--format", "--json", "--help", "--install-completion", "--show-completion"}
    assert {b for b in built if b[1] not in extra} <= declared | {(p, "--format") for p, _ in declared}
    assert len(TEXT_PARAMS) > 200, "the walk found the text options"


@pytest.mark.parametrize("param", TEXT_PARAMS, ids=str)
def test_every_text_option_takes_hostile_values_cleanly(shared, param):
    for value in HOSTILE.values():
        code, _, err = assert_clean(shared, param, value)
        if value == HOSTILE["nul"]:  # refused at the CLI's boundary, by name, whatever the command
            assert code == 1 and f"field '{param.name}': holds a NUL character" in err, (str(param), err[:300])


BIG = ["--text", "--goal-id", "--todo-id", "--summary", "--detail", "--label", "--reason", "--evidence"]


@pytest.mark.parametrize(
    "param",
    [
        p
        for p in TEXT_PARAMS
        if p.flag in BIG and p.path in {("todo", "add"), ("event", "append"), ("todo", "complete")}
    ],
    ids=str,
)
def test_a_ten_megabyte_value_is_refused_with_a_short_message(shared, param):
    code, _, err = assert_clean(shared, param, "x" * 10_000_000)
    assert code == 1 and len(err) < 12_000, (code, len(err))


@pytest.mark.parametrize(
    "args, field",
    [
        (["--repo", "a\x00b", "status"], "repo"),
        (["--state-branch", "a\x00b", "status"], "state_branch"),
        (["--state-branch", "x" * 10_000_000, "status"], "state_branch"),
        (["--state-branch", "../../etc", "status"], "state_branch"),
        (["--state-branch", "loopx/st\u0430te", "todo", "add", "--text", "x"], "state_branch"),
        (["--repo", "x" * 10_000_000, "status"], "repo"),
    ],
    ids=["repo-nul", "branch-nul", "branch-10mb", "branch-traversal", "branch-lookalike", "repo-10mb"],
)
def test_the_global_options_refuse_hostile_values(shared, args, field):
    before = shared.tip()
    code, _, err = shared.run(*args, repo=args[0] != "--repo")
    named = f"field '{field}'" in err or f"--{field.replace('_', '-')}" in err
    assert code == 1 and named and "Traceback" not in err, (code, err[:300])
    assert len(err) < 12_000 and shared.tip() == before


# --- values that are legitimately free text round-trip ---------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "t\u0430sk with a Cyrillic a",
        "zero\u200dwidth\u200cjoiners",
        "\u202eright-to-left override",
        "e\u0301 combining, \ufb01 ligature, \uff21 fullwidth",
        "emoji \U0001f600 and a tag \U000e0041",
        "quotes ' \" ` and $HOME $(id) %s {x}",
        "*alias &anchor !!python/object: - [ ]",
    ],
)
def test_free_text_that_looks_odd_is_kept_as_it_is(shared, text):
    code, out, err = shared.run("--format", "json", "todo", "add", "-g", GOAL, "--text", text)
    assert code == 0, err
    todo_id = json.loads(out)["record"]["todo_id"]
    code, out, _ = shared.run("--format", "json", "todo", "show", "-g", GOAL, "-t", todo_id)
    assert code == 0 and json.loads(out)["text"] == text
    assert shared.run("verify")[0] == 0


# --- property-based: random strings ------------------------------------------------------------------

NASTY = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8", categories=["Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "So", "Lo"]),
        st.sampled_from(list("../\\\x00\x7f\u0430\u0435\u043e\u200d\u202e\ufeff:~^*?[@{}")),
        st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),  # bytes that are not UTF-8
    ),
    min_size=1,
    max_size=40,
)
SAMPLE = settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SAMPLE
@given(param=st.sampled_from(TEXT_PARAMS), value=NASTY)
def test_random_strings_in_any_option_are_never_an_internal_error(shared, param, value):
    assert_clean(shared, param, value)


@SAMPLE
@given(value=NASTY)
def test_a_random_todo_id_is_taken_whole_or_refused_by_name(shared, value):
    before = shared.tip()
    code, out, err = shared.run("--format", "json", "todo", "add", "-g", GOAL, "--text", "x", "-t", value)
    assert code in (0, 1) and "Traceback" not in err, err[:300]
    if code == 1:
        assert "todo_id" in err and shared.tip() == before, err[:300]
    else:
        assert json.loads(out)["record"]["todo_id"] == value
        assert value.isascii() and "/" not in value and ".." not in value, "an id that names a path"


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=60))
def test_random_free_text_round_trips_or_is_refused_by_name(shared, text):
    before = shared.tip()
    code, out, err = shared.run("--format", "json", "event", "append", "-g", GOAL, "--kind", "note", "--summary", text)
    assert code in (0, 1) and "Traceback" not in err, err[:300]
    if code == 1:
        assert "'summary'" in err and shared.tip() == before, err[:300]
    else:
        assert json.loads(out)["record"]["summary"] == text


# --- bytes: through files and through a real argv ------------------------------------------------------


@pytest.mark.parametrize(
    "data, problem",
    [
        (b'{"a": "b\x00c"}', "not JSON"),
        (b"\x00\x00\x00", "not JSON"),
        (b'{"a": "\xff\xfe"}', "not UTF-8"),
        (b"\xef\xbb\xbf{}", "not JSON"),
    ],
    ids=["nul-in-string", "only-nul", "invalid-utf8", "bom"],
)
@pytest.mark.parametrize(
    "command, field",
    [
        (["ledger", "conformance"], "field 'file'"),
        (["rollback", "record", "-g", GOAL, "--packet"], "field 'packet'"),
        (["explore", "observe", "-g", GOAL, "--observation-json"], "observation"),
        (["events", "import", "-g", GOAL], "line 1"),  # a log is read line by line: the line is named
    ],
    ids=["conformance", "packet", "observation", "import"],
)
def test_input_files_with_hostile_bytes_are_refused_by_name(shared, tmp_path, data, problem, command, field):
    path = tmp_path / "input.json"
    path.write_bytes(data)
    before = shared.tip()
    code, _, err = shared.run(*command, str(path))
    assert code == 1 and "Traceback" not in err and "internal error" not in err, (code, err[:300])
    assert field in err, err[:300]
    assert shared.tip() == before


@pytest.mark.parametrize("command", [["ledger", "conformance"], ["events", "import", "-g", GOAL]])
def test_an_input_file_name_that_is_not_utf8_is_read_or_refused(shared, tmp_path, command):
    name = os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9.json")
    Path(name).write_bytes(b"{}")
    code, _, err = shared.run(*command, name)
    assert code in (0, 1) and "Traceback" not in err and "internal error" not in err, err[:300]


def _argv_bytes(shared: Shared, *args: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"loopx_git", b"--repo", os.fsencode(shared.path), *args],
        capture_output=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )


@pytest.mark.parametrize(
    "args, field",
    [
        ([b"todo", b"add", b"-g", b"g1", b"--text", b"caf\xe9"], b"'text'"),
        ([b"todo", b"add", b"-g", b"g1", b"--text", b"x", b"-t", b"\xff\xfe"], b"todo_id"),
        ([b"events", b"-g", b"g1", b"--agent-id", b"\xc3\x28"], b"agent_id"),
        ([b"view", b"todo", b"-g", b"g1", b"\xed\xa0\x80"], b"todo_id"),
    ],
    ids=["text", "todo-id", "events-filter", "view-subject"],
)
def test_argv_bytes_that_are_not_utf8_are_refused_by_name(shared, args, field):
    before = shared.tip()
    done = _argv_bytes(shared, *args)
    assert done.returncode == 1, done.stderr[-500:]
    assert field in done.stderr and b"Traceback" not in done.stderr, done.stderr[-500:]
    assert shared.tip() == before

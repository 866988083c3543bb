"""The command line's shape (issue 10, items 3, 4, 12, 13): one short option per long one on every
command, --format/--json after the command, plain flags, exit 2 for a malformed command line, the one
spelling of error codes, and the ledger's --belief."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import get_args

import pytest

from loopx_git.cli import choices
from loopx_git.cli.app import walk
from loopx_git.cli.main import FORMATLESS, build_command, run_cli
from tests.conftest import GOAL, state_tip

ROOT = Path(__file__).resolve().parents[2]
SHORT = {"--goal-id": "-g", "--agent-id": "-a", "--todo-id": "-t", "--remote": "-r", "--limit": "-n", "--format": "-f"}
"""The short options, as docs/cli.md tabulates them."""
VALUE = {"--limit": "5"}
RECORD = ["ledger", "record", "-g", GOAL, "--entry-id", "e", "--status", "done"]


def commands():
    """(path, command) for every group and command of the app, as the user's `loopx` builds it."""
    return [(path, cmd) for path, cmd in walk(build_command()) if path]


def acting(cmd) -> bool:
    return not hasattr(cmd, "commands") or getattr(cmd, "invoke_without_command", False)


# --- item 3: short options, one table -----------------------------------------------------------


def test_every_long_option_with_a_short_form_has_it_on_every_command():
    missing = [
        f"{path}: {opt} without {short}"
        for path, cmd in commands()
        for param in cmd.params
        for opt, short in SHORT.items()
        if opt in param.opts and short not in param.opts
    ]
    assert not missing
    assert any("--goal-id" in p.opts for _, cmd in commands() for p in cmd.params)  # the walk saw the commands


@pytest.mark.parametrize("path, cmd", commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_short_option_parses_as_its_long_one(path, cmd):
    """Generated from the command tree, so a new command cannot forget one."""
    for param in cmd.params:
        for opt, short in SHORT.items():
            if opt not in param.opts or param.hidden:
                continue
            value = VALUE.get(opt, "json" if opt == "--format" else "x")
            ctx = cmd.make_context(path, [short, value], resilient_parsing=True)
            assert ctx.get_parameter_source(param.name).name == "COMMANDLINE", (path, short)
            if param.expose_value:
                got = ctx.params[param.name]
                got = got[0] if isinstance(got, (list, tuple)) and len(got) == 1 else got  # a repeatable option
                assert str(getattr(got, "value", got)) == value, (path, short)


def test_the_short_option_table_in_the_docs_is_the_one_the_commands_use():
    doc = (ROOT / "docs" / "cli.md").read_text()
    rows = dict((long, short) for short, long in re.findall(r"^\| `(-\w)` \| `(--[\w-]+)` \|", doc, re.M))
    assert rows == SHORT
    assert "[docs/cli.md](docs/cli.md)" in (ROOT / "README.md").read_text()


def test_connect_takes_g_like_every_command(git_repo, capsys):
    from tests.conftest import Cli

    run = Cli(git_repo, capsys)
    assert run("connect", "-g", "p", "--objective", "Do it", "--no-hooks").code == 0
    assert run.json("goal", "show", "-g", "p")["objective"] == "Do it"


# --- item 4: --format and --json after the command -----------------------------------------------


def test_every_command_takes_format_and_json_after_its_name():
    for path, cmd in commands():
        if not acting(cmd) or path in FORMATLESS:
            continue
        opts = {opt for param in cmd.params for opt in param.opts}
        assert {"--format", "--json"} <= opts, path
    assert set(FORMATLESS) <= {path for path, _ in commands()}, "FORMATLESS names commands that exist"


def test_help_shows_the_format_options(cli):
    for args in (["todo", "claim", "--help"], ["status", "--help"], ["rollback", "list", "--help"]):
        out = cli(*args).out
        assert "--format" in out and "--json" in out, args


def test_completion_offers_the_format_options_on_every_command(monkeypatch, capsys):
    monkeypatch.setenv("_LOOPX_COMPLETE", "complete_bash")
    for path, cmd in commands():
        if not acting(cmd) or path in FORMATLESS:
            continue
        words = f"loopx {path} --"
        monkeypatch.setenv("COMP_WORDS", words)
        monkeypatch.setenv("COMP_CWORD", str(len(words.split()) - 1))
        with pytest.raises(SystemExit):
            run_cli([])
        offered = capsys.readouterr().out.split()
        assert {"--format", "--json"} <= set(offered), (path, offered)


@pytest.mark.parametrize("flag", [["--format", "json"], ["-f", "json"], ["--json"]])
def test_reads_take_the_format_after_the_command(cli, flag):
    card = json.loads(cli("status", "-g", GOAL, *flag).out)
    assert card["schema_version"] == "status_contract_v2"
    cli("todo", "add", "-g", GOAL, "--text", "x", "-t", "t1")
    assert [t["todo_id"] for t in json.loads(cli("todo", "list", "-g", GOAL, *flag).out)] == ["t1"]
    assert json.loads(cli("events", "-g", GOAL, "-n", "1", *flag).out)[0]["event_kind"] == "todo_add"


def test_a_write_takes_the_format_after_the_command(cli, git_repo):
    result = cli("todo", "add", "-g", GOAL, "--text", "x", "-t", "t1", "--json")
    envelope = json.loads(result.out)
    assert envelope["schema_version"] == "loopx_write_result_v0" and envelope["commit"] == state_tip(git_repo)
    yaml = cli("todo", "claim", "-g", GOAL, "-t", "t1", "-a", "alice", "-f", "yaml").out
    assert "schema_version: loopx_write_result_v0" in yaml and "claimed_by: alice" in yaml


def test_the_format_after_the_command_wins_and_json_works_before_it(cli, capsys, git_repo):
    assert json.loads(cli("status", "-g", GOAL, "--format", "json", fmt="yaml").out)["goal"]["goal_id"] == GOAL
    assert cli("status", "-g", GOAL, "--format", "text", fmt="json").out.startswith(f"{GOAL} [active]")
    capsys.readouterr()
    assert run_cli(["--repo", str(git_repo), "--json", "goal", "list"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["goal_id"] == GOAL


def test_review_diff_keeps_its_own_format_and_takes_json(cli):
    cli("todo", "add", "-g", GOAL, "--text", "x", "-t", "t1")
    span = "refs/heads/loopx/state~1..refs/heads/loopx/state"
    assert cli("review-diff", span, "--format", "markdown").out.startswith("## loopx state review")
    assert "changes" in json.loads(cli("review-diff", span, "--json").out)


# --- item 12: plain flags -------------------------------------------------------------------------


def test_version_is_a_plain_flag(cli):
    assert cli("--version").code == 0 and cli("--version").out.startswith("loopx ")
    for value in ("true", "false", "1"):
        result = cli("--version", value)
        assert result.code == 2 and result.out == "", result.err


def test_help_shows_no_bool_value_for_flags(cli):
    for args in (["--help"], ["todo", "claim", "--help"], ["connect", "--help"], ["check", "--help"]):
        result = cli(*args)
        assert result.code == 0 and "<bool>" not in result.out, args
    assert "--redact" in cli("todo", "claim", "--help").out


def test_a_flag_given_a_value_is_a_usage_error(cli, git_repo):
    tip = state_tip(git_repo)
    assert cli("todo", "list", "-g", GOAL, "--all=true").code == 2
    assert cli("todo", "claim", "-g", GOAL, "-t", "t0", "-a", "alice", "--sync", "true").code == 2
    assert state_tip(git_repo) == tip


def test_a_command_is_required(cli):
    result = cli()  # only the global --repo
    assert result.code == 2 and "Missing command" in result.err


# --- item 13: exit 2 for a malformed command line, 1 for a refusal --------------------------------


@pytest.mark.parametrize(
    "args, option, valid",
    [
        (["todo", "add", "-g", GOAL, "--text", "x", "--priority", "P9"], "--priority", ["'P0'", "'P4'"]),
        (["todo", "add", "-g", GOAL, "--text", "x", "--role", "robot"], "--role", ["'user'", "'agent'"]),
        (["todo", "add", "-g", GOAL, "--text", "x", "--task-class", "chore"], "--task-class", ["'blocker'"]),
        (["todo", "update", "-g", GOAL, "-t", "t0", "--status", "done"], "--status", ["'deferred'"]),
        (["todo", "list", "-g", GOAL, "--status", "closed"], "--status", ["'superseded'"]),
        (["goal", "update", "-g", GOAL, "--status", "frozen"], "--status", ["'paused'"]),
        (["agent", "register", "-g", GOAL, "-a", "carol", "--role", "boss"], "--role", ["'reviewer'"]),
        (["event", "append", "-g", GOAL, "--kind", "gossip"], "--kind", ["'note'"]),
        (["events", "-g", GOAL, "--kind", "gossip"], "--kind", ["'todo_claim'"]),
        ([*RECORD, "--verdict", "maybe", "--next", "stop"], "--verdict", ["'UNVERIFIABLE'"]),
        ([*RECORD, "--verdict", "MATCH", "--next", "go"], "--next", ["'ask_user'"]),
        (["rollback", "-g", GOAL, "--event", "e", "--trigger", "oops"], "--trigger", ["'regression'"]),
        (["fire", "-g", GOAL, "--approver-ceiling", "root", "--", "true"], "--approver-ceiling", ["'repo_push'"]),
        (["--format", "xml", "status"], "--format", ["'yaml'"]),
        (["status", "--format", "xml"], "--format", ["'yaml'"]),
    ],
)
def test_an_unknown_value_is_exit_2_listing_the_valid_ones(cli, git_repo, args, option, valid):
    cli("todo", "add", "-g", GOAL, "--text", "seed", "-t", "t0")
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 2, (result.code, result.err)
    assert option in result.err and all(v in result.err for v in valid), result.err
    assert result.out == "" and state_tip(git_repo) == tip


@pytest.mark.parametrize(
    "args",
    [
        ["events", "-g", GOAL, "--limit", "0"],
        ["events", "-g", GOAL, "-n", "-3"],
        ["history", "-g", GOAL, "--limit", "1000001"],
        ["events", "-g", GOAL, "--limit", "many"],
        ["refresh-state", "-g", GOAL, "--classification", "progress", "--delivery-batch-scale", "-1"],
        ["refresh-state", "-g", GOAL, "--classification", "progress", "--delivery-batch-scale", str(2**53)],
    ],
)
def test_a_number_out_of_range_or_of_the_wrong_type_is_exit_2(cli, git_repo, args):
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 2 and result.out == "", (result.code, result.err)
    assert state_tip(git_repo) == tip


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["rollback", "-g", GOAL, "--event", "evt_x", "--commit", "abc1234", "--reason", "r"], "exactly one of"),
        (["rollback", "-g", GOAL, "--reason", "r"], "exactly one of"),
        (["review-diff", "loopx/state"], "is not BASE..HEAD"),
        (["review-diff", "loopx/state...loopx/state"], "give the two-dot form"),
    ],
)
def test_a_malformed_combination_or_shape_is_exit_2(cli, git_repo, args, fragment):
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 2 and fragment in result.err and result.out == "", (result.code, result.err)
    assert state_tip(git_repo) == tip


def test_a_well_formed_value_the_state_refuses_is_still_exit_1(cli, git_repo):
    tip = state_tip(git_repo)
    result = cli("todo", "update", "-g", GOAL, "-t", "ghost", "--status", "blocked", "--reason", "r")
    assert result.code == 1 and result.err.startswith("error[not-found]: ")
    assert state_tip(git_repo) == tip


@pytest.mark.parametrize(
    "write, field",
    [
        (lambda r: r.todo_add(GOAL, "x", priority="P7"), "'priority'"),
        (lambda r: r.event_append(GOAL, "gossip"), "'kind'"),
        (lambda r: r.refresh_state(GOAL, "progress", delivery_outcome="great"), "'delivery_outcome'"),
    ],
)
def test_the_api_still_refuses_what_the_command_line_no_longer_lets_through(repo, git_repo, write, field):
    """The choices are the command line's; the domain keeps its own validation for every other caller."""
    from loopx_git.errors import ValidationError

    tip = state_tip(git_repo)
    with pytest.raises(ValidationError) as refused:
        write(repo)
    assert refused.value.code == "invalid-field" and field in refused.value.message
    assert state_tip(git_repo) == tip


def test_superseded_is_a_todo_list_status(cli):
    assert cli("todo", "list", "-g", GOAL, "--status", "superseded").code == 0


def test_the_choices_are_the_models_sets():
    """choices.py spells the sets out (the CLI must not load pydantic for --help): they must not drift."""
    from loopx_git.domain.run import MAX_BATCH_SCALE
    from loopx_git.model import fire, goal, ledger, rollback, run, todo
    from loopx_git.model.event import APPENDABLE_KINDS, EVENT_KINDS

    def values(enum) -> list[str]:
        return [member.value for member in enum]

    assert list(get_args(choices.Priority)) == values(todo.Priority)
    assert list(get_args(choices.TodoRole)) == values(todo.TodoRole)
    assert list(get_args(choices.TaskClass)) == values(todo.TaskClass)
    assert set(get_args(choices.TodoUpdateStatus)) == set(values(todo.TodoStatus)) - {"done"}
    assert set(get_args(choices.TodoListStatus)) == {*values(todo.TodoStatus), "superseded"}
    assert list(get_args(choices.GoalStatus)) == values(goal.GoalStatus)
    assert list(get_args(choices.AgentRole)) == values(goal.AgentRole)
    assert list(get_args(choices.CompositionMode)) == values(goal.CompositionMode)
    assert list(get_args(choices.AppendableKind)) == list(APPENDABLE_KINDS)
    assert list(get_args(choices.EventKind)) == list(EVENT_KINDS)
    from loopx_git.model.event import LISTED_KINDS

    listed = [v for arg in get_args(choices.ListedKind) for v in (get_args(arg) or (arg,))]
    assert listed == list(LISTED_KINDS)
    assert list(get_args(choices.DeliveryOutcome)) == values(run.DeliveryOutcome)
    assert set(get_args(choices.LedgerWriteBack)) == set(values(ledger.EntryStatus)) - {"active"}
    assert list(get_args(choices.Verdict)) == values(ledger.Verdict)
    assert list(get_args(choices.LedgerNext)) == values(ledger.Next)
    assert list(get_args(choices.ApproverCeiling)) == values(fire.Level)
    assert list(get_args(choices.RollbackTrigger)) == values(rollback.TriggerKind)
    assert choices.MAX_BATCH_SCALE == MAX_BATCH_SCALE
    from loopx_git.model import explore

    assert list(get_args(choices.NodeKind)) == values(explore.NodeKind)
    assert list(get_args(choices.NodeStatus)) == values(explore.NodeStatus)
    assert list(get_args(choices.EdgeType)) == values(explore.EdgeType)
    assert list(get_args(choices.FindingState)) == values(explore.FindingState)


def _codes() -> list[tuple[str, str]]:
    """Every ``code="..."`` argument and ``code = "..."`` class attribute in the package."""
    found = []
    for path in sorted((ROOT / "loopx_git").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            keyword = isinstance(node, ast.keyword) and node.arg == "code"
            attribute = isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "code" for t in node.targets
            )
            if (keyword or attribute) and isinstance(node.value, ast.Constant):
                found.append((path.name, node.value.value))
    return found


def test_error_codes_are_kebab_case_except_the_seeds_failure_codes():
    from loopx_git.views.conformance import FAILURE_CODES

    codes = _codes()
    assert len(codes) > 50, "the scan found the codes"
    kebab = re.compile(r"[a-z]+(-[a-z]+)*")
    wrong = [(where, code) for where, code in codes if code not in FAILURE_CODES and not kebab.fullmatch(code)]
    assert not wrong


# --- item 13: the ledger's --belief -------------------------------------------------------------


def test_ledger_add_takes_belief_and_still_the_hidden_claim(cli):
    first = cli.json("ledger", "add", "-g", GOAL, "--entry-id", "e1", "--belief", "CI is red", "--action", "fix_ci")
    assert first["record"]["claim"] == "CI is red"
    old = cli.json("ledger", "add", "-g", GOAL, "--entry-id", "e2", "--claim", "docs are stale", "--action", "docs")
    assert old["record"]["claim"] == "docs are stale"
    help_text = cli("ledger", "add", "--help").out
    assert "--belief" in help_text and "--claim" not in help_text


@pytest.mark.parametrize(
    "extra",
    [[], ["--belief", "a", "--claim", "b"]],
    ids=["neither", "both-differing"],
)
def test_ledger_add_needs_one_belief(cli, git_repo, extra):
    tip = state_tip(git_repo)
    result = cli("ledger", "add", "-g", GOAL, "--action", "a", *extra)
    assert result.code == 2 and "--belief" in result.err, result.err
    assert state_tip(git_repo) == tip

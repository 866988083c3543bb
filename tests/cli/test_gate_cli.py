"""``loopx gate`` and ``loopx operator-gate``, in the shape issue 13 fixes: open, decide, list, show;
JSON held to its schema; refusals exit 1 naming the field and leave the state ref alone; a value
outside a fixed set is a usage error (exit 2)."""

from __future__ import annotations

import pytest

from tests.cli.test_schemas import conforms, conforms_each, written
from tests.conftest import GOAL, state_tip


@pytest.fixture
def gated(cli):
    for todo_id, text in (("ship", "Ship the release"), ("tag", "Tag the release")):
        assert cli("todo", "add", "-g", GOAL, "--todo-id", todo_id, "--text", text).code == 0
    assert cli("todo", "update", "-g", GOAL, "-t", "tag", "--status", "blocked", "--reason", "after release").code == 0
    return cli


OPEN = ["gate", "open", "-g", GOAL, "--gate-id", "release", "--owner-class", "user", "--blocks", "ship"]
OPEN += ["--question", "Release 1.0 now?", "--unblocks", "tag"]
DECIDE = ["gate", "decide", "-g", GOAL, "--gate-id", "release", "--decision", "approve", "--reason", "reviewed"]
DECIDE += ["--decided-by-class", "user"]


def test_open_and_decide_in_the_issue_shape_with_json_after_the_command(gated):
    opened = gated.json(*OPEN)
    written(opened, "operator_gate_v0")
    assert opened["record"]["status"] == "open" and opened["record"]["blocks"] == ["ship"]
    card = gated.json("status", "-g", GOAL)
    assert [g["gate_id"] for g in card["open_gates"]] == ["release"]
    assert [a["todo_id"] for a in card["next_actions"]] == [None, None]  # ship held, tag blocked
    result = gated(*DECIDE, "--format", "json")
    assert result.code == 0, result.err
    import json

    decided = json.loads(result.out)
    written(decided, "operator_gate_v0")
    assert decided["record"]["status"] == "approved" and len(decided["event_ids"]) == 2  # the decision + a wake-up
    assert {a["todo_id"] for a in gated.json("status", "-g", GOAL)["next_actions"]} == {"ship", "tag"}
    conforms_each("operator_gate_v0", gated.json("gate", "list", "-g", GOAL))
    conforms("operator_gate_v0", gated.json("gate", "show", "-g", GOAL, "--gate-id", "release"))
    assert gated.json("gate", "list", "-g", GOAL, "--status", "open") == []


def test_operator_gate_is_the_same_commands(gated):
    assert gated("operator-gate", *OPEN[1:]).code == 0
    shown = gated.json("operator-gate", "show", "-g", GOAL, "--gate-id", "release")
    assert shown["gate_id"] == "release" and shown["question"] == "Release 1.0 now?"


def test_repeated_and_comma_separated_ids_alike(gated):
    assert gated("todo", "add", "-g", GOAL, "--todo-id", "docs", "--text", "Docs").code == 0
    gate = gated.json(*OPEN[:9], "docs,ship", "--blocks", "tag", "--question", "q?")["record"]
    assert gate["blocks"] == ["docs", "ship", "tag"]


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (["--decided-by-class", "controller"], "not-gate-owner", "field 'decided_by_class'"),
        (["--reason", ""], "invalid-field", "field 'reason'"),
    ],
)
def test_a_refused_decision_exits_1_names_the_field_and_moves_nothing(gated, git_repo, args, code, said):
    assert gated(*OPEN).code == 0
    tip = state_tip(git_repo)
    argv = list(DECIDE)
    for flag, value in zip(args[::2], args[1::2]):
        argv[argv.index(flag) + 1] = value
    result = gated(*argv)
    assert result.code == 1 and f"error[{code}]" in result.err and said in result.err
    assert state_tip(git_repo) == tip


def test_a_second_decision_is_refused(gated, git_repo):
    assert gated(*OPEN).code == 0 and gated(*DECIDE).code == 0
    tip = state_tip(git_repo)
    result = gated(*DECIDE)
    assert result.code == 1 and "error[gate-decided]" in result.err and "open a new gate" in result.err
    assert state_tip(git_repo) == tip


def test_a_gate_that_blocks_nothing_is_refused(gated, git_repo):
    tip = state_tip(git_repo)
    result = gated("gate", "open", "-g", GOAL, "--gate-id", "g", "--owner-class", "user", "--question", "q?")
    assert result.code == 1 and "field 'blocks'" in result.err and "blocks nothing" in result.err
    assert state_tip(git_repo) == tip


@pytest.mark.parametrize(
    "argv",
    [
        [*OPEN[:7], "boss", *OPEN[8:]],  # an owner class outside the set
        [*DECIDE[:7], "maybe", *DECIDE[8:]],  # a decision outside the set (cancel is the todo path's)
        [*DECIDE[:7], "cancel", *DECIDE[8:]],
    ],
)
def test_a_value_outside_a_fixed_set_is_a_usage_error(gated, git_repo, argv):
    tip = state_tip(git_repo)
    result = gated(*argv)
    assert result.code == 2
    assert state_tip(git_repo) == tip


def test_a_user_gate_todo_completed_with_a_decision_outcome(cli):
    assert (
        cli(
            "todo",
            "add",
            "-g",
            GOAL,
            "--todo-id",
            "ask",
            "--text",
            "Approve the schema?",
            "--role",
            "user",
            "--task-class",
            "user_gate",
        ).code
        == 0
    )
    assert (
        cli("todo", "add", "-g", GOAL, "--todo-id", "mig", "--text", "Migrate", "--resume-when", "todo_done:ask").code
        == 0
    )
    result = cli(
        "todo",
        "complete",
        "-g",
        GOAL,
        "-t",
        "ask",
        "--no-follow-up",
        "--reason",
        "not now",
        "--decision-outcome",
        "reject",
    )
    assert result.code == 0, result.err
    assert cli.json("gate", "show", "-g", GOAL, "--gate-id", "ask")["status"] == "rejected"
    assert cli.json("todo", "show", "-g", GOAL, "-t", "mig")["status"] == "deferred"

"""The loopx command: exit codes, JSON shapes, messages, and refusals that leave the ref alone."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import GOAL, state_tip


def test_version_and_help(cli):
    result = cli("--version")
    assert result.code == 0 and result.out.startswith("loopx ")
    result = cli("todo", "add", "--help")
    assert result.code == 0 and "Example" in result.out and "--resume-when" in result.out


def test_usage_error_exits_2(cli, git_repo):
    tip = state_tip(git_repo)
    result = cli("todo", "add", "--goal-id", GOAL)  # --text missing
    assert result.code == 2 and "--text" in result.err
    assert cli("no-such-command").code == 2
    assert state_tip(git_repo) == tip


def test_write_prints_an_envelope_with_the_record(cli, git_repo):
    data = cli.json("todo", "add", "-g", GOAL, "--text", "Write the parser", "--todo-id", "t1", "--priority", "P1")
    assert data["schema_version"] == "loopx_write_result_v0" and data["changed"] is True
    assert data["commit"] == state_tip(git_repo) and len(data["event_ids"]) == 1
    assert data["record"]["todo_id"] == "t1" and data["record"]["priority"] == "P1"
    assert data["record"]["schema_version"] == "todo_item_v0"


def test_reads_print_the_models_shape(cli):
    cli("todo", "add", "-g", GOAL, "--text", "a", "--todo-id", "t1")
    assert cli.json("todo", "show", "-g", GOAL, "-t", "t1")["todo_id"] == "t1"
    assert [t["todo_id"] for t in cli.json("todo", "list", "-g", GOAL)] == ["t1"]
    events = cli.json("events", "-g", GOAL, "--todo-id", "t1")
    assert [e["event_kind"] for e in events] == ["todo_add"]
    card = cli.json("status", "-g", GOAL)
    assert card["schema_version"] == "status_contract_v2" and card["projection_is_writable"] is False
    assert {a["agent_id"]: a["todo_id"] for a in card["next_actions"]} == {"alice": "t1", "bob": None}
    assert cli.json("goal", "show", "-g", GOAL)["objective"] == "Ship the parser"


@pytest.mark.parametrize(
    "args, code, fragments",
    [
        (["todo", "claim", "-g", GOAL, "-t", "ghost", "--agent-id", "alice"], "not-found", ["todo_id 'ghost'"]),
        (["todo", "update", "-g", GOAL, "-t", "t0", "--status", "blocked"], "reason-required", ["'reason'"]),
        (["todo", "complete", "-g", GOAL, "-t", "t0"], "evidence-required", ["'evidence'"]),
        (
            ["todo", "add", "-g", GOAL, "--text", "x", "--resume-when", "pr_merged:#4"],
            "ambiguous-pr-ref",
            ["task_repository"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--artifact-ref", "/etc/passwd"],
            "invalid-field",
            ["artifact_refs"],
        ),
        (["event", "append", "-g", GOAL, "--kind", "note", "--detail", "novalue"], "invalid-field", ["KEY=VALUE"]),
        (["goal", "create", "-g", GOAL, "--objective", "again"], "goal-exists", ["unique"]),
        (["events", "-g", GOAL, "--since", "yesterday"], "invalid-field", ["'since'"]),
        (["status", "-g", "nope"], "not-found", ["goal 'nope'"]),
    ],
)
def test_refusals_exit_1_name_the_field_and_leave_the_ref(cli, git_repo, args, code, fragments):
    cli("todo", "add", "-g", GOAL, "--text", "seed", "--todo-id", "t0")
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 1, result.err
    assert result.err.startswith(f"error[{code}]: "), result.err
    for fragment in fragments:
        assert fragment in result.err
    assert result.out == ""
    assert state_tip(git_repo) == tip


@pytest.mark.parametrize(
    "args, option, valid",
    [
        (["todo", "add", "-g", GOAL, "--text", "x", "--priority", "P7"], "'--priority'", "'P0'"),
        (["event", "append", "-g", GOAL, "--kind", "todo_add"], "'--kind'", "'pr_merge'"),
        (
            ["refresh-state", "-g", GOAL, "--classification", "progress", "--delivery-outcome", "great"],
            "'--delivery-outcome'",
            "'outcome_progress'",
        ),
    ],
)
def test_a_value_outside_an_options_set_is_a_usage_error(cli, git_repo, args, option, valid):
    """A malformed command line is exit 2, listing the valid values, before anything is opened."""
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 2 and option in result.err and valid in result.err, result.err
    assert result.out == "" and state_tip(git_repo) == tip


def test_claim_conflict_message(cli, git_repo):
    cli("todo", "add", "-g", GOAL, "--text", "x", "--todo-id", "t1")
    assert cli("todo", "claim", "-g", GOAL, "-t", "t1", "--agent-id", "alice").code == 0
    tip = state_tip(git_repo)
    result = cli("todo", "claim", "-g", GOAL, "-t", "t1", "--agent-id", "bob")
    assert result.code == 1 and "already claimed by 'alice'" in result.err and state_tip(git_repo) == tip


def test_refresh_state_and_history(cli):
    cli(
        "refresh-state",
        "-g",
        GOAL,
        "--classification",
        "progress",
        "--agent-id",
        "alice",
        "--delivery-outcome",
        "outcome_progress",
    )
    cli("refresh-state", "-g", GOAL, "--classification", "no_op", "--agent-id", "bob")
    runs = cli.json("history", "-g", GOAL)
    assert [r["classification"] for r in runs] == ["no_op", "progress"]
    assert [r["agent_id"] for r in cli.json("history", "-g", GOAL, "--agent-id", "alice")] == ["alice"]
    card = cli.json("status", "-g", GOAL)
    assert card["latest_delivery_outcome"]["delivery_outcome"] == "outcome_progress"


def test_events_filters_and_limit(cli):
    for i in range(3):
        cli("event", "append", "-g", GOAL, "--kind", "validation", "--agent-id", "alice", "--summary", f"v{i}")
    cli("event", "append", "-g", GOAL, "--kind", "note", "--summary", "loose")
    assert [e["summary"] for e in cli.json("events", "-g", GOAL, "--kind", "validation", "--limit", "2")] == [
        "v1",
        "v2",
    ]
    assert len(cli.json("events", "-g", GOAL, "--agent-id", "alice", "--since", "2000-01-01")) == 4  # + register
    assert cli.json("events", "-g", GOAL, "--since", "2999-01-01") == []


def test_verify_exit_codes_and_yaml_output(cli):
    result = cli("verify", fmt="json")
    assert result.code == 0 and json.loads(result.out)["ok"] is True
    result = cli("goal", "show", "-g", GOAL, fmt="yaml")
    assert result.code == 0 and "goal_id: g1" in result.out


def test_text_output_is_plain_when_piped(cli):
    cli("todo", "add", "-g", GOAL, "--text", "Write the parser", "--todo-id", "t1")
    result = cli("todo", "list", "-g", GOAL)
    assert "t1" in result.out and "\x1b[" not in result.out


def test_schema_prints_json_schema(cli):
    result = cli("schema", "todo_item_v0")
    schema = json.loads(result.out)
    assert schema["additionalProperties"] is False and "resume_when" in schema["properties"]
    assert "loopx_rollout_event_v0" in cli("schema").out
    assert cli("schema", "nope").code == 1


def test_doctor_and_gc(cli):
    assert cli("doctor").code == 1  # connected through the API only: no hooks, no ignore block yet
    assert cli("connect").code == 0
    doctor = cli.json("doctor")
    assert doctor["events"] >= 3 and doctor["state_ref"] == "refs/heads/loopx/state"
    assert cli.json("gc")["after_bytes"] > 0


def test_connect_creates_branch_and_goal_idempotently(git_repo, capsys, tmp_path):
    from tests.conftest import Cli, git

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    run = Cli(fresh, capsys)
    first = run.json("connect", "--goal-id", "g", "--objective", "Do it")
    assert first["created"] is True and first["goal_created"] == "g"
    again = run.json("connect", "--goal-id", "g", "--objective", "Do it")
    assert again["created"] is False and again["goal_created"] is None and again["tip"] == first["tip"]


def test_console_script_runs_as_a_process(git_repo, repo):
    proc = subprocess.run(
        [sys.executable, "-m", "loopx_git.cli", "--repo", str(git_repo), "--format", "json", "status", "-g", GOAL],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["goal"]["goal_id"] == GOAL


def test_demo_runs_clean(capsys):
    from loopx_git.cli.main import run_cli

    assert run_cli(["demo"]) == 0
    out = capsys.readouterr().out
    assert "won" in out and "woke todo-docs" in out and "woke todo-release" in out and "ok:" in out
    assert "offered to no agent while the gate is open: True" in out and "gate-release" in out
    assert "handoff-docs: 1 claim(s) to" in out


def test_protocol_check_passes_on_the_demo_goal(monkeypatch, tmp_path):
    """Issue 13's acceptance: seed 003's checks pass on the demo goal (its gate, handoff, reward and
    spend included), each one applicable."""
    import shutil

    import loopx_git
    from loopx_git.cli.demo import GOAL as DEMO_GOAL
    from loopx_git.cli.demo import run_demo

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the demo's folder, kept, lands in this test's own
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    report = run_demo(keep=True, live=False)
    assert report.ok and report.kept is not None and report.kept.startswith(str(tmp_path))
    try:
        with loopx_git.open(report.kept) as repo:
            check = repo.protocol_check(DEMO_GOAL)
        assert check.ok, [c for c in check.checks if not c.ok]
        assert {c.check_id for c in check.checks if not c.applicable} == set()
    finally:
        shutil.rmtree(report.kept, ignore_errors=True)

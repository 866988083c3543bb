"""`loopx fire` end to end, with small scripts as COMMAND: every fire is bounded, writes each result
back before the next selection, denies what a scheduled run must not do, and ends with one terminal
status recorded on the state branch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import loopx_git
from tests.conftest import GOAL, Cli, state_tip


def script(tmp_path: Path, name: str, body: str) -> str:
    """An executable Python script: reads the action contract on stdin, does ``body``."""
    path = tmp_path / name
    path.write_text(
        f"#!{sys.executable}\nimport json, os, sys, time\ncontract = json.load(sys.stdin)\n"
        f"entry = os.environ['LOOPX_LEDGER_ENTRY']\n{body}\n"
    )
    path.chmod(0o755)
    return str(path)


def answer(**fields) -> str:
    return f"print(json.dumps({json.dumps(fields)}))"


DONE = answer(
    status="done", verdict="MATCH", next="resume", evidence=[{"kind": "test_path", "ref": "tests/test_step.py"}]
)
BOUNDS = ["--max-iterations", "5", "--timeout", "60", "--approver-ceiling", "workspace_write", "--agent-id", "alice"]


@pytest.fixture
def ledger(repo):
    for n in (1, 2, 3):
        repo.ledger_add(GOAL, f"claim {n}", f"action_{n}", entry_id=f"e{n}")
    return repo


def fire(cli, command: str, *extra: str):
    return cli("fire", "-g", GOAL, *BOUNDS, *extra, "--", command, fmt="json")


def test_three_iterations_end_ok_with_three_write_backs_in_order(ledger, git_repo, tmp_path, capsys):
    result = fire(Cli(git_repo, capsys), script(tmp_path, "done.py", DONE))
    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert (summary["terminal_status"], summary["stop_condition"], summary["iterations_run"]) == (
        "ok",
        "ledger_empty",
        3,
    )
    records = ledger.events(GOAL, kind="ledger_record")
    assert [e.entry_id for e in records] == ["e1", "e2", "e3"]
    selects = ledger.events(GOAL, kind="ledger_select")
    for select, record in zip(selects, records):  # each written back before the next selection
        assert select.lamport < record.lamport
    for a, b in zip(records, selects[1:]):
        assert a.lamport < b.lamport
    assert all(e.status == "done" and e.verdict == "MATCH" for e in ledger.ledger(GOAL))
    [fired] = ledger.events(GOAL, kind="fire")
    assert fired.fire.terminal_status == "ok" and fired.fire.command == "done.py"
    assert ledger.verify().ok


def test_max_iterations_bounds_the_fire(ledger, git_repo, tmp_path, capsys):
    cli = Cli(git_repo, capsys)
    result = cli(
        "fire",
        "-g",
        GOAL,
        "--max-iterations",
        "2",
        "--timeout",
        "60",
        "--approver-ceiling",
        "read_only",
        "--",
        script(tmp_path, "done.py", DONE),
        fmt="json",
    )
    assert (
        json.loads(result.out)["stop_condition"] == "max_iterations"
        and ledger.ledger_entry(GOAL, "e3").status == "pending"
    )


def test_ask_user_halts_with_needs_attention_after_one_iteration(ledger, git_repo, tmp_path, capsys):
    asks = answer(status="blocked", verdict="DRIFT", next="ask_user", question="which hero image is current?")
    result = fire(Cli(git_repo, capsys), script(tmp_path, "ask.py", asks))
    assert result.code == 4
    summary = json.loads(result.out)
    assert (summary["terminal_status"], summary["iterations_run"]) == ("needs_attention", 1)
    assert ledger.ledger_entry(GOAL, "e1").next == "ask_user" and ledger.ledger_entry(GOAL, "e2").status == "pending"
    again = fire(Cli(git_repo, capsys), script(tmp_path, "done.py", DONE))  # never continues past the question
    assert again.code == 4 and json.loads(again.out)["iterations_run"] == 0


def test_a_force_push_request_is_denied_and_nothing_runs_after_it(ledger, git_repo, tmp_path, capsys):
    marker = tmp_path / "ran-twice"
    body = f"open({str(marker)!r}, 'a').write('x')\n" + answer(
        status="done",
        verdict="MATCH",
        next="resume",
        evidence=[{"kind": "diff_ref", "ref": "commit:abc1234"}],
        requested_actions=[{"kind": "force_push", "level": "repo_push"}],
    )
    cli = Cli(git_repo, capsys)
    result = cli(
        "fire",
        "-g",
        GOAL,
        "--max-iterations",
        "5",
        "--timeout",
        "60",
        "--approver-ceiling",
        "repo_push",
        "--",
        script(tmp_path, "push.py", body),
        fmt="json",
    )
    summary = json.loads(result.out)
    assert result.code == 4 and summary["stop_condition"] == "dangerous_action" and summary["iterations_run"] == 1
    assert summary["denials"] == [{"kind": "force_push", "level": "repo_push", "reason": "dangerous_action"}]
    assert marker.read_text() == "x"  # COMMAND ran once; the fire stopped at the denial
    entry = ledger.ledger_entry(GOAL, "e1")
    assert (entry.status, entry.next) == (
        "blocked",
        "ask_user",
    ) and entry.evidence == []  # its claim of done was not taken
    assert ledger.ledger_entry(GOAL, "e2").status == "pending"


def test_an_action_above_the_ceiling_is_policy_denied(ledger, git_repo, tmp_path, capsys):
    body = answer(
        status="pending", verdict="DRIFT", next="resume", requested_actions=[{"kind": "open_pr", "level": "repo_push"}]
    )
    cli = Cli(git_repo, capsys)
    result = cli(
        "fire",
        "-g",
        GOAL,
        "--max-iterations",
        "5",
        "--timeout",
        "60",
        "--approver-ceiling",
        "read_only",
        "--",
        script(tmp_path, "pr.py", body),
        fmt="json",
    )
    summary = json.loads(result.out)
    assert summary["stop_condition"] == "policy_denied" and summary["denials"][0]["reason"] == "policy_denied"


def test_a_hanging_command_hits_the_iteration_timeout_and_ends_in_error(ledger, git_repo, tmp_path, capsys):
    pid_file = tmp_path / "pid"
    hang = script(tmp_path, "hang.py", f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)")
    start = time.monotonic()
    result = fire(Cli(git_repo, capsys), hang, "--iteration-timeout", "1.5")
    assert time.monotonic() - start < 30
    summary = json.loads(result.out)
    assert result.code == 1 and (summary["terminal_status"], summary["stop_condition"]) == ("error", "timeout")
    assert summary["entries"][0]["outcome"] == "timeout" and ledger.ledger_entry(GOAL, "e1").status == "blocked"
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # the command was killed, not left running
    assert ledger.verify().ok


@pytest.mark.parametrize(
    "body, stop",
    [
        ("sys.exit(3)", "command_failed"),
        ("print('not json')", "bad_output"),
        (answer(status="done", verdict="MATCH", next="resume"), "evidence_missing"),
    ],
)
def test_a_failing_command_or_bad_answer_is_an_error_and_the_entry_is_not_left_active(
    ledger, git_repo, tmp_path, capsys, body, stop
):
    result = fire(Cli(git_repo, capsys), script(tmp_path, "bad.py", body))
    summary = json.loads(result.out)
    assert result.code == 1 and summary["stop_condition"] == stop
    assert ledger.ledger_entry(GOAL, "e1").status == "blocked" and ledger.verify().ok


def test_sigterm_mid_iteration_cancels_and_leaves_the_branch_consistent(ledger, git_repo, tmp_path):
    started = tmp_path / "started"
    slow = script(tmp_path, "slow.py", f"open({str(started)!r}, 'w').write('1')\ntime.sleep(60)")
    ledger.close()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loopx_git.cli",
            "--repo",
            str(git_repo),
            "--format",
            "json",
            "fire",
            "-g",
            GOAL,
            *BOUNDS,
            "--",
            slow,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), proc.stderr.read() if proc.poll() is not None else "COMMAND never started"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    summary = json.loads(out)
    assert (summary["terminal_status"], summary["stop_condition"]) == ("cancelled", "cancelled")
    fresh = loopx_git.open(git_repo)
    assert fresh.ledger_entry(GOAL, "e1").status == "blocked"  # written back, not left active
    assert [e.fire.terminal_status for e in fresh.events(GOAL, kind="fire")] == ["cancelled"]
    assert fresh.verify().ok


@pytest.mark.parametrize(
    "args",
    [
        ["--timeout", "60", "--approver-ceiling", "read_only"],
        ["--max-iterations", "3", "--approver-ceiling", "read_only"],
        ["--max-iterations", "0", "--timeout", "60", "--approver-ceiling", "read_only"],
        ["--max-iterations", "1000001", "--timeout", "60", "--approver-ceiling", "read_only"],
        ["--max-iterations", "3", "--timeout", "nan", "--approver-ceiling", "read_only"],
        ["--max-iterations", "3", "--timeout", "inf", "--approver-ceiling", "read_only"],
        ["--max-iterations", "3", "--timeout", "60", "--iteration-timeout", "-inf", "--approver-ceiling", "read_only"],
    ],
)
def test_an_unbounded_fire_is_refused_and_writes_nothing(ledger, git_repo, tmp_path, capsys, args):
    tip = state_tip(git_repo)
    result = Cli(git_repo, capsys)("fire", "-g", GOAL, *args, "--", script(tmp_path, "done.py", DONE))
    assert result.code == 1 and result.err.startswith("error[headless_fire_unbounded]")
    assert state_tip(git_repo) == tip


def test_a_missing_or_unknown_ceiling_is_refused(ledger, git_repo, tmp_path, capsys):
    tip = state_tip(git_repo)
    # missing: the fire refuses (exit 1); a value outside the set is a malformed command line (exit 2)
    for extra, code in (([], 1), (["--approver-ceiling", "root"], 2)):
        result = Cli(git_repo, capsys)(
            "fire",
            "-g",
            GOAL,
            "--max-iterations",
            "1",
            "--timeout",
            "5",
            *extra,
            "--",
            script(tmp_path, "done.py", DONE),
        )
        assert result.code == code and "approver" in result.err and "ceiling" in result.err, result.err
    assert state_tip(git_repo) == tip


def test_status_shows_the_question_and_the_last_fire(ledger, git_repo, tmp_path, capsys):
    asks = answer(status="blocked", verdict="DRIFT", next="ask_user", question="which hero image is current?")
    fire(Cli(git_repo, capsys), script(tmp_path, "ask.py", asks))
    card = Cli(git_repo, capsys).json("status", "-g", GOAL)
    assert card["ledger_attention"] == [
        {"entry_id": "e1", "verdict": "DRIFT", "next": "ask_user", "question": "which hero image is current?"}
    ]
    assert card["last_fire"]["terminal_status"] == "needs_attention"
    text = Cli(git_repo, capsys)("status", "-g", GOAL).out
    assert "which hero image is current?" in text and "last fire: needs_attention" in text


def test_a_second_fire_while_one_runs_is_refused(ledger, git_repo, tmp_path, capsys):
    started = tmp_path / "started"
    slow = script(tmp_path, "slow.py", f"open({str(started)!r}, 'w').write('1')\ntime.sleep(60)")
    ledger.close()
    first = subprocess.Popen(
        [sys.executable, "-m", "loopx_git.cli", "--repo", str(git_repo), "fire", "-g", GOAL, *BOUNDS, "--", slow],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = Cli(git_repo, capsys)("fire", "-g", GOAL, *BOUNDS, "--", script(tmp_path, "done.py", DONE))
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=60)
    assert second.code == 1 and second.err.startswith("error[fire-running]")


@pytest.mark.parametrize("separator", [["--"], []])
def test_options_after_the_command_are_the_command_s_own(ledger, git_repo, tmp_path, capsys, separator):
    seen = tmp_path / "argv.json"
    echo = script(tmp_path, "echoargs.py", f"open({str(seen)!r}, 'w').write(json.dumps(sys.argv[1:]))\n{DONE}")
    result = Cli(git_repo, capsys)("fire", "-g", GOAL, *BOUNDS, *separator, echo, "--json", "-f", "x", "-v", "-g", "y")
    assert result.code == 0, result.err
    assert json.loads(seen.read_text()) == ["--json", "-f", "x", "-v", "-g", "y"]
    assert result.out.startswith("fire fire_")  # loopx's own output stayed text: the --json was COMMAND's


def test_format_options_right_after_fire_are_loopx_s(ledger, git_repo, tmp_path, capsys):
    done = script(tmp_path, "done.py", DONE)
    for given in (["--json"], ["-f", "json"], ["--format", "json"]):
        result = Cli(git_repo, capsys)("fire", *given, "-g", GOAL, *BOUNDS, "--", done)
        assert result.code == 0, result.err
        assert json.loads(result.out)["schema_version"] == "loopx_fire_record_v0"


def test_an_unknown_option_before_the_command_is_a_usage_error_not_the_command(ledger, git_repo, tmp_path, capsys):
    tip = state_tip(git_repo)
    result = Cli(git_repo, capsys)("fire", "-g", GOAL, *BOUNDS, "--max-iteration", "1", script(tmp_path, "d.py", DONE))
    assert result.code == 2 and "No such option: --max-iteration" in result.err
    assert state_tip(git_repo) == tip


def test_a_background_child_holding_stderr_does_not_slow_the_iterations(ledger, git_repo, tmp_path, capsys):
    body = (
        "import subprocess\n"
        "subprocess.Popen(['sleep', '3'], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)  # keeps our stderr\n"
        + DONE
    )
    result = fire(Cli(git_repo, capsys), script(tmp_path, "spawns.py", body))
    summary = json.loads(result.out)
    assert result.code == 0 and summary["iterations_run"] == 3
    assert summary["duration_seconds"] < 2.5  # no wait for the pipe to close: it would be 1 s per iteration

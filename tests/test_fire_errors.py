"""A fire that ends in ``error`` says why — the refusal's code, field and rule, or COMMAND's exit status
and the last lines of its stderr, redacted — in the text and JSON output, on the ledger entry it held
and in the fire event on the state branch. A secret COMMAND prints never reaches the branch."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import loopx_git
from loopx_git.fire.command import STDERR_KEEP
from loopx_git.store import layout
from tests.conftest import GOAL, Cli, git, state_tip
from tests.safety.corpus import SHAPES
from tests.safety.parts import pem

BOUNDS = ["--max-iterations", "3", "--timeout", "60", "--approver-ceiling", "workspace_write", "--agent-id", "alice"]
DONE = {"status": "done", "verdict": "MATCH", "next": "resume", "evidence": [{"kind": "test_path", "ref": "t/x.py"}]}


def script(tmp_path: Path, name: str, body: str) -> str:
    """An executable Python script that reads the action contract on stdin, then does ``body``."""
    path = tmp_path / name
    path.write_text(f"#!{sys.executable}\nimport json, os, sys, time\njson.load(sys.stdin)\n{body}\n")
    path.chmod(0o755)
    return str(path)


def answer(fields: dict) -> str:
    return f"print(json.dumps({json.dumps(fields)}))"


@pytest.fixture
def ledger(repo):
    repo.ledger_add(GOAL, "the parser accepts the corpus", "run_the_corpus", entry_id="e1")
    return repo


@pytest.fixture
def token(monkeypatch) -> str:
    """A GitHub token, assembled at run time (no literal here), handed to COMMAND in its environment."""
    value = SHAPES["github-token"][0](random.Random(23))
    monkeypatch.setenv("PLANTED_TOKEN", value)
    return value


FAILING = (
    "print('loading the corpus', file=sys.stderr)\n"
    "print('\\x1b[31mparse error\\x1b[0m at line 12', file=sys.stderr)\n"
    "print('retrying with ' + os.environ['PLANTED_TOKEN'] + ' as the key', file=sys.stderr)\n"
    "sys.exit(3)"
)


def fire(cli: Cli, command: str, *extra: str, fmt: str | None = "json"):
    return cli("fire", "-g", GOAL, *BOUNDS, *extra, "--", command, fmt=fmt)


def on_branch(git_repo: Path, text: str) -> bool:
    """Whether ``text`` is in any file of the state branch's tip."""
    found = subprocess.run(
        ["git", "-C", str(git_repo), "grep", "-q", "-F", text, "refs/heads/loopx/state", "--"], capture_output=True
    )
    return found.returncode == 0


def test_a_failing_command_says_why_everywhere_with_the_secret_redacted(ledger, git_repo, tmp_path, capsys, token):
    bad = script(tmp_path, "corpus_step.py", FAILING)
    result = fire(Cli(git_repo, capsys), bad)
    assert result.code == 1
    summary = json.loads(result.out)
    assert (summary["terminal_status"], summary["stop_condition"]) == ("error", "command_failed")
    reason = summary["reason"]
    assert reason["kind"] == "command_failed" and reason["exit_status"] == 3
    assert reason["message"] == "'corpus_step.py' exited with status 3"
    assert reason["stderr_tail"] == [
        "loading the corpus",
        "parse error at line 12",  # the colour codes are gone
        "retrying with [REDACTED:github-token] as the key",
    ]
    assert token not in result.out
    assert token in result.err  # the operator still sees COMMAND's stderr as it runs, as before

    entry = Cli(git_repo, capsys).json("ledger", "show", "-g", GOAL, "--entry-id", "e1")
    assert (entry["status"], entry["verdict"], entry["next"]) == ("blocked", "DRIFT", "retry")
    assert entry["failure"].startswith(f"fire {summary['fire_id']}: 'corpus_step.py' exited with status 3; stderr: ")
    assert entry["failure"].endswith("parse error at line 12 | retrying with [REDACTED:github-token] as the key")

    [event] = ledger.events(GOAL, kind="fire")
    assert event.fire.reason.model_dump(mode="json") == reason
    assert event.summary.endswith("error (command_failed, 1 iteration(s)): 'corpus_step.py' exited with status 3")
    assert not on_branch(git_repo, token) and on_branch(git_repo, "[REDACTED:github-token]")
    assert ledger.verify().ok

    text = fire(Cli(git_repo, capsys), bad, fmt=None)  # the entry is runnable again (next=retry)
    assert text.code == 1
    assert "reason: 'corpus_step.py' exited with status 3" in text.out
    assert "stderr (last 3 line(s), redacted):" in text.out
    assert "retrying with [REDACTED:github-token] as the key" in text.out and token not in text.out
    assert not on_branch(git_repo, token)


def test_an_answer_with_a_bad_field_names_the_field_and_the_rule(ledger, git_repo, tmp_path, capsys):
    bad = script(tmp_path, "step.py", answer({"status": "finished", "verdict": "MATCH", "next": "resume"}))
    result = fire(Cli(git_repo, capsys), bad)
    reason = json.loads(result.out)["reason"]
    assert result.code == 1 and reason["kind"] == "bad_output"
    assert reason["field"] == "status" and "'done', 'blocked' or 'pending'" in reason["rule"]
    assert reason["message"].startswith("the answer of 'step.py' is not valid: field 'status': ")
    failure = ledger.ledger_entry(GOAL, "e1").failure
    assert "field 'status'" in failure and "'done', 'blocked' or 'pending'" in failure
    text = fire(Cli(git_repo, capsys), bad, fmt=None).out
    assert "reason: the answer of 'step.py' is not valid: field 'status'" in text and "field status" in text


def test_an_answer_that_is_not_json_says_what_an_answer_is(ledger, git_repo, tmp_path, capsys):
    bad = script(tmp_path, "chatty.py", "print('all good, I think')\nprint('see the log', file=sys.stderr)")
    reason = json.loads(fire(Cli(git_repo, capsys), bad).out)["reason"]
    assert reason["kind"] == "bad_output" and reason["field"] is None
    assert "one JSON object (loopx_fire_result_v0) on the last line of its stdout" in reason["rule"]
    assert "Invalid JSON" in reason["rule"] and reason["stderr_tail"] == ["see the log"]


def test_an_answer_the_protocol_refuses_gives_the_code_field_and_rule(ledger, git_repo, tmp_path, capsys):
    bad = script(tmp_path, "claims.py", answer({"status": "done", "verdict": "MATCH", "next": "resume"}))
    result = fire(Cli(git_repo, capsys), bad)
    reason = json.loads(result.out)["reason"]
    assert (reason["kind"], reason["code"], reason["field"], reason["rule"]) == (
        "refused",
        "evidence_missing",
        "evidence",
        "evidence first",
    )
    assert "rule: evidence first" in ledger.ledger_entry(GOAL, "e1").failure
    text = fire(Cli(git_repo, capsys), bad, fmt=None).out
    assert "code evidence_missing, field evidence" in text


def test_a_timeout_says_so_with_what_the_command_wrote(ledger, git_repo, tmp_path, capsys):
    hang = script(tmp_path, "hang.py", "print('waiting for the lock', file=sys.stderr, flush=True)\ntime.sleep(60)")
    result = fire(Cli(git_repo, capsys), hang, "--iteration-timeout", "1")
    reason = json.loads(result.out)["reason"]
    assert result.code == 1 and reason["kind"] == "timeout"
    assert reason["message"] == "'hang.py' ran past the iteration timeout (1 s) and was stopped"
    assert reason["stderr_tail"] == ["waiting for the lock"] and reason["exit_status"] is not None


def test_a_command_that_cannot_start_mid_fire_is_an_error_and_the_entry_is_written_back(
    ledger, git_repo, tmp_path, capsys
):
    broken = tmp_path / "broken.sh"
    broken.write_text("#!/nonexistent/interpreter\n")  # executable, but its interpreter is missing
    broken.chmod(0o755)
    result = fire(Cli(git_repo, capsys), str(broken))
    summary = json.loads(result.out)
    assert result.code == 1 and summary["stop_condition"] == "cannot_start"
    assert summary["reason"]["kind"] == "cannot_start"
    assert summary["reason"]["message"].startswith("'broken.sh' could not be started: ")
    entry = ledger.ledger_entry(GOAL, "e1")
    assert entry.status == "blocked" and entry.failure  # not left active: the next fire can take it
    done = script(tmp_path, "done.py", answer(DONE))
    assert fire(Cli(git_repo, capsys), done).code == 0


def test_a_program_that_does_not_exist_is_refused_before_anything_runs(ledger, git_repo, tmp_path, capsys):
    tip = state_tip(git_repo)
    result = fire(Cli(git_repo, capsys), str(tmp_path / "no-such-step.sh"), fmt=None)
    assert result.code == 1 and result.err.startswith("error[invalid-field]: field 'command': ")
    assert "not an executable program" in result.err
    assert state_tip(git_repo) == tip and ledger.ledger_entry(GOAL, "e1").status == "pending"


def test_a_key_over_several_lines_is_redacted_whole_before_the_tail_is_cut(ledger, git_repo, tmp_path, capsys):
    key = pem(random.Random(5), "RSA")
    (tmp_path / "key.txt").write_text(key)
    body = (
        f"sys.stderr.write(open({str(tmp_path / 'key.txt')!r}).read() + '\\n')\n"
        "for n in range(18): print(f'line {n}', file=sys.stderr)\n"
        "sys.exit(2)"
    )
    reason = json.loads(fire(Cli(git_repo, capsys), script(tmp_path, "leaky.py", body)).out)["reason"]
    tail = reason["stderr_tail"]
    # the last 20 lines as written hold the key's last two lines without its header: redaction ran
    # first, over the whole key, which is now one marker line
    assert "[REDACTED:private-key]" in tail[0] and tail[1:] == [f"line {n}" for n in range(18)]
    for secret_line in key.splitlines()[1:-1]:
        assert secret_line not in json.dumps(reason) and not on_branch(git_repo, secret_line)


def test_a_long_stderr_keeps_only_its_last_lines(ledger, git_repo, tmp_path, capsys):
    body = "for n in range(500): print(f'progress {n} ' + 'x' * 300, file=sys.stderr)\nsys.exit(1)"
    reason = json.loads(fire(Cli(git_repo, capsys), script(tmp_path, "noisy.py", body)).out)["reason"]
    tail = reason["stderr_tail"]
    assert 1 <= len(tail) <= 20 and tail[-1].startswith("progress 499 ")
    assert len("\n".join(tail).encode()) <= 2048
    assert len(ledger.ledger_entry(GOAL, "e1").failure) <= 1000


def test_a_later_write_back_clears_the_failure_and_an_ok_fire_has_no_reason(ledger, git_repo, tmp_path, capsys):
    fire(Cli(git_repo, capsys), script(tmp_path, "bad.py", "sys.exit(3)"))
    assert ledger.ledger_entry(GOAL, "e1").failure
    ok = json.loads(fire(Cli(git_repo, capsys), script(tmp_path, "done.py", answer(DONE))).out)
    assert (ok["terminal_status"], ok["reason"]) == ("ok", None)
    entry = ledger.ledger_entry(GOAL, "e1")
    assert entry.status == "done" and entry.failure is None
    document = git(git_repo, "show", f"refs/heads/loopx/state:{layout.entity_document('ledger', GOAL, 'e1')}")
    assert "failure" not in document  # an entry without a failure renders as before the field existed
    assert loopx_git.open(git_repo).verify().ok


def test_an_entry_that_never_failed_renders_as_before(ledger, git_repo):
    document = git(git_repo, "show", f"refs/heads/loopx/state:{layout.entity_document('ledger', GOAL, 'e1')}")
    assert "failure" not in document and "question: null" in document


# the window of stderr a fire keeps (STDERR_KEEP bytes) starts 12 characters into the token: its
# last characters are no token to the rules, so they must not be kept at all
WINDOW_IN_TOKEN = (
    "t = os.environ['PLANTED_TOKEN']\n"
    f"size = {STDERR_KEEP} - (len(t) - 12)\n"
    "lines = '\\n' + ''.join(f'filler {n} ' + 'f' * 20000 + '\\n' for n in range(2))\n"
    "rest = lines + ('last filler ' + 'f' * size)[: size - len(lines) - 1] + '\\n'\n"
    "assert len(rest) == size\n"
    "sys.stderr.write('x' * 5000 + t + rest)\n"
    "sys.exit(1)"
)


def pieces(text: str, size: int = 8) -> list[str]:
    return [text[n : n + size] for n in range(len(text) - size + 1)]


def test_a_stderr_window_that_starts_inside_a_token_keeps_none_of_it(ledger, git_repo, tmp_path, capsys, token):
    result = fire(Cli(git_repo, capsys), script(tmp_path, "cut.py", WINDOW_IN_TOKEN))
    reason = json.loads(result.out)["reason"]
    assert result.code == 1 and reason["kind"] == "command_failed"
    tail = reason["stderr_tail"]
    assert tail[0].startswith("[cut: ") and tail[1].startswith("filler 0 ") and tail[-1].startswith("last filler ")
    failure = ledger.ledger_entry(GOAL, "e1").failure
    for piece in [token, *pieces(token[12:])]:
        assert piece not in result.out and piece not in failure and not on_branch(git_repo, piece)


@pytest.mark.parametrize(("end", "newline"), [("", 0), ("\\n", 1)])
def test_a_line_longer_than_the_window_is_a_marker_not_its_start(
    ledger, git_repo, tmp_path, capsys, token, end, newline
):
    body = (
        "t = os.environ['PLANTED_TOKEN']\n"
        f"sys.stderr.write('x' * 5000 + t + 'y' * ({STDERR_KEEP} - (len(t) - 12)) + '{end}')\n"
        "sys.exit(1)"
    )
    reason = json.loads(fire(Cli(git_repo, capsys), script(tmp_path, "long.py", body)).out)["reason"]
    total = 5000 + len(token) + STDERR_KEEP - (len(token) - 12) + newline
    assert reason["stderr_tail"] == [f"[cut: {total} bytes]"]
    for piece in [token, *pieces(token[12:])]:
        assert not on_branch(git_repo, piece)

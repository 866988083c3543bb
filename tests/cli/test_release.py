"""``loopx todo release -t T [--reason R]``: a claim given back, declared once in domain/claim.py (the
operation issue 33 adds to show that a new write is one declaration and one function). The holder
releases its own claim, a person any claim; another agent is refused and nothing moves."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_schemas import written
from tests.conftest import GOAL, git, state_tip
from tests.surface.tokens import FAMILY_TOKENS


@pytest.fixture
def held(cli):
    assert cli("todo", "add", "-g", GOAL, "-t", "t1", "--text", "Parse the header").code == 0
    assert cli("todo", "claim", "-g", GOAL, "-t", "t1", "-a", "alice").code == 0
    return cli


def _log(path) -> list[str]:
    return git(path, "log", "--format=%s", "refs/heads/loopx/state").splitlines()


def test_the_holder_releases_its_claim_in_one_commit_and_another_agent_may_claim_it(held, git_repo):
    tip = state_tip(git_repo)
    out = held.json("todo", "release", "-g", GOAL, "-t", "t1", "-a", "alice", "--reason", "out of time today")
    written(out, "todo_item_v0")
    assert out["changed"] is True and out["record"]["claimed_by"] is None and out["record"]["status"] == "open"
    assert _log(git_repo)[0] == "loopx: todo release t1 (held by alice)"
    assert git(git_repo, "rev-parse", "refs/heads/loopx/state~1").strip() == tip  # exactly one commit
    [event] = [e for e in held.json("events", "-g", GOAL, "-t", "t1") if e["event_kind"] == "todo_update"]
    assert event["agent_id"] == "alice" and "out of time today" in event["summary"]
    assert held.json("todo", "show", "-g", GOAL, "-t", "t1").get("claimed_by") is None
    assert held("todo", "claim", "-g", GOAL, "-t", "t1", "-a", "bob").code == 0


def test_text_output_says_whose_claim_went(held):
    result = held("todo", "release", "-g", GOAL, "-t", "t1", "-a", "alice")
    assert result.code == 0 and result.out.strip() == "released t1 (held by alice)"


def test_a_person_releases_any_claim(held):
    out = held.json("todo", "release", "-g", GOAL, "-t", "t1")
    assert out["changed"] is True and out["record"]["claimed_by"] is None


def test_a_todo_nobody_holds_is_left_as_it_is(held, git_repo):
    assert held("todo", "release", "-g", GOAL, "-t", "t1", "-a", "alice").code == 0
    tip = state_tip(git_repo)
    out = held.json("todo", "release", "-g", GOAL, "-t", "t1", "-a", "alice")
    assert out["changed"] is False and out["commit"] is None
    assert state_tip(git_repo) == tip


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (["-t", "t1", "-a", "bob"], "claim-held", "claimed by 'alice'"),  # another agent's claim
        (["-t", "nope", "-a", "alice"], "not-found", "nope"),
        (["-t", "t1", "-a", "mallory"], "unknown-agent", "agent_id"),
        (["-t", "t1", "-a", "alice", "--reason", ""], "invalid-field", "field 'reason'"),
        (["-g", "elsewhere", "-t", "t1", "-a", "alice"], "not-found", "elsewhere"),
    ],
)
def test_a_refused_release_exits_1_names_what_is_wrong_and_moves_nothing(held, git_repo, argv, code, said):
    tip = state_tip(git_repo)
    result = held("todo", "release", *(argv if "-g" in argv else ["-g", GOAL, *argv]))
    assert result.code == 1, result.err
    assert f"error[{code}]" in result.err and said in result.err
    assert state_tip(git_repo) == tip


def test_a_done_todo_has_no_claim_to_release(held, git_repo):
    assert held("todo", "complete", "-g", GOAL, "-t", "t1", "-a", "alice", "--evidence", "tests pass").code == 0
    tip = state_tip(git_repo)
    result = held("todo", "release", "-g", GOAL, "-t", "t1", "-a", "alice")
    assert result.code == 1 and "error[todo-closed]" in result.err and "done is final" in result.err
    assert state_tip(git_repo) == tip


def test_a_secret_in_the_reason_is_refused_or_redacted_never_written(held, git_repo):
    token = FAMILY_TOKENS["hosting"][0]
    tip = state_tip(git_repo)
    result = held("todo", "release", "-g", GOAL, "-t", "t1", "-a", "alice", "--reason", f"key {token}")
    assert result.code == 1 and token not in result.err + result.out
    assert state_tip(git_repo) == tip
    out = held.json("todo", "release", "-g", GOAL, "-t", "t1", "-a", "alice", "--reason", f"key {token}", "--redact")
    assert out["changed"] is True and out["redacted"]
    assert token not in git(git_repo, "log", "-p", "refs/heads/loopx/state")


def test_a_missing_todo_id_is_a_usage_error(held, git_repo):
    tip = state_tip(git_repo)
    assert held("todo", "release", "-g", GOAL, "-a", "alice").code == 2
    assert state_tip(git_repo) == tip


def test_the_python_api_method_is_the_same_operation(repo, git_repo):
    repo.todo_add(GOAL, "Parse the header", todo_id="t1")
    repo.todo_claim(GOAL, "t1", "bob")
    result = repo.todo_release(GOAL, "t1", agent_id="bob", reason="stopping")
    assert result.changed and result.record.claimed_by is None
    assert json.loads(result.record.model_dump_json())["todo_id"] == "t1"

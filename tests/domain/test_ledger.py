"""The loop ledger's iteration protocol: one action per iteration, evidence first, UNVERIFIABLE never
inherits confidence, UNVERIFIABLE and ask_user stop the loop. Every refusal leaves the ref alone."""

from __future__ import annotations

import pytest

from loopx_git.errors import LoopxError
from loopx_git.store import layout
from tests.conftest import GOAL, Cli, git, state_tip

DIGEST = "sha256:" + "ab" * 32


@pytest.fixture
def ledger(repo):
    repo.ledger_add(GOAL, "CI fails on a stale asset check", "update_asset_check", entry_id="e1")
    repo.ledger_add(GOAL, "The docs link is broken", "fix_docs_link", entry_id="e2")
    return repo


def refused(repo, git_repo, code, call):
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        call()
    assert err.value.code == code, err.value.message
    assert state_tip(git_repo) == tip
    return err.value


def test_next_selects_exactly_one_runnable_entry_oldest_first(ledger):
    contract = ledger.ledger_next(GOAL, agent_id="alice").record
    assert (
        contract["schema_version"] == "loopx_ledger_action_v0"
        and contract["ledger_schema"] == "project-telos.loop-ledger/v1"
    )
    assert contract["entry"]["id"] == "e1" and contract["entry"]["status"] == "active" and contract["iteration"] == 1
    assert ledger.ledger_entry(GOAL, "e1").selected_by == "alice"
    assert ledger.ledger_entry(GOAL, "e2").status == "pending"


def test_a_second_selection_before_the_write_back_is_refused(ledger, git_repo):
    ledger.ledger_next(GOAL, agent_id="alice")
    refused(ledger, git_repo, "multiple_actions_in_one_iteration", lambda: ledger.ledger_next(GOAL, agent_id="alice"))
    assert ledger.ledger_next(GOAL, agent_id="bob").record["entry"]["id"] == "e2"  # another agent's iteration


def test_done_needs_evidence(ledger, git_repo):
    ledger.ledger_next(GOAL, agent_id="alice")
    refused(
        ledger,
        git_repo,
        "evidence_missing",
        lambda: ledger.ledger_record(GOAL, "e1", status="done", verdict="MATCH", next="resume", agent_id="alice"),
    )
    done = ledger.ledger_record(
        GOAL,
        "e1",
        status="done",
        verdict="MATCH",
        next="resume",
        agent_id="alice",
        evidence=["test_path:tests/test_assets.py", f"command_output:{DIGEST}"],
    )
    assert [e.kind for e in done.record.evidence] == ["test_path", "command_output"]
    assert ledger.ledger_next(GOAL, agent_id="alice").record["entry"]["id"] == "e2"


def test_unverifiable_never_inherits_confidence_and_stops_the_loop(ledger, git_repo):
    ledger.ledger_next(GOAL, agent_id="alice")
    ledger.ledger_record(
        GOAL,
        "e1",
        status="blocked",
        verdict="UNVERIFIABLE",
        next="retry",
        agent_id="alice",
        evidence=["url:https://ci.example.com/runs/1"],
    )
    refused(ledger, git_repo, "needs-attention", lambda: ledger.ledger_next(GOAL, agent_id="alice"))
    refused(
        ledger,
        git_repo,
        "unverifiable_inherited_confidence",
        lambda: ledger.ledger_record(
            GOAL, "e1", status="blocked", verdict="MATCH", next="resume", evidence=["url:https://ci.example.com/runs/1"]
        ),
    )
    answered = ledger.ledger_record(
        GOAL, "e1", status="pending", verdict="MATCH", next="resume", evidence=["artifact_id:ci-run-2"]
    )
    assert answered.record.verdict == "MATCH" and len(answered.record.evidence) == 2
    assert ledger.ledger_next(GOAL, agent_id="alice").record["entry"]["id"] == "e1"


def test_ask_user_stops_the_loop_until_a_person_answers(ledger, git_repo):
    ledger.ledger_next(GOAL, agent_id="alice")
    ledger.ledger_record(
        GOAL,
        "e1",
        status="blocked",
        verdict="DRIFT",
        next="ask_user",
        agent_id="alice",
        question="which asset is the new hero image?",
    )
    err = refused(ledger, git_repo, "needs-attention", lambda: ledger.ledger_next(GOAL, agent_id="bob"))
    assert "'e1'" in err.message and "ask_user" in err.message
    ledger.ledger_record(GOAL, "e1", status="pending", verdict="DRIFT", next="resume")  # the person's answer
    assert ledger.ledger_next(GOAL, agent_id="bob").record["entry"]["id"] == "e1"


def test_writing_back_an_entry_nobody_selected_is_refused(ledger, git_repo):
    refused(
        ledger,
        git_repo,
        "not-selected",
        lambda: ledger.ledger_record(
            GOAL, "e1", status="done", verdict="MATCH", next="resume", evidence=["test_path:tests/x.py"]
        ),
    )
    ledger.ledger_next(GOAL, agent_id="alice")
    refused(
        ledger,
        git_repo,
        "not-selected",
        lambda: ledger.ledger_record(
            GOAL, "e1", status="done", verdict="MATCH", next="resume", agent_id="bob", evidence=["test_path:tests/x.py"]
        ),
    )


@pytest.mark.parametrize(
    "evidence, problem",
    [
        ("command_output:all 11 tests passed", "digest"),
        ("url:not a url", "http(s) URL"),
        ("test_path:/abs/tests/x.py", "relative"),
        ("screenshot:shot.png", "KIND:REF"),
    ],
)
def test_evidence_is_typed_and_public_safe(ledger, git_repo, evidence, problem):
    ledger.ledger_next(GOAL, agent_id="alice")
    err = refused(
        ledger,
        git_repo,
        "invalid-field",
        lambda: ledger.ledger_record(
            GOAL, "e1", status="done", verdict="MATCH", next="resume", agent_id="alice", evidence=[evidence]
        ),
    )
    assert "field 'evidence'" in err.message and problem in err.message


@pytest.mark.parametrize(
    "field, value", [("status", "finished"), ("verdict", "OK"), ("next", "later"), ("status", "active")]
)
def test_closed_vocabularies(ledger, git_repo, field, value):
    ledger.ledger_next(GOAL, agent_id="alice")
    args = {"status": "blocked", "verdict": "DRIFT", "next": "retry", field: value}
    err = refused(ledger, git_repo, "invalid-field", lambda: ledger.ledger_record(GOAL, "e1", agent_id="alice", **args))
    assert f"field '{field}'" in err.message


def test_the_cli_prints_the_action_contract_and_documents_are_written(ledger, git_repo, capsys):
    cli = Cli(git_repo, capsys)
    contract = cli.json("ledger", "next", "-g", GOAL, "--agent-id", "alice")
    assert contract["entry"]["id"] == "e1"
    result = cli(
        "ledger",
        "record",
        "-g",
        GOAL,
        "--entry-id",
        "e1",
        "--status",
        "done",
        "--verdict",
        "MATCH",
        "--next",
        "resume",
        "--evidence",
        "test_path:tests/test_assets.py",
        "--agent-id",
        "alice",
    )
    assert result.code == 0, result.err
    doc = git(git_repo, "show", f"loopx/state:{layout.entity_document('ledger', GOAL, 'e1')}")
    assert "status: done" in doc and "verdict: MATCH" in doc and "tests/test_assets.py" in doc
    assert [e["id"] for e in cli.json("ledger", "list", "-g", GOAL)] == ["e1", "e2"]
    assert cli.json("ledger", "show", "-g", GOAL, "--entry-id", "e1")["next"] == "resume"
    assert ledger.verify().ok


def test_nothing_runnable_is_not_an_error(repo, capsys, git_repo):
    assert Cli(git_repo, capsys).json("ledger", "next", "-g", GOAL) == {"selected": None}


def test_a_secret_in_a_claim_is_refused_like_any_write(repo, git_repo):
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    refused(repo, git_repo, "unsafe", lambda: repo.ledger_add(GOAL, f"deploy key {token} leaked", "rotate_key"))

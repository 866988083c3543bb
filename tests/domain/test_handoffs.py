"""Handoffs (seed 003): the source prepares one for the todos it holds; the target adopts it and the
claims move in that one commit, both sides recorded; an adopted or cancelled handoff is final."""

from __future__ import annotations

import json

import pytest

from loopx_git.errors import LoopxError
from loopx_git.store import layout
from tests.cli.test_schemas import conforms, conforms_each, written
from tests.conftest import GOAL, NOW, git, state_tip


@pytest.fixture
def held(repo):
    for todo_id in ("t1", "t2", "t3"):
        repo.todo_add(GOAL, f"Work {todo_id}", todo_id=todo_id, now=NOW)
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    repo.todo_claim(GOAL, "t2", "alice", now=NOW)
    return repo


def refused(repo, git_repo, code, call):
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        call()
    assert err.value.code == code, err.value.message
    assert state_tip(git_repo) == tip
    return err.value


def _prepare(repo, **kw):
    args = {"from_agent_id": "alice", "to_agent_id": "bob", "todo_ids": ["t1", "t2"], "stop_condition": "tests pass"}
    return repo.handoff_prepare(GOAL, "h1", **{**args, **kw}, evidence_refs=["docs/parser.md"], now=NOW)


def test_adopt_moves_every_claim_in_one_commit(held, git_repo):
    prepared = _prepare(held).record
    assert prepared.status == "prepared" and prepared.review_required and not prepared.self_merge_allowed
    assert [h.handoff_id for h in held.status(GOAL, "bob").waiting_handoffs] == ["h1"]
    assert [h.handoff_id for h in held.status(GOAL, "alice").waiting_handoffs] == ["h1"]
    assert held.todo(GOAL, "t1").claimed_by == "alice"  # nothing moves before the target adopts
    before = state_tip(git_repo)
    result = held.handoff_adopt(GOAL, "h1", "bob")
    assert git(git_repo, "rev-list", "--count", f"{before}..refs/heads/loopx/state").strip() == "1"
    assert [e.event_kind for e in result.write.events] == ["handoff_adopt", "todo_update", "todo_update"]
    assert {held.todo(GOAL, t).claimed_by for t in ("t1", "t2")} == {"bob"}
    adopted = held.handoff(GOAL, "h1")
    assert adopted.status == "adopted" and adopted.from_agent_id == "alice" and adopted.to_agent_id == "bob"
    assert held.status(GOAL, "bob").waiting_handoffs == []
    doc = git(git_repo, "show", f"refs/heads/loopx/state:{layout.entity_document('handoff', GOAL, 'h1')}")
    assert "status: adopted" in doc and "stop_condition: tests pass" in doc
    assert held.verify().ok


def test_an_adopted_or_cancelled_handoff_is_final(held, git_repo):
    _prepare(held)
    held.handoff_adopt(GOAL, "h1", "bob")
    refused(held, git_repo, "handoff-closed", lambda: held.handoff_adopt(GOAL, "h1", "bob"))
    refused(held, git_repo, "handoff-closed", lambda: held.handoff_cancel(GOAL, "h1", reason="too late"))
    held.todo_claim(GOAL, "t3", "bob", now=NOW)
    held.handoff_prepare(GOAL, "h2", from_agent_id="bob", to_agent_id="alice", todo_ids=["t3"], stop_condition="s")
    held.handoff_cancel(GOAL, "h2", reason="alice is away", agent_id="bob")
    err = refused(held, git_repo, "handoff-closed", lambda: held.handoff_adopt(GOAL, "h2", "alice"))
    assert "already cancelled" in err.message
    assert held.todo(GOAL, "t3").claimed_by == "bob"


def test_prepare_refuses_what_the_source_does_not_hold(held, git_repo):
    err = refused(held, git_repo, "claim-not-held", lambda: _prepare(held, todo_ids=["t3"]))
    assert "field 'todo_ids'" in err.message and "not claimed" in err.message
    err = refused(held, git_repo, "claim-not-held", lambda: _prepare(held, from_agent_id="bob", to_agent_id="alice"))
    assert "held by 'alice'" in err.message
    refused(held, git_repo, "unknown-agent", lambda: _prepare(held, to_agent_id="carol"))
    refused(held, git_repo, "unknown-agent", lambda: _prepare(held, from_agent_id="carol"))
    refused(held, git_repo, "invalid-field", lambda: _prepare(held, to_agent_id="alice"))
    refused(held, git_repo, "invalid-field", lambda: _prepare(held, todo_ids=[]))
    refused(held, git_repo, "invalid-field", lambda: _prepare(held, stop_condition=""))
    refused(held, git_repo, "not-found", lambda: _prepare(held, todo_ids=["nope"]))
    _prepare(held)
    refused(held, git_repo, "handoff-exists", lambda: _prepare(held))
    err = refused(
        held,
        git_repo,
        "handoff-pending",
        lambda: held.handoff_prepare(
            GOAL, "h9", from_agent_id="alice", to_agent_id="bob", todo_ids=["t1"], stop_condition="s"
        ),
    )
    assert "t1" in err.message


def test_only_the_target_adopts_and_only_what_the_source_still_holds(held, git_repo):
    _prepare(held)
    refused(held, git_repo, "not-handoff-target", lambda: held.handoff_adopt(GOAL, "h1", "alice"))
    refused(held, git_repo, "unknown-handoff", lambda: held.handoff_adopt(GOAL, "nope", "bob"))
    held.todo_complete(GOAL, "t2", evidence=["tests/test_t2.py"], actor="alice")
    err = refused(held, git_repo, "todo-closed", lambda: held.handoff_adopt(GOAL, "h1", "bob"))
    assert "t2" in err.message
    held.agent_register(GOAL, "carol")
    refused(held, git_repo, "not-handoff-party", lambda: held.handoff_cancel(GOAL, "h1", reason="r", agent_id="carol"))


def test_self_merge_and_scope(held):
    handoff = held.handoff_prepare(
        GOAL,
        "h3",
        from_agent_id="alice",
        to_agent_id="bob",
        scope="docs",
        stop_condition="docs build",
        review_required=False,
    ).record
    assert handoff.todo_ids == [] and handoff.scope == "docs" and handoff.self_merge_allowed


def test_handoff_cli_shape_and_json(cli, git_repo):
    for todo_id in ("t1", "t2"):
        assert cli("todo", "add", "-g", GOAL, "--todo-id", todo_id, "--text", todo_id).code == 0
        assert cli("todo", "claim", "-g", GOAL, "-t", todo_id, "-a", "alice").code == 0
    prepared = cli.json(
        "handoff",
        "prepare",
        "-g",
        GOAL,
        "--handoff-id",
        "h1",
        "--from-agent-id",
        "alice",
        "--to-agent-id",
        "bob",
        "--todo-id",
        "t1",
        "-t",
        "t2",
        "--stop-condition",
        "tests pass",
        "--evidence-ref",
        "docs/parser.md",
        "--self-merge-allowed",
    )
    written(prepared, "agent_handoff_v0")
    assert prepared["record"]["self_merge_allowed"] and not prepared["record"]["review_required"]
    card = cli.json("status", "-g", GOAL, "-a", "bob")
    conforms("status_contract_v2", card)
    assert [h["handoff_id"] for h in card["waiting_handoffs"]] == ["h1"]
    both = cli(
        "handoff",
        "prepare",
        "-g",
        GOAL,
        "--handoff-id",
        "h2",
        "--from-agent-id",
        "alice",
        "--to-agent-id",
        "bob",
        "-t",
        "t1",
        "--stop-condition",
        "s",
        "--review-required",
        "--self-merge-allowed",
    )
    assert both.code == 2
    result = cli("handoff", "adopt", "-g", GOAL, "--handoff-id", "h1", "--agent-id", "bob", "--format", "json")
    assert result.code == 0, result.err
    adopted = json.loads(result.out)
    written(adopted, "agent_handoff_v0")
    assert len(adopted["event_ids"]) == 3
    conforms_each("agent_handoff_v0", cli.json("handoff", "list", "-g", GOAL, "-a", "bob"))
    conforms("agent_handoff_v0", cli.json("handoff", "show", "-g", GOAL, "--handoff-id", "h1"))
    tip = state_tip(git_repo)
    again = cli("handoff", "adopt", "-g", GOAL, "--handoff-id", "h1", "--agent-id", "bob")
    assert again.code == 1 and "error[handoff-closed]" in again.err and state_tip(git_repo) == tip


def test_the_giver_of_a_waiting_handoff_is_not_offered_the_todos_it_handed_on(held):
    """Once alice offers t1 and t2 to bob, her next action is other work (t3), not the todos she
    handed on; bob's is the adoption. After a cancel they are hers again."""
    _prepare(held)
    alice = held.should_run(GOAL, "alice").agent_lane_next_action
    assert alice.todo_id == "t3" and alice.basis == "runnable"
    assert held.should_run(GOAL, "bob").agent_lane_next_action.basis == "handoff"
    assert {a.agent_id: a.todo_id for a in held.status(GOAL).next_actions}["alice"] == "t3"
    held.handoff_cancel(GOAL, "h1", agent_id="alice", reason="bob is busy", now=NOW)
    assert held.should_run(GOAL, "alice").agent_lane_next_action.todo_id == "t1"


def test_a_rollback_of_an_adoption_says_why_and_what_to_do_instead(held, git_repo):
    _prepare(held)
    adopted = held.handoff_adopt(GOAL, "h1", "bob")
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        held.rollback(GOAL, event_id=adopted.write.events[0].event_id, reason="wrong agent")
    assert err.value.code == "not-reversible" and "adopted handoff is final" in err.value.message
    assert "handoff prepare" in err.value.hint and state_tip(git_repo) == tip

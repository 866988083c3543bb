"""Operator gates (seed 003): a gate names what it blocks and its owner; while undecided, rejected or
deferred it holds what it blocks; only its owner class decides it, once; an approval wakes what it
unblocks in the same commit. Every refusal leaves the state ref where it was."""

from __future__ import annotations

import pytest

from loopx_git.errors import LoopxError
from loopx_git.store import layout
from tests.conftest import GOAL, NOW, git, state_tip
from tests.hooks.test_hooks import FAKE_TOKEN

LATER = "2026-03-01T11:00:00Z"


@pytest.fixture
def work(repo):
    repo.todo_add(GOAL, "Ship the release", todo_id="ship", now=NOW)
    repo.todo_add(GOAL, "Tag the release", todo_id="tag", now=NOW)
    repo.todo_add(GOAL, "Fix the docs", todo_id="docs", now=NOW)
    repo.todo_update(GOAL, "tag", status="blocked", reason="waits for the release decision", now=NOW)
    return repo


def refused(repo, git_repo, code, call):
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        call()
    assert err.value.code == code, err.value.message
    assert state_tip(git_repo) == tip
    return err.value


def _open(repo, **kw):
    args = {"owner_class": "user", "question": "Release 1.0 now?", "blocks": ["ship"], "unblocks": ["tag"]}
    return repo.gate_open(GOAL, "release", **{**args, **kw}, now=NOW)


def _runnable(repo, agent="alice"):
    card = repo.status(GOAL)
    return [a.todo_id for a in card.next_actions if a.agent_id == agent]


def test_an_open_gate_holds_what_it_blocks_and_the_card_shows_it_first(work, git_repo):
    gate = _open(work).record
    assert gate.status == "open" and gate.blocks == ["ship"] and gate.unblocks == ["tag"]
    card = work.status(GOAL)
    assert [g.gate_id for g in card.open_gates] == ["release"]
    assert list(type(card).model_fields).index("open_gates") < list(type(card).model_fields).index("counts")
    # safe-bypass work stays runnable, the gate stays visible
    assert {a.todo_id for a in card.next_actions} == {"docs", None}
    assert "ship" not in {a.todo_id for a in card.next_actions}
    doc = git(git_repo, "show", f"refs/heads/loopx/state:{layout.entity_document('gate', GOAL, 'release')}")
    assert "status: open" in doc and "owner_class: user" in doc
    assert work.verify().ok


def test_approval_wakes_what_it_unblocks_in_the_same_commit(work, git_repo):
    _open(work)
    before = state_tip(git_repo)
    result = work.gate_decide(
        GOAL, "release", decision="approve", reason="release notes reviewed", decided_by_class="user", now=LATER
    )
    assert git(git_repo, "rev-list", "--count", f"{before}..refs/heads/loopx/state").strip() == "1"
    assert [e.event_kind for e in result.write.events] == ["gate_decide", "todo_resume"]
    assert work.todo(GOAL, "tag").status == "open"
    gate = work.gate(GOAL, "release")
    assert gate.status == "approved" and gate.decided_by_class == "user" and gate.decided_at == LATER
    assert work.status(GOAL).open_gates == []
    assert {a.todo_id for a in work.status(GOAL).next_actions} == {"ship", "docs"}
    assert work.verify().ok


@pytest.mark.parametrize(("decision", "status"), [("reject", "rejected"), ("defer", "deferred")])
def test_reject_and_defer_keep_the_blocked_work_blocked_with_the_reason(work, decision, status):
    _open(work)
    work.gate_decide(GOAL, "release", decision=decision, reason="not before the audit", decided_by_class="user")
    assert work.todo(GOAL, "tag").status == "blocked"  # nothing woken
    card = work.status(GOAL)
    assert [(g.gate_id, g.status, g.reason) for g in card.open_gates] == [("release", status, "not before the audit")]
    assert "ship" not in {a.todo_id for a in card.next_actions}
    assert work.verify().ok


def test_a_deferred_gate_may_be_decided_again_a_final_one_may_not(work, git_repo):
    _open(work)
    work.gate_decide(GOAL, "release", decision="defer", reason="after the audit", decided_by_class="user")
    work.gate_decide(GOAL, "release", decision="approve", reason="audit passed", decided_by_class="user")
    err = refused(
        work,
        git_repo,
        "gate-decided",
        lambda: work.gate_decide(GOAL, "release", decision="reject", reason="changed my mind", decided_by_class="user"),
    )
    assert "already decided: approved" in err.message and "decided once" in err.message


def test_only_the_owner_class_decides(work, git_repo):
    _open(work, owner_class="controller")
    err = refused(
        work,
        git_repo,
        "not-gate-owner",
        lambda: work.gate_decide(GOAL, "release", decision="approve", reason="fine", decided_by_class="user"),
    )
    assert "field 'decided_by_class'" in err.message and "owner class" in err.message


def test_an_agent_owned_gate_is_decided_by_its_registered_owner_only(work, git_repo):
    refused(work, git_repo, "unknown-agent", lambda: _open(work, owner_class="agent", owner_agent_id="carol"))
    refused(work, git_repo, "invalid-field", lambda: _open(work, owner_class="agent"))
    refused(work, git_repo, "invalid-field", lambda: _open(work, owner_class="user", owner_agent_id="alice"))
    _open(work, owner_class="agent", owner_agent_id="alice")
    err = refused(
        work,
        git_repo,
        "not-gate-owner",
        lambda: work.gate_decide(
            GOAL, "release", decision="approve", reason="ok", decided_by_class="agent", agent_id="bob"
        ),
    )
    assert "field 'agent_id'" in err.message
    work.gate_decide(GOAL, "release", decision="approve", reason="ok", decided_by_class="agent", agent_id="alice")
    assert work.gate(GOAL, "release").decided_by_agent_id == "alice"


def test_bad_gates_are_refused_naming_the_field(work, git_repo):
    err = refused(work, git_repo, "gate-blocks-nothing", lambda: _open(work, blocks=[], unblocks=[]))
    assert "field 'blocks'" in err.message
    assert "blocks 'nope'" in refused(work, git_repo, "not-found", lambda: _open(work, blocks=["nope"])).message
    assert "unblocks 'nope'" in refused(work, git_repo, "not-found", lambda: _open(work, unblocks=["nope"])).message
    assert "owner_class" in refused(work, git_repo, "invalid-field", lambda: _open(work, owner_class="boss")).message
    assert "'question'" in refused(work, git_repo, "invalid-field", lambda: _open(work, question="")).message
    assert (
        "gate_id"
        in refused(
            work,
            git_repo,
            "invalid-field",
            lambda: work.gate_open(GOAL, "", owner_class="user", question="q", blocks=["ship"]),
        ).message
    )
    work.todo_complete(GOAL, "docs", evidence=["docs/index.md"])
    assert "is done" in refused(work, git_repo, "todo-closed", lambda: _open(work, blocks=["docs"])).message
    _open(work)
    refused(work, git_repo, "gate-exists", lambda: _open(work))
    refused(
        work,
        git_repo,
        "unknown-gate",
        lambda: work.gate_decide(GOAL, "nope", decision="approve", reason="r", decided_by_class="user"),
    )
    refused(
        work,
        git_repo,
        "invalid-field",
        lambda: work.gate_decide(GOAL, "release", decision="maybe", reason="r", decided_by_class="user"),
    )
    refused(
        work,
        git_repo,
        "invalid-field",
        lambda: work.gate_decide(GOAL, "release", decision="approve", reason="", decided_by_class="user"),
    )


def test_a_scope_alone_is_something_to_block(work):
    gate = work.gate_open(GOAL, "freeze", owner_class="external", question="Deploy window open?", scope="deploy").record
    assert gate.blocks == [] and gate.scope == "deploy"
    assert [g.gate_id for g in work.status(GOAL).open_gates] == ["freeze"]


def test_a_scope_holds_the_todos_of_that_action_kind_until_approved(work):
    work.todo_add(GOAL, "Deploy 1.0", todo_id="dep", action_kind="deploy", now=NOW)
    work.todo_add(GOAL, "Write notes", todo_id="notes", action_kind="docs", now=NOW)
    work.gate_open(GOAL, "freeze", owner_class="external", question="Deploy window open?", scope="deploy", now=NOW)
    graph = work.view(GOAL, "todo", "dep", include_task_graph=True).task_graph
    assert [(e.edge_kind, e.from_ref) for e in graph.edges] == [("blocks", "gate:freeze")]
    offered = {a.todo_id for a in work.status(GOAL).next_actions}
    assert "dep" not in offered and "notes" in offered  # safe-bypass work stays runnable
    later = work.todo_add(GOAL, "Deploy 1.1", todo_id="dep2", action_kind="deploy", now=NOW).record
    assert later.todo_id == "dep2" and "dep2" not in {a.todo_id for a in work.status(GOAL).next_actions}
    work.gate_decide(GOAL, "freeze", decision="approve", reason="window open", decided_by_class="external", now=NOW)
    assert work.view(GOAL, "todo", "dep", include_task_graph=True).task_graph.edges == []
    assert work.should_run(GOAL, "alice").agent_lane_next_action.held_by_gates == []
    assert work.verify().ok


def test_a_gate_question_is_public_safe(work, git_repo):
    err = refused(work, git_repo, "unsafe", lambda: _open(work, question=f"use {FAKE_TOKEN} to deploy?"))
    assert "field 'question'" in err.message and FAKE_TOKEN not in err.message


@pytest.fixture
def user_gate(repo):
    repo.todo_add(GOAL, "Approve the schema change", todo_id="ask", role="user", task_class="user_gate", now=NOW)
    repo.todo_add(GOAL, "Migrate the table", todo_id="migrate", resume_when="todo_done:ask", now=NOW)
    return repo


def test_a_user_gate_todo_approved_records_the_gate_and_wakes_its_dependents(user_gate):
    result = user_gate.todo_complete(
        GOAL, "ask", no_follow_up=True, reason="schema approved", decision_outcome="approve"
    )
    kinds = [e.event_kind for e in result.write.events]
    assert kinds == ["todo_complete", "gate_open", "gate_decide", "todo_resume"]
    gate = user_gate.gate(GOAL, "ask")
    assert gate.status == "approved" and gate.source_todo_id == "ask" and gate.blocks == ["migrate"]
    assert user_gate.todo(GOAL, "migrate").status == "open"
    assert user_gate.verify().ok


@pytest.mark.parametrize(("outcome", "status"), [("reject", "rejected"), ("cancel", "cancelled")])
def test_a_user_gate_todo_rejected_or_cancelled_consumes_no_authority(user_gate, outcome, status):
    user_gate.todo_complete(GOAL, "ask", no_follow_up=True, reason="not now", decision_outcome=outcome)
    assert user_gate.gate(GOAL, "ask").status == status
    assert user_gate.todo(GOAL, "migrate").status == "deferred"  # not woken
    assert "migrate" not in {a.todo_id for a in user_gate.status(GOAL).next_actions}
    assert user_gate.verify().ok


def test_a_decision_outcome_belongs_to_user_gate_todos_only(user_gate, git_repo):
    user_gate.todo_add(GOAL, "Write code", todo_id="code", now=NOW)
    err = refused(
        user_gate,
        git_repo,
        "invalid-field",
        lambda: user_gate.todo_complete(GOAL, "code", evidence=["a.py"], decision_outcome="approve"),
    )
    assert "field 'decision_outcome'" in err.message and "user_gate" in err.message
    refused(
        user_gate,
        git_repo,
        "invalid-field",
        lambda: user_gate.todo_complete(GOAL, "ask", no_follow_up=True, reason="r", decision_outcome="defer"),
    )


def test_held_work_is_not_claimed_completed_or_superseded_until_the_gate_is_approved(work, git_repo):
    _open(work)
    work.todo_add(GOAL, "Ship it again", todo_id="ship2", now=NOW)
    for call in (
        lambda: work.todo_claim(GOAL, "ship", "alice"),
        lambda: work.todo_complete(GOAL, "ship", evidence=["a.py"]),
        lambda: work.todo_supersede(GOAL, "ship", by="ship2", reason="renamed"),
    ):
        err = refused(work, git_repo, "gate-held", call)
        assert "gate 'release'" in err.message and "until the gate is approved" in err.message


def test_a_new_gate_asks_again_and_its_approval_lifts_the_rejected_one(work):
    _open(work)
    work.gate_decide(GOAL, "release", decision="reject", reason="not before the audit", decided_by_class="user")
    work.gate_open(GOAL, "release-2", owner_class="user", question="Audit done, release?", blocks=["ship"], now=LATER)
    assert {g.gate_id for g in work.state().goals[GOAL].holding_gates("ship")} == {"release", "release-2"}
    work.gate_decide(GOAL, "release-2", decision="approve", reason="audit passed", decided_by_class="user")
    assert work.state().goals[GOAL].holding_gates("ship") == []
    work.todo_claim(GOAL, "ship", "alice")
    assert work.verify().ok


def test_approving_through_a_user_gate_todo_wakes_what_its_gate_unblocks(repo):
    repo.todo_add(GOAL, "Approve the release?", todo_id="ask", role="user", task_class="user_gate", now=NOW)
    repo.todo_add(GOAL, "Ship", todo_id="ship", now=NOW)
    repo.todo_add(GOAL, "Tag", todo_id="tag", now=NOW)
    repo.todo_update(GOAL, "tag", status="blocked", reason="after the decision", now=NOW)
    repo.gate_open(GOAL, "ask", owner_class="user", question="Release?", blocks=["ship"], unblocks=["tag"], now=NOW)
    repo.todo_complete(GOAL, "ask", no_follow_up=True, reason="yes", decision_outcome="approve")
    assert repo.gate(GOAL, "ask").status == "approved" and repo.todo(GOAL, "tag").status == "open"
    assert repo.verify().ok


def test_a_rollback_of_a_user_gate_completion_is_refused_not_half_done(user_gate, git_repo):
    done = user_gate.todo_complete(GOAL, "ask", no_follow_up=True, reason="not now", decision_outcome="reject")
    completion = done.write.events[0].event_id
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        user_gate.rollback(GOAL, event_id=completion, reason="a mistake")
    assert state_tip(git_repo) == tip and err.value.code in ("not-reversible", "rollback-refused"), err.value.code
    assert user_gate.gate(GOAL, "ask").status == "rejected"


def test_a_rollback_of_a_gate_decision_says_why_and_what_to_do_instead(repo, git_repo):
    repo.todo_add(GOAL, "Ship", todo_id="ship", now=NOW)
    repo.gate_open(GOAL, "rel", owner_class="user", question="Release?", blocks=["ship"], now=NOW)
    decided = repo.gate_decide(GOAL, "rel", decision="approve", reason="fine", decided_by_class="user", now=NOW)
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        repo.rollback(GOAL, event_id=decided.write.events[0].event_id, reason="too early")
    assert err.value.code == "not-reversible" and "decision is final" in err.value.message
    assert "not ones it created" not in err.value.message and "gate open" in err.value.hint
    assert state_tip(git_repo) == tip

"""Gates across clones: decisions made on two machines meet through the remote; the fold order
decides which one stands, and the other is surfaced as a conflict, never dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopx_git
from tests.conftest import Cli
from tests.sync.helpers import GOAL, bare, clone, tree_of


@pytest.fixture
def remote(tmp_path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def alice(tmp_path, remote) -> Path:
    path = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(path) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.todo_add(GOAL, "Ship the release", todo_id="ship")
        repo.todo_add(GOAL, "Tag it", todo_id="tag")
        repo.todo_update(GOAL, "tag", status="blocked", reason="after the release decision")
        repo.gate_open(GOAL, "release", owner_class="user", question="Release now?", blocks=["ship"], unblocks=["tag"])
        assert repo.sync().pushed
    return path


@pytest.fixture
def bob(tmp_path, remote, alice) -> Path:
    path = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(path) as repo:
        assert repo.pull().action == "fast-forward"
    return path


def test_a_gate_opened_on_one_clone_holds_the_work_on_the_other(alice, bob):
    with loopx_git.open(bob) as b:
        assert [g.gate_id for g in b.status(GOAL).open_gates] == ["release"]
        b.gate_decide(GOAL, "release", decision="approve", reason="notes reviewed", decided_by_class="user")
        b.sync()
    with loopx_git.open(alice) as a:
        assert a.sync().pull.action == "fast-forward"
        assert a.gate(GOAL, "release").status == "approved" and a.todo(GOAL, "tag").status == "open"
        assert a.verify().ok
    assert tree_of(alice) == tree_of(bob)


def test_two_offline_decisions_the_fold_order_decides_and_the_other_is_a_conflict(alice, bob, capsys):
    with loopx_git.open(alice) as a:
        a.gate_decide(GOAL, "release", decision="approve", reason="ready", decided_by_class="user")
        a.sync()
    with loopx_git.open(bob) as b:  # bob has not pulled: his decision is made on the open gate
        b.gate_decide(GOAL, "release", decision="reject", reason="not before the audit", decided_by_class="user")
        result = b.sync()
        kinds = [c.kind for c in result.pull.conflicts]
        assert "decision_conflict" in kinds
        stood = b.gate(GOAL, "release")
        assert stood.status in ("approved", "rejected")
        # what the losing decision caused is not applied either: tag wakes only under an approval
        assert b.todo(GOAL, "tag").status == ("open" if stood.status == "approved" else "blocked")
        if stood.status == "rejected":
            assert "cause_dropped" in kinds  # alice's wake-up of tag, dropped with her approval
        assert b.verify().ok
    with loopx_git.open(alice) as a:
        a.sync()
        assert a.gate(GOAL, "release") == stood  # both clones fold to the same decision
        assert "decision_conflict" in [c.kind for c in a.status(GOAL).conflicts]

    assert tree_of(alice) == tree_of(bob)
    assert "decision_conflict" in Cli(bob, capsys)("status", "-g", GOAL).out


@pytest.mark.parametrize("first", ["approve", "reject"])
def test_whichever_decision_stands_the_todos_follow_it_on_both_clones(alice, bob, first):
    """Each side decides offline at its own time; after both sync, the todo the approval would wake
    is open exactly when the approval stood."""
    other = "reject" if first == "approve" else "approve"
    with loopx_git.open(bob) as b:
        b.gate_decide(GOAL, "release", decision=first, reason="b", decided_by_class="user", now="2026-03-01T11:00:00Z")
    with loopx_git.open(alice) as a:
        a.gate_decide(GOAL, "release", decision=other, reason="a", decided_by_class="user", now="2026-03-01T12:00:00Z")
        a.sync()
    with loopx_git.open(bob) as b:
        b.sync()
        stood = b.gate(GOAL, "release").status
        assert b.todo(GOAL, "tag").status == ("open" if stood == "approved" else "blocked")
        assert b.verify().ok
    with loopx_git.open(alice) as a:
        a.sync()
        assert a.gate(GOAL, "release").status == stood
        assert a.todo(GOAL, "tag").status == ("open" if stood == "approved" else "blocked")
    assert tree_of(alice) == tree_of(bob)


def test_a_losing_adoption_moves_no_claim(tmp_path, remote, alice, bob):
    with loopx_git.open(alice) as a:
        a.agent_register(GOAL, "alice")
        a.agent_register(GOAL, "bob")
        a.todo_add(GOAL, "Write the docs", todo_id="docs")
        a.todo_claim(GOAL, "docs", "alice")
        a.handoff_prepare(GOAL, "h1", from_agent_id="alice", to_agent_id="bob", todo_ids=["docs"], stop_condition="s")
        a.sync()
    with loopx_git.open(bob) as b:
        b.pull()
    with loopx_git.open(alice) as a:
        a.handoff_cancel(GOAL, "h1", reason="not now", agent_id="alice", now="2026-03-01T11:00:00Z")
        a.sync()
    with loopx_git.open(bob) as b:  # bob adopts offline, after the cancel he has not seen
        b.handoff_adopt(GOAL, "h1", "bob", now="2026-03-01T12:00:00Z")
        b.sync()
        handoff = b.handoff(GOAL, "h1")
        holder = b.todo(GOAL, "docs").claimed_by
        assert holder == ("bob" if handoff.status == "adopted" else "alice")
        assert b.verify().ok

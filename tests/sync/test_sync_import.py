"""Imported rollout logs across clones: two machines that import the same file — one with more of
its own history than the other — meet through the remote with each line present once, and verify
clean on both; lines imported on one machine only arrive on the other like any event."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loopx_git
from loopx_git.errors import LoopxError
from tests.sync.helpers import GOAL, bare, clone, event_ids, tree_of

LINES = [
    {
        "schema_version": "loopx_rollout_event_v0",
        "event_id": f"upstream{n:02d}",
        "goal_id": "elsewhere",
        "event_kind": "validation" if n % 2 else "todo_update",
        "recorded_at": f"2026-06-24T01:{n:02d}:00+08:00",
        "agent_id": "codex-a",
        "todo_id": "todo_x",
        "summary": f"step {n}",
    }
    for n in range(6)
]


@pytest.fixture
def log(tmp_path) -> Path:
    path = tmp_path / "rollout-event-log.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return path


@pytest.fixture
def pair(tmp_path):
    remote = bare(tmp_path / "remote.git")
    alice = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(alice) as a:
        a.goal_create(GOAL, "Ship the parser")
        a.agent_register(GOAL, "alice")
        assert a.sync().pushed
    bob = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(bob) as b:
        assert b.pull().action == "fast-forward"
    return alice, bob


def test_the_same_file_imported_on_two_clones_lands_once(pair, log):
    alice, bob = pair
    with loopx_git.open(alice) as a:
        a.event_append(GOAL, "note", summary="alice worked offline")  # her clock is ahead of bob's
        assert a.events_import(GOAL, log.open("rb")).imported == 6
        a.sync()
    with loopx_git.open(bob) as b:
        assert b.events_import(GOAL, log.open("rb")).imported == 6
        result = b.sync()
        assert result.pull.action == "merged"
        assert b.verify().ok
    with loopx_git.open(alice) as a:
        a.sync()
        assert a.verify().ok
        imported = [e for e in a.events(GOAL) if e.event_kind == "rollout_import"]
        assert sorted(e.origin.event_id for e in imported) == [f"upstream{n:02d}" for n in range(6)]
    assert tree_of(alice) == tree_of(bob)
    ids = event_ids(alice)
    assert len(ids) == len(set(ids))  # one file per event id on the merged branch


def test_lines_imported_on_one_clone_arrive_on_the_other_and_are_not_imported_twice(pair, log):
    alice, bob = pair
    with loopx_git.open(alice) as a:
        a.events_import(GOAL, log.open("rb"))
        a.sync()
    with loopx_git.open(bob) as b:
        b.sync()
        assert [e.origin.event_id for e in b.events(GOAL, kind="rollout_import")] == [
            f"upstream{n:02d}" for n in range(6)
        ]
        again = b.events_import(GOAL, log.open("rb"))
        assert (again.imported, again.already_present, again.commits) == (0, 6, [])
        assert b.view(GOAL, "todo", "todo_x").event_count == 6


def test_one_line_imported_into_two_goals_on_two_clones_syncs(pair, log):
    alice, bob = pair
    with loopx_git.open(alice) as a:
        a.goal_create("g2", "Another goal")
        a.sync()
    with loopx_git.open(bob) as b:
        b.sync()
        b.events_import("g2", log.open("rb"))
        b.sync()
    with loopx_git.open(alice) as a:
        a.events_import(GOAL, log.open("rb"))
        assert a.sync().pull.action == "merged"
        assert a.verify().ok
        assert len(a.events(GOAL, kind="rollout_import")) == len(a.events("g2", kind="rollout_import")) == 6


def test_a_redacted_line_is_the_same_record_on_every_clone(pair, tmp_path):
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # assembled: the allowlisted fake token
    line = {**LINES[0], "summary": f"used {token}"}
    path = tmp_path / "secret.jsonl"
    path.write_text(json.dumps(line) + "\n")
    alice, bob = pair
    with loopx_git.open(alice, redact=True) as a:
        assert a.events_import(GOAL, path.open("rb")).redacted_fields == 1
        a.sync()
    with loopx_git.open(bob) as b:
        tip = b.tip
        with pytest.raises(LoopxError) as refused:  # not pulled yet, and not redacting: refused
            b.events_import(GOAL, path.open("rb"))
        assert refused.value.code == "unsafe" and b.tip == tip
    with loopx_git.open(bob, redact=True) as b:  # redacting, bob writes the record alice wrote
        assert b.events_import(GOAL, path.open("rb")).imported == 1
        # the same record on the same parent: merged, or within one second the very same commit
        assert b.sync().pull.action in ("merged", "up-to-date")
        assert b.verify().ok
        assert len(b.events(GOAL, kind="rollout_import")) == 1
    assert token not in "".join(event_ids(bob))

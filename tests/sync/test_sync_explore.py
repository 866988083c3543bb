"""The explore graph across clones (issue 15): two clones observing different nodes meet through the
remote with the same tree and the same projections whichever syncs first; the same observation made
on both is kept once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loopx_git
from tests.domain.test_explore import _terminal
from tests.sync.helpers import GOAL, bare, clone, tree_of


@pytest.fixture
def remote(tmp_path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def clones(tmp_path, remote) -> tuple[Path, Path]:
    alice = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(alice) as repo:
        repo.goal_create(GOAL, "Find which results compose")
        for node, kind in (("A", "hypothesis"), ("B", "hypothesis"), ("AB", "experiment")):
            repo.explore_node_add(GOAL, node, kind=kind, title=node, evidence_ids=[f"ev-{node}"])
        for node in ("A", "B"):
            repo.explore_edge_add(GOAL, "AB", node, "depends_on")
        assert repo.sync().pushed
    bob = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(bob) as repo:
        assert repo.pull().action == "fast-forward"
    return alice, bob


def _summary(path: Path) -> str:
    with loopx_git.open(path) as repo:
        return json.dumps(repo.explore_summary(GOAL).model_dump(mode="json"), sort_keys=True)


@pytest.mark.parametrize("first", ["alice", "bob"])
def test_two_clones_observing_different_nodes_meet_with_the_same_projections(clones, first):
    alice, bob = clones
    with loopx_git.open(alice) as a:
        a.explore_observe(GOAL, _terminal("A", "ev-A", candidates=[("B", "ev-B")]), now="2026-03-01T11:00:00Z")
        a.explore_node_update(GOAL, "A", status="resolved", reason="covered", now="2026-03-01T11:00:01Z")
    with loopx_git.open(bob) as b:
        b.explore_observe(GOAL, _terminal("B", "ev-B"), now="2026-03-01T12:00:00Z")
        b.explore_node_update(GOAL, "B", status="dead_end", reason="nothing there", now="2026-03-01T12:00:01Z")
    order = (alice, bob, alice) if first == "alice" else (bob, alice, bob)
    for path in order:
        with loopx_git.open(path) as repo:
            repo.sync()
    assert tree_of(alice) == tree_of(bob)
    assert _summary(alice) == _summary(bob)
    [gap] = json.loads(_summary(alice))["gaps"]
    assert gap["state"] == "pending" and gap["inputs"] == ["A", "B"]
    for path in (alice, bob):
        with loopx_git.open(path) as repo:
            assert repo.verify().ok and not repo.status(GOAL).conflicts


def test_the_same_observation_on_both_clones_is_kept_once(clones):
    alice, bob = clones
    envelope = _terminal("A", "ev-A")
    for path, now in ((alice, "2026-03-01T11:00:00Z"), (bob, "2026-03-01T11:30:00Z")):
        with loopx_git.open(path) as repo:
            assert repo.explore_observe(GOAL, envelope, now=now).record.written
    for path in (alice, bob, alice):
        with loopx_git.open(path) as repo:
            repo.sync()
    assert tree_of(alice) == tree_of(bob)
    with loopx_git.open(alice) as repo:
        node = repo.explore_node(GOAL, "A")
        assert len(node.observations) == 1 and repo.verify().ok
        again = repo.explore_observe(GOAL, envelope)
        assert again.record.replayed and not again.changed


def test_dependencies_added_on_two_clones_are_a_conflict_and_evidence_added_on_both_is_all_kept(clones):
    alice, bob = clones
    with loopx_git.open(alice) as a:
        a.explore_node_add(GOAL, "C", kind="hypothesis", title="C")
        a.explore_node_add(GOAL, "X", kind="experiment", title="X")
        a.sync()
    with loopx_git.open(bob) as b:
        b.pull()
        b.explore_edge_add(GOAL, "X", "C", "depends_on")
        b.explore_node_update(GOAL, "B", evidence_ids=["ev-y"])
    with loopx_git.open(alice) as a:
        a.explore_edge_add(GOAL, "X", "A", "depends_on")
        a.explore_edge_add(GOAL, "X", "B", "depends_on")
        a.explore_node_update(GOAL, "B", evidence_ids=["ev-x"])
    for path in (alice, bob, alice):
        with loopx_git.open(path) as repo:
            repo.sync()
    assert tree_of(alice) == tree_of(bob)
    with loopx_git.open(alice) as a:
        assert sorted(a.explore_node(GOAL, "X").depends_on()) == ["A", "B", "C"]
        assert "experiment_not_binary" in [c.kind for c in a.status(GOAL).conflicts]
        assert sorted(a.explore_node(GOAL, "B").evidence_ids) == ["ev-B", "ev-x", "ev-y"]  # what both added
        assert a.verify().ok

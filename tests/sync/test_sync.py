"""Sync through a bare remote on disk: fast-forward, merge, convergence, conflicts and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loopx_git
from loopx_git.errors import ConflictError
from loopx_git.store import layout
from loopx_git.sync import SyncRefused, merge
from tests.conftest import Cli, git
from tests.sync.helpers import GOAL, bare, clone, tree_of


@pytest.fixture
def remote(tmp_path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def alice(tmp_path, remote) -> Path:
    path = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(path) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.agent_register(GOAL, "alice")
        repo.agent_register(GOAL, "bob")
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        assert repo.sync().pushed
    return path


@pytest.fixture
def bob(tmp_path, remote, alice) -> Path:
    path = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(path) as repo:
        assert repo.pull().action == "fast-forward"
    return path


def test_first_sync_creates_the_remote_branch_and_a_new_clone_fast_forwards(alice, bob, remote):
    assert tree_of(bob) == tree_of(alice) == git(remote, "rev-parse", "loopx/state^{tree}").strip()
    assert loopx_git.open(bob).todo(GOAL, "t1").text == "Write the tokenizer"


def test_diverged_clones_merge_and_converge(alice, bob, remote):
    with loopx_git.open(alice) as a, loopx_git.open(bob) as b:
        a.todo_add(GOAL, "alice's work", todo_id="ta")
        b.todo_add(GOAL, "bob's work", todo_id="tb")
        b.event_append(GOAL, "note", summary="bob was here")
        assert a.sync().pull.action == "ahead"
        result = b.sync()
        assert result.pull.action == "merged" and result.pull.events_from_remote == 1 and result.pushed
        assert a.sync().pull.action == "fast-forward"
        assert tree_of(alice) == tree_of(bob)
        assert {t.todo_id for t in a.todos(GOAL)} == {"t1", "ta", "tb"}
        assert a.verify().ok and b.verify().ok
    parents = git(bob, "log", "-1", "--format=%P", "loopx/state").split()
    assert len(parents) == 2
    assert git(bob, "log", "-1", "--format=%s", "loopx/state").startswith(
        "loopx: merge origin (1 events from the remote"
    )


def test_merge_is_the_same_either_way_round(alice, bob):
    with loopx_git.open(alice) as a, loopx_git.open(bob) as b:
        a.todo_add(GOAL, "from alice", todo_id="ta")
        a.todo_claim(GOAL, "t1", "alice")
        b.todo_add(GOAL, "from bob", todo_id="tb")
        b.todo_claim(GOAL, "t1", "bob")  # offline, both claim t1
    git(alice, "fetch", "-q", str(bob), "+refs/heads/loopx/state:refs/heads/bob-state")
    a_tip = git(alice, "rev-parse", "loopx/state").strip()
    b_tip = git(alice, "rev-parse", "bob-state").strip()
    git(alice, "update-ref", "refs/heads/a-into-b", b_tip)
    one = merge(loopx_git.open(alice), a_tip, b_tip, "bob")
    other = merge(loopx_git.open(alice, state_ref="refs/heads/a-into-b"), b_tip, a_tip, "alice")
    assert tree_of(alice) == tree_of(alice, "refs/heads/a-into-b")
    assert [c.kind for c in one.conflicts] == [c.kind for c in other.conflicts] == ["claim_conflict"]


def test_offline_claims_the_earlier_holds_and_the_other_is_a_recorded_conflict(alice, bob, capsys):
    with loopx_git.open(alice) as a:
        a.todo_claim(GOAL, "t1", "alice")
        a.sync()
    with loopx_git.open(bob) as b:
        b.todo_claim(GOAL, "t1", "bob")  # bob has not pulled: his clock is the same as alice's claim
        result = b.sync()
        [conflict] = result.pull.conflicts
        holder = b.todo(GOAL, "t1").claimed_by
        loser = "bob" if holder == "alice" else "alice"
        assert conflict.kind == "claim_conflict" and conflict.agent_id == loser
        for agent in ("alice", "bob"):
            assert [c.kind for c in b.status(GOAL, agent).conflicts] == ["claim_conflict"]
        assert b.verify().ok
    out = Cli(bob, capsys)("status", "-g", GOAL)
    assert "claim_conflict" in out.out


def test_a_push_that_lost_to_another_clone_is_refused_then_sync_merges(alice, bob, capsys):
    with loopx_git.open(alice) as a:
        a.todo_add(GOAL, "alice first", todo_id="ta")
        assert a.push().pushed
    with loopx_git.open(bob) as b:
        b.todo_add(GOAL, "bob second", todo_id="tb")
    result = Cli(bob, capsys)("push")
    assert result.code == 1 and "error[push-lost]" in result.err
    assert git(bob, "rev-parse", "refs/remotes/origin/loopx/state") != git(alice, "rev-parse", "loopx/state")
    assert Cli(bob, capsys).json("sync")["action"] == "merged"


def test_an_edited_event_on_the_remote_is_refused_with_commit_and_path(alice, bob, remote, tmp_path):
    work = tmp_path / "vandal"
    git(alice, "worktree", "add", "-q", str(work), "loopx/state")
    event = sorted(work.glob("goals/g1/events/**/*.json"))[0]
    data = json.loads(event.read_text())
    data["summary"] = "rewritten"
    event.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    git(work, "commit", "-q", "-am", "edit an event")
    git(alice, "push", "-q", "origin", "loopx/state")  # plain git, no hooks installed here
    before = git(bob, "rev-parse", "loopx/state")
    with loopx_git.open(bob) as b:
        b.todo_add(GOAL, "diverge", todo_id="tb")
        tip = b.tip
        with pytest.raises(SyncRefused) as err:
            b.pull()
        assert b.tip == tip
    rel = str(event.relative_to(work))
    assert "record-changed" in err.value.message and rel in err.value.message and "commit " in err.value.message
    assert before != tip


def test_a_reused_record_id_with_other_content_is_refused(alice, bob, tmp_path):
    with loopx_git.open(bob) as b:
        b.todo_add(GOAL, "bob", todo_id="tb")
        bob_event = b.events(GOAL, todo_id="tb")[0]
    with loopx_git.open(alice) as a:
        a.todo_add(GOAL, "alice", todo_id="ta")
    # a clone that copies bob's event id onto different content: the same path, another blob
    work = tmp_path / "copycat"
    git(alice, "worktree", "add", "-q", str(work), "loopx/state")
    path = sorted(work.glob("goals/g1/events/**/*.json"))[-1]
    data = json.loads(path.read_text())
    target = (
        work
        / "goals/g1/events"
        / bob_event.recorded_at[:4]
        / bob_event.recorded_at[5:7]
        / bob_event.recorded_at[8:10]
        / bob_event.recorded_at[11:13]
        / f"{bob_event.event_id}.json"
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    data["event_id"] = bob_event.event_id
    target.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    _push_by_hand(alice, work, "reuse an id")
    assert _refused_pull(bob).code in ("record-clash", "remote-refused")


def _push_by_hand(clone: Path, work: Path, message: str) -> None:
    """Commit what was changed in ``work`` (a checkout of the clone's state branch) and push it."""
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", message)
    git(clone, "push", "-q", "origin", "loopx/state")


def _refused_pull(clone: Path) -> SyncRefused:
    """The refusal of a pull into ``clone``, whose state branch it left where it was."""
    with loopx_git.open(clone) as repo:
        tip = repo.tip
        with pytest.raises(SyncRefused) as err:
            repo.pull()
        assert repo.tip == tip
    return err.value


def test_an_incoming_event_reusing_an_id_at_another_path_is_refused(alice, bob, tmp_path):
    """An id the receiving clone already holds, on an event recorded in another hour (so at another
    path): the pull checks new ids against its own fold and refuses, naming the path."""
    with loopx_git.open(bob) as b:
        b.event_append(GOAL, "note", summary="bob's fold is cached at this tip")
        assert b.sync().pushed
    with loopx_git.open(alice) as a:
        assert a.pull().action == "fast-forward"
        old = a.events(GOAL)[0]
    work = tmp_path / "copycat"
    git(alice, "worktree", "add", "-q", str(work), "loopx/state")
    source = sorted(work.glob("goals/g1/events/**/*.json"))[-1]
    data = json.loads(source.read_text())
    data["event_id"] = old.event_id
    data["recorded_at"] = "2020-01-01T00:00:00Z"
    rel = layout.event_path(GOAL, old.event_id, data["recorded_at"])
    (work / rel).parent.mkdir(parents=True)
    (work / rel).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    _push_by_hand(alice, work, "reuse an id at another path")
    message = _refused_pull(bob).message
    assert "duplicate-event-id" in message and rel in message


def test_connect_remote_adds_the_refspec_once(alice, capsys):
    cli = Cli(alice, capsys)
    assert cli.json("connect", "--no-hooks", "--remote", "origin")["refspec_added"] is True
    assert cli.json("connect", "--no-hooks", "--remote", "origin")["refspec_added"] is False
    git(alice, "fetch", "-q", "origin")
    assert git(alice, "rev-parse", "refs/remotes/origin/loopx/state") == git(alice, "rev-parse", "loopx/state")


def test_an_unknown_remote_is_a_clear_error(alice, capsys):
    result = Cli(alice, capsys)("sync", "--remote", "nowhere")
    assert result.code == 1 and "error[no-remote]" in result.err and "nowhere" in result.err


def test_two_clones_that_each_connected_merge_their_histories(tmp_path, remote):
    a = clone(tmp_path / "a", str(remote))
    b = clone(tmp_path / "b", str(remote))
    with loopx_git.open(a) as ra, loopx_git.open(b) as rb:
        ra.goal_create("ga", "goal of a")
        rb.goal_create("gb", "goal of b")
        ra.sync()
        assert rb.sync().pull.action == "merged"
        ra.sync()
        assert tree_of(a) == tree_of(b) and {g.goal_id for g in ra.goals()} == {"ga", "gb"}
        assert ra.verify().ok


# --- plain-git merges, and repair ----------------------------------------------------------------


def _git_merge(clone_path: Path, tmp_path: Path, name: str, *, ours_on_conflict: bool = False) -> None:
    work = tmp_path / name
    git(clone_path, "fetch", "-q", "origin", "+refs/heads/loopx/state:refs/remotes/origin/loopx/state")
    git(clone_path, "worktree", "add", "-q", str(work), "loopx/state")
    args = ["merge", "-q", "--no-edit", "origin/loopx/state"] + (["-X", "ours"] if ours_on_conflict else [])
    git(work, *args)


def test_a_plain_git_merge_of_disjoint_work_verifies(alice, bob, tmp_path):
    with loopx_git.open(alice) as a, loopx_git.open(bob) as b:
        a.todo_add(GOAL, "a", todo_id="ta")
        b.todo_add(GOAL, "b", todo_id="tb")
        b.sync()
    _git_merge(alice, tmp_path, "merge-clean")
    report = loopx_git.open(alice).verify()
    assert report.ok, report.problems


def test_a_plain_git_merge_with_drifted_documents_is_repaired_in_one_commit(alice, bob, tmp_path, capsys):
    with loopx_git.open(alice) as a, loopx_git.open(bob) as b:
        # the same field changed on both sides; bob's change is later, so the fold keeps it
        a.todo_update(GOAL, "t1", "blocked", reason="waiting for the spec", now="2030-01-01T00:00:00Z")
        b.todo_update(GOAL, "t1", "deferred", reason="after the release", now="2030-01-02T00:00:00Z")
        b.sync()
    _git_merge(alice, tmp_path, "merge-drift", ours_on_conflict=True)  # git keeps alice's lines
    repo = loopx_git.open(alice)
    report = repo.verify()
    assert not report.ok and {p.code for p in report.problems} == {"document-drift"}
    before = repo.tip
    fixed = Cli(alice, capsys).json("repair")
    assert fixed["changed"] is True and fixed["record"]["rederived"] == [layout.todo_document("g1", "t1")]
    assert git(alice, "rev-parse", "loopx/state^").strip() == before
    assert loopx_git.open(alice).verify().ok
    assert Cli(alice, capsys).json("repair")["changed"] is False


def test_doctor_says_whether_the_remote_has_the_branch(alice, tmp_path, capsys):
    report = Cli(alice, capsys)("doctor", fmt="json")
    copies = json.loads(report.out)["remote_copies"]
    assert [(c["remote"], c["relation"]) for c in copies] == [("origin", "pushed")]
    empty = bare(tmp_path / "empty.git")
    git(alice, "remote", "add", "empty", str(empty))
    data = json.loads(Cli(alice, capsys)("doctor", fmt="json").out)
    remotes = {r["remote"]: r for r in data["remotes"]}
    assert remotes["origin"]["has_state_branch"] is True and remotes["empty"]["has_state_branch"] is False


def test_sync_never_touches_the_work_tree_or_index(alice, bob):
    (bob / "notes.txt").write_text("work in progress\n")
    git(bob, "add", "notes.txt")
    status = git(bob, "status", "--porcelain")
    with loopx_git.open(alice) as a:
        a.todo_add(GOAL, "more", todo_id="tm")
        a.sync()
    with loopx_git.open(bob) as b:
        b.todo_add(GOAL, "mine", todo_id="tn")
        b.sync()
    assert git(bob, "status", "--porcelain") == status


def test_push_refused_by_a_hook_is_an_error_not_a_retry(alice, capsys):
    hook = alice / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\necho 'no pushes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    with loopx_git.open(alice) as a:
        a.todo_add(GOAL, "blocked by the hook")
        with pytest.raises(ConflictError) as err:
            a.sync()
    assert err.value.code == "push-refused"


def test_claim_sync_from_the_cli_publishes_the_claim(alice, bob, remote, capsys):
    won = Cli(bob, capsys).json("todo", "claim", "-g", GOAL, "-t", "t1", "--agent-id", "bob", "--sync")
    assert won["record"]["claimed_by"] == "bob"
    assert git(remote, "rev-parse", "loopx/state") == git(bob, "rev-parse", "loopx/state")
    lost = Cli(alice, capsys)("todo", "claim", "-g", GOAL, "-t", "t1", "--agent-id", "alice", "--sync")
    assert lost.code == 1 and "error[claim-held]" in lost.err and "'bob'" in lost.err


@pytest.mark.parametrize("damage, code", [("invalid", "invalid-record"), ("delete", "record-deleted")])
def test_an_invalid_or_deleted_record_on_the_remote_is_refused(alice, bob, tmp_path, damage, code):
    work = tmp_path / "damage"
    git(alice, "worktree", "add", "-q", str(work), "loopx/state")
    events = sorted(work.glob("goals/g1/events/**/*.json"))
    if damage == "invalid":
        bad = events[0].parent / "evt_notavalidrecord.json"
        bad.write_text('{"event_kind": "note"}\n')
    else:
        events[0].unlink()
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "damage")
    git(alice, "push", "-q", "origin", "loopx/state")
    with loopx_git.open(bob) as b:
        b.todo_add(GOAL, "diverge", todo_id="tb")
        tip = b.tip
        with pytest.raises(SyncRefused) as err:
            b.sync()
        assert b.tip == tip and code in err.value.message and "commit " in err.value.message

"""The event layout (issue 11, item 2): bounded trees under the hour shard, old branches still read,
and packing during use on a long-lived handle. Old-layout branches are written the way an older
loopx wrote them: the real write path with ``layout.WRITE_LAYOUT`` set to 1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pygit2
import pytest

import loopx_git
from loopx_git.store import hygiene, layout, transaction
from loopx_git.store.yaml_doc import render
from tests.conftest import GOAL, NOW, Cli, git, state_tip
from tests.plumbing import plain_commit
from tests.sync.helpers import bare, clone, tree_of

STATE = "refs/heads/loopx/state"
V1 = re.compile(r"goals/[^/]+/events/\d{4}/\d{2}/\d{2}/\d{2}/[^/]+\.json")
V2 = re.compile(r"goals/[^/]+/events/\d{4}/\d{2}/\d{2}/\d{2}/[0-9a-z_]/[0-9a-z_]/[^/]+\.json")


def event_files(path: Path, ref: str = STATE) -> list[str]:
    return [n for n in git(path, "ls-tree", "-r", "--name-only", ref).split() if "/events/" in n]


def declared(path: Path, ref: str = STATE) -> int | None:
    return layout.declared_layout(git(path, "show", f"{ref}:loopx.yaml").encode())


def write_history(repo) -> None:
    repo.agent_register(GOAL, "alice", lane="core", now=NOW)
    repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", now=NOW)
    repo.todo_add(GOAL, "Document it", todo_id="t2", resume_when="todo_done:t1", now="2026-03-01T11:00:00Z")
    repo.todo_claim(GOAL, "t1", "alice", now="2026-03-01T11:30:00Z")
    repo.event_append(GOAL, "note", summary="halfway", now="2026-03-01T12:00:00Z")


@pytest.fixture
def old_branch(git_repo, monkeypatch) -> Path:
    """A state branch as loopx wrote it before layout 2: every event at ``.../HH/<id>.json``."""
    with monkeypatch.context() as patch:
        patch.setattr(layout, "WRITE_LAYOUT", 1)
        with loopx_git.open(git_repo) as repo:
            repo.connect()
            repo.goal_create(GOAL, "Ship the parser", now=NOW)
            write_history(repo)
    files = event_files(git_repo)
    assert len(files) == 6 and all(V1.fullmatch(f) for f in files)
    assert declared(git_repo) == 1
    return git_repo


def verify_problems(path: Path) -> list[tuple[str, str, str]]:
    with loopx_git.open(path) as repo:
        return [(p.code, p.path, p.message) for p in repo.verify().problems]


# -- the paths ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("event_id", "buckets"),
    [("evt_01hzx5k3b8q9r2t4v6w8y0a2cd", "d/c"), ("a", "a/_"), ("X.Y", "y/_"), ("n:..", "_/_"), ("Ab-Z", "z/_")],
)
def test_an_event_path_is_bucketed_by_the_last_two_characters_of_its_id(event_id, buckets):
    path = layout.event_path(GOAL, event_id, NOW)
    assert path == f"goals/{GOAL}/events/2026/03/01/10/{buckets}/{event_id}.json"
    assert layout.is_record(path) and layout.record_kind(path) == "event" and layout.event_layout(path) == 2
    assert layout.hostile_component(path) is None  # never '.', whatever the id ends in
    old = layout.event_path(GOAL, event_id, NOW, 1)
    assert old == f"goals/{GOAL}/events/2026/03/01/10/{event_id}.json" and layout.event_layout(old) == 1
    assert layout.event_paths(GOAL, event_id, NOW) == (path, old)


def test_the_declared_layout_is_read_and_rewritten_without_a_yaml_parser():
    old = render({"layout_version": 1, "goals": ["a", "b"]})
    assert layout.declared_layout(old) == 1
    assert layout.with_layout(old, 2) == render({"layout_version": 2, "goals": ["a", "b"]})
    assert layout.declared_layout(b"goals: []\n") is None


# -- new writes -----------------------------------------------------------------------------------------


def test_new_events_land_at_layout_2_paths_and_loopx_yaml_says_the_layout_written(repo, git_repo):
    result = repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", now=NOW)
    files = event_files(git_repo)
    assert files and all(V2.fullmatch(f) for f in files)
    (added,) = [f for f in files if result.event_ids[0] in f]
    event_id = result.event_ids[0]
    assert added == f"goals/{GOAL}/events/2026/03/01/10/{event_id[-1]}/{event_id[-2]}/{event_id}.json"
    assert declared(git_repo) == layout.LAYOUT_VERSION == 3  # layout 3 writes events where layout 2 did
    assert repo.verify().ok


# -- old branches -------------------------------------------------------------------------------------


def test_an_old_layout_branch_reads_folds_and_verifies_clean(old_branch, capsys):
    cache = old_branch / ".git" / "loopx"
    for pickle in cache.glob("fold-*.pickle"):  # a cold fold reads every record from its path
        pickle.unlink()
    with loopx_git.open(old_branch) as repo:
        assert repo.todo(GOAL, "t1").claimed_by == "alice"
        assert repo.todo(GOAL, "t2").status == "deferred"
        assert [e.summary for e in repo.events(GOAL, kind="note")] == ["halfway"]
        assert len(repo.events(GOAL, since="2026-03-01T11:00:00Z")) == 3  # the hour prefix still filters
        report = repo.verify()
        assert report.ok and report.records_checked == 6, report.problems
        assert not repo.repair().changed  # saying layout 1 is not drift
    result = Cli(old_branch, capsys)("verify")
    assert result.code == 0, result.err


def test_new_writes_on_an_old_branch_use_layout_2_paths_and_say_so_in_the_same_commit(old_branch):
    before = set(event_files(old_branch))
    with loopx_git.open(old_branch) as repo:
        repo.todo_complete(GOAL, "t1", evidence=["tests/test_tokenizer.py"], actor="alice", now="2026-03-01T13:00:00Z")
        tip = repo.tip
        repo.event_append(GOAL, "note", summary="done", now="2026-03-01T13:05:00Z")
    files = set(event_files(old_branch))
    assert before < files and all(V1.fullmatch(f) for f in before)
    new = files - before
    assert len(new) == 3 and all(V2.fullmatch(f) for f in new)
    changed = git(old_branch, "diff-tree", "--no-commit-id", "--name-only", "-r", f"{tip}^", tip).split()
    assert "loopx.yaml" in changed and declared(old_branch, tip) == 3
    yaml = git(old_branch, "show", f"{STATE}:loopx.yaml")
    assert yaml == render({"layout_version": 3, "goals": [GOAL]}).decode()
    for pickle in (old_branch / ".git" / "loopx").glob("fold-*.pickle"):
        pickle.unlink()
    with loopx_git.open(old_branch) as repo:
        assert repo.todo(GOAL, "t1").status == "done" and repo.todo(GOAL, "t2").status == "open"
        report = repo.verify()
        assert report.ok and report.records_checked == 9, report.problems
        assert not repo.repair().changed


def test_a_commit_of_layout_1_events_is_rolled_back_whole(old_branch):
    claim = git(old_branch, "log", "-1", "--format=%H", "--grep=claim", STATE).strip()
    with loopx_git.open(old_branch) as repo:
        result = repo.rollback(GOAL, commit=claim, reason="claimed by mistake", now="2026-03-01T13:00:00Z")
        assert result.changed and repo.todo(GOAL, "t1").claimed_by is None
        assert repo.verify().ok


def test_a_clone_still_on_layout_1_merges_a_newer_clones_work_once_it_upgrades(tmp_path, monkeypatch):
    """An older loopx cannot pull a branch a newer one wrote (it sees the new paths as strays); once
    its clone runs this loopx, its own unpushed layout-1 work merges in and both verify clean."""
    remote = bare(tmp_path / "remote.git")
    with monkeypatch.context() as patch:
        patch.setattr(layout, "WRITE_LAYOUT", 1)
        old = clone(tmp_path / "old", str(remote))
        with loopx_git.open(old) as repo:
            repo.goal_create(GOAL, "Ship the parser", now=NOW)
            write_history(repo)
            assert repo.sync().pushed
            repo.todo_add(GOAL, "old clone's work", todo_id="to", now="2026-03-01T14:10:00Z")  # not pushed
    assert declared(old) == 1
    new = clone(tmp_path / "new", str(remote), connect=False)
    with loopx_git.open(new) as repo:
        repo.connect()  # adopts the old-layout branch
        repo.todo_add(GOAL, "new clone's work", todo_id="tn", now="2026-03-01T14:00:00Z")
        assert repo.sync().pushed
    with loopx_git.open(old) as repo:  # the old clone, upgraded
        result = repo.sync()
        assert result.pull.action == "merged" and result.pushed
    assert declared(old) == 3
    with loopx_git.open(new) as repo:
        assert repo.sync().pull.action == "fast-forward"
    assert tree_of(old) == tree_of(new)
    files = event_files(new)
    assert sum(bool(V1.fullmatch(f)) for f in files) == 7 and sum(bool(V2.fullmatch(f)) for f in files) == 1
    for path in (old, new):
        with loopx_git.open(path) as repo:
            report = repo.verify()
            assert report.ok, report.problems
            assert {"tn", "to"} <= {t.todo_id for t in repo.todos(GOAL)}


# -- events where the rule says they cannot be ----------------------------------------------------------


def moved_event(path: Path, to: str | None = None, *, new_id: str = "evt_01zzzzzzzzzzzzzzzzzzzzzzzz") -> str:
    """A plain-git commit adding a copy of the newest event under a new id, at ``to`` (a function of
    the copy's id) or at its own layout-2 path; returns the path."""
    source = sorted(event_files(path))[-1]
    data = json.loads(git(path, "show", f"{STATE}:{source}"))
    data["event_id"] = new_id
    data["summary"] = "copied by hand"
    data["lamport"] += 1
    target = to or layout.event_path(data["goal_id"], new_id, data["recorded_at"])
    commit = plain_commit(path, STATE, "by hand", {target: json.dumps(data, indent=2, sort_keys=True) + "\n"})
    git(path, "update-ref", STATE, commit)
    return target


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("goals/g1/events/2026/03/01/10/q/q/evt_01zzzzzzzzzzzzzzzzzzzzzzzz.json", "10/z/z/evt_01zzz"),
        ("goals/g1/events/2026/03/01/11/z/z/evt_01zzzzzzzzzzzzzzzzzzzzzzzz.json", "10/z/z/evt_01zzz"),
        ("goals/g1/events/2026/03/01/11/evt_01zzzzzzzzzzzzzzzzzzzzzzzz.json", "10/evt_01zzz"),
    ],
    ids=["wrong-buckets", "wrong-hour-layout-2", "wrong-hour-layout-1"],
)
def test_an_event_off_its_path_in_either_layout_is_refused_with_the_path_it_belongs_at(
    repo, git_repo, capsys, where, expected
):
    repo.event_append(GOAL, "note", summary="a note", now=NOW)
    repo.close()
    moved_event(git_repo, where)
    problems = verify_problems(git_repo)
    assert [(code, path) for code, path, _ in problems] == [("invalid-record", where)]
    message = problems[0][2]
    assert "does not match its event" in message and f"goals/g1/events/2026/03/01/{expected}" in message
    tip = state_tip(git_repo)
    result = Cli(git_repo, capsys)("todo", "add", "--goal-id", GOAL, "--text", "on top")
    assert result.code == 1 and "broken-branch" in result.err and where in result.err
    assert state_tip(git_repo) == tip


def test_a_layout_2_event_on_a_branch_that_says_layout_1_is_refused(old_branch, capsys):
    where = moved_event(old_branch)  # its own layout-2 path, but loopx.yaml still says 1
    assert layout.event_layout(where) == 2 and declared(old_branch) == 1
    problems = verify_problems(old_branch)
    codes = [(code, path) for code, path, _ in problems]
    assert ("layout-mismatch", where) in codes
    message = next(m for code, _, m in problems if code == "layout-mismatch")
    assert "layout_version 1" in message and "layout-2 path" in message
    tip = state_tip(old_branch)
    result = Cli(old_branch, capsys)("verify")
    assert result.code == 1 and "layout-mismatch" in result.out + result.err
    assert state_tip(old_branch) == tip
    with loopx_git.open(old_branch) as repo:  # re-derivable: repair says the layout it writes, and all is clean
        assert repo.repair().changed
        assert repo.verify().ok
    assert declared(old_branch) == 3


def test_a_layout_1_event_written_by_hand_on_a_new_branch_is_accepted(repo, git_repo):
    """An older loopx's clone may still add layout-1 events (a merge keeps them where they are)."""
    repo.event_append(GOAL, "note", summary="a note", now=NOW)
    repo.close()
    where = moved_event(git_repo, "goals/g1/events/2026/03/01/10/evt_01zzzzzzzzzzzzzzzzzzzzzzzz.json")
    assert layout.event_layout(where) == 1
    assert verify_problems(git_repo) == []


# -- bounded trees and packing during use ---------------------------------------------------------------


def test_the_hour_shard_stays_bounded_after_many_appends(repo, git_repo):
    appends = 400
    for n in range(appends):
        repo.event_append(GOAL, "note", summary=f"note {n}", now=f"2026-03-01T10:{n * 60 // appends:02d}:00Z")
    repo.close()
    store = pygit2.Repository(str(git_repo))
    shard = store.revparse_single(STATE).tree["goals/g1/events/2026/03/01/10"]
    hour = store[shard.id]
    leaves, spine = [], [len(hour)]
    for bucket in hour:
        assert bucket.type_str == "tree" and re.fullmatch(r"[0-9a-z_]", bucket.name)
        for inner in store[bucket.id]:
            spine.append(len(store[bucket.id]))
            leaves.append(len(store[inner.id]))
    assert max(spine) <= 37 and sum(leaves) == appends + 3  # with goal_create and two agents
    assert max(leaves) <= 8  # about appends/1024 each; a layout-1 hour tree would hold 403


def test_a_long_lived_handle_packs_during_use_not_only_at_close(git_repo, monkeypatch):
    # exact counts instead of git's one-fan-out estimate, so the test does not depend on luck
    monkeypatch.setattr(hygiene, "estimate_loose", lambda git_dir: hygiene.object_stats(git_dir).loose_objects)
    monkeypatch.setattr(hygiene, "LOOSE_THRESHOLD", 120)
    monkeypatch.setattr(transaction, "PACK_CHECK_EVERY", 40)
    git_dir = git_repo / ".git"
    repo = loopx_git.open(git_repo)
    repo.connect()
    repo.goal_create(GOAL, "Ship the parser", now=NOW)
    most = 0
    for n in range(60):
        repo.event_append(GOAL, "note", summary=f"note {n}", now=NOW)
        most = max(most, hygiene.object_stats(git_dir).loose_objects)
    packed = hygiene.count_packs(git_dir)
    assert packed >= 2  # before close(): during use
    assert most < 120 + 40 + 20  # never more than the threshold, one look's worth and one write
    assert repo.close() == []
    with loopx_git.open(git_repo) as again:
        assert len(again.events(GOAL, kind="note")) == 60 and again.verify().ok


def test_a_pack_that_fails_during_use_never_fails_the_write(git_repo, monkeypatch):
    monkeypatch.setattr(hygiene, "LOOSE_THRESHOLD", 0)
    monkeypatch.setattr(transaction, "PACK_CHECK_EVERY", 1)
    repo = loopx_git.open(git_repo)
    repo.connect()
    repo.goal_create(GOAL, "Ship the parser", now=NOW)
    lock = git_repo / ".git" / "loopx" / "pack.lock"
    lock.unlink(missing_ok=True)
    lock.mkdir(parents=True)  # no lock can be taken: packing refuses (no-lock)
    result = repo.event_append(GOAL, "note", summary="lands all the same", now=NOW)
    assert result.changed and state_tip(git_repo) == result.commit
    notices = repo.close()  # close() tries again and says what it could not do
    assert [n.code for n in notices] == ["upkeep"] and "pack" in notices[0].message

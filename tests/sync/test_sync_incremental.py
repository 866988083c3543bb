"""The cheap paths of a sync give exactly what the slow ones gave (issue 11, item 4): the fold
extended over two clones' interleaving events, the one-tree merge, the folder-at-a-time lookups
of verify and the pre-push check, and the fold saved before the push."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopx_git
from loopx_git.hooks.prepush import RefUpdate, check_push
from loopx_git.model.event_head import event_order_key
from loopx_git.model.fold import extend, fold
from loopx_git.model.state import RECENT_EVENTS, State
from loopx_git.safety.policy import load_from
from loopx_git.store import lookup
from loopx_git.store.documents import render_all
from loopx_git.store.git import GitRepo
from loopx_git.sync import SyncRefused
from loopx_git.views.folded import state_reader
from tests.conftest import git
from tests.sync.helpers import GOAL, bare, clone, tree_of

FAKE_TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # assembled: no token-shaped literal here


@pytest.fixture
def remote(tmp_path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def alice(tmp_path, remote) -> Path:
    path = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(path) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        for agent in ("alice", "bob"):
            repo.agent_register(GOAL, agent)
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        repo.todo_add(GOAL, "Write the lexer", todo_id="t2")
        assert repo.sync().pushed
    return path


@pytest.fixture
def bob(tmp_path, remote, alice) -> Path:
    path = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(path) as repo:
        assert repo.pull().action == "fast-forward"
    return path


def full_fold(path: Path) -> State:
    """The state folded from every record of the branch, no cache involved."""
    reader = state_reader(GitRepo.discover(path), "refs/heads/loopx/state")
    return fold(*reader.all_records(git(path, "rev-parse", "loopx/state").strip()))


def assert_same_state(state: State, expected: State) -> None:
    assert render_all(state) == render_all(expected)
    assert state.goals.keys() == expected.goals.keys()
    for goal_id, want in expected.goals.items():
        got = state.goals[goal_id]
        assert [e.event_id for e in got.recent] == [e.event_id for e in want.recent]
        assert set(got.event_ids) == set(want.event_ids) and set(got.run_ids) == set(want.run_ids)
        assert (got.event_count, got.lamport, got.last_key, got.run_count) == (
            want.event_count,
            want.lamport,
            want.last_key,
            want.run_count,
        )
        assert got.conflicts == want.conflicts
        assert {t.todo_id: t for t in got.todos.values()} == {t.todo_id: t for t in want.todos.values()}


def notes(path: Path, label: str, count: int) -> None:
    with loopx_git.open(path) as repo:
        for i in range(count):
            repo.event_append(GOAL, "note", summary=f"{label} {i}", agent_id=label)


def test_interleaved_notes_merge_as_a_full_fold_would_and_both_clones_converge(alice, bob):
    # both sides write from the same clock: their events interleave in fold order
    notes(alice, "alice", RECENT_EVENTS)
    notes(bob, "bob", RECENT_EVENTS)
    with loopx_git.open(alice) as a:
        assert a.sync().pushed
    with loopx_git.open(bob) as b:
        result = b.sync()
        assert result.pull.action == "merged" and result.pushed
        assert_same_state(b.state(), full_fold(bob))
        assert b.verify().ok
    with loopx_git.open(alice) as a:
        assert a.sync().pull.action == "fast-forward"
        assert_same_state(a.state(), full_fold(alice))
    assert tree_of(alice) == tree_of(bob)
    recent = loopx_git.open(bob).state().goals[GOAL].recent
    assert {e.agent_id for e in recent} == {"alice", "bob"}  # re-picked from both sides, in fold order
    assert list(recent) == sorted(recent, key=event_order_key)


def test_interleaved_entity_events_still_fold_whole_and_give_the_same_documents(alice, bob):
    with loopx_git.open(alice) as a:
        a.todo_claim(GOAL, "t1", "alice")
        a.event_append(GOAL, "note", summary="alice note", agent_id="alice")
        a.todo_add(GOAL, "alice's", todo_id="ta")
        assert a.sync().pushed
    with loopx_git.open(bob) as b:
        b.event_append(GOAL, "note", summary="bob note", agent_id="bob")
        b.todo_claim(GOAL, "t1", "bob")  # offline: a claim conflict, resolved by the fold order
        b.todo_complete(GOAL, "t2", evidence=["tests/test_lexer.py"], actor="bob")
        result = b.sync()
        assert result.pull.action == "merged" and [c.kind for c in result.pull.conflicts] == ["claim_conflict"]
        assert_same_state(b.state(), full_fold(bob))
        assert b.verify().ok
    # a new process reads the merge from the cache saved before the push: the same state again
    assert_same_state(loopx_git.open(bob).state(), full_fold(bob))


def test_extend_takes_late_head_only_events_and_refuses_late_payload_events(alice, bob):
    notes(alice, "alice", 3)
    with loopx_git.open(alice) as a:
        a.todo_add(GOAL, "late todo", todo_id="t9")  # the fourth event on alice's side
    notes(bob, "bob", 6)  # bob's clock runs past it
    git(alice, "push", "-q", "origin", "loopx/state")
    git(bob, "fetch", "-q", "origin")
    bob_repo = GitRepo.discover(bob)
    reader = state_reader(bob_repo, "refs/heads/loopx/state")
    ours = git(bob, "rev-parse", "loopx/state").strip()
    theirs = git(bob, "rev-parse", "refs/remotes/origin/loopx/state").strip()
    base = bob_repo.merge_base(ours, theirs)
    assert base is not None
    added = reader.added_records(bob_repo.commit(base).tree, bob_repo.commit(theirs).tree)
    assert added is not None
    their_events, their_runs = added
    heads = [e for e in their_events if e.event_kind == "note"]
    payload = [e for e in their_events if e.event_kind != "note"]
    assert heads and payload
    state = reader.state_at(ours).copy_for([GOAL])
    before = render_all(state), state.goals[GOAL].event_count
    assert not extend(state, payload, [])  # a todo that sorts before bob's notes: only a full fold is exact
    assert (render_all(state), state.goals[GOAL].event_count) == before  # and the state is untouched
    assert extend(state, heads, their_runs)
    our_events, our_runs = reader.all_records(ours)
    assert_same_state(state, fold([*our_events, *heads], our_runs))


def test_an_edited_incoming_record_is_still_refused_with_nothing_merged(alice, bob, tmp_path):
    notes(bob, "bob", 2)
    notes(alice, "alice", 2)
    work = tmp_path / "vandal"
    git(alice, "worktree", "add", "-q", str(work), "loopx/state")
    [event] = [p for p in work.glob("goals/g1/events/**/*.json") if '"alice 1"' in p.read_text()]
    event.write_text(event.read_text().replace('"alice 1"', '"rewritten"'))
    git(work, "commit", "-q", "-am", "edit an event")
    git(alice, "push", "-q", "origin", "loopx/state")
    with loopx_git.open(bob) as b:
        tip = b.tip
        with pytest.raises(SyncRefused) as err:
            b.sync()
        assert b.tip == tip
    assert "record-changed" in err.value.message and str(event.relative_to(work)) in err.value.message
    assert "nothing was merged" in err.value.message


def test_lookups_a_folder_at_a_time_answer_as_one_path_at_a_time(alice):
    repo = GitRepo.discover(alice)
    tree = repo.commit(git(alice, "rev-parse", "loopx/state").strip()).tree
    files = [p for p, _ in repo.walk_files(tree)]
    folders = sorted({p.rsplit("/", 1)[0] for p in files})
    paths = [*files, *folders, "loopx.yaml/x", "goals/none/x.json", "nowhere", "goals/g1/todos/absent.yaml"]
    assert lookup.leaves(repo, tree, paths) == {p: repo.leaf(tree, p) for p in paths}
    assert lookup.entry_ids(repo, tree, paths) == {p: repo.tree_entry(tree, p) for p in paths}


def _commit(path: Path, name: str, content: str) -> None:
    (path / name).write_text(content)
    git(path, "add", name)
    git(path, "commit", "-q", "--no-verify", "-m", f"add {name}")


def test_a_merge_takes_a_parents_blobs_unscanned_and_scans_what_it_changes(git_repo):
    git(git_repo, "config", "user.name", "Test Person")
    git(git_repo, "config", "user.email", "test@example.invalid")
    _commit(git_repo, "readme.md", "hello\n")
    base = git(git_repo, "rev-parse", "HEAD").strip()
    git(git_repo, "checkout", "-q", "-b", "side")
    _commit(git_repo, "side.env", f"TOKEN={FAKE_TOKEN}\n")
    side = git(git_repo, "rev-parse", "HEAD").strip()
    git(git_repo, "checkout", "-q", "-")
    _commit(git_repo, "main.txt", "main\n")
    git(git_repo, "merge", "-q", "--no-verify", "--no-edit", "side")
    (git_repo / "merged.env").write_text(f"TOKEN={FAKE_TOKEN}\n")  # new in the merge itself
    git(git_repo, "add", "merged.env")
    git(git_repo, "commit", "-q", "--no-verify", "--amend", "--no-edit")
    merge = git(git_repo, "rev-parse", "HEAD").strip()
    repo = GitRepo.discover(git_repo)
    update = RefUpdate("refs/heads/main", merge, "refs/heads/main", base)
    report = check_push(repo, [update], load_from(git_repo), remote=None, state_ref="refs/heads/loopx/state")
    placed = sorted((f.path, f.where) for f in report.findings if f.rule == "github-token")
    assert placed == [("merged.env", f"commit {merge[:12]}"), ("side.env", f"commit {side[:12]}")]


def test_a_pull_keeps_the_fold_it_checked_the_incoming_commits_with(alice, bob):
    """The check of what a pull brings folds through the clone's own reader, so the fold is kept
    when the command ends and the next pull folds only what it brings (before, a throwaway reader
    folded the whole history on every pull and kept nothing: benchmarks/README.md, "Scale")."""
    from loopx_git.model.state import FOLD_VERSION
    from loopx_git.store.cache import FoldCache

    notes(alice, "alice", 3)
    with loopx_git.open(alice) as repo:
        repo.sync()
    with loopx_git.open(bob) as repo:
        assert repo.pull().action == "fast-forward"
    cached = FoldCache(GitRepo.discover(bob).common_dir, "refs/heads/loopx/state", FOLD_VERSION).load()
    assert cached is not None and cached[0] == git(bob, "rev-parse", "loopx/state").strip()
    assert_same_state(cached[1], full_fold(bob))

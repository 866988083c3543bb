"""The store against real repositories: CAS, append-only, work tree untouched, cache, packing."""

from __future__ import annotations

import pytest

import loopx_git
from loopx_git.errors import StoreError
from loopx_git.store import hygiene, layout, transaction
from loopx_git.store.git import RefMoved
from tests.conftest import GOAL, NOW, git


def test_writes_never_touch_head_index_or_work_tree(repo, git_repo):
    (git_repo / "wip.txt").write_text("uncommitted\n")
    git(git_repo, "add", "wip.txt")
    head, status = git(git_repo, "rev-parse", "HEAD"), git(git_repo, "status", "--porcelain")
    repo.todo_add(GOAL, "x", now=NOW)
    assert git(git_repo, "rev-parse", "HEAD") == head
    assert git(git_repo, "status", "--porcelain") == status
    assert git(git_repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_repository_is_discovered_from_a_subfolder(repo, git_repo):
    sub = git_repo / "src" / "deep"
    sub.mkdir(parents=True)
    assert loopx_git.open(sub).goal(GOAL).goal_id == GOAL


def test_outside_a_repository_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="not inside a git repository"):
        loopx_git.open(tmp_path)


def test_commit_on_a_stale_parent_is_refused_by_compare_and_swap(repo):
    stale = repo.tip
    repo.todo_add(GOAL, "moves the tip", now=NOW)
    with pytest.raises(RefMoved):
        transaction.commit(repo.git, repo.ref, stale, transaction.Transaction("test", "stale", files={"x.txt": b"x"}))


def test_lost_race_is_retried_on_the_new_tip(repo, git_repo):
    """A second handle writes between our read and our commit; we re-validate and land on top."""
    other = loopx_git.open(git_repo)
    calls, sneaked = [], []

    def build(state):
        from loopx_git.domain.todo import add_todo

        if not calls:
            sneaked.append(other.todo_add(GOAL, "sneaks in", todo_id="t-other", now=NOW).commit)
        calls.append(state)
        return add_todo(state, goal_id=GOAL, text="mine", todo_id="t-mine", actor=None, now=NOW)

    result = repo.apply(build)
    assert len(calls) == 2 and "t-other" in calls[1].goals[GOAL].todos
    assert repo.git.commit(result.commit).parents == (sneaked[0],)
    assert {t.todo_id for t in repo.todos(GOAL)} == {"t-other", "t-mine"}


def test_record_files_cannot_be_overwritten(repo):
    event = repo.events(GOAL)[0]
    path = layout.event_path(GOAL, event.event_id, event.recorded_at)
    txn = transaction.Transaction("test", "overwrite", files={path: b"{}"})
    with pytest.raises(StoreError, match="append-only"):
        transaction.commit(repo.git, repo.ref, repo.tip, txn)


def test_commit_message_and_trailers(repo, git_repo):
    result = repo.todo_claim(GOAL, repo.todo_add(GOAL, "x", todo_id="t1", now=NOW).record.todo_id, "alice", now=NOW)
    message = git(git_repo, "log", "-1", "--format=%B", result.commit)
    assert message.startswith("loopx: todo claim t1 by alice\n")
    assert "Loopx-Goal: g1" in message and "Loopx-Agent: alice" in message
    assert f"Loopx-Event: {result.event_ids[0]}" in message


def test_git_show_has_one_event_file_and_the_documents_it_changed(repo, git_repo):
    result = repo.todo_add(GOAL, "x", todo_id="t1", now=NOW)
    files = git(git_repo, "show", "--name-only", "--format=", result.commit).split()
    event_id = result.event_ids[0]
    assert files == [
        f"goals/{GOAL}/events/2026/03/01/10/{event_id[-1]}/{event_id[-2]}/{event_id}.json",
        layout.todo_document(GOAL, "t1"),
    ]


def test_state_branch_name_is_configurable(git_repo):
    state = loopx_git.open(git_repo)
    state.connect(state_branch="team/agent-state")
    state.goal_create("g", "x", now=NOW)
    assert git(git_repo, "config", "loopx.stateRef").strip() == "refs/heads/team/agent-state"
    assert loopx_git.open(git_repo).goal("g").goal_id == "g"
    assert git(git_repo, "branch", "--list", "loopx/state") == ""


def test_connect_is_idempotent(repo):
    tip = repo.tip
    assert not repo.connect().changed and repo.tip == tip


# --- the cache ------------------------------------------------------------------------------


def fold_of(path):
    with loopx_git.open(path) as state:
        return {g: (s.todos, s.agents, s.lamport, list(s.recent)) for g, s in state.state().goals.items()}


def test_deleting_the_cache_changes_no_answer(repo, git_repo):
    for i in range(5):
        repo.todo_add(GOAL, f"t{i}", todo_id=f"t{i}", now=NOW)
    repo.close()
    cached = fold_of(git_repo)
    cache = next((git_repo / ".git" / "loopx").glob("fold-*.pickle"))
    cache.unlink()
    assert fold_of(git_repo) == cached


def test_cache_is_extended_with_events_written_by_another_process(repo, git_repo):
    repo.close()  # the cache now holds this tip
    other = loopx_git.open(git_repo)
    other.todo_add(GOAL, "from elsewhere", todo_id="t9", now=NOW)  # not flushed: the cache stays behind
    fresh = loopx_git.open(git_repo)
    assert "t9" in fresh.state().goals[GOAL].todos


def test_a_corrupt_cache_is_ignored(repo, git_repo):
    repo.close()
    cache = next((git_repo / ".git" / "loopx").glob("fold-*.pickle"))
    cache.write_bytes(b"not a pickle")
    assert loopx_git.open(git_repo).goal(GOAL).goal_id == GOAL


# --- hygiene ----------------------------------------------------------------------------------


def test_packing_leaves_small_objects_per_event(repo, git_repo):
    for i in range(60):
        repo.event_append(GOAL, "note", summary=f"note {i}", now=NOW)
    before = hygiene.object_stats(repo.git.git_dir)
    assert before.loose_objects > 100
    after = repo.gc().after
    assert after.loose_objects < before.loose_objects and after.packs >= 1
    events = repo.state().goals[GOAL].event_count
    # layout 2's two bucket trees per append cost ~170 bytes an event packed (1.13 KB here, 0.96 in layout 1)
    assert after.total_bytes / events < 1280


def test_maybe_pack_respects_the_threshold(repo):
    assert hygiene.maybe_pack(repo.git, threshold=10**9) is False
    assert hygiene.maybe_pack(repo.git, threshold=0) is True
    assert hygiene.object_stats(repo.git.git_dir).packs >= 1

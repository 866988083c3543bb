"""The fold cache is rewritten only when the state has moved well past it: a process a few records
ahead leaves it, and the next one folds those records again from it, to the same state."""

from __future__ import annotations

import loopx_git
from loopx_git.store import reader as reader_module
from loopx_git.store.documents import render_all
from tests.conftest import GOAL


def cache_file(git_repo):
    found = list((git_repo / ".git" / "loopx").glob("fold-*.pickle"))
    assert len(found) == 1
    return found[0]


def fresh_fold(git_repo):
    repo = loopx_git.open(git_repo)
    return repo.reader._fold(*repo.reader.all_records(repo.tip))


def test_a_few_writes_leave_the_cache_and_the_next_reader_catches_up(repo, git_repo):
    repo.close()
    saved = cache_file(git_repo).read_bytes()
    for n in range(3):  # one process each, as the CLI writes
        writer = loopx_git.open(git_repo)
        writer.todo_add(GOAL, f"todo {n}")
        writer.close()
    assert cache_file(git_repo).read_bytes() == saved
    reader = loopx_git.open(git_repo)
    assert reader.reader._ahead == 0 or reader.reader._ahead is None
    state = reader.state()
    assert reader.reader._ahead == 3
    assert render_all(state) == render_all(fresh_fold(git_repo))


def test_the_cache_is_saved_once_the_state_is_far_enough_ahead(repo, git_repo):
    repo.close()
    saved = cache_file(git_repo).read_bytes()
    for n in range(reader_module.SAVE_AFTER):
        writer = loopx_git.open(git_repo)
        writer.event_append(GOAL, "note", summary=f"note {n}")
        writer.close()
    assert cache_file(git_repo).read_bytes() != saved
    reader = loopx_git.open(git_repo)
    state = reader.state()
    assert reader.reader._ahead == 0  # read straight from the cache: it is at the tip
    assert render_all(state) == render_all(fresh_fold(git_repo))


def test_a_state_folded_from_scratch_is_always_saved(repo, git_repo):
    repo.close()
    cache_file(git_repo).unlink()
    again = loopx_git.open(git_repo)
    again.state()
    again.close()
    assert cache_file(git_repo).exists()

"""verify finds every broken invariant, with the commit and the path, after edits made by plain git."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loopx_git
from loopx_git.store import layout
from tests.conftest import GOAL, NOW, git


@pytest.fixture
def worktree(repo, git_repo, tmp_path) -> Path:
    """A checkout of the state branch, to change it the way a careless person or tool would."""
    repo.todo_add(GOAL, "first", todo_id="t1", now=NOW)
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    repo.close()
    BASES[git_repo] = git(git_repo, "rev-parse", "loopx/state").strip()
    path = tmp_path / "state-checkout"
    git(git_repo, "worktree", "add", "-q", str(path), "loopx/state")
    return path


def commit_all(path: Path, message: str) -> str:
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD").strip()


BASES: dict = {}
"""The state tip before a test edits the branch by hand: what a remote would already hold."""


def problems(git_repo):
    """What the full verify finds; checked against the incremental verify of the pre-push hook,
    which must find the same problems in the commits after the base."""
    from loopx_git.views.verify import verify_since

    repo = loopx_git.open(git_repo)
    report = repo.verify()
    found = {(p.code, p.path): p for p in report.problems}
    if git_repo in BASES:
        since = verify_since(repo.git, repo.ref, repo.tip, BASES[git_repo])
        quick = {(p.code, p.path, p.commit) for p in since.problems}
        full = {(p.code, p.path, p.commit) for p in report.problems}
        assert since.ok == report.ok and since.commits_checked < report.commits_checked
        assert quick <= full
        if any(code in ("record-deleted", "record-changed") for code, _, _ in quick):
            assert {code for code, _, _ in full - quick} <= {"document-drift"}  # the deletion's consequence
        else:
            assert quick == full
    return found, report


def event_files(path: Path) -> list[Path]:
    # by hour, then id (time order), as layout 1's trees held them; layout 2's bucket folders do not
    return sorted(
        path.glob(f"goals/{GOAL}/events/**/*.json"), key=lambda p: layout.record_order(p.relative_to(path).as_posix())
    )


def test_clean_branch_verifies(repo):
    repo.todo_add(GOAL, "x", now=NOW)
    report = repo.verify()
    assert report.ok and report.records_checked > 0 and report.documents_checked > 0


def test_changed_event_file_is_reported_with_commit_and_path(worktree, git_repo):
    target = event_files(worktree)[-1]
    data = json.loads(target.read_text())
    data["summary"] = "rewritten"
    target.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    sha = commit_all(worktree, "edit an event")
    found, report = problems(git_repo)
    rel = str(target.relative_to(worktree))
    assert not report.ok and found[("record-changed", rel)].commit == sha


def test_deleted_event_file_is_reported(worktree, git_repo):
    target = event_files(worktree)[-1]
    target.unlink()
    sha = commit_all(worktree, "drop an event")
    found, _ = problems(git_repo)
    assert found[("record-deleted", str(target.relative_to(worktree)))].commit == sha


def test_hand_edited_document_is_drift_naming_the_field(worktree, git_repo):
    doc = worktree / layout.todo_document(GOAL, "t1")
    doc.write_text(doc.read_text().replace("claimed_by: alice", "claimed_by: bob"))
    commit_all(worktree, "hand edit")
    found, _ = problems(git_repo)
    assert "claimed_by" in found[("document-drift", layout.todo_document(GOAL, "t1"))].message


def test_invalid_record_is_reported_with_the_commit_that_added_it(worktree, git_repo):
    shard = worktree / f"goals/{GOAL}/events/2026/03/01/10"
    (shard / "evt_bad.json").write_text(
        json.dumps(
            {
                "event_id": "evt_bad",
                "goal_id": GOAL,
                "event_kind": "note",
                "recorded_at": NOW,
                "lamport": 99,
                "artifact_refs": ["/etc/x"],
            }
        )
    )
    sha = commit_all(worktree, "add a bad event")
    found, _ = problems(git_repo)
    problem = found[("invalid-record", f"goals/{GOAL}/events/2026/03/01/10/evt_bad.json")]
    assert problem.commit == sha and "artifact_refs" in problem.message


def test_reused_event_id_is_reported(worktree, git_repo):
    source = event_files(worktree)[-1]
    data = json.loads(source.read_text())
    data["goal_id"] = "g2"
    copy = worktree / "goals/g2/events/2026/03/01/10" / source.name
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    commit_all(worktree, "copy an event")
    found, _ = problems(git_repo)
    assert ("duplicate-event-id", str(copy.relative_to(worktree))) in found or (
        "duplicate-event-id",
        str(source.relative_to(worktree)),
    ) in found


def _event_copy(worktree: Path, source: Path, event_id: str, hour: str) -> Path:
    """A copy of the event at ``source`` with ``event_id``, recorded in another ``hour``: a valid
    event at its own layout path."""
    data = json.loads(source.read_text())
    data["event_id"] = event_id
    data["recorded_at"] = data["recorded_at"][:11] + hour + data["recorded_at"][13:]
    path = worktree / layout.event_path(GOAL, event_id, data["recorded_at"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def _reader_at(repo, where: str, since: str, tip: str, tmp_path: Path):
    """A reader whose fold at hand is at ``where``: since, the tip, an ancestor of since (advanced
    to since by the records after it), or none."""
    from loopx_git.model.fold import extend, fold
    from loopx_git.model.state import FOLD_VERSION, PAYLOAD_KINDS
    from loopx_git.store.cache import FoldCache
    from loopx_git.store.reader import StateReader
    from loopx_git.views.folded import state_reader

    if where == "none":
        return StateReader(
            repo.git, FoldCache(tmp_path / "no-cache", repo.ref, FOLD_VERSION), fold, extend, PAYLOAD_KINDS
        )
    reader = state_reader(repo.git, repo.ref)
    reader.state_at({"since": since, "tip": tip, "older": repo.git.commit(since).parents[0]}[where])
    return reader


@pytest.mark.parametrize("where", ["since", "tip", "older", "none"])
@pytest.mark.parametrize("reuse", ["an older event's id", "another new event's id"])
def test_the_incremental_check_finds_a_reused_event_id_whatever_fold_is_at_hand(
    worktree, git_repo, tmp_path, where, reuse
):
    """The ids a range adds are checked against the fold at hand (exact at ``since``; one at a later
    commit is confirmed by the tree) or, with none usable, against every event file name."""
    from loopx_git.views.verify import verify_since

    source = event_files(worktree)[-1]
    if reuse == "an older event's id":
        copies = [_event_copy(worktree, source, source.stem, "11")]
    else:
        copies = [_event_copy(worktree, source, "evt-twice", hour) for hour in ("11", "12")]
    sha = commit_all(worktree, "reuse an event id")
    repo = loopx_git.open(git_repo)
    since = BASES[git_repo]
    reader = _reader_at(repo, where, since, sha, tmp_path)
    report = verify_since(repo.git, repo.ref, sha, since, reader=reader)
    found = {(p.code, p.path): p.commit for p in report.problems}
    named = [c for c in copies if ("duplicate-event-id", c.relative_to(worktree).as_posix()) in found]
    assert (
        not report.ok
        and named
        and all(found[("duplicate-event-id", c.relative_to(worktree).as_posix())] == sha for c in named)
    )
    assert (reader.cached() is None) == (where == "none")  # with no fold at hand, none was made for this


def test_an_id_the_fold_knows_from_the_other_side_of_a_merge_is_no_duplicate(worktree, git_repo, tmp_path):
    """A fold at a commit after ``since`` knows events the checked tip may also hold at the same
    path (both sides of a merge took it from a third clone): only the tree says it is one event."""
    from loopx_git.views.verify import verify_since

    since = BASES[git_repo]
    _event_copy(worktree, event_files(worktree)[-1], "evt-shared", "11")
    ours = commit_all(worktree, "the shared event, as one clone took it")
    tree = git(worktree, "rev-parse", "HEAD^{tree}").strip()
    theirs = git(worktree, "commit-tree", tree, "-p", since, "-m", "the shared event, as another took it").strip()
    repo = loopx_git.open(git_repo)
    reader = _reader_at(repo, "tip", since, ours, tmp_path)
    report = verify_since(repo.git, repo.ref, theirs, since, reader=reader, documents=False)
    assert report.ok, report.problems
    assert reader.cached()[0] == ours


def test_missing_and_orphan_documents(worktree, git_repo):
    (worktree / layout.todo_document(GOAL, "t1")).unlink()
    ghost = worktree / layout.todo_document(GOAL, "ghost")
    ghost.parent.mkdir(parents=True, exist_ok=True)
    ghost.write_text("todo_id: ghost\n")
    commit_all(worktree, "docs")
    found, _ = problems(git_repo)
    assert ("document-missing", layout.todo_document(GOAL, "t1")) in found
    assert ("document-orphan", layout.todo_document(GOAL, "ghost")) in found


def test_incremental_verify_of_clean_new_commits(repo, git_repo):
    from loopx_git.views.verify import verify_since

    base = repo.tip
    repo.todo_add(GOAL, "second", todo_id="t2", now=NOW)
    repo.todo_complete(GOAL, "t2", evidence=["tests/test_x.py"], now=NOW)
    report = verify_since(repo.git, repo.ref, repo.tip, base)
    assert report.ok and report.commits_checked == 2 and report.records_checked >= 2 and report.documents_checked >= 1

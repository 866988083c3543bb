"""Histories that do not line up (issue 32, item 7): an unrelated history pushed over the shared
state branch is refused, as git refuses to merge unrelated histories (``unrelated-history``, exit 1,
the ref unmoved, the remote commit named); a remote force-rewritten to drop commits this clone had
is merged as before (nothing is lost) but says so (``remote-rewritten``, with the count), in text
and JSON."""

from __future__ import annotations

import json
import time

import loopx_git
from tests.conftest import git
from tests.sync.helpers import GOAL, bare, clone, loopx, tip


def _shared(tmp_path):
    remote = bare(tmp_path / "remote.git")
    alice = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(alice) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        repo.sync()
    return remote, alice


def test_an_unrelated_history_on_the_remote_is_refused_naming_its_commit(tmp_path):
    remote, alice = _shared(tmp_path)
    elsewhere = bare(tmp_path / "elsewhere.git")
    # a root made in the same second by the same identity would be the same commit: a history shared
    time.sleep(1.1)
    stranger = clone(tmp_path / "stranger", str(elsewhere))  # its own root: another project's state, say
    with loopx_git.open(stranger) as repo:
        repo.goal_create("other", "Another project")
    git(stranger, "push", "-q", "--force", str(remote), "loopx/state")
    theirs = tip(stranger)
    with loopx_git.open(alice) as repo:
        repo.todo_add(GOAL, "local work", todo_id="t2")  # alice has moved on: a merge would be needed
    before = tip(alice)
    for command in (["pull"], ["sync"]):
        done = loopx(alice, *command)
        assert done.returncode == 1, done.stderr
        assert "error[unrelated-history]" in done.stderr and theirs[:12] in done.stderr, done.stderr
        assert "rule:" in done.stderr and "nothing was merged" in done.stderr
        assert tip(alice) == before and git(remote, "rev-parse", "loopx/state").strip() == theirs
    as_json = loopx(alice, "--format", "json", "pull")
    assert as_json.returncode == 1 and "unrelated-history" in as_json.stderr


def test_a_remote_rewritten_to_drop_commits_is_merged_and_says_so(tmp_path):
    remote, alice = _shared(tmp_path)
    with loopx_git.open(alice) as repo:
        repo.todo_add(GOAL, "second", todo_id="t2")
        repo.todo_add(GOAL, "third", todo_id="t3")
        repo.sync()
    pushed = tip(alice)
    dropped = git(alice, "rev-list", "--count", f"{pushed}~2..{pushed}").strip()
    git(remote, "update-ref", "refs/heads/loopx/state", f"{pushed}~2")  # another clone force-pushed it back
    with loopx_git.open(alice) as repo:
        repo.todo_add(GOAL, "fourth", todo_id="t4")  # and alice wrote on: the pull has to merge
    done = loopx(alice, "--format", "json", "sync")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    [warning] = result["warnings"]
    assert warning["code"] == "remote-rewritten" and f"{dropped} commit(s)" in warning["message"]
    assert pushed[:12] in warning["message"] and "nothing is lost" in warning["message"]
    assert "remote-rewritten" not in done.stdout.replace(json.dumps(warning["code"]), "")  # said once, in warnings
    with loopx_git.open(alice) as repo:  # nothing lost: every todo is there, and the remote has them again
        assert {t.todo_id for t in repo.todos(GOAL)} >= {"t1", "t2", "t3", "t4"}
    assert git(alice, "merge-base", "--is-ancestor", pushed, "origin/loopx/state").strip() == ""
    again = loopx(alice, "sync")
    assert again.returncode == 0 and "rewritten" not in again.stderr  # told once: the clone has caught up


def test_a_rewritten_remote_is_said_in_text_too(tmp_path):
    remote, alice = _shared(tmp_path)
    with loopx_git.open(alice) as repo:
        repo.todo_add(GOAL, "second", todo_id="t2")
        repo.sync()
    git(remote, "update-ref", "refs/heads/loopx/state", f"{tip(alice)}~1")
    done = loopx(alice, "pull")
    assert done.returncode == 0, done.stderr
    assert "warning: the state branch on origin was rewritten" in done.stderr and "1 commit(s)" in done.stderr

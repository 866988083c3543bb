"""What a loopx before layout 2 left under .git/loopx/ is not trusted: it could not see layout-2
events, so its fold may miss them and a tip it marked verified was never checked for them."""

from __future__ import annotations

import hashlib
import pickle

import loopx_git
from loopx_git.model.state import FOLD_VERSION, State
from tests.conftest import GOAL, git, state_tip
from tests.plumbing import plain_commit

STATE = "refs/heads/loopx/state"


def old_names(git_repo):
    """The file names the fold cache and the verified mark had before CACHE_FORMAT 2."""
    digest = hashlib.sha1(STATE.encode()).hexdigest()[:12]
    folder = git_repo / ".git" / "loopx"
    return folder / f"fold-{digest}.pickle", folder / f"verified-{digest}"


def test_a_fold_an_older_loopx_cached_is_not_used(cli, git_repo):
    assert cli("todo", "add", "-g", GOAL, "--text", "at a layout-2 path", "-t", "t-new").code == 0
    fold, _mark = old_names(git_repo)
    fold.write_bytes(pickle.dumps(((1, FOLD_VERSION), state_tip(git_repo), State())))  # blind to the event
    assert [t.todo_id for t in loopx_git.open(git_repo).todos(GOAL)] == ["t-new"]
    assert cli("todo", "claim", "-g", GOAL, "-t", "t-new", "-a", "alice").code == 0


def test_a_tip_an_older_loopx_marked_verified_is_verified_again(cli, git_repo):
    assert cli("todo", "add", "-g", GOAL, "--text", "honest").code == 0
    broken = plain_commit(git_repo, STATE, "a stray file", {"notes/stray.txt": "not state\n"})
    git(git_repo, "update-ref", STATE, broken)
    _fold, mark = old_names(git_repo)
    mark.write_text(broken + "\n")  # what an older loopx's write on this tip would have left
    result = cli("todo", "add", "-g", GOAL, "--text", "on top")
    assert result.code == 1 and "stray" in result.err
    assert state_tip(git_repo) == broken


def layout_2_mark(git_repo):
    """Where the loopx before layout 3 kept its verified mark (CACHE_FORMAT in the name)."""
    digest = hashlib.sha1(STATE.encode()).hexdigest()[:12]
    return git_repo / ".git" / "loopx" / f"verified-2-{digest}"


def test_a_loopx_before_layout_3_never_finds_a_tip_this_one_marked_verified(cli, git_repo):
    """It would take bucketed documents for strays only if it looked: it must verify, not trust."""
    assert cli("todo", "add", "-g", GOAL, "--text", "marked").code == 0
    folder = git_repo / ".git" / "loopx"
    marks = sorted(p.name for p in folder.glob("verified-*"))
    assert marks == [f"verified-3-{hashlib.sha1(STATE.encode()).hexdigest()[:12]}"]
    assert (folder / marks[0]).read_text().strip() == state_tip(git_repo)


def test_a_tip_the_loopx_before_layout_3_marked_verified_is_trusted(cli, git_repo):
    """What it verified, this loopx checks the same way: its mark spares a full verify."""
    assert cli("todo", "add", "-g", GOAL, "--text", "honest").code == 0
    folder = git_repo / ".git" / "loopx"
    for mark in folder.glob("verified-*"):
        mark.unlink()
    broken = plain_commit(git_repo, STATE, "a stray file", {"notes/stray.txt": "not state\n"})
    git(git_repo, "update-ref", STATE, broken)
    layout_2_mark(git_repo).write_text(broken + "\n")  # trusted: the stray goes unseen by a write
    assert cli("todo", "add", "-g", GOAL, "--text", "on top").code == 0
    assert state_tip(git_repo) != broken
    assert cli("verify").code == 1  # a full verify still finds it

"""`loopx connect` in a clone whose remote already has the state branch starts from it: one shared
history with one root, instead of a second root that the first sync would merge in."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import loopx_git
from loopx_git.errors import ValidationError
from loopx_git.sync import Adopted
from tests.conftest import Cli, git
from tests.plumbing import plain_commit
from tests.sync.helpers import GOAL, bare, clone

STATE = "refs/heads/loopx/state"


def project(path: Path, remote: Path) -> Path:
    """A project with a main branch pushed to ``remote``, as people start one."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test Person")
    git(path, "config", "user.email", "test@example.invalid")
    (path / "README.md").write_text("project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    git(path, "remote", "add", "origin", str(remote))
    git(path, "push", "-q", "origin", "main")
    return path


def git_clone(remote: Path, path: Path, *args: str) -> Path:
    subprocess.run(["git", "clone", "-q", *args, str(remote), str(path)], check=True, capture_output=True)
    # a name of its own: a root commit made here in the same second as the first machine's must not
    # come out identical to it (and hide a second root)
    git(path, "config", "user.name", path.name)
    git(path, "config", "user.email", "test@example.invalid")
    return path


def has_ref(path: Path, ref: str) -> bool:
    done = subprocess.run(["git", "-C", str(path), "rev-parse", "--verify", "--quiet", ref], capture_output=True)
    return done.returncode == 0


def count(path: Path, *args: str) -> int:
    return len(git(path, "rev-list", *args, "loopx/state").split())


@pytest.fixture
def remote(tmp_path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def alice(tmp_path, remote, capsys) -> Path:
    """The first machine: connected (no hooks, so plain-git pushes below are not stopped), a goal, a
    todo, synced to the remote."""
    path = project(tmp_path / "alice", remote)
    cli = Cli(path, capsys)
    assert cli.json("connect", "--no-hooks", "--goal-id", GOAL, "--objective", "Ship the parser")["created"]
    assert cli("todo", "add", "-g", GOAL, "--text", "Write the tokenizer", "--todo-id", "t1").code == 0
    assert cli.json("sync")["pushed"]
    return path


def test_a_clone_adopts_the_remote_history_and_its_first_sync_adds_no_root_and_no_merge(
    alice, remote, tmp_path, capsys
):
    bob = git_clone(remote, tmp_path / "bob")
    assert has_ref(bob, "refs/remotes/origin/loopx/state") and not has_ref(bob, STATE)
    cli = Cli(bob, capsys)
    data = cli.json("connect")
    shared = git(remote, "rev-parse", "loopx/state").strip()
    assert data["adopted_from"] == "origin/loopx/state" and data["created"] is True and data["tip"] == shared
    assert git(bob, "config", "loopx.stateRef").strip() == STATE
    assert loopx_git.open(bob).todo(GOAL, "t1").text == "Write the tokenizer"

    assert cli("todo", "add", "-g", GOAL, "--text", "Document it", "--todo-id", "t2").code == 0
    synced = cli.json("sync")
    assert synced["action"] == "ahead" and synced["pushed"]
    assert git(remote, "rev-parse", "loopx/state") == git(bob, "rev-parse", "loopx/state")
    assert count(remote, "--max-parents=0") == 1  # one root: the shared history was joined, not merged
    assert count(remote, "--merges") == 0
    assert git(bob, "rev-parse", "loopx/state~1").strip() == shared  # bob's write sits right on alice's tip
    assert cli.json("verify")["ok"]

    a = Cli(alice, capsys)
    assert a.json("sync")["action"] == "fast-forward"  # and alice just moves forward onto it
    assert count(alice, "--merges") == 0


def test_the_text_output_says_where_the_branch_came_from(alice, remote, tmp_path, capsys):
    bob = git_clone(remote, tmp_path / "bob")
    result = Cli(bob, capsys)("connect", "--no-hooks")
    assert result.code == 0, result.err
    tip = git(remote, "rev-parse", "loopx/state").strip()
    assert f"created {STATE} from origin/loopx/state (tip {tip[:12]}, verified)" in result.out


def test_the_python_api_says_what_was_adopted(alice, remote, tmp_path):
    bob = git_clone(remote, tmp_path / "bob")
    with loopx_git.open(bob) as repo:
        result = repo.connect()
        assert result.changed and result.record == Adopted("origin", "loopx/state", repo.tip)
        assert str(result.record) == "origin/loopx/state"
        again = repo.connect()
        assert not again.changed and again.record is None


@pytest.mark.parametrize("damage", ["stray-file", "record-changed"])
def test_a_hostile_remote_copy_is_refused_at_connect_and_nothing_is_created(alice, remote, tmp_path, capsys, damage):
    tip = git(alice, "rev-parse", "loopx/state").strip()
    if damage == "stray-file":
        path, bad = "notes.txt", plain_commit(alice, tip, "a stray file", {"notes.txt": "hello\n"})
    else:
        names = git(alice, "ls-tree", "-r", "--name-only", tip).split()
        path = next(n for n in names if "/events/" in n)
        record = json.loads(git(alice, "show", f"{tip}:{path}"))
        record["summary"] = "rewritten by hand"
        bad = plain_commit(alice, tip, "edit an event", {path: json.dumps(record, indent=2, sort_keys=True) + "\n"})
    git(alice, "push", "-q", "--no-verify", "origin", f"{bad}:{STATE}")
    bob = git_clone(remote, tmp_path / "bob")

    result = Cli(bob, capsys)("connect")
    assert result.code == 1
    assert "error[remote-refused]" in result.err and damage in result.err and path in result.err
    assert f"commit {bad[:12]}" in result.err and "nothing was created from origin/loopx/state" in result.err
    assert not has_ref(bob, STATE)
    assert subprocess.run(["git", "-C", str(bob), "config", "loopx.stateRef"], capture_output=True).returncode == 1
    hook = bob / ".git" / "hooks" / "pre-commit"
    assert not hook.exists() or "loopx" not in hook.read_text(errors="replace")  # connect stopped before the hooks


def test_connect_in_a_clone_that_is_already_connected_changes_nothing(alice, capsys):
    tip = git(alice, "rev-parse", "loopx/state")
    data = Cli(alice, capsys).json("connect", "--no-hooks")
    assert data["created"] is False and data["adopted_from"] is None
    assert git(alice, "rev-parse", "loopx/state") == tip


def test_a_remote_without_a_state_branch_gives_a_new_root_as_before(tmp_path, capsys):
    empty = bare(tmp_path / "empty.git")
    project(tmp_path / "first", empty)
    carol = git_clone(empty, tmp_path / "carol")
    result = Cli(carol, capsys)("--format", "json", "connect", "--no-hooks")
    assert result.code == 0 and "warning" not in result.err
    data = json.loads(result.out)
    assert data["created"] is True and data["adopted_from"] is None
    assert count(carol, "--max-parents=0") == 1 and count(carol) == 1


def test_several_remotes_with_different_copies_and_none_named_is_refused(alice, remote, tmp_path, capsys):
    other = bare(tmp_path / "other.git")
    elsewhere = project(tmp_path / "elsewhere", other)
    assert Cli(elsewhere, capsys)("connect", "--no-hooks").code == 0
    git(elsewhere, "push", "-q", "origin", "loopx/state")
    dave = git_clone(remote, tmp_path / "dave", "--origin", "first")
    git(dave, "remote", "add", "second", str(other))
    git(dave, "fetch", "-q", "second")
    cli = Cli(dave, capsys)

    with pytest.raises(ValidationError) as err:  # the API refuses the same way
        loopx_git.open(dave).connect()
    assert err.value.code == "ambiguous-remote"
    result = cli("connect", "--no-hooks")
    assert result.code == 1 and "error[ambiguous-remote]" in result.err and "field 'remote'" in result.err
    assert "first/loopx/state" in result.err and "second/loopx/state" in result.err and "--remote" in result.err
    assert not has_ref(dave, STATE)

    data = cli.json("connect", "--no-hooks", "--remote", "second")
    assert data["adopted_from"] == "second/loopx/state"
    assert git(dave, "rev-parse", "loopx/state") == git(other, "rev-parse", "loopx/state")


def test_origin_is_preferred_when_several_remotes_have_a_copy(alice, remote, tmp_path, capsys):
    other = bare(tmp_path / "other.git")
    elsewhere = project(tmp_path / "elsewhere", other)
    assert Cli(elsewhere, capsys)("connect", "--no-hooks").code == 0
    git(elsewhere, "push", "-q", "origin", "loopx/state")
    erin = git_clone(remote, tmp_path / "erin")
    git(erin, "remote", "add", "second", str(other))
    git(erin, "fetch", "-q", "second")
    assert Cli(erin, capsys).json("connect", "--no-hooks")["adopted_from"] == "origin/loopx/state"


def test_a_single_branch_clone_fetches_the_remote_branch_and_adopts_it(alice, remote, tmp_path, capsys):
    frank = git_clone(remote, tmp_path / "frank", "--single-branch", "--branch", "main")
    assert not has_ref(frank, "refs/remotes/origin/loopx/state")
    cli = Cli(frank, capsys)
    data = cli.json("connect", "--no-hooks", "-g", GOAL)  # -g: the goal is only on the remote's copy so far
    assert data["adopted_from"] == "origin/loopx/state"
    assert git(frank, "rev-parse", "loopx/state") == git(remote, "rev-parse", "loopx/state")
    assert cli("todo", "add", "--text", "Benchmark it").code == 0
    assert cli.json("sync")["action"] == "ahead"
    assert count(remote, "--max-parents=0") == 1 and count(remote, "--merges") == 0


def test_a_custom_state_branch_is_adopted_by_its_own_name(tmp_path, remote, capsys):
    first = project(tmp_path / "first", remote)
    assert Cli(first, capsys)("connect", "--no-hooks", "--state-branch", "team/state").code == 0
    git(first, "push", "-q", "origin", "team/state")
    clone = git_clone(remote, tmp_path / "second")
    data = Cli(clone, capsys).json("connect", "--no-hooks", "--state-branch", "team/state")
    assert data["adopted_from"] == "origin/team/state" and data["state_ref"] == "refs/heads/team/state"
    assert not has_ref(clone, STATE)


def test_a_remote_added_but_never_fetched_is_fetched_and_adopted(alice, remote, tmp_path, capsys):
    gus = clone(tmp_path / "gus", str(remote), connect=False)  # `git init` + `git remote add`, no fetch
    result = Cli(gus, capsys)("connect", "--no-hooks")
    assert result.code == 0 and "from origin/loopx/state" in result.out
    assert git(gus, "for-each-ref", "--format=%(refname)", "refs/remotes/") == "refs/remotes/origin/loopx/state\n"


def test_an_unreachable_remote_leaves_connect_working_offline(tmp_path, capsys):
    path = project_offline(tmp_path / "offline")
    result = Cli(path, capsys)("connect", "--no-hooks")
    assert result.code == 0 and f"created {STATE}" in result.out
    assert count(path, "--max-parents=0") == 1


def project_offline(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", str(path.parent / "no-such-remote.git"))
    return path


def test_connect_g_in_a_fresh_clone_adopts_and_makes_the_remote_goal_the_default(alice, remote, tmp_path, capsys):
    bob = git_clone(remote, tmp_path / "bob")
    cli = Cli(bob, capsys)
    refused = cli("connect", "--no-hooks", "-g", "ghost")  # not on the copy it would adopt: nothing created
    assert refused.code == 1 and "goal 'ghost' does not exist" in refused.err
    assert not has_ref(bob, STATE)
    data = cli.json("connect", "--no-hooks", "-g", GOAL)
    assert data["adopted_from"] == "origin/loopx/state"
    assert git(bob, "config", "loopx.goal").strip() == GOAL
    assert [t["todo_id"] for t in cli.json("todo", "list")] == ["t1"]


def test_claim_sync_checks_the_default_agent_after_the_pull(alice, remote, tmp_path, capsys):
    """The default agent of a clone that has not pulled its registration yet claims with --sync just as
    the same id given with -a does: both are checked on the pulled state."""
    bob = git_clone(remote, tmp_path / "bob")
    cli = Cli(bob, capsys)
    assert cli("connect", "--no-hooks").code == 0
    first = Cli(alice, capsys)
    assert first("agent", "register", "-g", GOAL, "-a", "carol").code == 0
    assert first.json("sync")["pushed"]
    git(bob, "config", "loopx.agent", "carol")
    data = cli.json("todo", "claim", "-t", "t1", "--sync")
    assert data["record"]["claimed_by"] == "carol"

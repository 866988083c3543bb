"""The state branch is never a branch of the project's code (issue 32, item 4), over the whole
command line: for every command, a ``--state-branch`` naming the checked-out branch, a remote's
default branch or a branch checked out in another work tree is refused (``state-branch-is-code``,
exit 1) before anything is read or written; and every command, whatever it did, moved no ref but
the state branch's (and a remote-tracking copy of it), left HEAD, the index and the project's
branch where they were.
"""

from __future__ import annotations

import subprocess

import pytest

from loopx_git.cli.main import run_cli
from tests.conftest import GOAL, git
from tests.hostile.commands import commands
from tests.hostile.test_cli_options import SKIPPED
from tests.surface.test_masking import _required

STATE = "refs/heads/loopx/state"


def _paths() -> list[tuple[str, ...]]:
    return [path for path, _ in commands() if path and not any(path[: len(k)] == k for k in SKIPPED)]


def _refs(path) -> dict[str, str]:
    out = git(path, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split(" ", 1) for line in out.splitlines())


def _code_state(path) -> tuple[str, str, str, dict[str, str]]:
    """HEAD (as a name), the index, the project's tree, and every ref but the state branch's."""
    head = git(path, "symbolic-ref", "HEAD").strip()
    index = git(path, "ls-files", "--stage")
    tree = git(path, "rev-parse", "main^{tree}").strip()
    refs = {k: v for k, v in _refs(path).items() if k != STATE and not k.startswith("refs/remotes/")}
    return head, index, tree, refs


@pytest.fixture(scope="module")
def code_branches(shared, tmp_path_factory):
    """The shared repository with a remote whose default branch is ``trunk`` and a linked work tree
    on ``feature``: the three kinds of code branch."""
    remote = tmp_path_factory.mktemp("remote") / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "trunk", str(remote)], check=True)
    git(shared.path, "remote", "add", "origin", str(remote))
    git(shared.path, "push", "-q", "origin", "main:trunk")
    git(shared.path, "fetch", "-q", "origin")
    git(shared.path, "remote", "set-head", "origin", "trunk")
    linked = tmp_path_factory.mktemp("linked") / "feature"
    git(shared.path, "worktree", "add", "-q", "-b", "feature", str(linked))
    yield {"main": "checked-out", "trunk": "the default branch of remote 'origin'", "feature": "linked work tree"}
    git(shared.path, "worktree", "remove", "--force", str(linked))
    git(shared.path, "remote", "remove", "origin")


def test_every_command_refuses_a_state_branch_that_is_a_code_branch(shared, code_branches, capsys, surface):
    paths = _paths()
    before = _refs(shared.path)
    runs = 0
    for i, path in enumerate(paths):
        branch = list(code_branches)[i % len(code_branches)]
        code = run_cli(["--repo", str(shared.path), "--state-branch", branch, *path, *_required(path)])
        _out, err = capsys.readouterr()
        runs += 1
        assert code == 1 and "error[state-branch-is-code]" in err, (path, branch, code, err[-400:])
        assert f"refs/heads/{branch}" in err and "nothing was read or written" in err, err
    assert _refs(shared.path) == before
    surface(f"{len(paths)} commands x the three kinds of code branch in turn = {runs} runs, all refused")


@pytest.mark.parametrize("branch", ["main", "trunk", "feature"])
@pytest.mark.parametrize("command", [["repair"], ["gc"], ["connect"], ["todo", "add", "--text", "x"], ["status"]])
def test_repair_gc_connect_and_writes_refuse_each_kind_of_code_branch(shared, code_branches, capsys, branch, command):
    before = _code_state(shared.path), _refs(shared.path)
    code = run_cli(["--repo", str(shared.path), "--state-branch", branch, *command])
    err = capsys.readouterr().err
    assert code == 1 and "error[state-branch-is-code]" in err, err
    assert (_code_state(shared.path), _refs(shared.path)) == before


def test_connect_refuses_its_own_state_branch_option_naming_a_code_branch(shared, capsys):
    before = _refs(shared.path)
    code = run_cli(["--repo", str(shared.path), "connect", "--state-branch", "main"])
    err = capsys.readouterr().err
    assert code == 1 and "error[state-branch-is-code]" in err and "repair" not in err, err
    assert _refs(shared.path) == before


def test_a_configured_state_branch_that_is_the_checked_out_one_is_refused(shared, capsys):
    git(shared.path, "config", "loopx.stateRef", "refs/heads/main")
    try:
        code = run_cli(["--repo", str(shared.path), "repair"])
        err = capsys.readouterr().err
    finally:
        shared.restore()
    assert code == 1 and "error[state-branch-is-code]" in err and "git config loopx.stateRef" in err, err


def test_an_empty_state_branch_is_refused(shared, capsys):
    code = run_cli(["--repo", str(shared.path), "--state-branch", "", "status"])
    err = capsys.readouterr().err
    assert code == 1 and "field 'state_branch'" in err and "is empty" in err, err


def test_no_command_moves_any_ref_but_the_state_branch(shared, capsys, surface):
    """Every command run with workable values: whatever it did, HEAD, the index, the project's
    branch and every other ref are where they were (a remote-tracking copy of the state branch aside)."""
    paths = _paths()
    moved, ran = [], 0
    state = []
    for path in paths:
        before = _code_state(shared.path)
        run_cli(["--repo", str(shared.path), *path, *_required(path)])
        capsys.readouterr()
        if path[:1] == ("connect",):
            shared.restore()
        ran += 1
        state.append(git(shared.path, "rev-parse", STATE).strip())
        after = _code_state(shared.path)
        if path[:1] == ("connect",):  # its --state-branch x makes a state branch of that name: no code branch
            after[3].pop("refs/heads/x", None)
            git(shared.path, "update-ref", "-d", "refs/heads/x")
        if after != before:
            moved.append(path)
    for command in (["repair"], ["gc"], ["todo", "add", "-g", GOAL, "--text", "a write"]):
        before = _code_state(shared.path)
        assert run_cli(["--repo", str(shared.path), *command]) == 0, capsys.readouterr().err
        capsys.readouterr()
        assert _code_state(shared.path) == before, command
    assert not moved, f"moved a ref other than {STATE}: {moved}"
    surface(f"{ran} commands run; the state branch moved {len(set(state))} time(s), nothing else")


def test_a_symbolic_ref_or_a_branch_that_holds_no_state_is_no_state_branch(shared, capsys):
    """Another name for the checked-out branch (``git symbolic-ref``), and a code branch nothing
    marks as one (no loopx.yaml, no goals/): refused, so repair never takes a project's files out."""
    git(shared.path, "symbolic-ref", "refs/heads/cur", "refs/heads/main")
    git(shared.path, "branch", "release", "main")
    try:
        before = _code_state(shared.path), _refs(shared.path)
        for branch, code in (("cur", "state-branch-is-code"), ("release", "not-a-state-branch")):
            for command in (["repair"], ["status"], ["todo", "add", "--text", "x"]):
                done = run_cli(["--repo", str(shared.path), "--state-branch", branch, *command])
                err = capsys.readouterr().err
                assert done == 1 and f"error[{code}]" in err, (branch, command, err)
        git(shared.path, "config", "loopx.stateRef", "refs/heads/cur")
        assert run_cli(["--repo", str(shared.path), "repair"]) == 1
        assert "error[state-branch-is-code]" in capsys.readouterr().err
        assert (_code_state(shared.path), _refs(shared.path)) == before
    finally:
        shared.restore()
        git(shared.path, "symbolic-ref", "--delete", "refs/heads/cur")
        git(shared.path, "branch", "-D", "release")

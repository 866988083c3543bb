"""Repositories that are not a plain clone with commits (issue 16, item 5): a linked worktree, a bare
repository reached with ``--repo``, a shallow clone, a SHA-256 repository, ``core.hooksPath``, a
repository with no commits yet, and a submodule's repository. Each one either works the whole way —
connect, write, read, verify, sync — or is refused with a message that says why and what to do."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Cli, git
from tests.hooks.conftest import env_with_path, tool_bin
from tests.sync.helpers import bare

STATE = "refs/heads/loopx/state"


def tip(path: Path) -> str:
    return git(path, "rev-parse", STATE).strip()


def project(path: Path, *, commit: bool = True) -> Path:
    git(path.parent, "init", "-q", "-b", "main", str(path))
    if commit:
        (path / "README.md").write_text("project\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "init")
    return path


def works(cli: Cli, goal: str = "g1") -> str:
    """The round every kind of repository must pass: write, read, verify. The todo's id."""
    added = cli("todo", "add", "-g", goal, "--text", "written here", fmt="json")
    assert added.code == 0, added.err
    todo = json.loads(added.out)["record"]["todo_id"]
    status = cli("status", "-g", goal, fmt="json")
    assert status.code == 0 and todo in status.out, status.err
    assert cli("verify").code == 0
    return todo


def connected(path: Path, capsys) -> Cli:
    cli = Cli(path, capsys)
    assert cli("connect").code == 0
    assert cli("goal", "create", "-g", "g1", "--objective", "Ship the parser").code == 0
    return cli


def test_a_linked_worktree_shares_the_state_branch_and_the_hooks(tmp_path, capsys):
    main = project(tmp_path / "main")
    cli = connected(main, capsys)
    git(main, "worktree", "add", "-q", "-b", "side", str(tmp_path / "linked"))
    linked = Cli(tmp_path / "linked", capsys)
    todo = works(linked)
    assert todo in cli("todo", "list", "-g", "g1").out  # one state branch: the main checkout sees it
    # the hooks live in the common git folder, so a commit in the worktree is scanned too
    common = git(tmp_path / "linked", "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    assert Path(common) == main / ".git" and (main / ".git" / "hooks" / "pre-commit").exists()
    assert hook_guards(tmp_path / "linked")


def hook_guards(path: Path, env: dict | None = None) -> bool:
    """Whether loopx's pre-commit hook runs in ``path``: local state staged by force is refused."""
    (path / ".loopx").mkdir(exist_ok=True)
    (path / ".loopx" / "scratch.txt").write_text("an agent's local notes\n")
    git(path, "add", "-f", ".loopx/scratch.txt")
    refused = subprocess.run(
        ["git", "-C", str(path), "commit", "-q", "-m", "x"], capture_output=True, text=True, env=env
    )
    git(path, "rm", "-q", "--cached", ".loopx/scratch.txt")
    return refused.returncode == 1 and ".loopx/scratch.txt" in refused.stderr


def test_a_bare_repository_reached_with_repo_connects_writes_and_verifies(tmp_path, capsys):
    served = bare(tmp_path / "served.git")
    cli = Cli(served, capsys)
    result = cli("connect")
    assert result.code == 0, result.err
    assert not (served / "hooks" / "pre-commit").exists()  # no work tree: nothing to guard at commit
    assert cli("goal", "create", "-g", "g1", "--objective", "Ship the parser").code == 0
    works(cli)


def test_a_shallow_clone_reads_writes_verifies_and_syncs(tmp_path, capsys):
    origin = project(tmp_path / "origin")
    cli = connected(origin, capsys)
    for n in range(3):
        assert cli("todo", "add", "-g", "g1", "--text", f"older work {n}").code == 0
    served = bare(tmp_path / "served.git")
    git(origin, "push", "-q", str(served), "main", "loopx/state")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{served}", str(shallow))
    git(shallow, "fetch", "-q", "--depth", "1", "origin", "loopx/state:loopx/state")
    assert git(shallow, "rev-parse", "--is-shallow-repository").strip() == "true"
    here = Cli(shallow, capsys)
    assert "older work 2" in here("todo", "list", "-g", "g1").out  # the tip's tree holds the whole state
    works(here)
    synced = here("sync")
    assert synced.code == 0, synced.err
    assert git(served, "rev-parse", STATE).strip() == tip(shallow)


def test_a_sha256_repository_is_refused_by_every_entry_point_with_the_reason(tmp_path, capsys):
    path = tmp_path / "sha256"
    made = subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("this git cannot make a SHA-256 repository")
    cli = Cli(path, capsys)
    for command in (("connect",), ("status",), ("verify",), ("todo", "add", "-g", "g1", "--text", "x")):
        result = cli(*command)
        assert result.code == 1, (command, result.err)
        assert result.err.startswith("error[unsupported-repo]") and "SHA-256" in result.err, result.err
        assert "--object-format=sha1" in result.err  # what to do instead
    assert git(path, "for-each-ref").strip() == ""  # nothing was written


def test_core_hooks_path_gets_the_hooks_and_the_state_works(tmp_path, capsys):
    path = project(tmp_path / "hooked")
    git(path, "config", "core.hooksPath", ".githooks")
    cli = connected(path, capsys)
    assert {"pre-commit", "pre-push", "commit-msg"} <= {p.name for p in (path / ".githooks").iterdir()}
    assert not (path / ".git" / "hooks" / "pre-commit").exists()
    # a committed hooks folder names `loopx` without a path: the hook runs with one on PATH
    assert hook_guards(path, env_with_path(tool_bin(tmp_path / "bin", loopx=True)))
    works(cli)


def test_a_repository_with_no_commits_yet_connects_and_works(tmp_path, capsys):
    path = project(tmp_path / "empty", commit=False)
    cli = connected(path, capsys)
    works(cli)
    assert subprocess.run(["git", "-C", str(path), "rev-parse", "-q", "--verify", "HEAD"]).returncode != 0
    assert hook_guards(path)  # the hook works before the first commit too
    (path / "a.txt").write_text("first\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "the first commit, through loopx's hooks")


def test_a_submodules_repository_keeps_its_own_state_and_hooks(tmp_path, capsys):
    inner = project(tmp_path / "inner")
    outer = project(tmp_path / "outer")
    git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    git(outer, "commit", "-q", "-m", "add the submodule")
    sub = outer / "sub"
    cli = connected(sub, capsys)
    works(cli)
    gitdir = Path(git(sub, "rev-parse", "--absolute-git-dir").strip())
    assert gitdir == outer / ".git" / "modules" / "sub"
    assert (gitdir / "hooks" / "pre-commit").exists()
    assert not (outer / ".git" / "hooks" / "pre-commit").exists()
    assert hook_guards(sub)
    assert git(sub, "rev-parse", "--verify", "-q", STATE).strip()
    assert subprocess.run(["git", "-C", str(outer), "rev-parse", "-q", "--verify", STATE]).returncode != 0
    # the superproject still sees a clean submodule: connect's .gitignore block is the only change
    assert git(sub, "status", "--porcelain").strip() in ("?? .gitignore", "M .gitignore")

"""The shims fail closed: with no ``loopx`` on PATH a shim under ``.git/`` still runs the loopx that
installed it; when that is gone the commit or push is refused with a fix and ``--no-verify`` named,
and ``loopx doctor`` says so. Real repositories, real ``git commit`` / ``git push``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_git.hooks import connection, install, shim
from loopx_git.store.git import GitRepo
from tests.conftest import Cli, git

FAKE_TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # assembled: no token-shaped literal here

# What `loopx connect` wrote before hooks failed closed (section v1), as an old install left it.
V1_SHIM = """\
#!/bin/sh
# >>> loopx pre-commit hook v1 (installed by `loopx connect`; `loopx disconnect` removes it) >>>
loopx_bin='loopx'
[ -x "$loopx_bin" ] || loopx_bin=$(command -v loopx 2>/dev/null) || loopx_bin=
if [ -n "$loopx_bin" ]; then
  "$loopx_bin" hook run pre-commit "$@" || exit $?
else
  echo "loopx: not installed; the pre-commit safety check was skipped" >&2
fi
# <<< loopx pre-commit hook <<<
"""


def run_git(path: Path, *args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, env=env)


def stage_token(path: Path, name: str = "settings.py") -> None:
    (path / name).write_text(f"TOKEN = '{FAKE_TOKEN}'\n")
    git(path, "add", name)


@pytest.fixture
def doomed_install(tmp_path) -> shim.Target:
    """An installation that can be deleted, like a venv removed after `loopx connect` ran from it."""
    bin_dir = tmp_path / "doomed-venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"  # a stand-in: a symlink to a venv's python would lose the venv
    python.write_text(f"#!/bin/sh\nexec '{sys.executable}' \"$@\"\n")
    script = bin_dir / "loopx"
    script.write_text(f"#!/bin/sh\nexec '{python}' -m loopx_git \"$@\"\n")
    for path in (python, script):
        path.chmod(0o755)
    return shim.Target(str(script), str(python))


def install_target(repo: Path, target: shim.Target) -> Path:
    hooks = repo / ".git" / "hooks"
    for name in install.HOOK_NAMES:
        install.install(hooks, name, target)
    return hooks


# --- (a), (b): a shim under .git/ needs no loopx on PATH ---------------------------------------


def test_a_staged_token_is_refused_through_a_git_dir_shim_without_loopx_on_path(connected, no_loopx_env):
    shim_text = (connected / ".git" / "hooks" / "pre-commit").read_text()
    exact = shim.installed()  # this test's installation: its script and interpreter, by absolute path
    assert shim_text.splitlines()[1:] == shim.section("pre-commit", exact) and Path(exact.python).is_absolute()
    head = git(connected, "rev-parse", "HEAD")
    stage_token(connected)
    result = run_git(connected, "commit", "-m", "add settings", env=no_loopx_env)
    assert result.returncode == 1, result.stderr
    assert "settings.py:1:10: github-token (block) fp=" in result.stderr and FAKE_TOKEN not in result.stderr
    assert git(connected, "rev-parse", "HEAD") == head


def test_a_forced_push_or_deletion_of_the_state_branch_is_refused_without_loopx_on_path(
    connected, remote, no_loopx_env
):
    import loopx_git

    loopx_git.open(connected).todo_add("g1", "first")
    assert run_git(connected, "push", "-q", "origin", "loopx/state", env=no_loopx_env).returncode == 0
    tip = git(connected, "rev-parse", "loopx/state").strip()
    forced = run_git(connected, "push", "--force", "origin", f"{tip}~1:refs/heads/loopx/state", env=no_loopx_env)
    assert forced.returncode != 0 and "not a fast-forward" in forced.stderr
    deleted = run_git(connected, "push", "origin", ":loopx/state", env=no_loopx_env)
    assert deleted.returncode != 0 and "deleting the state branch" in deleted.stderr
    assert git(remote, "rev-parse", "loopx/state").strip() == tip


# --- (c), (d): the installation is gone ------------------------------------------------------


def test_a_shim_whose_loopx_is_gone_refuses_with_the_fix_and_no_verify_still_commits(
    git_repo, doomed_install, no_loopx_env
):
    install_target(git_repo, doomed_install)
    stage_token(git_repo)
    assert run_git(git_repo, "commit", "-m", "x", env=no_loopx_env).returncode == 1  # the check runs while it exists
    git(git_repo, "reset", "-q")
    shutil.rmtree(Path(doomed_install.script).parents[1])

    (git_repo / "clean.txt").write_text("clean\n")
    git(git_repo, "add", "clean.txt")
    head = git(git_repo, "rev-parse", "HEAD")
    result = run_git(git_repo, "commit", "-m", "clean", env=no_loopx_env)
    assert result.returncode == 1 and git(git_repo, "rev-parse", "HEAD") == head  # refused, not skipped
    assert result.stderr.splitlines() == [
        f"loopx: the pre-commit safety check cannot run: no loopx found (tried {doomed_install.script}, then "
        f"{doomed_install.python} -m loopx_git); the commit is refused.",
        "fix: install loopx-git or activate the environment it is installed in, then run `loopx connect` in this "
        "repository to update the hook.",
        "to commit without the check, deliberately: git commit --no-verify",
    ]
    assert run_git(git_repo, "commit", "--no-verify", "-m", "clean", env=no_loopx_env).returncode == 0


def test_a_push_through_a_shim_whose_loopx_is_gone_is_refused(git_repo, doomed_install, no_loopx_env, tmp_path):
    install_target(git_repo, doomed_install)
    shutil.rmtree(Path(doomed_install.script).parents[1])
    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(git_repo, "remote", "add", "origin", str(bare))
    result = run_git(git_repo, "push", "origin", "main", env=no_loopx_env)
    assert result.returncode != 0 and "the push is refused" in result.stderr
    assert "to push without the check, deliberately: git push --no-verify" in result.stderr
    assert git(bare, "for-each-ref") == ""
    assert run_git(git_repo, "push", "--no-verify", "-q", "origin", "main", env=no_loopx_env).returncode == 0


def test_an_explicit_executable_that_does_not_exist_refuses(git_repo, no_loopx_env):
    connection.connect(GitRepo.discover(git_repo), executable="/nonexistent/venv/bin/loopx")
    shim_text = (git_repo / ".git" / "hooks" / "pre-commit").read_text()
    assert "loopx_script='/nonexistent/venv/bin/loopx'" in shim_text and "loopx_python=''" in shim_text
    (git_repo / "a.txt").write_text("a\n")
    git(git_repo, "add", "a.txt")
    result = run_git(git_repo, "commit", "-m", "a", env=no_loopx_env)
    assert result.returncode == 1 and "(tried /nonexistent/venv/bin/loopx)" in result.stderr


def test_the_interpreter_runs_the_package_when_the_script_is_gone(git_repo, doomed_install, no_loopx_env):
    install_target(git_repo, doomed_install)
    Path(doomed_install.script).unlink()
    stage_token(git_repo)
    result = run_git(git_repo, "commit", "-m", "x", env=no_loopx_env)
    assert result.returncode == 1 and "settings.py:1:10: github-token (block)" in result.stderr


def test_doctor_reports_a_shim_whose_loopx_is_gone(connected, doomed_install, capsys):
    cli = Cli(connected, capsys)
    install_target(connected, doomed_install)
    hooks = json.loads(cli("doctor", "--offline", fmt="json").out)["hooks"]  # there: outdated, not missing
    every = len(install.HOOK_NAMES)
    assert [(h["target"], h["target_missing"]) for h in hooks] == [(doomed_install.script, False)] * every
    shutil.rmtree(Path(doomed_install.script).parents[1])
    result = cli("doctor", "--offline", fmt="json")
    assert result.code == 1
    report = json.loads(result.out)
    assert [(h["target"], h["target_missing"]) for h in report["hooks"]] == [(doomed_install.script, True)] * every
    assert report["problems"][0] == (
        f"pre-commit hook runs {doomed_install.script}, which is not found, so it refuses: "
        "install loopx-git or activate its environment, then run `loopx connect`"
    )
    assert "runs " + doomed_install.script + " (not found)" in cli("doctor", "--offline").out
    assert cli("connect").code == 0
    healed = cli.json("doctor", "--offline")
    assert healed["problems"] == [] and not any(h["target_missing"] for h in healed["hooks"])


# --- (e): a committed hooks folder -----------------------------------------------------------


def test_a_committed_hooks_folder_gets_a_portable_shim(git_repo, capsys, loopx_env, no_loopx_env, tmp_path):
    git(git_repo, "config", "core.hooksPath", ".githooks")
    assert Cli(git_repo, capsys)("connect").code == 0
    text = (git_repo / ".githooks" / "pre-commit").read_text()
    assert "loopx_script='loopx'" in text and "loopx_python='python3'" in text
    assert str(tmp_path) not in text and sys.executable not in text  # no absolute path may be committed
    stage_token(git_repo)
    found = run_git(git_repo, "commit", "-m", "x", env=loopx_env)
    assert found.returncode == 1 and "settings.py:1:10: github-token (block)" in found.stderr
    nothing = run_git(git_repo, "commit", "-m", "x", env=no_loopx_env)
    assert (
        nothing.returncode == 1
        and "(tried `loopx` on PATH, then python3 -m loopx_git); the commit is refused" in nothing.stderr
    )
    git(git_repo, "reset", "-q")
    git(git_repo, "add", ".githooks")
    assert (
        run_git(git_repo, "commit", "-m", "share the hooks", env=loopx_env).returncode == 0
    )  # the shims are public-safe


@pytest.mark.parametrize("where", [".git/hooks", ".git/custom-hooks"])
def test_a_hooks_folder_under_the_git_dir_is_never_portable(git_repo, where):
    repo = GitRepo.discover(git_repo)
    assert connection.committable(repo, (git_repo / where).resolve()) is False
    assert connection.committable(repo, (git_repo / ".githooks").resolve()) is True
    worktree = git_repo.parent / "linked"
    git(git_repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    linked = GitRepo.discover(worktree)
    assert connection.committable(linked, linked.hooks_dir()) is False


# --- (f): old shims --------------------------------------------------------------------------


def test_a_v1_shim_is_outdated_and_connect_upgrades_it_in_place(git_repo, capsys, no_loopx_env):
    cli = Cli(git_repo, capsys)
    assert cli("connect", "--no-hooks").code == 0
    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(V1_SHIM)
    hook.chmod(0o755)
    report = json.loads(cli("doctor", "--offline", fmt="json").out)
    assert (report["hooks"][0]["version"], report["hooks"][0]["current"]) == (1, False)
    assert "pre-commit hook outdated: run `loopx connect`" in report["problems"]
    assert cli.json("connect")["hooks"]["pre-commit"] == "updated"
    text = hook.read_text()
    assert (
        text.count("# >>> loopx pre-commit hook") == 1 and f"hook v{shim.VERSION} " in text and "loopx_bin" not in text
    )
    assert cli.json("doctor", "--offline")["problems"] == []
    stage_token(git_repo)
    assert run_git(git_repo, "commit", "-m", "x", env=no_loopx_env).returncode == 1


# --- the fallback stays on the fast path -----------------------------------------------------


def test_python_m_loopx_git_takes_the_hook_fast_path(git_repo):
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "loopx_git", "hook", "run", "pre-commit"],
        cwd=git_repo,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in result.stderr.splitlines() if "|" in line}
    assert "loopx_git" in imported and not imported & {"typer", "rich", "pydantic", "click", "ruamel"}

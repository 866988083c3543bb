"""The hooks as the pre-commit framework runs them: the manifest validates, and `pre-commit
try-repo` installs this package into its own environment and runs each hook on a real repository.

The first try-repo builds a virtual environment with pip (about half a minute); the rest reuse it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, git

SOURCE = Path(__file__).resolve().parents[2]
FAKE_TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"


PRE_COMMIT = [sys.executable, "-m", "pre_commit"]  # this interpreter's: its bin folder need not be on PATH


def pre_commit(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([*PRE_COMMIT, *args], cwd=cwd, capture_output=True, text=True, env=env)


def test_the_manifest_validates():
    result = subprocess.run(
        [*PRE_COMMIT, "validate-manifest", str(SOURCE / ".pre-commit-hooks.yaml")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """This package's source as a committed repository: try-repo installs from a commit, and one
    commit for every call lets them share one environment."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in ("loopx_git", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        src = SOURCE / name
        if src.is_dir():
            shutil.copytree(src, repo / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, repo / name)
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "hooks"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    rev = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return repo, rev


@pytest.fixture
def env(tmp_path_factory) -> dict:
    cache = tmp_path_factory.getbasetemp() / "pre-commit-cache"  # shared by the tests of one run
    return {**os.environ, "PRE_COMMIT_HOME": str(cache)}


@pytest.mark.slow
@pytest.mark.xdist_group("pre-commit-env")  # one worker builds the hook environment once
def test_try_repo_runs_each_hook(git_repo, hook_repo, env):
    source, rev = hook_repo
    (git_repo / "notes.jsonl").write_text('{"note": "clean"}\n')
    git(git_repo, "add", "notes.jsonl")
    clean = pre_commit(
        "try-repo", str(source), "loopx-public-safety", "--ref", rev, "--files", "notes.jsonl", cwd=git_repo, env=env
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr

    (git_repo / "notes.jsonl").write_text(f'{{"note": "token {FAKE_TOKEN}"}}\n')
    git(git_repo, "add", "notes.jsonl")
    (git_repo / "link").symlink_to("/home/alice/private/notes.txt")
    git(git_repo, "add", "link")
    dirty = pre_commit(
        "try-repo", str(source), "loopx-public-safety", "--ref", rev, "--all-files", cwd=git_repo, env=env
    )
    assert dirty.returncode == 1
    assert "notes.jsonl:1:17: github-token (block) fp=" in dirty.stdout
    assert "link:1:1: home-path (block) fp=" in dirty.stdout
    assert FAKE_TOKEN not in dirty.stdout

    git(git_repo, "commit", "-q", "--no-verify", "-m", "committed before the hooks")  # --all-files still finds it
    again = pre_commit(
        "try-repo", str(source), "loopx-public-safety", "--ref", rev, "--all-files", cwd=git_repo, env=env
    )
    assert again.returncode == 1 and "notes.jsonl:1:17: github-token (block)" in again.stdout

    (git_repo / ".loopx").mkdir()
    (git_repo / ".loopx" / "run.json").write_text("{}\n")
    git(git_repo, "add", "-f", ".loopx/run.json")
    boundary = pre_commit("try-repo", str(source), "loopx-boundary", "--ref", rev, "--all-files", cwd=git_repo, env=env)
    assert boundary.returncode == 1 and ".loopx/run.json:0:0: local-state (block)" in boundary.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("pre-commit-env")  # one worker builds the hook environment once
def test_try_repo_pre_push_walks_the_range(git_repo, hook_repo, env):
    source, rev = hook_repo
    base = git(git_repo, "rev-parse", "HEAD").strip()
    (git_repo / "deploy.sh").write_text(f"export GH={FAKE_TOKEN}\n")
    git(git_repo, "add", "deploy.sh")
    git(git_repo, "commit", "-q", "-m", "oops")
    git(git_repo, "rm", "-q", "deploy.sh")
    git(git_repo, "commit", "-q", "-m", "remove it")
    head = git(git_repo, "rev-parse", "HEAD").strip()
    args = ["try-repo", str(source), "loopx-prepush", "--ref", rev, "--hook-stage", "pre-push"]
    result = pre_commit(*args, "--from-ref", base, "--to-ref", head, cwd=git_repo, env=env)
    assert result.returncode == 1 and "deploy.sh:1:11: github-token (block)" in result.stdout
    assert pre_commit(*args, "--from-ref", head, "--to-ref", head, cwd=git_repo, env=env).returncode == 0


def test_the_snippet_connect_prints_runs_the_loopx_on_path(git_repo, capsys, loopx_env, no_loopx_env):
    """`language: system` hooks run `loopx` from PATH: with it there they check, without it they fail
    (pre-commit cannot find the executable), never pass unchecked."""
    (git_repo / ".pre-commit-config.yaml").write_text("repos:\n")
    snippet = Cli(git_repo, capsys).json("connect")["framework_snippet"]
    (git_repo / ".pre-commit-config.yaml").write_text("repos:\n" + snippet)
    git(git_repo, "add", ".pre-commit-config.yaml")
    (git_repo / "conf.yaml").write_text(f"token: {FAKE_TOKEN}\n")
    git(git_repo, "add", "conf.yaml")
    for env in (loopx_env, no_loopx_env):
        env["PRE_COMMIT_HOME"] = str(git_repo.parent / "pre-commit-home")
    found = pre_commit("run", "loopx-public-safety", cwd=git_repo, env=loopx_env)
    assert found.returncode == 1 and "conf.yaml:1:8: github-token (block)" in found.stdout, found.stdout + found.stderr
    missing = pre_commit("run", "loopx-public-safety", cwd=git_repo, env=no_loopx_env)
    assert missing.returncode == 1 and "Executable `loopx` not found" in missing.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("pre-commit-env")  # one worker builds the hook environment once
def test_try_repo_commit_msg_scans_the_message_file(git_repo, hook_repo, env):
    source, rev = hook_repo
    args = ["try-repo", str(source), "loopx-commit-msg", "--ref", rev, "--hook-stage", "commit-msg"]
    message = git_repo / ".git" / "COMMIT_EDITMSG"
    message.write_text(f"Deploy with {FAKE_TOKEN}\n")
    found = pre_commit(*args, "--commit-msg-filename", str(message), cwd=git_repo, env=env)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "<commit message>:1:13: github-token (block) fp=" in found.stdout and FAKE_TOKEN not in found.stdout
    message.write_text("Deploy with the CI secret store\n")
    assert pre_commit(*args, "--commit-msg-filename", str(message), cwd=git_repo, env=env).returncode == 0

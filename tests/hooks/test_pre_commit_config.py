"""The project's own ``.pre-commit-config.yaml``: it validates, its local loopx hooks are the hooks of
``.pre-commit-hooks.yaml`` (same ids, entries and file selection), and those hooks run as the
framework runs them.

Nothing here reaches the network: the ruff hooks would be cloned from their repository on a run, so
the whole config is only validated; what runs is a copy that keeps the ``repo: local`` loopx hooks
(``language: system``: the framework installs nothing for them).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import git
from tests.hooks.test_pre_commit_framework import FAKE_TOKEN, PRE_COMMIT, pre_commit

SOURCE = Path(__file__).resolve().parents[2]
CONFIG = SOURCE / ".pre-commit-config.yaml"
MANIFEST = SOURCE / ".pre-commit-hooks.yaml"
MIRRORED = ("name", "entry", "types", "types_or", "stages", "pass_filenames", "always_run")
"""What a local hook shares with the manifest's hook of its id (``language`` differs on purpose:
``system`` runs the loopx of the dev environment, ``python`` installs one)."""


def load(path: Path):
    return YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8"))


def local_loopx_hooks(config: dict) -> list[dict]:
    return [
        hook
        for repo in config["repos"]
        if repo["repo"] == "local"
        for hook in repo["hooks"]
        if hook["id"].startswith("loopx-")
    ]


def test_the_project_config_validates():
    result = subprocess.run([*PRE_COMMIT, "validate-config", str(CONFIG)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == "" and result.stderr == ""  # no warning either (a mutable rev, an unknown key)


def test_the_config_runs_ruff_and_mypy_as_ci_does():
    config = load(CONFIG)
    ruff = [repo for repo in config["repos"] if repo["repo"] == "https://github.com/astral-sh/ruff-pre-commit"]
    assert len(ruff) == 1 and [h["id"] for h in ruff[0]["hooks"]] == ["ruff-check", "ruff-format"]
    assert ruff[0]["rev"].startswith("v")  # a pinned tag, never a branch
    local = [hook for repo in config["repos"] if repo["repo"] == "local" for hook in repo["hooks"]]
    mypy = [hook for hook in local if hook["id"] == "mypy"]
    assert mypy == [
        {
            "id": "mypy",
            "name": "mypy",
            "entry": "mypy",
            "language": "system",
            "pass_filenames": False,  # the files come from [tool.mypy], as in .ci/run
            "types": ["python"],
        }
    ]


def test_the_local_loopx_hooks_are_the_manifests():
    manifest = {hook["id"]: hook for hook in load(MANIFEST)}
    local = {hook["id"]: hook for hook in local_loopx_hooks(load(CONFIG))}
    assert sorted(local) == sorted(manifest)
    for hook_id, hook in local.items():
        assert hook["language"] == "system"
        for key in MIRRORED:
            assert hook.get(key) == manifest[hook_id].get(key), f"{hook_id}: {key}"


@pytest.fixture
def local_config(tmp_path) -> Path:
    """The project's config with only its local loopx hooks, outside the repository it runs in."""
    config = load(CONFIG)
    kept = {key: value for key, value in config.items() if key != "repos"}
    kept["repos"] = [{"repo": "local", "hooks": local_loopx_hooks(config)}]
    path = tmp_path / "local-hooks.yaml"
    path.write_text(json.dumps(kept, indent=2))  # JSON is YAML
    return path


def run(local_config: Path, *args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return pre_commit("run", "--config", str(local_config), *args, cwd=cwd, env=env)


def test_the_local_hooks_guard_a_commit(git_repo, local_config, loopx_env):
    loopx_env["PRE_COMMIT_HOME"] = str(git_repo.parent / "pre-commit-home")
    (git_repo / "notes.txt").write_text("nothing to see\n")
    git(git_repo, "add", "notes.txt")
    clean = run(local_config, cwd=git_repo, env=loopx_env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "loopx public-safety scan" in clean.stdout and "loopx local-state boundary" in clean.stdout

    (git_repo / "conf.yaml").write_text(f"token: {FAKE_TOKEN}\n")
    (git_repo / ".loopx").mkdir()
    (git_repo / ".loopx" / "run.json").write_text("{}\n")
    git(git_repo, "add", "conf.yaml")
    git(git_repo, "add", "-f", ".loopx/run.json")
    dirty = run(local_config, cwd=git_repo, env=loopx_env)
    assert dirty.returncode == 1
    assert "conf.yaml:1:8: github-token (block)" in dirty.stdout
    assert ".loopx/run.json:0:0: local-state (block)" in dirty.stdout
    assert FAKE_TOKEN not in dirty.stdout
    assert "loopx pre-push range check" not in dirty.stdout  # a pre-push hook only (default_stages)


def test_the_local_prepush_hook_walks_the_range(git_repo, local_config, loopx_env):
    loopx_env["PRE_COMMIT_HOME"] = str(git_repo.parent / "pre-commit-home")
    base = git(git_repo, "rev-parse", "HEAD").strip()
    (git_repo / "deploy.sh").write_text(f"export GH={FAKE_TOKEN}\n")
    git(git_repo, "add", "deploy.sh")
    git(git_repo, "commit", "-q", "--no-verify", "-m", "oops")
    git(git_repo, "rm", "-q", "deploy.sh")
    git(git_repo, "commit", "-q", "--no-verify", "-m", "remove it")
    head = git(git_repo, "rev-parse", "HEAD").strip()
    args = ["--hook-stage", "pre-push"]
    found = run(local_config, *args, "--from-ref", base, "--to-ref", head, cwd=git_repo, env=loopx_env)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "deploy.sh:1:11: github-token (block)" in found.stdout
    assert "loopx public-safety scan" not in found.stdout  # pre-commit hooks stay out of a push
    nothing = run(local_config, *args, "--from-ref", head, "--to-ref", head, cwd=git_repo, env=loopx_env)
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr

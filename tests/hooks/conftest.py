"""PATHs for hook tests: git run the way a GUI client or a shell without the environment runs it.

The suite must pass with the venv's ``bin`` off PATH, so no test relies on finding ``loopx`` there:
a test that wants one puts a ``loopx`` running this interpreter into a PATH of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Cli, git

TOOLS = ("git", "cat", "dirname")  # what git and the shims call by name; deliberately no python


def tool_bin(folder: Path, *, loopx: bool) -> Path:
    """A folder with only ``TOOLS`` (and, with ``loopx=True``, a ``loopx`` for this interpreter)."""
    folder.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, f"{tool} is needed on PATH to run the hook tests"
        (folder / tool).symlink_to(found)
    if loopx:
        script = folder / "loopx"
        script.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m loopx_git \"$@\"\n")
        script.chmod(0o755)
    return folder


def env_with_path(folder: Path) -> dict:
    env = {**os.environ, "PATH": str(folder)}
    env.pop("PYTHONPATH", None)
    return env


@pytest.fixture
def no_loopx_env(tmp_path) -> dict:
    """An environment whose PATH has git but neither ``loopx`` nor any python."""
    return env_with_path(tool_bin(tmp_path / "bin-without-loopx", loopx=False))


@pytest.fixture
def loopx_env(tmp_path) -> dict:
    """An environment whose PATH has git and a ``loopx`` (this interpreter's), and no python."""
    return env_with_path(tool_bin(tmp_path / "bin-with-loopx", loopx=True))


@pytest.fixture
def connected(git_repo, capsys) -> Path:
    """A repository after `loopx connect`: state branch, goal g1, hooks in `.git/hooks`."""
    assert Cli(git_repo, capsys)("connect", "--goal-id", "g1", "--objective", "Ship it").code == 0
    return git_repo


@pytest.fixture
def remote(connected, tmp_path) -> Path:
    """A bare remote on disk that has `main` and the state branch."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(connected, "remote", "add", "origin", str(bare))
    pushed = subprocess.run(
        ["git", "-C", str(connected), "push", "-q", "origin", "main", "loopx/state"], capture_output=True, text=True
    )
    assert pushed.returncode == 0, pushed.stderr
    return bare

"""Clones of one project meeting through a remote: real repositories in temporary folders."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import loopx_git
from tests.conftest import git

GOAL = "g1"


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, capture_output=True)
    return path


def clone(path: Path, remote_url: str, *, connect: bool = True) -> Path:
    """A project clone with ``origin`` at ``remote_url`` (it shares no history with the others
    until it syncs); ``connect`` creates its own state branch first, as a new machine would."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test Person")
    git(path, "config", "user.email", "test@example.invalid")
    git(path, "remote", "add", "origin", remote_url)
    if connect:
        with loopx_git.open(path) as repo:
            repo.connect()
    return path


def tree_of(path: Path, ref: str = "refs/heads/loopx/state") -> str:
    return git(path, "rev-parse", f"{ref}^{{tree}}").strip()


def event_ids(path: Path, ref: str = "refs/heads/loopx/state") -> list[str]:
    names = git(path, "ls-tree", "-r", "--name-only", ref).split()
    return sorted(n.rsplit("/", 1)[1].removesuffix(".json") for n in names if "/events/" in n)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port: int, proc: subprocess.Popen, timeout: float = 20) -> bool:
    """Whether the server ``proc`` started accepts connections on 127.0.0.1:``port`` in time (False
    when it exits first or the time runs out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False

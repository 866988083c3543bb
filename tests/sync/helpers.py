"""Clones of one project meeting through a remote: real repositories in temporary folders; loopx
run as a whole process, and the failures every real server must report alike (a ref it cannot lock,
a connection that dies mid-push)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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


def tip(path: Path, ref: str = "refs/heads/loopx/state") -> str:
    return git(path, "rev-parse", ref).strip()


def loopx(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it: a whole process, in the environment the test set up (an SSH
    command, say), with no terminal to prompt on."""
    return subprocess.run(
        [sys.executable, "-m", "loopx_git", "--repo", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def reported(result: subprocess.CompletedProcess[str], *words: str, secret: str | None = None) -> None:
    """``result`` is an error as loopx reports one: exit 1, ``error[code]`` on stderr with ``words``
    (the server's own), no traceback, and ``secret`` nowhere in what it printed."""
    said = f"{result.stdout}\n{result.stderr}"
    assert result.returncode == 1, said
    assert "error[" in result.stderr and "Traceback" not in said, said
    for word in words:
        assert word in result.stderr, (word, said)
    assert secret is None or secret not in said, said


def hook(git_dir: Path, name: str, body: str) -> Path:
    """A hook of the repository at ``git_dir`` (``name``: pre-receive, reference-transaction...)."""
    path = git_dir / "hooks" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def fsck_clean(served: Path) -> None:
    subprocess.run(["git", "-C", str(served), "fsck", "--strict", "--no-progress"], check=True, capture_output=True)


def commands_round(a: Path, b: Path, served: Path) -> list[subprocess.CompletedProcess[str]]:
    """push from ``a``, pull into ``b``, claim --sync there and propose from ``a``, each as a user
    runs it: every one lands where it should (a proposal beside the state branch, which it leaves
    alone). What each printed, for the caller to search."""
    with loopx_git.open(a) as repo:
        repo.todo_add(GOAL, "pushed from the command line", todo_id="tp")
    said = [loopx(a, "push")]
    assert said[-1].returncode == 0 and tip(served) == tip(a), said[-1].stderr
    said.append(loopx(b, "pull"))
    assert said[-1].returncode == 0 and tip(b) == tip(a), said[-1].stderr
    said.append(loopx(b, "todo", "claim", "-g", GOAL, "-t", "tp", "-a", "bob", "--sync"))
    assert said[-1].returncode == 0 and tip(served) == tip(b), said[-1].stderr
    with loopx_git.open(a) as repo:
        repo.todo_add(GOAL, "proposed for review", todo_id="tr")
    published = tip(served)
    said.append(loopx(a, "propose", "--branch", "loopx/proposals/review"))
    assert said[-1].returncode == 0, said[-1].stderr
    assert tip(served, "refs/heads/loopx/proposals/review") == tip(a) and tip(served) == published
    return said


def lock_lost(a: Path, served: Path, *, secret: str | None = None) -> None:
    """The server cannot lock its state branch (a lock file a crashed git left): sync and claim
    --sync say so in the server's words, keep their commits, and a push lands once the lock is gone."""
    with loopx_git.open(a) as repo:
        repo.todo_add(GOAL, "written while the server's ref is locked", todo_id="tl")
    local, published = tip(a), tip(served)
    lock = served / "refs" / "heads" / "loopx" / "state.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)  # a packed ref has no folder of its own
    lock.write_text("")
    result = loopx(a, "sync")
    reported(result, "cannot lock ref", "state.lock': File exists", "lock file", secret=secret)
    assert "moved" not in result.stderr, result.stderr  # nobody else pushed: it must not say so
    assert tip(a) == local and tip(served) == published
    result = loopx(a, "todo", "claim", "-g", GOAL, "-t", "tl", "-a", "alice", "--sync")
    reported(result, "cannot lock ref", secret=secret)
    claimed = tip(a)  # the claim waits in the clone, on top of what was there (git fails if not)
    git(a, "merge-base", "--is-ancestor", local, claimed)
    assert claimed != local and tip(served) == published
    lock.unlink()
    result = loopx(a, "push")
    assert result.returncode == 0 and (secret is None or secret not in result.stdout + result.stderr)
    assert tip(served) == claimed
    fsck_clean(served)


def dropped(a: Path, served: Path, *, after_update: bool, kill: str, revive=None, secret: str | None = None) -> None:
    """The connection dies mid-push — ``kill`` (shell) runs on the server once the pack is there,
    before the ref moves or after it moved: loopx says the push failed, the clone keeps its commits,
    the server's branch is the old tip or the new one (never a broken one), and the next sync
    converges with every event once. ``revive`` brings a killed server back."""
    with loopx_git.open(a) as repo:
        repo.todo_add(GOAL, "written as the connection drops", todo_id="td")
        written = set(event_ids(a))
    local, published = tip(a), tip(served)
    if after_update:  # git runs it once the new tip is written, before it answers the client
        script = hook(served, "reference-transaction", f'[ "$1" = committed ] && {kill}\nexit 0\n')
    else:
        script = hook(served, "pre-receive", f"cat >/dev/null\n{kill}\nexit 0\n")
        # a clone with a pre-push hook of its own, which passed: the lost connection is not its refusal
        hook(a / ".git", "pre-push", "cat >/dev/null\nexit 0\n")
    result = loopx(a, "sync")
    reported(result, "hung up", "the push of loopx/state to origin failed", secret=secret)
    assert "pre-push hook" not in result.stderr, result.stderr
    assert tip(a) == local
    assert tip(served) == (local if after_update else published)
    fsck_clean(served)
    script.unlink()
    if revive is not None:
        revive()
    result = loopx(a, "sync")
    assert result.returncode == 0 and (secret is None or secret not in result.stdout + result.stderr)
    assert tip(served) == tip(a) == local  # converged: nothing left to merge or push
    ids = event_ids(served)
    assert len(ids) == len(set(ids)) and set(ids) == written
    assert loopx(a, "verify").returncode == 0


@contextmanager
def git_daemon(root: Path, name: str = "project.git") -> Iterator[str]:
    """``git daemon`` serving a new bare repository ``root/name`` on 127.0.0.1, pushes enabled; its URL."""
    root.mkdir(parents=True, exist_ok=True)
    bare(root / name)
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--enable=receive-pack",
            "--max-connections=64",
            f"--base-path={root}",
            "--listen=127.0.0.1",
            f"--port={port}",
            str(root),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        if not listening(port, proc):
            raise RuntimeError("git daemon did not start")
        yield f"git://127.0.0.1:{port}/{name}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)

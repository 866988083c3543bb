"""One writer at a time per clone: a file lock around each write attempt.

Compare-and-swap on the ref is what keeps writes correct (other clones, other tools, a machine
without file locks); this lock only stops the writers of one clone from doing work that a lost
race then throws away. Measured with twelve writers on one clone, optimistic retries alone
starved a writer past its retry budget and left a lost race's objects behind on every loss; in
turn, each writer now waits briefly and then writes on a tip nobody else is about to move.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: compare-and-swap alone
    fcntl = None  # type: ignore[assignment]

ENABLED = fcntl is not None
"""Whether writers take turns (off: compare-and-swap alone, as the concurrency benchmark's baseline)."""
WAIT_SECONDS = 120.0
"""After this long without the lock, write anyway: compare-and-swap keeps it correct."""

_held = threading.local()
"""The lock files this thread holds: a write nested in another (a second handle's write inside a
domain operation) goes ahead under compare-and-swap rather than wait for itself."""


@contextlib.contextmanager
def write_lock(git_dir: Path, ref: str) -> Iterator[bool]:
    """Hold the clone's write lock for ``ref`` while the block runs; yields whether it is held
    (False where locks are unavailable or the wait ran out). Released when the process dies."""
    if not ENABLED:
        yield False
        return
    path = git_dir / "loopx" / f"write-{hashlib.sha1(ref.encode()).hexdigest()[:12]}.lock"
    mine = _held.__dict__.setdefault("paths", set())
    if str(path) in mine:
        yield False
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a read-only .git/loopx: unlocked, still correct
        yield False
        return
    held = False
    try:
        held = acquire(fd, wait=WAIT_SECONDS, pause=lambda: random.uniform(0.0005, 0.005))
        if held:
            mine.add(str(path))
        yield held
    finally:
        if held:
            mine.discard(str(path))
            release(fd)
        os.close(fd)


def acquire(fd: int, *, wait: float, pause: Callable[[], float]) -> bool:
    """An exclusive ``flock`` on ``fd`` within ``wait`` seconds, trying again after ``pause()``
    seconds; True when taken (always, where the platform has no file locks)."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause())


def release(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)

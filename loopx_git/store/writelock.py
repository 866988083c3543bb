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
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: compare-and-swap alone
    fcntl = None  # type: ignore[assignment]

WAIT_SECONDS = 120.0
"""After this long without the lock, write anyway: compare-and-swap keeps it correct."""

_held = threading.local()
"""The lock files this thread holds: a write nested in another (a second handle's write inside a
domain operation) goes ahead under compare-and-swap rather than wait for itself."""


@contextlib.contextmanager
def write_lock(git_dir: Path, ref: str) -> Iterator[bool]:
    """Hold the clone's write lock for ``ref`` while the block runs; yields whether it is held
    (False where locks are unavailable or the wait ran out). Released when the process dies."""
    if fcntl is None:
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
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                mine.add(str(path))
                break
            except OSError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(random.uniform(0.0005, 0.005))
        yield held
    finally:
        if held:
            mine.discard(str(path))
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

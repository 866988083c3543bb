"""One writer at a time per clone: a file lock around each write attempt.

Compare-and-swap on the ref is what keeps writes correct (other clones, other tools, a machine
without file locks); this lock only stops the writers of one clone from doing work that a lost
race then throws away. Measured with twelve writers on one clone, optimistic retries alone
starved a writer past its retry budget and left a lost race's objects behind on every loss; in
turn, each writer now waits briefly and then writes on a tip nobody else is about to move.

Holding this lock is also what lets a writer take away the ref lock file a killed writer left
(``clear_stale_ref_lock``): no writer of this clone can be holding it at that moment.
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
STALE_REF_LOCK_SECONDS = 5.0
"""Age past which the state ref's lock file is a dead process's, not a live one's. git itself
waits 100 ms for a ref lock (``core.filesRefLockTimeout``) and holds one for milliseconds; a
writer killed between writing its objects and renaming the lock into place leaves it for ever,
and every later write then lost its retries to it (``ref-locked``)."""

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
            clear_stale_ref_lock(git_dir, ref)
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


def clear_stale_ref_lock(git_dir: Path, ref: str, *, stale: float | None = None) -> bool:
    """Called holding the clone's write lock: no loopx writer of this clone holds ``ref``'s lock
    file now, so one that is there is a git process's (gone in milliseconds) or a killed writer's
    (there for ever). Wait until it goes or is ``stale`` seconds old, then remove it; True when
    removed. Costs one ``stat`` when there is none, which is every write but the first after a crash."""
    return clear_stale_lock(git_dir / f"{ref}.lock", stale=STALE_REF_LOCK_SECONDS if stale is None else stale)


def clear_stale_lock(lock: Path, *, stale: float = STALE_REF_LOCK_SECONDS, wait: bool = True) -> bool:
    """Remove git's lock file ``lock`` once it is ``stale`` seconds old (waiting for that, or for it
    to go, when ``wait``), for a caller holding the loopx lock under which loopx makes that file, so
    that only a dead process or a foreign git can have made it. A file whose age keeps restarting is
    a live one and is left; so is one dated ahead of the clock. True when removed."""
    deadline = time.monotonic() + (stale + 1.0 if wait else 0.0)
    while True:
        try:
            seen = os.stat(lock)
        except OSError:  # none (the usual case), or one we cannot even look at: the write reports it
            return False
        if time.time() - seen.st_mtime >= stale:
            break
        if time.monotonic() >= deadline:  # kept young by a busy git, or dated ahead of the clock:
            return False  # left to the write's retries, whose refusal names the file
        time.sleep(0.05)
    try:
        now = os.stat(lock)
        if (now.st_ino, now.st_mtime_ns) != (seen.st_ino, seen.st_mtime_ns):
            return False  # replaced while we looked: a live one, which the write's retries wait for
        os.unlink(lock)
    except OSError:  # gone meanwhile, or not ours to remove (read-only): the write says what is wrong
        return False
    return True


def release(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)

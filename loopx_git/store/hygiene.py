"""Keeping the object store small: libgit2 never packs, so loopx does, between writes.

- **One packer at a time.** Packing holds an ``flock`` on a file under ``.git/loopx/``; a process
  that finds it held skips (the holder is packing for everyone). The kernel releases it when its
  holder dies, so no lock is ever stale and none is taken from a packer that is still running.
- **Only what can be packed.** ``git repack -d`` packs the loose objects a ref reaches; the
  objects of writes that lost a race (unreachable) stay loose, keeping their age. What a pack
  leaves is recorded (``pack-state``), and the next pack waits for ``LOOSE_THRESHOLD`` *new*
  objects, so leftovers never make every command pack again (the storm of many small packs).
- **Few packs.** Past ``MAX_PACKS`` packs, one full ``git gc`` puts everything in one pack.
- **Pruning lost races.** Unreachable loose objects go once they are older than the grace period
  (``git config loopx.pruneExpire``, default ``1.hour.ago``): git's own rule, as a concurrent
  writer may be about to reference an object it has just written. They are never packed first,
  which would restart their age (a geometric repack rolls every loose object into a new pack).
- **gc.log.** When git's auto gc finds too many unreachable loose objects it writes
  ``.git/gc.log`` and refuses to run again for a day. loopx prunes them itself, removes that log
  once it has, and ``loopx doctor`` reports one it finds.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from loopx_git.store.git import GitRepo
from loopx_git.store.writelock import acquire, release

if TYPE_CHECKING:
    from loopx_git.errors import StoreError

LOOSE_THRESHOLD = 2000
"""Pack once about this many new loose objects exist (git's own gc.auto is 6700)."""
DEFAULT_PRUNE_EXPIRE = "1.hour.ago"
PRUNE_CONFIG = "loopx.pruneExpire"
MAX_PACKS = 8
"""Past this many packs, a full gc puts everything in one."""
LOCK_WAIT_SECONDS = 60.0
"""How long ``loopx gc`` waits for a packer that is already running."""


@dataclass(frozen=True)
class ObjectStats:
    loose_objects: int
    loose_bytes: int
    packs: int
    pack_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.loose_bytes + self.pack_bytes


@dataclass(frozen=True)
class Unreachable:
    """Objects no ref or reflog reaches (the writes that lost a race), loose or packed."""

    objects: int
    expire: str
    """The grace period: ``loopx gc`` keeps those younger than this."""


@dataclass(frozen=True)
class GcResult:
    before: ObjectStats
    after: ObjectStats
    unreachable_before: Unreachable
    unreachable_after: Unreachable
    gc_log_removed: bool
    warnings: tuple[str, ...] = ()
    """What could not be done after the packing landed (it stands; these only say so)."""


def estimate_loose(git_dir: Path) -> int:
    """Loose objects, estimated from one fan-out directory as ``git gc --auto`` does: cheap
    enough to run after every command."""
    try:
        return len(os.listdir(git_dir / "objects" / "17")) * 256
    except OSError:
        return 0


def object_stats(git_dir: Path) -> ObjectStats:
    loose = loose_bytes = packs = pack_bytes = 0
    objects = git_dir / "objects"
    for fan in objects.glob("[0-9a-f][0-9a-f]"):
        for obj in fan.iterdir():
            with contextlib.suppress(OSError):  # a concurrent prune may take it away
                loose_bytes += obj.stat().st_size
                loose += 1
    for pack in (objects / "pack").glob("*.pack"):
        with contextlib.suppress(OSError):
            pack_bytes += pack.stat().st_size + pack.with_suffix(".idx").stat().st_size
            packs += 1
    return ObjectStats(loose, loose_bytes, packs, pack_bytes)


def prune_expire(git: GitRepo) -> str:
    return git.config_get(PRUNE_CONFIG) or DEFAULT_PRUNE_EXPIRE


def unreachable(git: GitRepo) -> Unreachable:
    """Count the unreachable objects (``git fsck --unreachable --connectivity-only``: a walk of
    everything reachable, so for ``doctor`` and ``gc``, never for every command)."""
    out = git.run_git("fsck", "--unreachable", "--connectivity-only", "--no-progress")
    return Unreachable(sum(1 for line in out.splitlines() if line.startswith("unreachable ")), prune_expire(git))


class GcLogFound(TypedDict):
    path: str
    age_seconds: int
    says: str


def gc_log(git_dir: Path) -> GcLogFound | None:
    """The ``gc.log`` git left (its first line and age), or None."""
    path = git_dir / "gc.log"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        age = time.time() - path.stat().st_mtime
    except OSError:
        return None
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return {"path": "gc.log", "age_seconds": round(age), "says": first[:200]}


def _remove_gc_log(git_dir: Path) -> bool:
    try:
        (git_dir / "gc.log").unlink()
    except (FileNotFoundError, IsADirectoryError):  # a folder of that name is not git's log: left alone
        return False
    return True


@contextlib.contextmanager
def pack_lock(git_dir: Path, *, wait: float = 0.0) -> Iterator[bool]:
    """Hold the packing lock while the block runs; yields False when another process holds it
    (after ``wait`` seconds). An ``flock``: released by the kernel when its holder dies. A path
    that cannot hold a lock (a folder in the way, a read-only .git) is refused."""
    path = git_dir / "loopx" / "pack.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except IsADirectoryError:  # no process made that: waiting would never end in the lock
        raise _no_lock(path, "a folder stands where the lock file goes") from None
    except OSError as exc:  # read-only, .git/loopx not a folder, a name the file system refuses
        reason = "it is not a folder" if path.parent.exists() and not path.parent.is_dir() else exc.strerror or str(exc)
        raise _no_lock(path, reason) from exc
    held = False
    try:
        held = acquire(fd, wait=wait, pause=lambda: 0.2)
        yield held
    finally:
        if held:
            release(fd)
        os.close(fd)


def _no_lock(path: Path, reason: str) -> StoreError:
    from loopx_git.errors import StoreError

    return StoreError(
        f"cannot take the packing lock {path.name} under {path.parent} ({reason}); nothing was packed",
        code="no-lock",
        hint=f"{path.parent} holds caches only, never state: remove it (loopx makes it again) or make it writable",
    )


def _state_path(git_dir: Path) -> Path:
    return git_dir / "loopx" / "pack-state"


def _pack_state(git_dir: Path) -> dict[str, int]:
    """``loose_after``: the loose objects the last pack left; ``packs``: packs since the last full gc."""
    try:
        data = json.loads(_state_path(git_dir).read_text())
        return {"loose_after": int(data["loose_after"]), "packs": int(data.get("packs", 0))}
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError):  # OverflowError: int(Infinity)
        return {"loose_after": 0, "packs": 0}


def _left_after_last_pack(git_dir: Path) -> int:
    return _pack_state(git_dir)["loose_after"]


def _record(git_dir: Path, *, loose: int, packs: int) -> None:
    path = _state_path(git_dir)
    tmp = path.with_name(f".pack-state-{os.getpid()}")
    try:
        tmp.write_text(json.dumps({"loose_after": loose, "packs": packs, "at": int(time.time())}))
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


GIT_GC_LOCKS = (
    "packed-refs.lock",
    "objects/info/commit-graph.lock",
    "objects/info/commit-graphs/commit-graph-chain.lock",
)
"""Lock files a ``git gc`` killed midway leaves behind, each failing every later gc until removed
(a plain repack takes none of them, so only a full gc clears them)."""
STALE_GC_LOCK_SECONDS = 120.0
"""Older than any gc step of a repository this tool serves holds one (a killed gc left it)."""


def _clear_left_gc_locks(git_dir: Path) -> None:
    """Called holding ``pack_lock``: no loopx packer holds git's gc locks now, so an old one is a
    killed gc's. A user's own ``git gc`` running beside it holds them far shorter than the bound."""
    from loopx_git.store.writelock import clear_stale_lock

    for name in GIT_GC_LOCKS:
        clear_stale_lock(git_dir / name, stale=STALE_GC_LOCK_SECONDS, wait=False)


def repack(git: GitRepo) -> None:
    """The loose objects a ref reaches into one new pack (``-d`` removes their loose copies); the
    unreachable ones stay loose, with their age."""
    git.run_git("repack", "-d", "-q")


def prune(git: GitRepo) -> None:
    """Unreachable loose objects older than the grace period."""
    git.run_git("prune", f"--expire={prune_expire(git)}")


def full_gc(git: GitRepo) -> bool:
    """One pack; unreachable objects past the grace period dropped; a gc.log git left removed
    (True when there was one)."""
    had_log = gc_log(git.common_dir) is not None
    _clear_left_gc_locks(git.common_dir)
    git.run_git("gc", "--quiet", f"--prune={prune_expire(git)}")
    _remove_gc_log(git.common_dir)  # git may have removed it itself
    return had_log


def count_packs(git_dir: Path) -> int:
    try:
        return sum(1 for name in os.listdir(git_dir / "objects" / "pack") if name.endswith(".pack"))
    except OSError:
        return 0


def maybe_pack(git: GitRepo, threshold: int | None = None) -> bool:
    """Pack when ``threshold`` (default LOOSE_THRESHOLD) loose objects arrived since the last pack;
    past MAX_PACKS packs, one full gc; prune the lost races past the grace period once they pile
    up. True when this process packed."""
    threshold = LOOSE_THRESHOLD if threshold is None else threshold
    git_dir = git.common_dir
    if estimate_loose(git_dir) - _left_after_last_pack(git_dir) < threshold:
        return False
    with pack_lock(git_dir) as held:
        if not held:
            return False  # another process is packing
        if estimate_loose(git_dir) - _left_after_last_pack(git_dir) < threshold:
            return False  # it packed just before we took the lock
        if count_packs(git_dir) >= MAX_PACKS:
            full_gc(git)
        else:
            repack(git)
        left = estimate_loose(git_dir)
        if left >= max(threshold, 1):  # what a repack leaves is unreachable: lost races
            prune(git)
            left = estimate_loose(git_dir)
            if left < max(threshold, 1):
                _remove_gc_log(git_dir)  # what git's auto gc complains about is gone
        _record(git_dir, loose=left, packs=count_packs(git_dir))
    return True


def gc(git: GitRepo) -> GcResult:
    """``loopx gc``: everything into one pack, unreachable loose objects past the grace period
    pruned, a stale gc.log removed. Waits for a packer already running; refuses after a while."""
    from loopx_git.errors import ConflictError

    git_dir = git.common_dir
    with pack_lock(git_dir, wait=LOCK_WAIT_SECONDS) as held:
        if not held:
            raise ConflictError(
                f"another loopx process has been packing this repository for over {LOCK_WAIT_SECONDS:.0f} s",
                code="gc-busy",
                hint="try again when it is done",
            )
        before, unreachable_before = object_stats(git_dir), unreachable(git)
        removed = full_gc(git)
        warnings: tuple[str, ...] = ()
        try:
            _record(git_dir, loose=estimate_loose(git_dir), packs=0)
        except OSError as exc:  # the packing is done: a bookkeeping file that cannot be written only warns
            warnings = (
                f"could not record the packing in {_state_path(git_dir)} ({exc.strerror or exc}); the objects are "
                "packed, a later command may pack again",
            )
        return GcResult(before, object_stats(git_dir), unreachable_before, unreachable(git), removed, warnings)

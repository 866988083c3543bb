"""Keeping the object store small: libgit2 never packs, so loopx does, between writes."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from loopx_git.store.git import GitRepo

LOOSE_THRESHOLD = 2000
"""Pack once about this many loose objects exist (git's own gc.auto is 6700)."""


@dataclass(frozen=True)
class ObjectStats:
    loose_objects: int
    loose_bytes: int
    packs: int
    pack_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.loose_bytes + self.pack_bytes


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
            loose += 1
            loose_bytes += obj.stat().st_size
    for pack in (objects / "pack").glob("*.pack"):
        packs += 1
        pack_bytes += pack.stat().st_size + pack.with_suffix(".idx").stat().st_size
    return ObjectStats(loose, loose_bytes, packs, pack_bytes)


def pack(git: GitRepo, *, full: bool = False) -> None:
    """Pack loose objects (incrementally), or everything with ``full``; prune what packing made
    redundant. Runs between commands, never inside a write."""
    if full:
        git.run_git("gc", "--quiet")
    else:
        git.run_git("repack", "-d", "-q")
        git.run_git("prune-packed", "-q")
        git.run_git("gc", "--auto", "--quiet")  # merges packs once there are many


def maybe_pack(git: GitRepo, threshold: int = LOOSE_THRESHOLD) -> bool:
    if estimate_loose(git.git_dir) < threshold:
        return False
    pack(git)
    return True

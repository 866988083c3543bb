"""Packing without storms: one packer at a time, a bounded number of packs, lost-race objects
counted, kept through the grace period and pruned after it, and git's gc.log cleared or reported
(issue 9, item 6). The concurrency run itself is in benchmarks/concurrency.py."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from loopx_git.store import hygiene
from tests.conftest import GOAL, NOW, git


def unreachable_blobs(path: Path, count: int) -> list[str]:
    """``count`` loose blobs no ref reaches (what a write that lost a race leaves), chosen to land
    in the fan-out folder the loose-object estimate samples (``objects/17``), so the estimate sees
    them as it would see a few thousand."""
    made, n = [], 0
    while len(made) < count:
        data = f"lost race {n}\n".encode()
        n += 1
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith("17"):
            oid = (
                subprocess.run(
                    ["git", "-C", str(path), "hash-object", "-w", "--stdin"],
                    input=data,
                    capture_output=True,
                    check=True,
                )
                .stdout.decode()
                .strip()
            )
            made.append(oid)
    return made


def exists(path: Path, oid: str) -> bool:
    return subprocess.run(["git", "-C", str(path), "cat-file", "-e", oid], capture_output=True).returncode == 0


def hold_pack_lock(git_dir: Path) -> subprocess.Popen:
    """Another process holding the packing lock (an flock) until it is killed."""
    code = (
        "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
        "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(600)"
    )
    (git_dir / "loopx").mkdir(exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(git_dir / "loopx" / "pack.lock")], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_one_packer_at_a_time_and_a_dead_packers_lock_is_released(repo, git_repo):
    holder = hold_pack_lock(repo.git.git_dir)
    try:
        assert hygiene.maybe_pack(repo.git, threshold=0) is False  # someone else is packing
        assert hygiene.object_stats(repo.git.git_dir).packs == 0
    finally:
        holder.kill()
        holder.wait()
    assert hygiene.maybe_pack(repo.git, threshold=0) is True  # the kernel let go of a dead holder's lock
    assert hygiene.object_stats(repo.git.git_dir).packs >= 1


def test_lost_race_objects_do_not_make_every_command_pack_again(repo, git_repo):
    lost = unreachable_blobs(git_repo, 8)
    assert hygiene.estimate_loose(repo.git.git_dir) >= 8 * 256
    assert hygiene.maybe_pack(repo.git, threshold=1000) is True  # packs what it can; the rest is young
    packs = hygiene.object_stats(repo.git.git_dir).packs
    assert all(exists(git_repo, oid) for oid in lost), "kept through the grace period"
    for _ in range(3):  # nothing new arrived: no repack, no new pack
        assert hygiene.maybe_pack(repo.git, threshold=1000) is False
    assert hygiene.object_stats(repo.git.git_dir).packs == packs


def test_lost_race_objects_are_pruned_once_past_the_grace_period_and_not_before(repo, git_repo):
    old, young = unreachable_blobs(git_repo, 6), []
    three_hours_ago = time.time() - 3 * 3600
    for oid in old:  # written by writes that lost a race three hours ago
        os.utime(git_repo / ".git" / "objects" / oid[:2] / oid[2:], (three_hours_ago, three_hours_ago))
    n = 0
    while len(young) < 6:  # and a few just now
        data = f"lost just now {n}\n".encode()
        n += 1
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith("17"):
            young.append(
                subprocess.run(
                    ["git", "-C", str(git_repo), "hash-object", "-w", "--stdin"],
                    input=data,
                    capture_output=True,
                    check=True,
                )
                .stdout.decode()
                .strip()
            )
    assert hygiene.maybe_pack(repo.git, threshold=1000) is True
    assert not any(exists(git_repo, oid) for oid in old), "older than loopx.pruneExpire (1.hour.ago): pruned"
    assert all(exists(git_repo, oid) for oid in young), "younger: kept, still loose (their age kept)"
    assert all((git_repo / ".git" / "objects" / oid[:2] / oid[2:]).is_file() for oid in young)
    assert repo.verify().ok


def test_the_number_of_packs_stays_bounded(repo, git_repo):
    for round_ in range(40):
        for i in range(3):
            repo.event_append(GOAL, "note", summary=f"note {round_}.{i}", now=NOW)
        hygiene.maybe_pack(repo.git, threshold=0)
    stats = hygiene.object_stats(repo.git.git_dir)
    assert stats.packs <= hygiene.MAX_PACKS, stats  # 40 packs without the full gc
    assert repo.verify().ok


def test_doctor_reports_lost_race_objects_and_gc_prunes_them_after_the_grace_period(cli, git_repo):
    lost = unreachable_blobs(git_repo, 5)
    doctor = cli("doctor", "--offline", fmt="json")
    report = json.loads(doctor.out)
    assert report["unreachable_objects"] >= 5 and report["prune_expire"] == "1.hour.ago"
    kept = cli.json("gc")
    assert kept["unreachable_kept"] >= 5 and kept["unreachable_pruned"] == 0 and kept["packs"] == 1
    assert all(exists(git_repo, oid) for oid in lost)
    git(git_repo, "config", "loopx.pruneExpire", "now")
    pruned = cli.json("gc")
    assert pruned["unreachable_pruned"] >= 5 and pruned["unreachable_kept"] == 0
    assert not any(exists(git_repo, oid) for oid in lost)
    assert cli("verify").code == 0


def test_a_stale_gc_log_is_reported_by_doctor_and_removed_by_gc(cli, git_repo):
    assert cli("connect").code == 0 and cli("doctor", "--offline").code == 0
    log = git_repo / ".git" / "gc.log"
    log.write_text("warning: There are too many unreachable loose objects; run 'git prune' to remove them.\n")
    doctor = cli("doctor", "--offline", fmt="json")
    assert doctor.code == 1
    report = json.loads(doctor.out)
    assert report["gc_log"]["says"].startswith("warning: There are too many unreachable")
    assert any("gc.log" in problem and "loopx gc" in problem for problem in report["problems"])
    assert cli.json("gc")["gc_log_removed"] is True and not log.exists()
    assert cli("doctor", "--offline").code == 0


def test_locks_a_killed_git_gc_left_are_taken_away_once_old_and_gc_runs(cli, git_repo):
    assert cli("connect").code == 0
    git_dir = git_repo / ".git"
    (git_dir / "objects" / "info").mkdir(parents=True, exist_ok=True)
    left = [git_dir / name for name in hygiene.GIT_GC_LOCKS[:2]]
    for lock in left:
        lock.touch()
    fresh = cli("gc")  # a lock this young may be a live gc's: left alone, and git says what blocks it
    assert fresh.code == 1 and "packed-refs.lock" in fresh.err and "Traceback" not in fresh.err, fresh.err
    assert all(lock.exists() for lock in left)
    long_ago = time.time() - hygiene.STALE_GC_LOCK_SECONDS - 60
    for lock in left:
        os.utime(lock, (long_ago, long_ago))
    result = cli("gc")
    assert result.code == 0, result.err
    assert not any(lock.exists() for lock in left)


def test_gc_waits_for_a_running_packer_then_refuses(cli, git_repo, monkeypatch):
    monkeypatch.setattr(hygiene, "LOCK_WAIT_SECONDS", 0.3)
    holder = hold_pack_lock(git_repo / ".git")
    try:
        result = cli("gc")
        assert result.code == 1 and "error[gc-busy]" in result.err
    finally:
        holder.kill()
        holder.wait()
    assert cli("gc").code == 0


def test_a_linked_worktree_shares_the_object_store_the_caches_and_the_locks(repo, git_repo, tmp_path):
    import loopx_git
    from loopx_git.store.cache import VerifiedMark

    worktree = tmp_path / "second-worktree"
    git(git_repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    other = loopx_git.open(worktree)
    assert other.git.git_dir != repo.git.git_dir and other.git.common_dir == repo.git.common_dir.resolve()
    other.todo_add(GOAL, "from the second worktree", now=NOW)
    other.close()
    assert VerifiedMark(repo.git.common_dir, "refs/heads/loopx/state").load() == repo.tip
    assert not (other.git.git_dir / "loopx").exists(), "no second set of caches and locks"
    stats = hygiene.object_stats(other.git.common_dir)
    assert stats.loose_objects > 0 and stats == hygiene.object_stats(repo.git.common_dir)

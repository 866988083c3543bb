"""Packing without storms: one packer at a time, a bounded number of packs, lost-race objects
counted, kept through the grace period and pruned after it, and git's gc.log cleared or reported
(issue 9, item 6). The concurrency run itself is in benchmarks/concurrency.py."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
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
            oid = subprocess.run(["git", "-C", str(path), "hash-object", "-w", "--stdin"], input=data,
                                 capture_output=True, check=True).stdout.decode().strip()  # fmt: skip
            made.append(oid)
    return made


def exists(path: Path, oid: str) -> bool:
    return subprocess.run(["git", "-C", str(path), "cat-file", "-e", oid], capture_output=True).returncode == 0


def test_one_packer_at_a_time_and_a_dead_packers_lock_is_taken_over(repo, git_repo):
    lock = repo.git.git_dir / "loopx" / "pack.lock"
    lock.parent.mkdir(exist_ok=True)
    lock.write_text("12345\n")
    assert hygiene.maybe_pack(repo.git, threshold=0) is False  # someone else is packing
    assert hygiene.object_stats(repo.git.git_dir).packs == 0
    old = time.time() - hygiene.STALE_LOCK_SECONDS - 5
    os.utime(lock, (old, old))
    assert hygiene.maybe_pack(repo.git, threshold=0) is True
    assert hygiene.object_stats(repo.git.git_dir).packs >= 1 and not lock.exists()


def test_lost_race_objects_do_not_make_every_command_pack_again(repo, git_repo):
    lost = unreachable_blobs(git_repo, 8)
    assert hygiene.estimate_loose(repo.git.git_dir) >= 8 * 256
    assert hygiene.maybe_pack(repo.git, threshold=1000) is True  # packs what it can; the rest is young
    packs = hygiene.object_stats(repo.git.git_dir).packs
    assert all(exists(git_repo, oid) for oid in lost), "kept through the grace period"
    for _ in range(3):  # nothing new arrived: no repack, no new pack
        assert hygiene.maybe_pack(repo.git, threshold=1000) is False
    assert hygiene.object_stats(repo.git.git_dir).packs == packs


def test_every_few_packs_a_full_gc_prunes_lost_races_past_the_grace_period(repo, git_repo, monkeypatch):
    monkeypatch.setattr(hygiene, "FULL_EVERY", 2)
    young = unreachable_blobs(git_repo, 4)
    assert hygiene.maybe_pack(repo.git, threshold=0) is True  # a geometric pack: they are packed, kept
    assert hygiene.maybe_pack(repo.git, threshold=0) is True  # the full one: younger than an hour, kept
    assert all(exists(git_repo, oid) for oid in young)
    git(git_repo, "config", "loopx.pruneExpire", "now")
    assert hygiene.maybe_pack(repo.git, threshold=0) is True
    assert hygiene.maybe_pack(repo.git, threshold=0) is True  # the full one, with no grace left
    assert not any(exists(git_repo, oid) for oid in young)
    assert repo.verify().ok


def test_the_number_of_packs_stays_bounded(repo, git_repo):
    for round_ in range(40):
        for i in range(3):
            repo.event_append(GOAL, "note", summary=f"note {round_}.{i}", now=NOW)
        hygiene.maybe_pack(repo.git, threshold=0)
    stats = hygiene.object_stats(repo.git.git_dir)
    assert stats.packs <= 10, stats  # 40 packs without geometric repacking
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


def test_gc_waits_for_a_running_packer_then_refuses(cli, git_repo, monkeypatch):
    monkeypatch.setattr(hygiene, "LOCK_WAIT_SECONDS", 0.3)
    lock = git_repo / ".git" / "loopx" / "pack.lock"
    lock.parent.mkdir(exist_ok=True)
    lock.write_text("12345\n")
    result = cli("gc")
    assert result.code == 1 and "error[gc-busy]" in result.err
    lock.unlink()
    assert cli("gc").code == 0

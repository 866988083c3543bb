"""Crash safety (issue 16, item 3): a writer killed with SIGKILL anywhere, including between its
object writes and the ref update, during `loopx gc` and during `loopx sync`, leaves a repository
that `git fsck` and `loopx verify` pass, holding every acknowledged write once, and whose next write
succeeds (the ref lock a killed writer leaves is taken away); a full disk and a read-only
repository are refused with a clear error, no traceback, the ref where it was, and writes resume
once space is back. The full campaign (1000 kills) is benchmarks/crash.py."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import GOAL, state_tip
from tests.store import crash_campaign

KILLS = 12


def test_a_short_crash_campaign_leaves_every_repository_sound(tmp_path):
    weights = {"api": 0.3, "cli": 0.1, "ref-window": 0.2, "gc": 0.2, "sync": 0.2}
    done = crash_campaign.run(tmp_path, KILLS, seed=16, weights=weights, per_repo=KILLS, cli_verify_every=4, window=2.0)

    assert done.problems == []
    assert {k.kind for k in done.kills} == set(crash_campaign.KINDS)
    assert done.acked > 0 and done.checked >= done.acked
    # the deliberate kills landed in the window: the commit written, its ref lock held, not renamed
    held = [k for k in done.kills if k.kind == "ref-window" and k.phase == "ref-lock held"]
    assert held and all(k.leftovers.get("lock file refs/heads/loopx/state.lock") == 1 for k in held)
    assert not any("lock file refs/heads/loopx/state.lock" in k.healed for k in done.kills)


def test_a_killed_writers_ref_lock_is_taken_away_by_the_next_write(repo, git_repo):
    lock = git_repo / ".git" / "refs" / "heads" / "loopx" / "state.lock"
    lock.touch()
    old = time.time() - 60
    os.utime(lock, (old, old))
    before = state_tip(git_repo)

    result = repo.event_append(GOAL, "note", agent_id="alice", summary="after the crash")

    assert result.changed and state_tip(git_repo) == result.commit != before
    assert not lock.exists()


def test_a_live_ref_lock_is_waited_for_not_taken(git_repo):
    from loopx_git.store.writelock import clear_stale_ref_lock

    lock = git_repo / ".git" / "refs" / "heads" / "loopx" / "state.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.touch()
    other_git = threading.Timer(0.3, lock.unlink)  # a git process done with its update
    other_git.start()
    try:
        assert clear_stale_ref_lock(git_repo / ".git", "refs/heads/loopx/state", stale=30) is False
    finally:
        other_git.join()
    assert not lock.exists()


def test_a_ref_lock_kept_fresh_is_never_taken(git_repo):
    from loopx_git.store.writelock import clear_stale_ref_lock

    lock = git_repo / ".git" / "refs" / "heads" / "loopx" / "state.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.touch()
    busy = threading.Event()

    def busy_git() -> None:  # a git process updating the ref over and over
        while not busy.wait(0.05):
            os.utime(lock)

    toucher = threading.Thread(target=busy_git)
    toucher.start()
    try:
        # kept young every 50 ms; the bound leaves room for a loaded machine to pause this thread
        assert clear_stale_ref_lock(git_repo / ".git", "refs/heads/loopx/state", stale=2.0) is False
    finally:
        busy.set()
        toucher.join()
    assert lock.exists()


def test_a_git_lock_is_taken_only_once_stale_and_without_waiting_when_asked(tmp_path):
    from loopx_git.store.writelock import clear_stale_lock

    left, fresh = tmp_path / "commit-graph.lock", tmp_path / "packed-refs.lock"
    for lock in (left, fresh):
        lock.touch()
    long_ago = time.time() - 120
    os.utime(left, (long_ago, long_ago))

    assert clear_stale_lock(left, stale=60, wait=False) is True
    assert clear_stale_lock(fresh, stale=60, wait=False) is False
    assert not left.exists() and fresh.exists()


def loopx(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        crash_campaign.loopx_argv(path, *args), capture_output=True, text=True, env=crash_campaign.child_env()
    )


def append(path: Path, summary: str) -> subprocess.CompletedProcess[str]:
    return loopx(
        path,
        "event",
        "append",
        "--goal-id",
        crash_campaign.GOAL,
        "--kind",
        "note",
        "--agent-id",
        "w",
        "--summary",
        summary,
    )


def assert_sound(path: Path, tip: str) -> None:
    assert state_tip(path) == tip
    fsck = crash_campaign.git(path, "fsck", "--strict", "--no-dangling", check=False)
    assert fsck.returncode == 0, fsck.stderr
    verify = loopx(path, "verify")
    assert verify.returncode == 0, verify.stderr


def mounted(kind: str, where: Path, *options: str) -> None:
    if os.geteuid() != 0:
        pytest.skip(f"a {kind} needs root to mount")
    done = subprocess.run(["mount", *options, str(where)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a {kind} here: {done.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted("tmpfs", disk, "-t", "tmpfs", "-o", "size=3m", "tmpfs")
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` to the last byte, then give back ``leave`` bytes."""
    ballast = disk / "ballast"
    with open(ballast, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    with open(ballast, "r+b") as out:
        out.truncate(max(0, ballast.stat().st_size - leave))
    return ballast


@pytest.mark.parametrize(
    ("leave", "command"),
    [
        (0, ("event", "append", "--goal-id", "crash", "--kind", "note", "--agent-id", "w", "--summary", "no room")),
        (48 * 1024, ("todo", "add", "--goal-id", "crash", "--text", "no room")),
    ],
    ids=["no-byte-left", "a-few-kib-left"],
)
def test_a_full_disk_refuses_the_write_clearly_and_writes_resume_when_space_is_back(small_disk, leave, command):
    path, _ = crash_campaign.make_repo(small_disk / "project")
    tip = state_tip(path)
    ballast = fill(small_disk, leave)

    write = loopx(path, *command)
    if write.returncode == 0 and leave:  # a few KiB may be enough after all: then the write landed whole
        tip = state_tip(path)
    else:
        assert write.returncode == 1, write.stderr
        assert "No space left on device" in write.stderr and "Traceback" not in write.stderr
        assert write.stderr.startswith(("error[write-failed]", "error[commit-failed]")) and "hint: " in write.stderr
    assert_sound(path, tip)

    ballast.unlink()
    resumed = append(path, "room again")
    assert resumed.returncode == 0, resumed.stderr
    assert_sound(path, state_tip(path))


@pytest.fixture
def read_only(tmp_path):
    """A connected project, and the same project seen through a read-only bind mount."""
    path, _ = crash_campaign.make_repo(tmp_path / "project")
    view = tmp_path / "read-only"
    view.mkdir()
    mounted("read-only bind mount", view, "--bind", str(path))
    remounted = subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], capture_output=True, text=True)
    if remounted.returncode != 0:
        subprocess.run(["umount", str(view)], check=False)
        pytest.skip(f"cannot make the bind mount read-only: {remounted.stderr.strip()}")
    yield path, view
    subprocess.run(["umount", "-l", str(view)], check=False)


def test_a_read_only_repository_refuses_writes_clearly_and_still_reads(read_only):
    path, view = read_only
    tip = state_tip(path)

    write = loopx(view, "todo", "add", "--goal-id", "crash", "--text", "read only")
    assert write.returncode == 1, write.stderr
    assert "Read-only file system" in write.stderr and "Traceback" not in write.stderr
    assert write.stderr.startswith("error[write-failed]")
    status = loopx(view, "--format", "json", "status", "--goal-id", "crash")
    assert status.returncode == 0, status.stderr
    assert_sound(view, tip)
    assert append(path, "writable again").returncode == 0


def test_a_cache_save_removes_what_a_save_killed_long_ago_left(tmp_path):
    from loopx_git.store.cache import FoldCache

    cache = FoldCache(tmp_path, "refs/heads/loopx/state", "v1")
    cache.path.parent.mkdir(parents=True)
    killed = cache.path.with_name(f".{cache.path.name}-old1234")
    saving = cache.path.with_name(f".{cache.path.name}-now5678")  # another process's save in progress
    for leftover in (killed, saving):
        leftover.write_bytes(b"half a pickle")
    hours_ago = time.time() - 7200
    os.utime(killed, (hours_ago, hours_ago))

    cache.save("a" * 40, {"state": 1})

    assert cache.load() == ("a" * 40, {"state": 1})
    assert not killed.exists() and saving.exists()


def test_a_sync_that_finds_the_ref_locked_is_refused_clearly_and_heals_once_the_lock_is_left(tmp_path):
    path, _ = crash_campaign.make_repo(tmp_path / "project")
    assert loopx(path, "sync").returncode == 0
    crash_campaign.git(path, "update-ref", "refs/heads/loopx/state", state_tip(path) + "~1")
    behind = state_tip(path)  # the remote is ahead: the sync fast-forwards, with git update-ref
    lock = path / ".git" / "refs" / "heads" / "loopx" / "state.lock"
    lock.touch()
    busy = threading.Event()

    def busy_git() -> None:  # a live git updating the ref over and over: its lock is never stale
        while not busy.wait(0.05):
            os.utime(lock)

    toucher = threading.Thread(target=busy_git)
    toucher.start()
    try:
        refused = loopx(path, "sync")
    finally:
        busy.set()
        toucher.join()

    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.startswith("error[ref-moved]") and "Traceback" not in refused.stderr
    assert f"hint: if no other git or loopx process is running, one that crashed left {lock} behind" in refused.stderr
    assert state_tip(path) == behind
    # its git gone, the lock is a left one: the next sync takes it away once stale and fast-forwards
    assert loopx(path, "sync").returncode == 0
    assert state_tip(path) != behind and not lock.exists()

"""Many writers on one clone: every write acknowledged exactly once, packs bounded, throughput held,
lost-race objects counted and then pruned by `loopx gc` (issue 9, item 6).

    python benchmarks/concurrency.py [--api 8] [--api-writes 300] [--cli 4] [--cli-writes 50]

8 API writer processes (each opening a handle per 25 writes, as an agent loop does, so each close
packs when due) and 4 CLI writers (one `loopx event append` process per write) append notes to one
goal at once. Afterwards it checks the branch (every acknowledged event present once, nothing else,
`loopx verify` clean), and prints: the packs and loose objects left, throughput early and late in
the window when every writer is running, each API writer's first 50 writes against its last 50,
the unreachable objects lost races left (`loopx doctor`), and what `loopx gc` pruned with the
default grace period and then with `loopx.pruneExpire=now`. The baseline, in the same run, is one
writer alone doing the same API writes. CPU seconds of every process are printed beside wall time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORK = Path(__file__).resolve().parent / ".work"
GOAL = "busy"
HANDLE_EVERY = 25


def fresh_repo(name: str) -> Path:
    path = WORK / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "bench"],
        ["config", "user.email", "bench@example.invalid"],
        ["commit", "-q", "--allow-empty", "-m", "init"],
    ):
        subprocess.run(["git", "-C", str(path), *args], check=True)
    return path


def loopx(path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "loopx_git", "--repo", str(path), *args], capture_output=True, text=True
    )


def unlock_if_asked(no_lock: bool) -> None:
    """``--no-lock``: compare-and-swap alone, as before the clone's write lock (the baseline)."""
    if no_lock:
        from loopx_git.store import writelock

        writelock.ENABLED = False


def api_writer(path: str, name: str, writes: int, start, out, no_lock: bool = False) -> None:
    import loopx_git

    unlock_if_asked(no_lock)
    from loopx_git.errors import ConflictError

    start.wait()
    acks, refused, handle = [], 0, None
    for i in range(writes):
        if handle is None:
            handle = loopx_git.open(path)
        try:
            event_id = handle.event_append(GOAL, "note", agent_id=name, summary=f"{name} {i}").event_ids[0]
        except ConflictError:  # gave up after its retries: refused, so not acknowledged
            refused += 1
            continue
        acks.append((name, event_id, time.time()))
        if (i + 1) % HANDLE_EVERY == 0:
            handle.close()  # what an agent loop's next iteration would do: the cache saved, packing when due
            handle = None
    if handle is not None:
        handle.close()
    out.put((acks, refused))


def cli_writer(path: str, name: str, writes: int, start, out, no_lock: bool = False) -> None:
    start.wait()
    acks, refused = [], 0
    unlock = [
        "-c",
        "import runpy, sys; from loopx_git.store import writelock; writelock.ENABLED = False; "
        "sys.argv = ['loopx', *sys.argv[1:]]; runpy.run_module('loopx_git', run_name='__main__')",
    ]
    for i in range(writes):
        args = [
            "--repo",
            path,
            "--format",
            "json",
            "event",
            "append",
            "--goal-id",
            GOAL,
            "--kind",
            "note",
            "--agent-id",
            name,
            "--summary",
            f"{name} {i}",
        ]
        command = [sys.executable, *(unlock if no_lock else ["-m", "loopx_git"]), *args]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode == 1 and "error[conflict]" in done.stderr:
            refused += 1  # gave up after its retries: not acknowledged
            continue
        if done.returncode != 0:
            raise SystemExit(f"{name} write {i} failed: {done.stderr}")
        acks.append((name, json.loads(done.stdout)["event_ids"][0], time.time()))
    out.put((acks, refused))


def prepare(path: Path, agents: list[str]) -> None:
    import loopx_git

    with loopx_git.open(path) as repo:
        repo.connect()
        repo.goal_create(GOAL, "many writers at once")
        for agent in agents:
            repo.agent_register(GOAL, agent)


def run_writers(
    path: Path, api: int, api_writes: int, cli: int, cli_writes: int, no_lock: bool = False
) -> tuple[list, int, float, float]:
    ctx = multiprocessing.get_context("spawn")
    names = [(f"api{i}", api_writer, api_writes) for i in range(api)] + [
        (f"cli{i}", cli_writer, cli_writes) for i in range(cli)
    ]
    start, out = ctx.Barrier(len(names) + 1), ctx.Queue()
    procs = [ctx.Process(target=fn, args=(str(path), name, n, start, out, no_lock)) for name, fn, n in names]
    for proc in procs:
        proc.start()
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start.wait()
    began = time.time()
    acks, refused = [], 0
    for _ in procs:
        mine, lost = out.get(timeout=3600)
        acks += mine
        refused += lost
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise SystemExit(f"a writer failed (exit {proc.exitcode})")
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    return acks, refused, time.time() - began, cpu


def rate(times: list[float]) -> float:
    return (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else float("nan")


def count_packs(path: Path) -> int:
    return len(list((path / ".git" / "objects" / "pack").glob("*.pack")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", type=int, default=8)
    parser.add_argument("--api-writes", type=int, default=300)
    parser.add_argument("--cli", type=int, default=4)
    parser.add_argument("--cli-writes", type=int, default=50)
    parser.add_argument("--no-lock", action="store_true", help="compare-and-swap alone, without the clone's write lock")
    args = parser.parse_args()

    import loopx_git

    baseline = fresh_repo("concurrency-baseline")
    prepare(baseline, ["api0"])
    base_acks, _, base_wall, base_cpu = run_writers(baseline, 1, args.api_writes, 0, 0)
    base_rate = len(base_acks) / base_wall

    path = fresh_repo("concurrency")
    agents = [f"api{i}" for i in range(args.api)] + [f"cli{i}" for i in range(args.cli)]
    prepare(path, agents)
    acks, refused, wall, cpu = run_writers(path, args.api, args.api_writes, args.cli, args.cli_writes, args.no_lock)

    repo = loopx_git.open(path)
    notes = repo.events(GOAL, kind="note")
    acked = [event_id for _, event_id, _ in acks]
    on_branch = [e.event_id for e in notes]
    exactly_once = sorted(acked) == sorted(on_branch) and len(set(on_branch)) == len(on_branch)
    by_id = {e.event_id: e for e in notes}
    summaries_ok = all(by_id[event_id].agent_id == name for name, event_id, _ in acks if event_id in by_id)
    report = repo.verify()
    repo.close()

    # throughput while every writer is still running: first quarter of that window against its last
    ends = {}
    for name, _, t in acks:
        ends[name] = max(ends.get(name, 0.0), t)
    all_running_until = min(ends.values())
    window = sorted(t for _, _, t in acks if t <= all_running_until)
    quarter = max(2, len(window) // 4)
    early, late = rate(window[:quarter]), rate(window[-quarter:])
    per_writer = []
    for name in (a for a in agents if a.startswith("api")):
        times = sorted(t for n, _, t in acks if n == name)
        per_writer.append(rate(times[-50:]) / rate(times[:50]))

    doctor = json.loads(loopx(path, "--format", "json", "doctor", "--offline").stdout)
    gc_default = json.loads(loopx(path, "--format", "json", "gc").stdout)
    subprocess.run(["git", "-C", str(path), "config", "loopx.pruneExpire", "now"], check=True)
    gc_now = json.loads(loopx(path, "--format", "json", "gc").stdout)
    verify_after = loopx(path, "verify").returncode == 0

    lines = [
        f"writers: {args.api} API x {args.api_writes} + {args.cli} CLI x {args.cli_writes} = {len(acks)} writes"
        f"{' (compare-and-swap only, no write lock)' if args.no_lock else ''}; "
        f"wall {wall:.1f} s, CPU {cpu:.1f} s (all processes)",
        f"baseline, one API writer alone: {len(base_acks)} writes, {base_rate:.1f} writes/s (wall {base_wall:.1f} s, CPU {base_cpu:.1f} s)",
        f"acknowledged exactly once: {exactly_once} ({len(acked)} acked, {len(on_branch)} on the branch, {refused} refused "
        f"after the retry budget); "
        f"summaries as written: {summaries_ok}; verify ok: {report.ok}",
        f"throughput, all {len(agents)} writers running: first quarter {early:.1f} writes/s, last quarter {late:.1f} writes/s "
        f"(late/early {late / early:.2f}); aggregate {len(acks) / wall:.1f} writes/s "
        f"= {len(acks) / wall / base_rate:.2f}x the single writer",
        f"each API writer, last 50 writes / first 50 (rate): median {statistics.median(per_writer):.2f}, "
        f"min {min(per_writer):.2f}",
        f"at the end: {doctor['packs']} packs, {doctor['loose_objects']} loose objects, "
        f"{doctor['unreachable_objects']} unreachable (lost races) by doctor",
        f"loopx gc (grace {gc_default['prune_expire']}): pruned {gc_default['unreachable_pruned']}, kept "
        f"{gc_default['unreachable_kept']}; with loopx.pruneExpire=now: pruned {gc_now['unreachable_pruned']}, kept "
        f"{gc_now['unreachable_kept']}; {gc_now['packs']} pack(s) after; verify ok after: {verify_after}",
    ]
    with open(WORK / f"concurrency{'-no-lock' if args.no_lock else ''}.json", "w") as out:
        json.dump(
            {
                "writes": len(acks) + refused,
                "acked": len(acked),
                "refused": refused,
                "wall_s": wall,
                "cpu_s": cpu,
                "baseline_writes_per_s": base_rate,
                "early_writes_per_s": early,
                "late_writes_per_s": late,
                "per_writer_late_over_early": per_writer,
                "doctor": doctor,
                "gc_default": gc_default,
                "gc_now": gc_now,
                "exactly_once": exactly_once,
                "verify_ok": report.ok,
            },
            out,
            indent=2,
        )
    print("\n".join(lines))
    ok = exactly_once and summaries_ok and report.ok and doctor["packs"] <= 10 and late >= early / 2 and verify_after
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    os.environ.setdefault("GIT_TERMINAL_PROMPT", "0")
    main()

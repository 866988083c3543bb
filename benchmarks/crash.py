"""Crash safety (issue 16, item 3): at least 1000 writers killed with SIGKILL, checked after each.

    python benchmarks/crash.py [--kills 1000] [--jobs 2] [--seed 16] [--per-repo 100] [--cli-verify-every 10]

The campaign is tests/store/crash_campaign.py (the suite runs a short one, tests/store/test_crash.py):
writers (the Python API, and whole ``loopx`` processes) killed at seeded random times, killed
deliberately between the object writes and the ref update (the reflog swapped for a FIFO holds
the writer there), ``loopx gc`` and ``loopx sync`` to a bare remote killed part-way (with their git
children, or alone). After each kill: ``git fsck --strict`` (dangling objects expected, not
shown), ``loopx verify`` (a process every ``--cli-verify-every`` kills, the same check through the
API otherwise), every acknowledged write present exactly once, the next write timed; after a gc or
sync kill, the next gc or sync too. Prints the kills by kind and by what was running when they
landed, what they left behind and whether the next write cleared it, the acknowledged writes
checked, the failures, wall and CPU time; writes the same as JSON to ``.work/crash.json`` (and
each job's to ``.work/crash-<job>.json`` after every kill, so an interrupted run still has its
figures). ``--jobs`` campaigns run side by side, each on its own repositories with its own seed
(seed + job): the kill times are wall-clock offsets, so a loaded machine only moves where they land.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.store import crash_campaign  # noqa: E402 - after the checkout is on the path

OUT = HERE / ".work" / "crash.json"


def hermetic(home: Path) -> None:
    """Identity pinned and no user or system git config: the campaign's repositories only."""
    os.environ.update(
        HOME=str(home),
        GIT_CONFIG_GLOBAL=str(home / "gitconfig"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Crash Test",
        GIT_AUTHOR_EMAIL="crash@example.invalid",
        GIT_COMMITTER_NAME="Crash Test",
        GIT_COMMITTER_EMAIL="crash@example.invalid",
    )
    for var in ("GIT_DIR", "LOOPX_GOAL_ID", "LOOPX_AGENT_ID"):
        os.environ.pop(var, None)


def summary(kills: list, began: float, cpu: float, acked: int, checked: int, repos: int) -> dict:
    by_kind = collections.Counter(k.kind for k in kills)
    phases: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    left: collections.Counter = collections.Counter()
    healed: collections.Counter = collections.Counter()
    for k in kills:
        phases[f"{k.kind} ({k.how})"][k.phase] += 1
        for name in k.leftovers:
            left[name] += 1
        for name in k.healed:
            healed[name] += 1
    waits = [k.next_write_seconds for k in kills]
    after_lock = [k.next_write_seconds for k in kills if any("state.lock" in n for n in k.leftovers)]
    return {
        "kills": len(kills),
        "by_kind": dict(by_kind),
        "phase_at_kill": {kind: dict(c) for kind, c in sorted(phases.items())},
        "acknowledged_writes": acked,
        "acknowledged_checks": checked,
        "repositories": repos,
        "left_after_kill": dict(left),
        "still_there_after_next_write": dict(healed),
        "next_write_seconds_median": round(statistics.median(waits), 3) if waits else None,
        "next_write_seconds_max": round(max(waits), 3) if waits else None,
        "next_write_after_stale_ref_lock_median": round(statistics.median(after_lock), 3) if after_lock else None,
        "failures": [f"kill {n} ({k.kind}): {p}" for n, k in enumerate(kills) for p in k.problems],
        "wall_seconds": round(time.monotonic() - began, 1),
        "cpu_seconds": round(cpu, 1),
    }


def job(number: int, args: argparse.Namespace, work: Path) -> crash_campaign.Campaign:
    hermetic(work / "home")
    began, kills, cpu0 = time.monotonic(), [], crash_campaign._cpu()
    out = OUT.with_name(f"crash-{number}.json")

    def progress(n: int, kill) -> None:
        kills.append(kill)
        figures = summary(kills, began, crash_campaign._cpu() - cpu0, sum(k.acks for k in kills), 0, 0)
        out.write_text(json.dumps(figures, indent=2) + "\n")
        if n % 25 == 0 or kill.problems:
            print(
                f"job {number}: {n} kills, {figures['acknowledged_writes']} acknowledged writes, "
                f"{len(figures['failures'])} failures",
                flush=True,
            )
            for problem in kill.problems:
                print(f"  {kill.kind}: {problem}", flush=True)

    share = args.kills // args.jobs + (1 if number < args.kills % args.jobs else 0)
    return crash_campaign.run(
        work / f"job{number}",
        share,
        seed=args.seed + number,
        per_repo=args.per_repo,
        cli_verify_every=args.cli_verify_every,
        progress=progress,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--per-repo", type=int, default=100)
    parser.add_argument("--cli-verify-every", type=int, default=10)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="loopx-crash-"))
    (work / "home").mkdir()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    try:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            done = pool.starmap(job, [(n, args, work) for n in range(args.jobs)])
        kills = [k for campaign in done for k in campaign.kills]
        figures = summary(
            kills,
            began,
            sum(c.cpu_seconds for c in done),
            sum(c.acked for c in done),
            sum(c.checked for c in done),
            sum(c.repos for c in done),
        )
        figures["jobs"] = args.jobs
        figures["command"] = " ".join(["python3 benchmarks/crash.py", *sys.argv[1:]])
        OUT.write_text(json.dumps(figures, indent=2) + "\n")
        print(json.dumps(figures, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

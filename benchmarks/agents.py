"""Many agents racing through one server, longer than the suite's run (issue 16, item 2).

    python3 benchmarks/agents.py                          # 16 agents x 200 steps, 20 shared todos
    python3 benchmarks/agents.py --agents 32 --steps 100  # wider
    python3 benchmarks/agents.py --steps 40 --seed 16     # the suite's run (tests/sync/test_many_agents.py)

Needs the test extra (pip install -e '.[test]'): the driver imports the test helpers.
Each agent is a process on its own clone; they meet through a real ``git daemon`` on 127.0.0.1. The
driver and the rules checked afterwards are tests/sync/swarm.py, shared with the suite. Prints the
outcome of every kind of step, time per step (median and 95th percentile, wall), sync retries,
claims won and refused, and the CPU time of the whole run beside its wall time."""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.sync.swarm: the shared driver

from tests.sync import swarm
from tests.sync.helpers import git_daemon


def hermetic(home: Path) -> None:
    """Never read the user's git configuration; a fixed identity, as in the test suite."""
    home.mkdir()
    os.environ.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / "gitconfig"), GIT_CONFIG_NOSYSTEM="1")
    for var in ("AUTHOR", "COMMITTER"):
        os.environ[f"GIT_{var}_NAME"] = "Bench Agent"
        os.environ[f"GIT_{var}_EMAIL"] = "bench@example.invalid"


def cpu_seconds() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def report(figures: swarm.Figures, cpu: float, failures: list[str], args: argparse.Namespace) -> str:
    lines = [
        f"{figures.agents} agents x {args.steps} steps, {args.pool} shared todos, seed {args.seed}: "
        f"{figures.wall:.0f} s wall, {cpu:.0f} s CPU (the agents' processes and the git they ran; "
        "the server's side not counted)",
        "",
        "| step | count | outcomes | median ms | p95 ms |",
        "| --- | --- | --- | --- | --- |",
    ]
    for kind, outcomes in figures.by_kind.items():
        if not outcomes:
            continue
        said = ", ".join(f"{o} {n}" for o, n in sorted(outcomes.items()))
        median, p95 = figures.step_ms[kind]
        lines.append(f"| {kind} | {sum(outcomes.values())} | {said} | {median:.0f} | {p95:.0f} |")
    lines += [
        "",
        f"sync retries (pushes lost to another clone, merged and tried again): {figures.retries}; "
        f"claims won {figures.claims_won}, refused {figures.claims_refused}",
        "checks: " + ("all held" if not failures else f"{len(failures)} FAILED: {failures[:5]}"),
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--pool", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loopx-agents-") as tmp:
        root = Path(tmp)
        hermetic(root / "home")
        phases: dict[str, float] = {}
        with git_daemon(root / "served") as url:
            mark = time.perf_counter()
            paths = swarm.seed_clones(root / "clones", url, args.agents, args.pool)
            seeded = swarm.seeded_events(paths[0])
            cpu, started = cpu_seconds(), time.perf_counter()
            phases["seed"] = started - mark
            logs = swarm.run_swarm(paths, args.seed, args.steps, timeout=3 * 3600)
            wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
            mark = time.perf_counter()
            swarm.settle(paths)
            phases["settle"] = time.perf_counter() - mark
            failures = swarm.check(root / "served" / "project.git", paths, seeded, logs, verify_all=True)
            phases["check"] = time.perf_counter() - mark - phases["settle"]
    print(report(swarm.figures(logs, wall), cpu, failures, args))
    print("other phases (wall s): " + ", ".join(f"{k} {v:.1f}" for k, v in phases.items()))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

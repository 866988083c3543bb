"""The operator projections of issue 13 at 10k todos / 100k events, as whole processes.

    python benchmarks/projections.py [--quick] [--samples N]

Seeds (or reuses) one repository as startup.py does — 10k todos (half done) and 100k events, plus
40 gates and a registered agent — installs loopx from this checkout into benchmarks/.work/venv-now,
and times whole processes interleaved, CPU (user + system of the child) beside wall, medians:

- warm: ``loopx status`` and each projection (``quota should-run``, ``review-packet``, ``manager``,
  ``todo index``, and the per-todo scans ``view todo T --include-task-graph`` and ``events -t T``)
  asked again at an unchanged tip — what an agent loop pays every turn; the target is
  each projection at most twice ``status`` in the same run;
- cold: the first ask after a write (a note appended before each sample), when the fold is read and
  the answer computed.

Also prints the size of each projection's JSON (target ≤ 16 KiB).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402 - the seeding of bench.py, from this folder
import startup  # noqa: E402 - its venv and timing helpers

PROJECTIONS = {
    "quota should-run": ["quota", "should-run", "-a", "bench-agent"],
    "review-packet": ["review-packet"],
    "manager": ["manager"],
    "todo index": ["todo", "index"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2k todos / 20k events, fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    args = parser.parse_args()
    n = args.samples or (5 if args.quick else 11)
    todos, events = (2_000, 20_000) if args.quick else (10_000, 100_000)
    startup.WORK.mkdir(exist_ok=True)
    loopx = str(startup.venv("venv-now", startup.ROOT) / "loopx")
    repo = bench.fresh_repo("projections")
    bench.seed(repo, todos=todos, events=events)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([loopx, *argv], cwd=repo, check=True, capture_output=True, text=True)

    run("agent", "register", "-a", "bench-agent")
    open_todos = [t["todo_id"] for t in json.loads(run("--format", "json", "todo", "list").stdout)[:40]]
    for i, todo in enumerate(open_todos):
        run(
            "gate", "open", "--gate-id", f"gate-{i}", "--owner-class", "user", "--blocks", todo, "--question", f"q {i}?"
        )
    print(f"seeded {todos} todos, {events} events, {len(open_todos)} gates", flush=True)

    # the per-todo reads that scan the event files themselves (no answers kept by tip)
    scans = {
        "view todo": ["view", "todo", open_todos[0], "--include-task-graph"],
        "events -t": ["events", "-t", open_todos[0]],
    }
    asked = {**PROJECTIONS, **scans}
    sizes = {name: len(run("--format", "json", *argv).stdout.encode()) for name, argv in asked.items()}
    sizes["status"] = len(run("--format", "json", "status").stdout.encode())
    warm = startup.sample(
        {"status": [loopx, "status"], **{name: [loopx, *argv] for name, argv in asked.items()}}, repo, n
    )
    base_cpu = warm["status"][1]
    print(f"\nwarm (unchanged tip), median of {n}: wall / CPU ms, ratio of CPU to status")
    for name, (wall, cpu) in warm.items():
        size = f"   JSON {sizes[name] / 1024:5.1f} KiB" if name in sizes else ""
        print(f"  {name:18} {wall:6.0f} / {cpu:5.0f}   x{cpu / base_cpu:4.2f}{size}")
    cold = {}
    for name, argv in {"status": ["status"], **PROJECTIONS}.items():
        cases = {"write": [loopx, "event", "append", "--kind", "note", "--summary", "tick {i}"], name: [loopx, *argv]}
        cold[name] = startup.sample(cases, repo, max(3, n // 2))[name]
    print(f"\ncold (first ask after a write), median of {max(3, n // 2)}: wall / CPU ms, ratio of CPU to status")
    for name, (wall, cpu) in cold.items():
        print(f"  {name:18} {wall:6.0f} / {cpu:5.0f}   x{cpu / cold['status'][1]:4.2f}")


if __name__ == "__main__":
    main()

"""quota should-run with a replan context over a long run history (issue 14), as whole processes.

    python benchmarks/replan.py [--quick] [--samples N]

Seeds one repository with 100k run records of one agent (typed progress on most of them, surfaces
varied, the last two identical ``unchanged`` runs: a replan obligation is open) and the same number of
events, in batches through the real write path; installs loopx from this checkout into
benchmarks/.work/venv-now and times whole processes interleaved, CPU of the child beside wall,
medians:

- warm: ``status`` and ``quota should-run -a A`` asked again at an unchanged tip (the target: should-run
  with its replan context at most twice status in the same run);
- cold: the first ask after a write by another agent (a note appended before each sample): the
  agent's evidence index kept under .git/loopx/ is extended by what the write added (nothing of the
  agent's here) and the context reads the runs it shows;
- rebuild: the same with no index kept (the first ask in a clone, or after an upgrade of loopx): the
  index is built from all of the agent's runs (``from_full_index``).

Also prints the size of should-run's JSON (target ≤ 16 KiB).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402 - the seeding helpers of bench.py, from this folder
import startup  # noqa: E402 - its venv and timing helpers

import loopx_git  # noqa: E402
from loopx_git.domain.write import EventMaker, Write  # noqa: E402
from loopx_git.model.event import RefreshState  # noqa: E402
from loopx_git.model.ids import format_utc  # noqa: E402
from loopx_git.model.progress import ProgressObservation  # noqa: E402
from loopx_git.model.run import RunRecord  # noqa: E402

AGENT = "bench-agent"


def seed_runs(path: Path, runs: int, batch: int = 2000) -> None:
    repo = loopx_git.open(path)
    repo.connect()
    repo.goal_create(bench.GOAL, "benchmark goal")
    repo.agent_register(bench.GOAL, AGENT)
    repo.agent_register(bench.GOAL, "other-agent")
    done = 0
    while done < runs:
        size = min(batch, runs - done)

        def build(state, size=size, start=done):
            gs = state.goals[bench.GOAL]
            events, records = [], []
            for i in range(start, start + size):
                now = format_utc(bench.START + timedelta(minutes=i))
                last = i >= runs - 2  # the last two: the same unchanged observation, an obligation opens
                progress = ProgressObservation(
                    result_class="unchanged" if last or i % 3 == 0 else "advanced",
                    surface_id="surface-final" if last else f"surface-{i % 997}",
                    evidence_ids=[f"ci-{i % 50}"],
                )
                run = RunRecord(
                    run_id=f"run-{i:06d}",
                    generated_at=now,
                    goal_id=bench.GOAL,
                    agent_id=AGENT,
                    classification="probe",
                    recommended_action=f"probe step {i}",
                    evidence=[f"tests/test_{i % 40}.py"],
                    progress=progress,
                )
                maker = EventMaker(gs, now)
                maker._lamport = gs.lamport + len(events)
                events.append(maker.make(RefreshState, goal_id=bench.GOAL, agent_id=AGENT, run_id=run.run_id))
                records.append(run)
            return Write("bench seed", f"{size} runs", bench.GOAL, None, events, runs=records)

        repo.apply(build)
        done += size
    repo.close()
    repo.gc()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10k runs, fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    args = parser.parse_args()
    n = args.samples or (5 if args.quick else 11)
    runs = 10_000 if args.quick else 100_000
    startup.WORK.mkdir(exist_ok=True)
    loopx = str(startup.venv("venv-now", startup.ROOT) / "loopx")
    repo = bench.fresh_repo("replan")
    seed_runs(repo, runs)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([loopx, *argv], cwd=repo, check=True, capture_output=True, text=True)

    should = json.loads(run("--format", "json", "quota", "should-run", "-a", AGENT).stdout)
    assert should["decision"] == "replan_required", should["decision"]
    size = len(run("--format", "json", "quota", "should-run", "-a", AGENT).stdout.encode())
    rows = len(should["replan_context"]["evidence"])
    print(f"seeded {runs} runs of {AGENT}; an obligation is open; context {rows} rows", flush=True)
    cases = {"status": [loopx, "status"], "should-run": [loopx, "quota", "should-run", "-a", AGENT]}
    warm = startup.sample(cases, repo, n)
    print(f"\nwarm (unchanged tip), median of {n}: wall / CPU ms, ratio of CPU to status")
    for name, (wall, cpu) in warm.items():
        extra = f"   JSON {size / 1024:5.1f} KiB" if name == "should-run" else ""
        print(f"  {name:12} {wall:7.0f} / {cpu:6.0f}   x{cpu / warm['status'][1]:5.2f}{extra}")
    cold = {}
    for name, cmd in cases.items():
        write = [loopx, "event", "append", "--kind", "note", "-a", "other-agent", "--summary", "tick {i}"]
        cold[name] = startup.sample({"write": write, name: cmd}, repo, max(3, n // 2))[name]
    print(f"\ncold (first ask after another agent's write), median of {max(3, n // 2)}: wall / CPU ms")
    for name, (wall, cpu) in cold.items():
        print(f"  {name:12} {wall:7.0f} / {cpu:6.0f}   x{cpu / cold['status'][1]:5.2f} of cold status")
    forget = [
        "sh",
        "-c",
        f"rm -f .git/loopx/evidence-*.pickle && {loopx} event append --kind note -a other-agent --summary 'x {{i}}'",
    ]
    wall, cpu = startup.sample({"forget": forget, "should-run": cases["should-run"]}, repo, 3)["should-run"]
    print("\nrebuild (no index kept: the first ask in a clone), median of 3: wall / CPU ms")
    print(f"  should-run   {wall:7.0f} / {cpu:6.0f}   x{cpu / cold['status'][1]:5.2f} of cold status")


if __name__ == "__main__":
    main()

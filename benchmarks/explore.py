"""explore summary over a large explore graph (issue 15), as whole processes.

    python benchmarks/explore.py [--quick] [--samples N]

Seeds one repository with 10k explore nodes (hypotheses, and a binary experiment over every tenth
pair) and 50k typed research observations (5 a node, coverage-backed, each declaring a composition
candidate with the next node), closing most nodes, in batches through the real write path; installs
loopx from this checkout into benchmarks/.work/venv-now and times whole processes interleaved, CPU
of the child beside wall, medians:

- warm: ``status`` and ``explore summary`` asked again at an unchanged tip (the target: the summary
  at most twice status in the same run);
- cold: the first ask after a write (a note appended before each sample).

Then, with the live research gate on (``configure-goal``) and one agent registered, the live
frontier as whole processes too: ``explore summary --agent-id``, ``status --agent-id`` and ``quota
should-run`` (which raises the first pending gap's capability obligation), each against warm
``status`` in the same run (the target: at most twice).

Also prints the size of the summary's JSON (target: the cold projection ≤ 8 KiB).
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
from loopx_git.domain.write import EventMaker, Write, changes  # noqa: E402
from loopx_git.model.explore import ExploreEdge, ExploreEdgeAdd, ExploreNode, ExploreNodeAdd, ExploreObserve  # noqa: E402
from loopx_git.model.ids import format_utc  # noqa: E402
from loopx_git.model.research import ResearchObservation, observation_fingerprint  # noqa: E402

PER_NODE = 5
AGENT = "bench-agent"


def _observation(node: int, k: int, nodes: int) -> ResearchObservation:
    ev = f"ev-{node}-{k}"
    return ResearchObservation.model_validate(
        {
            "explore_node_id": f"n{node:05d}",
            "progress": {
                "work_item_id": f"todo-{node}",
                "result_class": "exploration_exhausted",
                "coverage_scope_id": "scope",
                "coverage_complete": True,
                "evidence_ids": [ev],
            },
            "closure_basis": {
                "disposition": "bounded",
                "constraints": [{"kind": "invariant", "id": f"c{k}", "role": "decisive"}],
                "evidence_ids": [ev],
            },
            "composition_candidates": [
                {
                    "target_node_id": f"n{(node + 1) % nodes:05d}",
                    "basis": "explicit",
                    "interaction_kind": "unknown_interaction",
                    "evidence_ids": [ev, f"ev-node-{(node + 1) % nodes}"],
                }
            ],
        }
    )


def seed_graph(path: Path, nodes: int, batch: int = 500) -> None:
    repo = loopx_git.open(path)
    repo.connect()
    repo.goal_create(bench.GOAL, "benchmark goal")
    for start in range(0, nodes, batch):

        def build(state, start=start):
            gs = state.goals[bench.GOAL]
            now = format_utc(bench.START + timedelta(seconds=start))
            maker = EventMaker(gs, now)
            events = []
            for i in range(start, min(nodes, start + batch)):
                node = ExploreNode(
                    node_id=f"n{i:05d}",
                    kind="experiment" if i % 10 == 9 else "hypothesis",
                    title=f"benchmark node {i}",
                    status="resolved" if i % 7 else "exploring",
                    reason="covered" if i % 7 else None,
                    evidence_ids=[f"ev-node-{i}"],
                    created_at=now,
                    updated_at=now,
                )
                events.append(
                    maker.make(
                        ExploreNodeAdd,
                        goal_id=bench.GOAL,
                        node_id=node.node_id,
                        changes=changes(None, node, skip=("node_id", "schema_version")),
                    )
                )
            for i in range(start, min(nodes, start + batch)):
                if i % 10 == 9:  # an experiment over the two nodes before it
                    for j in (i - 2, i - 1):
                        edge = ExploreEdge(to_node_id=f"n{j:05d}", edge_type="depends_on", created_at=now)
                        events.append(maker.make(ExploreEdgeAdd, goal_id=bench.GOAL, node_id=f"n{i:05d}", edge=edge))
                for k in range(PER_NODE):
                    observation = _observation(i, k, nodes)
                    events.append(
                        maker.make(
                            ExploreObserve,
                            goal_id=bench.GOAL,
                            node_id=f"n{i:05d}",
                            observation=observation,
                            fingerprint=observation_fingerprint(observation),
                        )
                    )
            return Write("bench seed", f"explore {start}", bench.GOAL, None, events)

        repo.apply(build)
    repo.close()
    repo.gc()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1k nodes, fewer samples")
    parser.add_argument("--samples", type=int, default=None)
    args = parser.parse_args()
    n = args.samples or (5 if args.quick else 11)
    nodes = 1_000 if args.quick else 10_000
    startup.WORK.mkdir(exist_ok=True)
    loopx = str(startup.venv("venv-now", startup.ROOT) / "loopx")
    repo = bench.fresh_repo("explore")
    seed_graph(repo, nodes)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([loopx, *argv], cwd=repo, check=True, capture_output=True, text=True)

    summary = run("--format", "json", "explore", "summary", "-g", bench.GOAL).stdout
    data = json.loads(summary)
    print(
        f"seeded {data['totals']['nodes']} nodes, {data['totals']['observations']} observations, "
        f"{data['totals']['gaps']} gaps {data['totals']['gaps_by_state']}; summary JSON {len(summary.encode()) / 1024:.1f} KiB",
        flush=True,
    )
    live = loopx_git.open(repo)  # the live research gate on, for one agent
    live.agent_register(bench.GOAL, AGENT)
    live.goal_configure(
        bench.GOAL,
        execute=True,
        explore_harness_enabled=True,
        explore_composition_mode="explicit_only",
        explore_composition_scope_id="bench-scope",
    )
    live.close()
    frontier = run("--format", "json", "explore", "summary", "-g", bench.GOAL, "--agent-id", AGENT).stdout
    gate = json.loads(frontier)["research_execution_frontier"]
    should = json.loads(run("--format", "json", "quota", "should-run", "-g", bench.GOAL, "-a", AGENT).stdout)
    print(
        f"live gate: {gate['gaps_by_state']}; summary --agent-id JSON {len(frontier.encode()) / 1024:.1f} KiB; "
        f"should-run decision {should['decision']}",
        flush=True,
    )
    cases = {
        "status": [loopx, "status"],
        "summary": [loopx, "explore", "summary", "-g", bench.GOAL],
        "live summary": [loopx, "explore", "summary", "-g", bench.GOAL, "--agent-id", AGENT],
        "live status": [loopx, "status", "-g", bench.GOAL, "--agent-id", AGENT],
        "should-run": [loopx, "quota", "should-run", "-g", bench.GOAL, "-a", AGENT],
    }
    warm = startup.sample(cases, repo, n)
    print(f"\nwarm (unchanged tip), median of {n}: wall / CPU ms, ratio of CPU to status")
    for name, (wall, cpu) in warm.items():
        print(f"  {name:12} {wall:7.0f} / {cpu:6.0f}   x{cpu / warm['status'][1]:5.2f}")
    cold = {}
    for name, cmd in cases.items():
        write = [loopx, "event", "append", "--kind", "note", "--summary", "tick {i}"]
        cold[name] = startup.sample({"write": write, name: cmd}, repo, max(3, n // 2))[name]
    print(f"\ncold (first ask after a write), median of {max(3, n // 2)}: wall / CPU ms")
    for name, (wall, cpu) in cold.items():
        print(f"  {name:12} {wall:7.0f} / {cpu:6.0f}   x{cpu / cold['status'][1]:5.2f} of cold status")


if __name__ == "__main__":
    main()

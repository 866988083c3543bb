"""Import the long-horizon self-iteration fixture into a fresh goal and reproduce its derived views.

    python examples/long_horizon_fixture.py            # in a new repository under a temporary folder
    python examples/long_horizon_fixture.py --repo .   # in this repository (a new goal on its state branch)

The fixture (``examples/long-horizon/self-iteration-rollout.public.json``) is written in upstream
LoopX's ``long_horizon_self_iteration_fixture_v0`` shape: three lanes, rollout events with a gate, a
handoff, a validation, a deferred todo made ready again, and one event without a join key. This
script registers the lanes' agents, imports the events as a rollout-event log (``loopx events
import``), recomputes every derived view the fixture lists (``loopx view``) and compares their
source event ids, checks the bridges and the task graph it expects, and runs ``loopx protocol check``.
It prints one line per check and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import loopx_git

FIXTURE = Path(__file__).resolve().parent / "long-horizon" / "self-iteration-rollout.public.json"


def _new_repository(folder: Path) -> Path:
    repo = folder / "fixture-repo"
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def reproduce(repo_path: Path, fixture: dict) -> list[tuple[str, bool, str]]:
    """Import the fixture into ``repo_path`` and return (check, ok, detail) for each check."""
    goal_id = fixture["goal_id"]
    repo = loopx_git.open(repo_path)
    try:
        if repo.tip is None:
            repo.connect()
        repo.goal_create(goal_id, fixture["purpose"])
        for lane in fixture["lanes"]:
            repo.agent_register(goal_id, lane["agent_id"], lane=lane["lane_id"])
        log = "".join(json.dumps(event, sort_keys=True) + "\n" for event in fixture["rollout_events"])
        report = repo.events_import(goal_id, log.encode().splitlines(keepends=True))
        checks = [("import", report.imported == len(fixture["rollout_events"]), f"{report.imported} events imported")]
        for expected in fixture["derived_views"]:
            kind = expected["view_kind"].removeprefix("per_")
            subject = next(iter(expected["filter_keys"].values()))
            view = repo.view(goal_id, kind, subject)
            # imported lines are cited by their own ids; the goal's own events (an agent's
            # registration) join the view too, and are counted apart
            ids = [e.origin_event_id for e in view.events if e.origin_event_id]
            same = ids == expected["source_event_ids"] and view.filter_keys == expected["filter_keys"]
            own = len(view.events) - len(ids)
            checks.append(
                (f"view {kind} {subject}", same, ", ".join(ids) + (f" (+{own} of the goal's own)" if own else ""))
            )
        origin_of = {e.event_id: e.origin.event_id for e in repo.events(goal_id, kind="rollout_import")}
        bridges = {}
        for event in fixture["rollout_events"]:
            if event.get("todo_id"):
                for b in repo.view(goal_id, "todo", event["todo_id"]).bridges:
                    bridges[(origin_of.get(b.from_event_id), origin_of.get(b.to_event_id))] = b.confidence
        for expected in fixture["expected_bridges"]:
            found = bridges.get((expected["from_event_id"], expected["to_event_id"]))
            checks.append(
                (
                    f"bridge {expected['from_event_id']} -> {expected['to_event_id']}",
                    found == expected["confidence"],
                    str(found),
                )
            )
        graph = fixture["expected_task_graph"]
        view = repo.view(goal_id, "todo", graph["view"], include_task_graph=True)
        assert view.task_graph is not None
        edges = {(e.edge_kind, e.from_ref, e.to_ref) for e in view.task_graph.edges}
        for edge in graph["edges"]:
            key = (edge["edge_kind"], edge["from_ref"], edge["to_ref"])
            checks.append((f"task graph {' '.join(key)}", key in edges, f"{len(edges)} edges"))
        protocol = repo.protocol_check(goal_id)
        failed = [c.check_id for c in protocol.checks if not c.ok]
        checks.append(("protocol check", protocol.ok, ", ".join(failed) or f"{len(protocol.checks)} checks pass"))
        return checks
    finally:
        repo.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, help="a git repository (default: a new one in a temporary folder)")
    args = parser.parse_args(argv)
    fixture = json.loads(FIXTURE.read_text())
    with tempfile.TemporaryDirectory() as scratch:
        repo = args.repo or _new_repository(Path(scratch))
        checks = reproduce(repo, fixture)
    for name, ok, detail in checks:
        print(f"{'pass' if ok else 'FAIL'}  {name}: {detail}")
    return 0 if all(ok for _, ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())

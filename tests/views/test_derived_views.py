"""``loopx view agent|todo|case|benchmark|run ID`` and ``--include-task-graph``, the goal channel
projection on ``status`` (status_contract_v2), and the long-horizon fixture under ``examples/``
(issue 13, items 7 and 11): the fixture imports into a fresh goal, its derived views come back with
the same source events, its bridge from an event without a join key is labelled inferred, and
``protocol check`` passes on it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_git.safety.scan import scan
from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, NOW, state_tip

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "long_horizon_fixture.py"
FIXTURE = ROOT / "examples" / "long-horizon" / "self-iteration-rollout.public.json"
KiB = 1024


def _script():
    spec = importlib.util.spec_from_file_location("long_horizon_fixture", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fixture_imports_and_reproduces_every_derived_view(git_repo):
    fixture = json.loads(FIXTURE.read_text())
    checks = _script().reproduce(git_repo, fixture)
    failed = [(name, detail) for name, ok, detail in checks if not ok]
    assert not failed
    names = [name for name, _, _ in checks]
    assert len([n for n in names if n.startswith("view ")]) == len(fixture["derived_views"]) == 4
    assert "protocol check" in names and len([n for n in names if n.startswith("bridge ")]) == 3


def test_the_fixture_covers_what_the_seed_asks_for_and_is_public_safe():
    fixture = json.loads(FIXTURE.read_text())
    assert fixture["schema_version"] == "long_horizon_self_iteration_fixture_v0"
    events = fixture["rollout_events"]
    assert len({lane["lane_id"] for lane in fixture["lanes"]}) == 3
    assert any((e.get("causality") or {}).get("gate_id") for e in events)  # a gate
    assert any(e.get("handoff") for e in events)  # a handoff
    assert any(e["event_kind"] == "validation" and e.get("todo_id") for e in events)  # a validation
    assert any(
        e.get("state_transition", {}).get("from_state", "").startswith("deferred") and e.get("status") == "ready"
        for e in events
    )  # a deferred -> ready resume
    bare = [e for e in events if not any(e.get(k) for k in ("agent_id", "todo_id", "run_id", "case_id", "lane"))]
    assert len(bare) == 1  # the inferred bridge's end
    text = FIXTURE.read_text()
    assert not [f.rule for f in scan(text)], "the fixture must pass the safety rules"
    assert "/home/" not in text and "/Users/" not in text


def test_the_script_runs_as_written(tmp_path):
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("pass  ") == 11 and "FAIL" not in run.stdout


@pytest.fixture
def worked(cli, repo):
    """Native events: a gated, handed-off, validated, repaired and superseded piece of work."""
    for todo_id, text in (("tok", "Tokenizer"), ("tok2", "Tokenizer, again"), ("docs", "Docs")):
        assert cli("todo", "add", "-g", GOAL, "--todo-id", todo_id, "--text", text).code == 0
    gate = ["gate", "open", "-g", GOAL, "--gate-id", "g-api", "--owner-class", "user", "--blocks", "docs"]
    assert cli(*gate, "--question", "Is the API final?").code == 0
    assert cli("todo", "claim", "-g", GOAL, "-t", "tok", "-a", "alice").code == 0
    refresh = ["refresh-state", "-g", GOAL, "-a", "alice", "-t", "tok", "--classification", "tok_done"]
    assert cli(*refresh, "--run-id", "run-1", "--evidence", "tests/test_tok.py").code == 0
    validation = ["event", "append", "-g", GOAL, "--kind", "validation", "-a", "alice", "-t", "tok"]
    assert cli(*validation, "--run-id", "run-1", "--case-id", "c1", "--summary", "tok passes").code == 0
    assert (
        cli("event", "append", "-g", GOAL, "--kind", "repair", "-a", "alice", "-t", "tok", "--summary", "fixed").code
        == 0
    )
    assert cli("event", "append", "-g", GOAL, "--kind", "note", "--case-id", "c1", "--summary", "context").code == 0
    handoff = ["handoff", "prepare", "-g", GOAL, "--handoff-id", "h1", "--from-agent-id", "alice"]
    assert cli(*handoff, "--to-agent-id", "bob", "--todo-id", "tok", "--stop-condition", "tests pass").code == 0
    assert cli("todo", "supersede", "-g", GOAL, "-t", "tok2", "--by", "tok", "--reason", "same work").code == 0
    return cli


def test_each_view_filters_by_its_join_key_and_names_its_source_events(worked):
    agent = worked.json("view", "agent", "alice", "-g", GOAL)
    conforms("loopx_derived_view_v0", agent)
    assert agent["projection_is_writable"] is False and agent["view_kind"] == "per_agent"
    assert agent["filter_keys"] == {"agent_id": "alice", "lane_id": "core"}
    assert agent["source_event_ids"] == [e["event_id"] for e in agent["events"]]
    assert {e["event_kind"] for e in agent["events"]} >= {"todo_claim", "refresh_state", "validation", "repair"}
    assert all(e["agent_id"] == "alice" for e in agent["events"])
    todo = worked.json("view", "todo", "tok", "-g", GOAL)
    assert all(e["todo_id"] == "tok" for e in todo["events"]) and todo["event_count"] == len(todo["events"])
    # results only, per case and run: the note on case c1 is context, not a result
    case = worked.json("view", "case", "c1", "-g", GOAL)
    assert [e["event_kind"] for e in case["events"]] == ["validation"]
    run = worked.json("view", "run", "run-1", "-g", GOAL)
    assert [e["event_kind"] for e in run["events"]] == ["refresh_state", "validation"]


def test_the_task_graph_has_its_five_edge_kinds(worked):
    view = worked.json("view", "todo", "tok", "-g", GOAL, "--include-task-graph")
    graph = view["task_graph"]
    conforms("task_graph_projection_v0", graph)
    edges = {(e["edge_kind"], e["from_ref"], e["to_ref"]): e for e in graph["edges"]}
    assert ("validates", "run:run-1", "todo:tok") in edges
    assert ("repairs", next(k[1] for k in edges if k[0] == "repairs"), "todo:tok") in edges
    assert ("hands_off_to", "agent:alice", "agent:bob") in edges
    assert edges[("hands_off_to", "agent:alice", "agent:bob")]["source_event_ids"]  # the handoff_prepare event
    docs = worked.json("view", "todo", "docs", "-g", GOAL, "--include-task-graph")["task_graph"]["edges"]
    assert [(e["edge_kind"], e["from_ref"]) for e in docs] == [("blocks", "gate:g-api")]
    old = worked.json("view", "todo", "tok2", "-g", GOAL, "--include-task-graph")["task_graph"]["edges"]
    assert ("supersedes", "todo:tok", "todo:tok2") in {(e["edge_kind"], e["from_ref"], e["to_ref"]) for e in old}
    assert all(e["confidence"] == "observed" for e in graph["edges"] + docs + old)
    assert worked.json("view", "todo", "tok", "-g", GOAL)["task_graph"] is None  # only when asked


def test_an_unknown_id_is_refused_and_a_bad_kind_is_a_usage_error(worked):
    tip = state_tip(worked.path)
    result = worked("view", "todo", "nope", "-g", GOAL)
    assert result.code == 1 and "todo 'nope'" in result.err and "rule:" in result.err
    assert worked("view", "benchmark", "b9", "-g", GOAL).code == 1
    assert worked("view", "lane", "core", "-g", GOAL).code == 2
    assert state_tip(worked.path) == tip


def test_a_view_is_bounded_and_counts_what_it_leaves_out(cli):
    assert cli("todo", "add", "-g", GOAL, "--todo-id", "busy", "--text", "Busy todo").code == 0
    for n in range(40):
        assert cli("event", "append", "-g", GOAL, "--kind", "note", "-t", "busy", "--summary", f"step {n}").code == 0
    out = cli("view", "todo", "busy", "-g", GOAL, "--include-task-graph", "--format", "json")
    view = json.loads(out.out)
    assert view["event_count"] == 41 and len(view["events"]) == 30 and view["events_omitted"] == 11
    assert view["events"][-1]["summary"] == "step 39"  # the newest kept
    assert len(out.out.encode()) < 16 * KiB


def test_status_carries_the_goal_channel_projection_with_source_events(worked, repo):
    card = worked.json("status", "-g", GOAL)
    conforms("status_contract_v2", card)
    channel = card["goal_channel_projection"]
    conforms("goal_channel_projection_v0", channel)
    events = {e.event_id: e for e in repo.events(GOAL)}
    assert channel["projection_is_writable"] is False
    for row in channel["agent_todos"] + channel["active_claims"] + channel["open_gates"]:
        source = events[row["source_event_id"]]
        assert source.todo_id == row.get("todo_id") or getattr(source, "gate_id", None) == row.get("gate_id")
    assert [g["gate_id"] for g in channel["open_gates"]] == ["g-api"]
    assert channel["active_claims"] == [
        {"todo_id": "tok", "agent_id": "alice", "source_event_id": channel["active_claims"][0]["source_event_id"]}
    ]
    assert channel["latest_event"]["event_id"] == repo.events(GOAL)[-1].event_id
    assert channel["next_action"] is None  # tok is handed to bob (not adopted yet), docs is gated
    assert worked.json("schema", "loopx_status_v0") == worked.json("schema", "status_contract_v2")  # the old name


def test_the_channel_projection_is_bounded(cli, repo):
    for n in range(8):
        repo.todo_add(GOAL, f"Ask the user {n}", todo_id=f"u{n}", role="user", now=NOW)
    added = repo.todo_add(GOAL, "Parse numbers", todo_id="num", now=NOW)
    channel = cli.json("status", "-g", GOAL)["goal_channel_projection"]
    assert len(channel["user_todos"]) == 5 and channel["user_todos_omitted"] == 3
    action = channel["next_action"]
    assert (action["agent_id"], action["todo_id"], action["basis"]) == ("alice", "num", "runnable")
    assert action["source_event_id"] == added.event_ids[0]


def test_long_texts_keep_a_view_under_16_kib_counting_what_it_leaves_out(cli):
    assert cli("todo", "add", "-g", GOAL, "--todo-id", "wordy", "--text", "Wordy todo").code == 0
    for n in range(35):
        summary = f"step {n}: " + "x" * 990
        assert cli("event", "append", "-g", GOAL, "--kind", "note", "-t", "wordy", "--summary", summary).code == 0
    out = cli("view", "todo", "wordy", "-g", GOAL, "--include-task-graph", "--format", "json")
    view = json.loads(out.out)
    assert len(out.out.encode()) < 16 * KiB
    assert view["event_count"] == 36 and len(view["events"]) + view["events_omitted"] == 36
    assert view["events"][-1]["summary"].startswith("step 34")  # the newest kept
    assert view["source_event_ids"] == [e["event_id"] for e in view["events"]]


def test_a_case_whose_events_are_not_results_yet_is_an_empty_view_not_unknown(cli):
    assert cli("event", "append", "-g", GOAL, "--kind", "note", "--case-id", "c7", "--summary", "planned").code == 0
    view = cli.json("view", "case", "c7", "-g", GOAL)
    assert view["event_count"] == 0 and view["events"] == []

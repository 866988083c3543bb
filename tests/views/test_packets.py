"""The operator's projections (seed 003): review-packet, todo index and manager — read-only, each
list bounded with a count of what it left out, so the JSON stays small however large the branch."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, NOW, state_tip


@pytest.fixture
def crowded(repo):
    for i in range(40):
        repo.todo_add(
            GOAL, f"Work item {i} with a fairly long description of what is to be done", todo_id=f"t{i}", now=NOW
        )
    for i in range(14):
        repo.gate_open(GOAL, f"g{i}", owner_class="user", question=f"Decide item {i}?", blocks=[f"t{i}"], now=NOW)
    repo.todo_add(GOAL, "Approve the budget", todo_id="ask", role="user", task_class="user_gate", now=NOW)
    repo.todo_claim(GOAL, "t20", "alice", now=NOW)
    repo.handoff_prepare(GOAL, "h1", from_agent_id="alice", to_agent_id="bob", todo_ids=["t20"], stop_condition="s")
    repo.event_append(GOAL, "validation", agent_id="alice", todo_id="t21", summary="tests pass", now=NOW)
    repo.event_append(GOAL, "failure", agent_id="bob", summary="deploy script crashed", now=NOW)
    return repo


def test_the_review_packet_names_gates_handoffs_evidence_and_candidates_bounded(crowded, cli):
    packet = cli.json("review-packet", "-g", GOAL)
    conforms("loopx_review_packet_v0", packet)
    assert packet["projection_is_writable"] is False
    assert len(packet["open_gates"]) == 10 and packet["open_gates_omitted"] == 4
    kinds = {a["kind"] for a in packet["attention"]}
    assert "gate" in kinds and packet["attention_omitted"] > 0
    assert [h["handoff_id"] for h in packet["handoffs"]] == ["h1"]
    assert {e["event_kind"] for e in packet["recent_evidence"]} >= {"validation", "failure"}
    assert [c["kind"] for c in packet["rollback_candidates"]] == ["failure"]
    only = cli.json("review-packet", "-g", GOAL, "-a", "bob", "--handoff-only")
    conforms("loopx_review_packet_v0", only)
    assert only["handoff_only"] and only["open_gates"] == [] and [h["to_agent_id"] for h in only["handoffs"]] == ["bob"]


def test_todo_index_and_manager_are_bounded_and_say_what_they_left_out(crowded, cli):
    index = cli.json("todo", "index")
    conforms("todo_index_v0", index)
    [goal] = index["goals"]
    assert len(goal["todos"]) == 25 and goal["todos_omitted"] == goal["open"] + goal["blocked"] + goal["deferred"] - 25
    held = next(t for t in goal["todos"] if t["todo_id"] == "t0")
    assert held["held_by_gates"] == ["g0"] and held["runnable"] is False
    answer = cli.json("manager")
    conforms("global_manager_command_v0", answer)
    [progress] = answer["goals"]
    assert answer["read_first"] and len(progress["gates_holding"]) == 5 and progress["gates_holding_omitted"] == 9
    assert progress["user_todos"] == ["ask"] and any("failure" in r for r in progress["risks"])
    for out in (index, answer, cli.json("review-packet", "-g", GOAL)):
        assert len(json.dumps(out)) < 16 * 1024


def test_the_views_write_nothing_and_refuse_unknown_names(crowded, cli, git_repo):
    tip = state_tip(git_repo)
    for args in (["review-packet", "-g", GOAL], ["todo", "index"], ["manager"]):
        assert cli(*args).code == 0
    bad = cli("review-packet", "-g", GOAL, "-a", "carol")
    assert bad.code == 1 and "error[unknown-agent]" in bad.err
    assert state_tip(git_repo) == tip


def test_the_goal_card_carries_the_projection_truth_contract(cli):
    card = cli.json("status", "-g", GOAL)
    conforms("status_contract_v2", card)
    truth = card["projection_truth"]
    assert truth["projection_is_writable"] is False and "rollout_event_log" in truth["source_of_truth"]
    assert {"loopx todo", "loopx refresh-state", "loopx operator-gate", "loopx reward"} <= set(truth["write_apis"])

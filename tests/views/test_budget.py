"""Every projection an agent reads each turn stays under 16 KiB of JSON however long the texts
(issue 13: "bounded ... with omitted counts instead of silent truncation"): the lists are cut to a
count first, and rows are then left out — always counted in ``<list>_omitted`` — until it fits."""

from __future__ import annotations

import json

import pytest

from loopx_git.views.budget import BUDGET, fit
from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, NOW

KiB = 1024
LONG = "x" * 900


def _long_goal(repo, goal_id: str = GOAL, todos: int = 14) -> None:
    for n in range(todos):
        repo.todo_add(goal_id, f"agent work {n}: {LONG}", todo_id=f"{goal_id}-a{n}", now=NOW)
        repo.todo_add(goal_id, f"ask the user {n}: {LONG}", todo_id=f"{goal_id}-u{n}", role="user", now=NOW)
    for n in range(12):
        repo.gate_open(
            goal_id, f"{goal_id}-gate{n}", owner_class="user", question=f"q{n}? {LONG}", blocks=[f"{goal_id}-a{n}"]
        )
    for n in range(12):
        repo.event_append(goal_id, "validation", agent_id="alice", summary=f"checked {n}: {LONG}")


def _printed(cli, *argv: str) -> tuple[int, dict]:
    out = cli(*argv, "--format", "json")
    assert out.code == 0, out.err
    return len(out.out.encode()), json.loads(out.out)


def test_the_goal_card_with_long_texts_fits_and_counts_what_it_left_out(cli, repo):
    _long_goal(repo)
    size, card = _printed(cli, "status", "-g", GOAL)
    assert size < 16 * KiB
    conforms("status_contract_v2", card)
    assert card["counts"]["open"] == 28  # the counts stay whole
    shown = len(card["open_gates"]) + len(card["user_todos"]) + len(card["agent_todos"])
    omitted = card["open_gates_omitted"] + card["user_todos_omitted"] + card["agent_todos_omitted"]
    assert shown + omitted == 12 + 14 + 14 and omitted > 0
    assert card["open_gates"][0]["gate_id"] == f"{GOAL}-gate0"  # the first rows kept: best or oldest first


@pytest.mark.parametrize(
    ("argv", "schema"),
    [
        (["review-packet", "-g", GOAL], "loopx_review_packet_v0"),
        (["quota", "should-run", "-g", GOAL, "-a", "alice"], "loopx_should_run_v0"),
        (["manager"], "global_manager_command_v0"),
    ],
)
def test_each_projection_with_long_texts_fits(cli, repo, argv, schema):
    _long_goal(repo)
    size, data = _printed(cli, *argv)
    assert size < 16 * KiB
    conforms(schema, data)


def test_the_todo_index_across_many_goals_fits(cli, repo):
    for g in range(5):
        repo.goal_create(f"goal{g}", "Another goal", now=NOW)
        for n in range(8):
            repo.todo_add(f"goal{g}", f"todo {n}: {LONG}", todo_id=f"t{n}", now=NOW)
    size, index = _printed(cli, "todo", "index")
    assert size < 16 * KiB
    conforms("todo_index_v0", index)
    assert sum(len(g["todos"]) + g["todos_omitted"] for g in index["goals"]) == 40
    assert all(g["todos"] for g in index["goals"] if g["goal_id"] != GOAL)  # the cut is shared: none emptied


def test_fit_leaves_a_small_record_alone_and_is_exact_on_a_large_one(repo):
    from loopx_git.views.packets import todo_index

    small = todo_index(repo.state())
    assert fit(small) is small
    for n in range(30):
        repo.todo_add(GOAL, f"todo {n}: {LONG}", todo_id=f"t{n}", now=NOW)
    data = fit(todo_index(repo.state())).model_dump(mode="json")
    assert len(json.dumps(data, indent=2, ensure_ascii=True)) <= BUDGET
    goal = data["goals"][0]
    assert len(goal["todos"]) + goal["todos_omitted"] == 30

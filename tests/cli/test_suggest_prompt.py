"""``todo suggest --prompt``: the packet a user's agent fills (todo_suggestion_prompt_v0); it writes
nothing, and what the agent proposes stays a candidate until promoted."""

from __future__ import annotations

from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, state_tip


def test_the_prompt_lists_the_goal_its_todos_and_candidates_and_writes_nothing(cli, git_repo):
    assert cli("todo", "add", "-g", GOAL, "--todo-id", "t1", "--text", "Write the parser").code == 0
    assert cli("todo", "suggest", "-g", GOAL, "--todo-id", "s1", "--text", "Fuzz the parser").code == 0
    tip = state_tip(git_repo)
    packet = cli.json("todo", "suggest", "-g", GOAL, "--prompt")
    conforms("todo_suggestion_prompt_v0", packet)
    assert packet["objective"] == "Ship the parser"
    assert [t["todo_id"] for t in packet["todos"]] == ["t1"] and [c["todo_id"] for c in packet["candidates"]] == ["s1"]
    assert any("promote" in line for line in packet["instructions"]) and "todo suggest" in packet["submit_command"]
    assert state_tip(git_repo) == tip
    # what the agent proposes goes through todo suggest: a candidate, not runnable
    assert cli("todo", "suggest", "-g", GOAL, "--text", "Profile the lexer").code == 0
    assert all(a["todo_id"] != "s1" for a in cli.json("status", "-g", GOAL)["next_actions"])


def test_prompt_and_text_do_not_go_together_and_text_is_needed_without_prompt(cli, git_repo):
    tip = state_tip(git_repo)
    assert cli("todo", "suggest", "-g", GOAL, "--prompt", "--text", "x").code == 2
    assert cli("todo", "suggest", "-g", GOAL).code == 2
    assert state_tip(git_repo) == tip

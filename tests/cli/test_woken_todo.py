"""A woken todo no longer carries the condition that woke it as pending: the wake-up's event clears
``resume_when`` (the met condition stays in that event), a re-block shows only its own condition, and
a branch written before — whose wake-ups kept the condition — still verifies and is tidied on re-block."""

from __future__ import annotations

from dataclasses import replace

import pytest

from loopx_git.domain.todo_close import complete_todo
from tests.conftest import GOAL, NOW, Cli


@pytest.fixture
def waiting(cli):
    """``tb`` blocked until ``ta`` is done; ``tc`` open."""
    for todo_id in ("ta", "tb", "tc"):
        cli.json("todo", "add", "-g", GOAL, "--text", f"work {todo_id}", "--todo-id", todo_id)
    block = ["--status", "blocked", "--reason", "needs ta", "--resume-when", "todo_done:ta"]
    assert "[blocked until todo_done:ta]" in cli("todo", "update", "-g", GOAL, "-t", "tb", *block).out
    return cli


def complete(cli: Cli, todo_id: str):
    return cli("todo", "complete", "-g", GOAL, "-t", todo_id, "--evidence", "tests/test_parser.py")


def card_todo(cli: Cli, todo_id: str) -> dict:
    card = cli.json("status", "-g", GOAL)
    return next(t for t in card["agent_todos"] if t["todo_id"] == todo_id)


def test_a_woken_todo_shows_no_pending_condition(waiting):
    cli = waiting
    done = complete(cli, "ta")
    assert done.code == 0 and "woke tb (tb resumed: todo_done:ta)" in done.out
    shown = cli.json("todo", "show", "-g", GOAL, "-t", "tb")
    assert (shown["status"], shown["resume_when"], shown["reason"]) == ("open", None, None)
    assert card_todo(cli, "tb")["resume_when"] is None
    assert "todo_done:ta" not in cli("todo", "show", "-g", GOAL, "-t", "tb").out
    listing = cli("todo", "list", "-g", GOAL).out
    assert "until" not in listing and "tb" in listing
    assert "until todo_done:ta" not in cli("status", "-g", GOAL).out
    # the met condition stays in the history: the wake-up's event says what it cleared, and why
    [resume] = cli.json("events", "-g", GOAL, "--kind", "todo_resume")
    assert resume["summary"] == "tb resumed: todo_done:ta"
    assert {"field": "resume_when", "before": "todo_done:ta", "after": None} in resume["changes"]
    assert cli.json("verify")["ok"]


def test_a_re_block_shows_only_the_new_condition(waiting):
    cli = waiting
    complete(cli, "ta")
    block = ["--status", "blocked", "--reason", "needs tc now", "--resume-when", "todo_done:tc"]
    updated = cli("todo", "update", "-g", GOAL, "-t", "tb", *block)
    assert updated.code == 0 and "[blocked until todo_done:tc]" in updated.out and "todo_done:ta" not in updated.out
    assert cli.json("todo", "show", "-g", GOAL, "-t", "tb")["resume_when"] == "todo_done:tc"
    assert card_todo(cli, "tb")["resume_when"] == "todo_done:tc"
    listing = cli("todo", "list", "-g", GOAL).out
    assert "blocked until todo_done:tc" in listing and "todo_done:ta" not in listing
    assert "woke tb (tb resumed: todo_done:tc)" in complete(cli, "tc").out  # the new condition wakes it
    assert cli.json("todo", "show", "-g", GOAL, "-t", "tb")["resume_when"] is None


def test_a_re_block_without_a_condition_shows_none(waiting):
    cli = waiting
    complete(cli, "ta")
    updated = cli("todo", "update", "-g", GOAL, "-t", "tb", "--status", "blocked", "--reason", "waiting on a person")
    assert "[blocked]" in updated.out and "until" not in updated.out
    assert cli.json("todo", "show", "-g", GOAL, "-t", "tb")["resume_when"] is None


def test_a_rollback_of_the_wake_up_brings_the_condition_back(waiting):
    cli = waiting
    complete(cli, "ta")
    [completed] = cli.json("events", "-g", GOAL, "--kind", "todo_complete")
    assert cli("rollback", "-g", GOAL, "--event", completed["event_id"], "--reason", "completed too early").code == 0
    shown = cli.json("todo", "show", "-g", GOAL, "-t", "tb")
    assert (shown["status"], shown["resume_when"]) == ("blocked", "todo_done:ta")
    assert cli.json("verify")["ok"]


def test_a_branch_whose_wake_ups_kept_the_condition_still_verifies_and_a_re_block_drops_it(repo, waiting):
    cli = waiting

    def as_older_versions_wrote(state):
        """``todo complete ta`` with its wake-up as versions before this change wrote it: status and
        reason changed, resume_when left as it was."""
        write = complete_todo(state, goal_id=GOAL, todo_id="ta", evidence=["tests/x.py"], actor=None, now=NOW)
        events = [
            e.model_copy(update={"changes": [c for c in e.changes if c.field != "resume_when"]})
            if e.event_kind == "todo_resume"
            else e
            for e in write.events
        ]
        return replace(write, events=events)

    repo.apply(as_older_versions_wrote)
    assert cli.json("verify")["ok"]  # the fold did not change: documents written then still match it
    shown = cli.json("todo", "show", "-g", GOAL, "-t", "tb")
    assert (shown["status"], shown["resume_when"]) == ("open", "todo_done:ta")  # as its document says
    assert "until" not in cli("todo", "list", "-g", GOAL).out  # an open todo shows no pending condition
    updated = cli("todo", "update", "-g", GOAL, "-t", "tb", "--status", "blocked", "--reason", "a person")
    assert "[blocked]" in updated.out and "todo_done:ta" not in updated.out
    assert cli.json("todo", "show", "-g", GOAL, "-t", "tb")["resume_when"] is None
    assert cli.json("verify")["ok"]

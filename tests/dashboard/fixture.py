"""A goal with three agents at work: the dashboard's test fixture, written through the API."""

from __future__ import annotations

import loopx_git

GOAL = "dash"
T0 = "2026-03-01T09:00:00Z"


def at(minutes: int) -> str:
    hours, mins = divmod(minutes, 60)
    return f"2026-03-01T{9 + hours:02d}:{mins:02d}:00Z"


def three_lanes(path) -> dict:
    """alice, bob and carol on one goal: claims (one done, one handed from alice to bob), a gate
    that blocks a todo, a note by a person (no join key) and a validation caused by it (an
    inferred bridge), a run with a reward. Returns the ids the tests look for."""
    with loopx_git.open(path) as repo:
        repo.connect()
        repo.goal_create(GOAL, "Ship the dashboard", now=at(0))
        for agent, lane in (("alice", "core"), ("bob", "ui"), ("carol", "docs")):
            repo.agent_register(GOAL, agent, lane=lane, now=at(1))
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="tok", priority="P1", now=at(2))
        repo.todo_add(GOAL, "Draw the lanes", todo_id="lanes", now=at(3))
        repo.todo_add(GOAL, "Deploy the page", todo_id="deploy", now=at(4))
        repo.todo_add(GOAL, "Write the docs", todo_id="docs", task_class="continuous_monitor", now=at(5))
        repo.todo_claim(GOAL, "tok", "alice", now=at(10))
        repo.todo_claim(GOAL, "lanes", "bob", now=at(12))
        repo.todo_claim(GOAL, "docs", "carol", now=at(14))
        repo.todo_complete(GOAL, "lanes", evidence=["tests/test_lanes.py"], actor="bob", now=at(30))
        repo.gate_open(
            GOAL, "ship-gate", owner_class="user", question="Deploy to production?", blocks=["deploy"], now=at(32)
        )
        repo.handoff_prepare(
            GOAL,
            "h1",
            from_agent_id="alice",
            to_agent_id="bob",
            stop_condition="tokenizer passes",
            todo_ids=["tok"],
            now=at(40),
        )
        repo.handoff_adopt(GOAL, "h1", "bob", now=at(45))
        noted = repo.event_append(GOAL, "note", summary="a person looked at the numbers", now=at(50))
        checked = repo.event_append(
            GOAL,
            "validation",
            agent_id="carol",
            todo_id="docs",
            summary="docs build",
            source_event_id=noted.event_ids[0],
            artifact_refs=["docs/index.md"],
            now=at(55),
        )
        run = repo.refresh_state(GOAL, "progress", agent_id="carol", delivery_outcome="outcome_progress", now=at(58))
        repo.reward_add(
            GOAL, label="useful", polarity="positive", reason="clear docs", run_id=run.record.run_id, now=at(59)
        )
        return {"note": noted.event_ids[0], "validation": checked.event_ids[0], "run": run.record.run_id}

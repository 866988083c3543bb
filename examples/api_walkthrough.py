"""The Python API in a few lines: run inside any git repository (it writes to loopx/state)."""

import sys

import loopx_git

with loopx_git.open(sys.argv[1] if len(sys.argv) > 1 else ".") as repo:
    repo.connect()
    if not repo.goal_exists("example"):
        repo.goal_create("example", "Show the API")
        repo.agent_register("example", "alice", lane="core")
    todo = repo.todo_add("example", "Try the API").record
    repo.todo_claim("example", todo.todo_id, "alice")
    repo.todo_complete("example", todo.todo_id, evidence=["examples/api_walkthrough.py"], actor="alice")
    card = repo.status("example")
    print(card.counts, [(a.agent_id, a.todo_id) for a in card.next_actions])

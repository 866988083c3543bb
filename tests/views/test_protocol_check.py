"""``loopx protocol check``: seed 003's acceptance checks against the branch, each with evidence;
a branch whose documents drifted from its records fails it (exit 1)."""

from __future__ import annotations

import json

from loopx_git.store import layout
from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, NOW, git


def _busy(repo):
    repo.todo_add(GOAL, "Ship", todo_id="ship", now=NOW)
    repo.todo_add(GOAL, "Docs", todo_id="docs", now=NOW)
    repo.todo_claim(GOAL, "docs", "alice", now=NOW)
    repo.gate_open(GOAL, "release", owner_class="user", question="Release?", blocks=["ship"], now=NOW)
    repo.handoff_prepare(GOAL, "h1", from_agent_id="alice", to_agent_id="bob", todo_ids=["docs"], stop_condition="s")
    run = repo.refresh_state(
        GOAL, "progress", agent_id="alice", delivery_outcome="outcome_progress", evidence=["tests/t.py"], now=NOW
    )
    repo.spend_slot(GOAL, "alice", run.record.run_id, now=NOW)
    repo.reward_add(GOAL, run_id=run.record.run_id, label="accept", polarity="positive", reason="clean", now=NOW)
    repo.todo_suggest(GOAL, "Fuzz the parser", todo_id="fuzz", now=NOW)


def test_a_goal_with_gates_handoffs_rewards_and_spends_passes_every_check(repo):
    _busy(repo)
    report = repo.protocol_check(GOAL)
    assert report.ok, [c for c in report.checks if not c.ok]
    ids = {c.check_id for c in report.checks}
    assert {"source-projection-separated", "lane-next-action", "writeback-before-spend", "handoffs-named"} <= ids
    lane = next(c for c in report.checks if c.check_id == "lane-next-action")
    assert "bob -> h1 (handoff)" in lane.evidence


def test_a_drifted_document_fails_the_check_with_exit_1(cli, repo, git_repo):
    _busy(repo)
    # a hand edit of a derived document, committed straight onto the state branch
    tip = git(git_repo, "rev-parse", "refs/heads/loopx/state").strip()
    path = layout.entity_document("gate", GOAL, "release")
    text = git(git_repo, "show", f"{tip}:{path}").replace("question: Release?", "question: Edited by hand")
    blob = git(git_repo, "hash-object", "-w", "--stdin", input_text=text).strip() if False else None
    assert blob is None  # (hash-object through a file below: git() takes no stdin)
    (git_repo / "edited.yaml").write_text(text)
    blob = git(git_repo, "hash-object", "-w", "edited.yaml").strip()
    git(git_repo, "read-tree", "--index-output=.git/tmp-index", tip)
    import os
    import subprocess

    env = {**os.environ, "GIT_INDEX_FILE": str(git_repo / ".git" / "tmp-index")}
    subprocess.run(
        ["git", "-C", str(git_repo), "update-index", "--cacheinfo", f"100644,{blob},{path}"], env=env, check=True
    )
    tree = subprocess.run(
        ["git", "-C", str(git_repo), "write-tree"], env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    commit = git(git_repo, "commit-tree", tree, "-p", tip, "-m", "hand edit").strip()
    git(git_repo, "update-ref", "refs/heads/loopx/state", commit)
    result = cli("protocol", "check", "-g", GOAL, "--format", "json")
    assert result.code == 1
    report = json.loads(result.out)
    conforms("loopx_protocol_check_v0", report)
    failed = {c["check_id"] for c in report["checks"] if not c["ok"]}
    assert "source-projection-separated" in failed
    text_out = cli("protocol", "check")
    assert text_out.code == 1 and "FAIL  source-projection-separated" in text_out.out


def test_a_check_with_nothing_to_look_at_says_not_applicable(repo, cli):
    report = repo.protocol_check(GOAL)  # two agents, no todo: no next action to select
    lane = next(c for c in report.checks if c.check_id == "lane-next-action")
    assert lane.ok and not lane.applicable and "not applicable" in lane.evidence
    text = cli("protocol", "check", "-g", GOAL)
    assert text.code == 0 and "n/a   lane-next-action" in text.out and "not applicable yet" in text.out
    repo.todo_add(GOAL, "Ship", todo_id="ship", now=NOW)
    lane = next(c for c in repo.protocol_check(GOAL).checks if c.check_id == "lane-next-action")
    assert lane.ok and lane.applicable and "alice -> ship (runnable)" in lane.evidence
    conforms("loopx_protocol_check_v0", json.loads(cli("protocol", "check", "--format", "json").out))

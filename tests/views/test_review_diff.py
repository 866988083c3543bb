"""`loopx review-diff`: the markdown of a scripted scenario against a golden file, the JSON shape,
and issues that fail the review."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from loopx_git.store import layout
from tests.conftest import GOAL, Cli, git, state_tip

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "review_diff.md"


def scenario(repo) -> str:
    """A day of work on goal g1, at fixed times; returns the base commit."""
    base = repo.tip
    t = iter(f"2026-03-02T{h:02d}:00:00Z" for h in range(8, 24))
    repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", priority="P1", now=next(t))
    repo.todo_add(GOAL, "Write the parser", todo_id="t2", now=next(t))
    repo.todo_add(GOAL, "Hand-rolled parser (old plan)", todo_id="t3", now=next(t))
    repo.todo_claim(GOAL, "t1", "alice", now=next(t))
    repo.todo_claim(GOAL, "t2", "bob", now=next(t))
    repo.todo_complete(GOAL, "t1", evidence=["tests/test_tokenizer.py"], actor="alice", now=next(t))
    blocked = repo.todo_update(GOAL, "t2", "blocked", reason="waiting for the grammar review", actor="bob", now=next(t))
    repo.rollback(GOAL, event_id=blocked.event_ids[0], reason="the review was already done", now=next(t))
    repo.todo_supersede(GOAL, "t3", "t2", "the generated parser replaces it", now=next(t))
    repo.event_append(
        GOAL, "pr_merge", pr_ref="example/parser#12", summary="tokenizer merged", agent_id="alice", now=next(t)
    )
    repo.event_append(
        GOAL,
        "handoff",
        agent_id="alice",
        to_agent_id="bob",
        summary="grammar notes are in docs/grammar.md",
        now=next(t),
    )
    repo.event_append(
        GOAL, "note", gate_id="gate_grammar", summary="grammar review approved; ask ops@example.org", now=next(t)
    )
    repo.refresh_state(
        GOAL, "progress", agent_id="alice", todo_id="t1", delivery_outcome="outcome_progress", now=next(t)
    )
    repo.goal_update(GOAL, add_acceptance=["the parser handles the whole grammar"], now=next(t))
    return base


def normalize(text: str) -> str:
    """Commit shas and generated ids differ run to run; the review around them must not."""
    text = re.sub(r"\b(evt|rb|run)_[0-9a-z]{26}\b", r"\1_<id>", text)
    return re.sub(r"`[0-9a-f]{7}`|\b[0-9a-f]{40}\b", "<sha>", text)


def test_markdown_matches_the_golden_file(repo, git_repo, capsys):
    base = scenario(repo)
    result = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/state", "--format", "markdown")
    assert result.code == 0, result.err
    got = normalize(result.out.replace(base, "BASE"))
    if os.environ.get("LOOPX_UPDATE_GOLDEN"):
        GOLDEN.write_text(got)
    assert got == GOLDEN.read_text()


def test_json_groups_changes_and_lists_warnings(repo, git_repo, capsys):
    base = scenario(repo)
    data = Cli(git_repo, capsys).json("review-diff", f"{base}..loopx/state")
    assert data["schema_version"] == "loopx_review_diff_v0" and data["ok"] is True
    todos = [(c["change"], c["todo_id"]) for c in data["changes"] if c["section"] == "todos"]
    assert ("completed", "t1") in todos and ("blocked", "t2") in todos and ("superseded", "t3") in todos
    assert {c["section"] for c in data["changes"]} == {
        "todos",
        "goal",
        "gates",
        "handoffs",
        "rollbacks",
        "runs",
        "facts",
    }
    assert [i["code"] for i in data["issues"]] == []  # example.org is an example domain: no finding
    assert len(data["commits"]) == 14


def test_links_follow_the_origin_remote(repo, git_repo, capsys):
    base = repo.tip
    repo.todo_add(GOAL, "x", todo_id="tx")
    git(git_repo, "remote", "add", "origin", "git@github.com:example/parser.git")
    out = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/state", "--format", "markdown").out
    assert f"(https://github.com/example/parser/commit/{state_tip(git_repo)})" in out


def checkout(git_repo, tmp_path, name) -> Path:
    """A work tree of the state branch, to change it by plain git as a careless tool would."""
    work = tmp_path / name
    git(git_repo, "worktree", "add", "-q", str(work), "loopx/state")
    return work


def test_a_range_with_an_edited_event_fails_the_review(repo, git_repo, tmp_path, capsys):
    base = repo.tip
    repo.todo_add(GOAL, "x", todo_id="tx")
    work = checkout(git_repo, tmp_path, "edit")
    event = sorted(work.glob("goals/g1/events/**/*.json"))[-1]
    data = json.loads(event.read_text())
    data["summary"] = "edited"
    event.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    git(work, "commit", "-q", "-am", "edit")
    result = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/state", "--format", "json")
    assert result.code == 1 and "record-changed" in {i["code"] for i in json.loads(result.out)["issues"]}


def test_a_secret_that_reached_a_branch_is_an_issue(repo, git_repo, tmp_path, capsys):
    base = repo.tip
    repo.todo_add(GOAL, "x", todo_id="tx")
    work = checkout(git_repo, tmp_path, "leak")
    source = sorted(work.glob("goals/g1/events/**/*.json"))[-1]
    data = json.loads(source.read_text())
    data["event_id"] = data["event_id"][:-1] + ("x" if data["event_id"][-1] != "x" else "y")
    data["lamport"] += 1
    data["summary"] = "token " + "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    planted = work / layout.event_path(GOAL, data["event_id"], data["recorded_at"])
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "planted by plain git")
    result = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/state", "--format", "json")
    issues = json.loads(result.out)["issues"]
    assert result.code == 1 and "safety:github-token" in {i["code"] for i in issues}
    assert "gh" + "p_" not in result.out


def test_a_bad_range_is_a_clear_error(cli):
    result = cli("review-diff", "loopx/state")  # what the command line alone shows malformed: exit 2
    assert result.code == 2 and "is not BASE..HEAD" in result.err
    result = cli("review-diff", "loopx/state...loopx/state")  # git's three dots mean something else
    assert result.code == 2 and "uses '...'; give the two-dot form" in result.err
    assert cli("review-diff", "nope..loopx/state").code == 1

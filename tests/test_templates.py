"""templates/: the GitHub Actions workflow is valid YAML, and the commands it runs pass here on a
proposal pushed with `loopx propose` (the last step, `gh pr comment`, needs GitHub itself)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ruamel.yaml import YAML

import loopx_git
from tests.conftest import git
from tests.sync.helpers import GOAL, bare, clone

WORKFLOW = Path(__file__).resolve().parents[1] / "templates" / "github" / "loopx-state-review.yml"


def load() -> dict:
    return YAML(typ="safe", pure=True).load(WORKFLOW.read_text())


def test_the_workflow_is_valid_yaml_for_pull_requests_into_the_state_branch():
    flow = load()
    assert flow["on"]["pull_request"]["branches"] == ["loopx/state"]
    assert flow["permissions"] == {"contents": "read", "pull-requests": "write"}
    steps = flow["jobs"]["review"]["steps"]
    names = [s.get("name") for s in steps if "run" in s]
    assert names == ["Install loopx-git", "Fetch the state branch and the proposal", "Verify the proposed state",
                     "Review the state diff", "Post the review"]  # fmt: skip
    for step in steps:  # branch names are attacker-controlled: no ${{ }} inside a shell line
        assert "${{" not in step.get("run", "")


def test_the_commands_it_runs_pass_on_a_proposal(tmp_path):
    remote = bare(tmp_path / "remote.git")
    author = clone(tmp_path / "author", str(remote))
    with loopx_git.open(author) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.sync()
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        proposal = repo.propose("loopx/proposals/agent-a")
    assert git(remote, "rev-parse", "loopx/state") != git(remote, "rev-parse", "loopx/proposals/agent-a")
    git(remote, "update-ref", "refs/pull/7/head", proposal["tip"])  # what GitHub keeps for pull request 7
    checkout = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(remote), str(checkout))
    env = {**os.environ, "BASE_REF": "loopx/state", "PR_NUMBER": "7"}
    runs = {s["name"]: s["run"] for s in load()["jobs"]["review"]["steps"] if "run" in s}
    for name in ("Fetch the state branch and the proposal", "Verify the proposed state", "Review the state diff"):
        done = subprocess.run(["bash", "-e", "-c", runs[name]], cwd=checkout, env=env, capture_output=True, text=True)
        assert done.returncode == 0, (name, done.stderr)
    review = (checkout / "review.md").read_text()
    assert review.startswith("## loopx state review: `origin/loopx/state`..`origin/proposal`")
    assert "| added | t1 |  | Write the tokenizer (P2) |" in review

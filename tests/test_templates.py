"""templates/: the GitHub Actions workflow is valid YAML, and the commands it runs pass here on a
proposal pushed with `loopx propose` (the last step, `gh pr comment`, needs GitHub itself)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

import loopx_git
from loopx_git.safety.scan import fingerprint
from tests.conftest import git
from tests.plumbing import plain_commit
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
    assert names == [
        "Install loopx-git",
        "Fetch the state branch and the proposal",
        "Verify the proposed state",
        "Review the state diff",
        "Post the review",
    ]
    for step in steps:  # branch names are attacker-controlled: no ${{ }} inside a shell line
        assert "${{" not in step.get("run", "")
    # the work tree is the trusted default branch, never the pull request (it could carry its own allowlist)
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    for name in ("Verify the proposed state", "Review the state diff"):
        run = next(s["run"] for s in steps if s.get("name") == name)
        assert '--policy-from "${LOOPX_POLICY_FROM:-origin/$DEFAULT_BRANCH}"' in run
    assert flow["jobs"]["review"]["env"]["LOOPX_POLICY_FROM"] == "${{ vars.LOOPX_POLICY_FROM }}"
    assert flow["jobs"]["review"]["env"]["DEFAULT_BRANCH"] == "${{ github.event.repository.default_branch }}"
    review_step = next(s for s in steps if s.get("name") == "Review the state diff")
    assert review_step["if"] == "always()", "a proposal that fails verify still gets its review"


def ci_env(tmp_path: Path, **values: str) -> dict:
    """The job's environment: `pip install` put a `loopx` on PATH there; here it is this
    interpreter's loopx, whether or not its bin folder is on PATH."""
    bin_dir = tmp_path / "ci-bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "loopx"
    shim.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m loopx_git \"$@\"\n")
    shim.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", **values}


def test_the_commands_it_runs_pass_on_a_proposal(tmp_path):
    remote = bare(tmp_path / "remote.git")
    author = clone(tmp_path / "author", str(remote))
    default_branch(author, remote)
    with loopx_git.open(author) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.sync()
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        proposal = repo.propose("loopx/proposals/agent-a")
    assert git(remote, "rev-parse", "loopx/state") != git(remote, "rev-parse", "loopx/proposals/agent-a")
    git(remote, "update-ref", "refs/pull/7/head", proposal["tip"])  # what GitHub keeps for pull request 7
    checkout = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(remote), str(checkout))
    env = ci_env(tmp_path, BASE_REF="loopx/state", PR_NUMBER="7", DEFAULT_BRANCH="main")
    done = run_steps(
        checkout, env, "Fetch the state branch and the proposal", "Verify the proposed state", "Review the state diff"
    )  # stops at the first step that fails
    assert done.returncode == 0, (done.args, done.stderr)
    review = (checkout / "review.md").read_text()
    assert review.startswith("## loopx state review: `origin/loopx/state`..`origin/proposal`")
    assert "| added | t1 |  | Write the tokenizer (P2) |" in review


def default_branch(author: Path, remote: Path) -> None:
    """The project's own history on main, as every GitHub repository has a default branch."""
    git(author, "commit", "-q", "--allow-empty", "-m", "the project")
    git(author, "push", "-q", "--no-verify", str(remote), "main:refs/heads/main")


def run_steps(checkout: Path, env: dict, *names: str) -> subprocess.CompletedProcess:
    runs = {s["name"]: s["run"] for s in load()["jobs"]["review"]["steps"] if "run" in s}
    done = None
    for name in names:
        done = subprocess.run(["bash", "-e", "-c", runs[name]], cwd=checkout, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            break
    return done


def test_the_review_takes_no_policy_from_the_pull_request(tmp_path):
    """A proposal carrying a token and a `.publicsafe-allow` entry for it — committed in its state
    tree, and present in the CI work tree as a checkout of the pull request would leave it — fails
    the review; the team's policy on main (LOOPX_POLICY_FROM) is what can allow it."""
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    allow = f"github-token {fingerprint(token)}  # mine\n"
    remote = bare(tmp_path / "remote.git")
    author = clone(tmp_path / "author", str(remote))
    default_branch(author, remote)
    with loopx_git.open(author) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.sync()
    (author / ".publicsafe-allow").write_text(allow)  # the author's own policy let the write through
    with loopx_git.open(author) as repo:
        repo.todo_add(GOAL, f"deploy with {token}", todo_id="t1")
        tip = repo.tip
    head = plain_commit(author, tip, "allow my token", {".publicsafe-allow": allow})
    git(author, "push", "-q", "--no-verify", str(remote), f"{tip}:refs/pull/8/head", f"{head}:refs/pull/7/head")
    checkout = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(remote), str(checkout))
    (checkout / ".publicsafe-allow").write_text(allow)
    env = ci_env(tmp_path, BASE_REF="loopx/state", PR_NUMBER="7", DEFAULT_BRANCH="main")
    verified = run_steps(checkout, env, "Fetch the state branch and the proposal", "Verify the proposed state")
    assert verified.returncode == 1 and "safety:github-token" in verified.stdout
    assert token not in verified.stdout + verified.stderr
    done = run_steps(checkout, env, "Fetch the state branch and the proposal", "Review the state diff")
    assert done.returncode == 1, done.stderr
    review = (checkout / "review.md").read_text()
    assert token not in review and "gh" + "p_" not in review
    assert f"[REDACTED:github-token] fp={fingerprint(token)}" in review
    assert "| safety:github-token |" in review and "| policy-change | `.publicsafe-allow` |" in review
    # the team's policy, committed on main: it allows the token, and the policy change still fails PR 7
    git(author, "add", ".publicsafe-allow")
    git(author, "commit", "-q", "--no-verify", "-m", "allow the demo token")
    git(author, "push", "-q", "--no-verify", str(remote), "main:refs/heads/main")
    git(checkout, "fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main")
    trusted = {**env, "LOOPX_POLICY_FROM": "origin/main"}
    done = run_steps(checkout, trusted, "Fetch the state branch and the proposal", "Review the state diff")
    review = (checkout / "review.md").read_text()
    assert done.returncode == 1 and "safety:github-token" not in review and "| policy-change |" in review
    done = run_steps(
        checkout, {**trusted, "PR_NUMBER": "8"}, "Fetch the state branch and the proposal", "Review the state diff"
    )
    assert done.returncode == 0, done.stderr
    assert "verify ok, no safety findings" in (checkout / "review.md").read_text()

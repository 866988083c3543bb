"""Which safety policy a check of the state branch uses (issue 9, item 3): never one from the change
under review or from a checkout of it; the work tree's where the work tree is the project's own."""

from __future__ import annotations

from pathlib import Path

import loopx_git
from loopx_git.safety.scan import fingerprint
from tests.conftest import GOAL, Cli, git

TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"


def allowed_token_repo(git_repo: Path) -> None:
    """A project whose committed .publicsafe-allow lets a demo token onto its state branch."""
    (git_repo / ".publicsafe-allow").write_text(f"github-token {fingerprint(TOKEN)}  # the demo token\n")
    git(git_repo, "add", ".publicsafe-allow")
    git(git_repo, "commit", "-q", "--no-verify", "-m", "allow the demo token")
    with loopx_git.open(git_repo) as repo:
        repo.todo_add(GOAL, f"rotate {TOKEN} after the demo", todo_id="t-demo")


def test_verify_uses_the_projects_policy_but_never_a_state_checkouts(repo, git_repo, tmp_path, capsys):
    allowed_token_repo(git_repo)
    assert Cli(git_repo, capsys)("verify").code == 0  # the project's work tree: its policy, as writes use
    checkout = tmp_path / "state-checkout"  # what CI checking out a state pull request leaves
    git(git_repo, "worktree", "add", "-q", "--detach", str(checkout), "loopx/state")
    (checkout / ".publicsafe-allow").write_text(f"github-token {fingerprint(TOKEN)}  # not trusted here\n")
    in_checkout = Cli(checkout, capsys)
    refused = in_checkout("verify")
    assert refused.code == 1 and "safety:github-token" in refused.out and TOKEN not in refused.out
    assert in_checkout("verify", "--policy-from", "main").code == 0  # the trusted branch, named


def test_review_diff_refuses_a_policy_from_the_change_under_review(repo, git_repo, capsys):
    base = repo.tip
    repo.todo_add(GOAL, "a change", todo_id="t-new")
    head = repo.tip
    cli = Cli(git_repo, capsys)
    result = cli("review-diff", f"{base}..{head}", "--policy-from", head)
    assert result.code == 1 and "error[invalid-field]: field 'policy_from'" in result.err
    assert "a change never supplies the policy it is reviewed by" in result.err
    assert cli("review-diff", f"{base}..{head}", "--policy-from", "main").code == 0

"""templates/: the GitHub Actions workflow is valid YAML, and its steps run here as written, with
bash, on a proposal pushed with `loopx propose`: what GitHub itself provides — `gh`, the job
summary, the pip that installs loopx — is stood in for by recorders; git and loopx are real."""

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

ROOT = Path(__file__).resolve().parents[1]  # loopx-git's own repository
WORKFLOW = ROOT / "templates" / "github" / "loopx-state-review.yml"


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
        "Fail when verify or the review failed",
    ]
    for step in steps:  # branch names are attacker-controlled: no ${{ }} inside a shell line
        assert "${{" not in step.get("run", "")
    # no install from a package index by default: a bare name is whatever anyone registered under it
    install = next(s["run"] for s in steps if s.get("name") == "Install loopx-git")
    assert ":-loopx-git" not in install and "pip install loopx-git" not in install
    assert flow["jobs"]["review"]["env"]["LOOPX_GIT_SPEC"] == "${{ vars.LOOPX_GIT_SPEC }}"
    # a fork's pull request is told apart by repository names passed through the environment
    assert flow["jobs"]["review"]["env"]["HEAD_REPO"] == "${{ github.event.pull_request.head.repo.full_name }}"
    assert flow["jobs"]["review"]["env"]["THIS_REPO"] == "${{ github.repository }}"
    assert all("if" not in s for s in steps), "a failed install or fetch skips the rest: there is nothing to post"
    # the work tree is the trusted default branch, never the pull request (it could carry its own allowlist)
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["ref"] == "${{ github.event.repository.default_branch }}"
    for name in ("Verify the proposed state", "Review the state diff"):
        run = next(s["run"] for s in steps if s.get("name") == name)
        assert '--policy-from "${LOOPX_POLICY_FROM:-origin/$DEFAULT_BRANCH}"' in run
    assert flow["jobs"]["review"]["env"]["LOOPX_POLICY_FROM"] == "${{ vars.LOOPX_POLICY_FROM }}"
    assert flow["jobs"]["review"]["env"]["DEFAULT_BRANCH"] == "${{ github.event.repository.default_branch }}"
    verify_step = next(s for s in steps if s.get("name") == "Verify the proposed state")
    assert verify_step["continue-on-error"] is True, "a proposal that fails verify still gets its review"
    assert [s["name"] for s in steps if s.get("continue-on-error")] == ["Verify the proposed state"]


SAME_REPO = {"HEAD_REPO": "example/project", "THIS_REPO": "example/project"}


def ci_env(tmp_path: Path, **values: str) -> dict:
    """The job's environment: `pip install` put a `loopx` on PATH there; here it is this
    interpreter's loopx, whether or not its bin folder is on PATH. GitHub's side of the job
    is stood in for: `gh` and the `python` that would run pip only record how they were called
    (see ``calls``), and the job summary is a file (see ``summary``)."""
    bin_dir = tmp_path / "ci-bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "loopx"
    shim.write_text(f"#!/bin/sh\nexec '{sys.executable}' -m loopx_git \"$@\"\n")
    shim.chmod(0o755)
    (tmp_path / "calls").mkdir(exist_ok=True)
    for name in ("gh", "python"):
        fake = bin_dir / name
        fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{tmp_path / 'calls' / name}'\n")
        fake.chmod(0o755)
    return {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "LOOPX_GIT_SPEC": "",
        "LOOPX_POLICY_FROM": "",
        **SAME_REPO,
        **values,
    }


def calls(tmp_path: Path, name: str) -> list[str]:
    """How the stand-in for ``gh`` or ``python`` was called, one line per call."""
    path = tmp_path / "calls" / name
    return path.read_text().splitlines() if path.exists() else []


def summary(tmp_path: Path) -> str:
    path = tmp_path / "summary.md"
    return path.read_text() if path.exists() else ""


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
    env = ci_env(tmp_path, BASE_REF="loopx/state", PR_NUMBER="7", DEFAULT_BRANCH="main", LOOPX_GIT_SPEC=str(ROOT))
    done = run_job(checkout, env)  # stops at the first step that fails
    assert done.returncode == 0, (done.args, done.stdout, done.stderr)
    review = (checkout / "review.md").read_text()
    assert review.startswith("## loopx state review: `origin/loopx/state`..`origin/proposal`")
    assert "| added | t1 |  | Write the tokenizer (P2) |" in review
    assert "failed" not in review
    # a pull request from this repository: commented on, and the job summary holds the review too
    assert calls(tmp_path, "python") == [f"-m pip install {ROOT}"]
    assert calls(tmp_path, "gh") == ["pr comment 7 --body-file comment.md"]
    assert (checkout / "comment.md").read_text() == review == summary(tmp_path)


def default_branch(author: Path, remote: Path) -> None:
    """The project's own history on main, as every GitHub repository has a default branch."""
    git(author, "commit", "-q", "--allow-empty", "-m", "the project")
    git(author, "push", "-q", "--no-verify", str(remote), "main:refs/heads/main")


def run_steps(checkout: Path, env: dict, *names: str) -> subprocess.CompletedProcess:
    """The named steps in order, as GitHub runs them: the default shell's flags, and a failing step
    ends the job unless it says ``continue-on-error``. Returns the last step run."""
    steps = {s["name"]: s for s in load()["jobs"]["review"]["steps"] if "run" in s}
    done = None
    for name in names:
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", steps[name]["run"]],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0 and not steps[name].get("continue-on-error"):
            break
    return done


def run_job(checkout: Path, env: dict) -> subprocess.CompletedProcess:
    """Every step with a shell line, install to the last."""
    return run_steps(checkout, env, *(s["name"] for s in load()["jobs"]["review"]["steps"] if "run" in s))


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
    done = run_steps(checkout, env, *REVIEW)
    assert done.returncode == 1, done.stderr
    review = (checkout / "review.md").read_text()
    assert token not in review and "gh" + "p_" not in review
    assert f"[REDACTED:github-token] fp={fingerprint(token)}" in review
    assert "| safety:github-token |" in review and "| policy-change | `.publicsafe-allow` |" in review
    assert "### verify failed (exit 1)" in review
    # the team's policy, committed on main: it allows the token, and the policy change still fails PR 7
    git(author, "add", ".publicsafe-allow")
    git(author, "commit", "-q", "--no-verify", "-m", "allow the demo token")
    git(author, "push", "-q", "--no-verify", str(remote), "main:refs/heads/main")
    git(checkout, "fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main")
    trusted = {**env, "LOOPX_POLICY_FROM": "origin/main"}
    done = run_steps(checkout, trusted, *REVIEW)
    review = (checkout / "review.md").read_text()
    assert done.returncode == 1 and "safety:github-token" not in review and "| policy-change |" in review
    assert "loopx review-diff failed::exit 1" in done.stdout
    # verify allows the token too, and still refuses the policy file as no path of a state branch
    assert "### verify failed (exit 1)" in review and ".publicsafe-allow: stray-file" in review
    done = run_steps(checkout, {**trusted, "PR_NUMBER": "8"}, *REVIEW)
    assert done.returncode == 0, done.stderr
    assert "verify ok, no safety findings" in (checkout / "review.md").read_text()


REVIEW = (  # the steps between the install and the post
    "Fetch the state branch and the proposal",
    "Verify the proposed state",
    "Review the state diff",
    "Fail when verify or the review failed",
)


def test_the_install_needs_a_source_you_pin(git_repo, tmp_path):
    """Unset outside loopx-git's own repository, the job stops at the install with the variable
    to set and an example; nothing is installed, and never a bare name from a package index."""
    env = ci_env(tmp_path)
    done = run_steps(git_repo, env, "Install loopx-git")
    assert done.returncode == 1
    assert "::error title=LOOPX_GIT_SPEC is not set::set the repository variable LOOPX_GIT_SPEC" in done.stdout
    assert "e.g. git+https://github.com/<owner>/loopx-git@<tag-or-commit>" in done.stdout
    assert "fork" not in done.stdout
    # GitHub passes no repository variables to a fork's pull request: the message says where the pin goes then
    forked = run_steps(git_repo, {**env, "HEAD_REPO": "someone/project-fork"}, "Install loopx-git")
    assert forked.returncode == 1 and "::error title=pull request from a fork::" in forked.stdout
    assert "write the spec into this workflow's env line LOOPX_GIT_SPEC" in forked.stdout
    assert calls(tmp_path, "python") == []
    # look-alikes of loopx-git's repository are not it: the package folder and the project name, both
    (git_repo / "loopx_git").mkdir()
    (git_repo / "loopx_git" / "__init__.py").write_text("")
    (git_repo / "pyproject.toml").write_text('[project]\nname = "my-loopx-tools"\n')
    assert run_steps(git_repo, env, "Install loopx-git").returncode == 1
    (git_repo / "loopx_git" / "__init__.py").unlink()
    (git_repo / "pyproject.toml").write_text('[project]\nname = "loopx-git"\n')
    assert run_steps(git_repo, env, "Install loopx-git").returncode == 1
    assert calls(tmp_path, "python") == []
    # the variable set: what it names is installed, whichever repository this is
    done = run_steps(git_repo, {**env, "LOOPX_GIT_SPEC": str(ROOT)}, "Install loopx-git")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"installing loopx-git from {ROOT}" in done.stdout and "::warning" not in done.stdout
    assert calls(tmp_path, "python") == [f"-m pip install {ROOT}"]


def test_loopx_git_itself_installs_its_checkout(tmp_path):
    done = run_steps(ROOT, ci_env(tmp_path), "Install loopx-git")
    assert done.returncode == 0, done.stdout + done.stderr
    assert calls(tmp_path, "python") == ["-m pip install ."]


def test_a_bare_name_is_installed_as_pinned_with_a_warning(git_repo, tmp_path):
    done = run_steps(git_repo, ci_env(tmp_path, LOOPX_GIT_SPEC="loopx-git==1.0"), "Install loopx-git")
    assert done.returncode == 0
    assert "::warning title=LOOPX_GIT_SPEC::'loopx-git==1.0' is a name on a package index" in done.stdout
    assert calls(tmp_path, "python") == ["-m pip install loopx-git==1.0"]


def proposal_clone(tmp_path: Path, stray: dict[str, str] | None = None) -> Path:
    """The CI work tree of a project whose pull request 7 proposes todo t1 (and, by plain git,
    ``stray`` files, which verify refuses)."""
    remote = bare(tmp_path / "remote.git")
    author = clone(tmp_path / "author", str(remote))
    default_branch(author, remote)
    with loopx_git.open(author) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.sync()
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        tip = repo.tip
    if stray:
        tip = plain_commit(author, tip, "notes beside the state", stray)
    git(author, "push", "-q", "--no-verify", str(remote), f"{tip}:refs/pull/7/head")
    checkout = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(remote), str(checkout))
    return checkout


def test_a_pull_request_from_a_fork_is_reviewed_in_the_job_summary(tmp_path):
    """Its token is read-only: no comment is attempted, the job summary holds the review."""
    checkout = proposal_clone(tmp_path)
    env = ci_env(
        tmp_path,
        BASE_REF="loopx/state",
        PR_NUMBER="7",
        DEFAULT_BRANCH="main",
        LOOPX_GIT_SPEC=str(ROOT),
        HEAD_REPO="someone/project-fork",
        THIS_REPO="example/project",
    )
    steps = [s["name"] for s in load()["jobs"]["review"]["steps"] if "run" in s]
    posted = run_steps(checkout, env, *steps[: steps.index("Post the review") + 1])
    assert posted.returncode == 0, posted.stdout + posted.stderr
    assert "::notice title=review in the job summary::" in posted.stdout
    assert calls(tmp_path, "gh") == []
    review = (checkout / "review.md").read_text()
    assert "| added | t1 |" in review and summary(tmp_path) == review
    assert run_steps(checkout, env, "Fail when verify or the review failed").returncode == 0
    # a workflow run that does not know where the pull request comes from does not comment either
    assert run_steps(checkout, {**env, "HEAD_REPO": ""}, "Post the review").returncode == 0
    assert calls(tmp_path, "gh") == []


def test_a_proposal_that_fails_verify_is_posted_with_the_failure_and_fails_the_job(tmp_path):
    stray = {f"notes/n{i:03d}.txt": "a note\n" for i in range(250)}
    checkout = proposal_clone(tmp_path, stray)
    env = ci_env(tmp_path, BASE_REF="loopx/state", PR_NUMBER="7", DEFAULT_BRANCH="main", LOOPX_GIT_SPEC=str(ROOT))
    done = run_job(checkout, env)
    assert done.returncode == 1
    assert "::error title=loopx verify failed::exit 1" in done.stdout
    review = (checkout / "review.md").read_text()
    assert "| added | t1 |" in review  # the review itself is there
    section = review.split("### verify failed (exit 1)\n\n", 1)[1]
    verify_out = (checkout / "verify.txt").read_text()
    assert "notes/n000.txt" in verify_out and "    " + verify_out.splitlines()[0] in section
    lines = section.rstrip("\n").splitlines()
    # bounded, and every line of the output indented: none can close the block and read as markdown
    assert len(verify_out.splitlines()) > 200 and len([line for line in lines if line.startswith("    ")]) == 200
    assert lines[-1] == f"({len(verify_out.splitlines()) - 200} more lines in the job log)"
    assert all(line.startswith("    ") for line in lines[:200])
    assert calls(tmp_path, "gh") == ["pr comment 7 --body-file comment.md"]
    # 250 issues and their verify lines: past what a comment holds; the job summary has it whole
    assert summary(tmp_path) == review and len(review.encode()) > 60000
    comment = (checkout / "comment.md").read_text()
    assert comment == review[:60000] + "\n\n(cut here: the whole review is in the job summary)\n"

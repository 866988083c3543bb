"""`loopx review-diff` never prints a flagged value, and never takes its safety policy from the
change under review: a proposal that carries a token and a `.publicsafe-allow` entry for it (in its
state tree, or in the work tree CI checks out from it) still fails, and the policy change itself is
an issue. Tokens are assembled at run time; commits outside loopx are made with git plumbing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loopx_git
from loopx_git.safety.scan import fingerprint
from tests.conftest import GOAL, Cli, git, state_tip
from tests.plumbing import plain_commit


def token(body: str) -> str:
    return "gh" + "p_" + body


T_TEXT = token("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A")  # in a todo's text
T_ID = token("Zy9Xw7Vu5Ts3Rq1Po9Nm7Lk5Ji3Hg1Fe9Dc7B")  # as a todo id
T_SUBJECT = token("Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz0Xc2Vb4N")  # in a commit subject written by plain git
T_REF = token("Mn3Bv5Cx7Zl9Kj2Hg4Fd6Sa8Po1Iu3Yt5Re7W")  # in a branch name
TOKENS = (T_TEXT, T_ID, T_SUBJECT, T_REF)


def allow(*values: str) -> str:
    return "".join(f"github-token {fingerprint(v)}  # mine, honest\n" for v in values)


def propose(
    repo, git_repo: Path, files: dict[str, str] | None = None, branch: str = "loopx/proposals/a"
) -> tuple[str, str]:
    """An agent's proposal: two todos written through the API while the author's own work-tree
    policy allowed their tokens, then a commit by plain git (token in its subject, ``files`` in
    its tree). The commits go to ``branch``; loopx/state stays at the base. Returns (base, head)."""
    base = repo.tip
    own_policy = git_repo / ".publicsafe-allow"
    own_policy.write_text(allow(T_TEXT, T_ID))
    with loopx_git.open(git_repo) as author:
        author.todo_add(GOAL, f"deploy with {T_TEXT}", todo_id="t9")
        author.todo_add(GOAL, "rotate it", todo_id=T_ID)
        tip = author.tip
    own_policy.unlink()
    head = plain_commit(git_repo, tip, f"ship it with {T_SUBJECT}", files)
    git(git_repo, "update-ref", f"refs/heads/{branch}", head)
    git(git_repo, "update-ref", "refs/heads/loopx/state", base)
    return base, head


def assert_no_token(text: str) -> None:
    for value in TOKENS:
        assert value not in text and value[4:] not in text
    assert "gh" + "p_" not in text


def test_no_format_prints_a_flagged_value(repo, git_repo, capsys):
    base, _ = propose(repo, git_repo, branch=f"proposals/{T_REF}")
    run = Cli(git_repo, capsys)
    for fmt in ("text", "markdown", "json"):
        result = run("review-diff", f"{base}..proposals/{T_REF}", "--format", fmt)
        assert result.code == 1, (fmt, result.err)
        assert_no_token(result.out + result.err)
        for value in TOKENS:
            if fmt == "text" and value == T_SUBJECT:  # text lists no commit subjects: its issue names the token
                assert f"github-token (block) fp={fingerprint(value)}" in result.out
            else:
                assert f"[REDACTED:github-token] fp={fingerprint(value)}" in result.out, (fmt, value)
    data = json.loads(result.out)
    assert data["head"] == f"proposals/[REDACTED:github-token] fp={fingerprint(T_REF)}"
    rows = {c["todo_id"]: c for c in data["changes"]}
    assert rows["t9"]["detail"] == f"deploy with [REDACTED:github-token] fp={fingerprint(T_TEXT)} (P2)"
    assert f"[REDACTED:github-token] fp={fingerprint(T_ID)}" in rows
    assert data["commits"][-1]["subject"] == f"ship it with [REDACTED:github-token] fp={fingerprint(T_SUBJECT)}"
    issues = {(i["code"], i["path"], i["commit"]) for i in data["issues"]}
    assert ("safety:github-token", "<commit message>", data["head_sha"]) in issues  # plain git wrote it: still an issue
    assert {i["message"].rsplit("fp=", 1)[1] for i in data["issues"]} >= {
        fingerprint(v) for v in (T_TEXT, T_ID, T_SUBJECT)
    }
    assert data["ok"] is False


def test_a_token_in_a_commit_subject_alone_fails_the_review(repo, git_repo, capsys):
    base = repo.tip
    head = plain_commit(git_repo, base, f"note {T_SUBJECT}")
    git(git_repo, "update-ref", "refs/heads/loopx/proposals/a", head)
    result = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/proposals/a", "--format", "markdown")
    assert result.code == 1 and "safety:github-token" in result.out
    assert f"fp={fingerprint(T_SUBJECT)}" in result.out
    assert_no_token(result.out + result.err)


def test_a_ref_that_names_no_commit_is_not_echoed(cli, git_repo):
    tip = state_tip(git_repo)
    for spec in (f"loopx/state..nope-{T_REF}", f"nope-{T_REF}..loopx/state"):
        result = cli("review-diff", spec)
        assert result.code == 1 and "names no commit" in result.err and f"fp={fingerprint(T_REF)}" in result.err
        assert_no_token(result.err + result.out)
    result = cli("review-diff", f"{T_REF}")  # not a range at all: a usage error
    assert result.code == 2 and "Invalid value for 'BASE..HEAD'" in result.err
    assert_no_token(result.err + result.out)
    result = cli("review-diff", "loopx/state..loopx/state", "--policy-from", f"nope-{T_REF}")
    assert result.code == 1 and "field 'policy_from'" in result.err
    assert_no_token(result.err + result.out)
    assert state_tip(git_repo) == tip


SELF_ALLOWED = {  # where the proposal puts an allowlist for its own tokens
    "state tree": {".publicsafe-allow": allow(*TOKENS)},
    "state tree, nested": {
        "goals/g1/.publicsafe-allow": allow(*TOKENS),
        "goals/g1/pyproject.toml": '[tool.loopx.safety]\nseverity = { "home-path" = "warn" }\n',
    },
    "work tree": None,
    "both": {".publicsafe-allow": allow(*TOKENS)},
}


@pytest.mark.parametrize("where", SELF_ALLOWED)
def test_a_proposal_cannot_allowlist_its_own_secret(repo, git_repo, capsys, where):
    files = SELF_ALLOWED[where]
    base, head = propose(repo, git_repo, files)
    if where in ("work tree", "both"):  # what actions/checkout leaves when it checks out the pull request
        (git_repo / ".publicsafe-allow").write_text(allow(*TOKENS))
    state = state_tip(git_repo)
    result = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/proposals/a", "--format", "json")
    assert result.code == 1, result.err
    data = json.loads(result.out)
    codes = [(i["code"], i["path"]) for i in data["issues"]]
    assert ("safety:github-token", "<commit message>") in codes
    assert sum(code == "safety:github-token" for code, _ in codes) >= 3
    changed = {i["path"]: i for i in data["issues"] if i["code"] == "policy-change"}
    assert sorted(changed) == sorted(files or {})
    for issue in changed.values():
        assert issue["commit"] == head and "adds a safety policy file" in issue["message"]
        assert f"the policy of {base}" in issue["message"]
    assert data["policy_from"] == base and data["policy_commit"] == base
    assert_no_token(result.out + result.err)
    assert state_tip(git_repo) == state  # a review writes nothing


def test_a_policy_change_alone_fails_the_review_and_is_named(repo, git_repo, capsys):
    base = repo.tip
    first = plain_commit(
        git_repo, base, "relax", {"pyproject.toml": "[tool.loopx.safety]\ndisabled_rules = ['email-address']\n"}
    )
    second = plain_commit(
        git_repo, first, "relax more", {"pyproject.toml": "[tool.loopx.safety]\nmax_field_bytes = 8192\n"}
    )
    git(git_repo, "update-ref", "refs/heads/loopx/proposals/a", second)
    result = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/proposals/a", "--format", "markdown")
    assert result.code == 1
    assert (
        "| policy-change | `pyproject.toml` | `" + first[:7] + "` | this commit adds a safety policy file" in result.out
    )
    assert (
        "| policy-change | `pyproject.toml` | `" + second[:7] + "` | this commit changes a safety policy file"
        in result.out
    )


def test_an_allowlist_on_the_trusted_side_allows_it(repo, git_repo, capsys):
    base, head = propose(repo, git_repo)
    run = Cli(git_repo, capsys)
    # the team keeps its policy on the project's main branch
    (git_repo / ".publicsafe-allow").write_text(allow(T_TEXT, T_ID, T_SUBJECT) + "# reviewed by the team\n")
    git(git_repo, "add", ".publicsafe-allow")
    git(git_repo, "commit", "-q", "--no-verify", "-m", "allow the revoked demo tokens")
    main = git(git_repo, "rev-parse", "main").strip()
    data = run.json("review-diff", f"{base}..loopx/proposals/a", "--policy-from", "main")
    assert data["ok"] is True and [i for i in data["issues"] if i["code"].startswith("safety:")] == []
    assert data["policy_from"] == "main" and data["policy_commit"] == main
    # the same work-tree file does nothing without --policy-from: the base is the default
    assert run("review-diff", f"{base}..loopx/proposals/a", "--format", "json").code == 1
    # an allowlist committed on the base state commit itself is trusted too: the same proposal, on top of it
    policy = {".publicsafe-allow": allow(T_TEXT, T_ID, T_SUBJECT)}
    trusted = tip = plain_commit(git_repo, base, "policy", policy)
    for commit in git(git_repo, "rev-list", "--reverse", f"{base}..{head}").split():
        tip = plain_commit(
            git_repo,
            tip,
            git(git_repo, "log", "-1", "--format=%B", commit),
            policy,
            tree=git(git_repo, "rev-parse", f"{commit}^{{tree}}").strip(),
        )
    git(git_repo, "update-ref", "refs/heads/loopx/state", trusted)  # a review's base is on the state history
    result = run("review-diff", f"{trusted}..{tip}", "--format", "json")
    data = json.loads(result.out)
    assert [i for i in data["issues"] if i["code"].startswith("safety:") or i["code"] == "policy-change"] == []
    assert data["policy_commit"] == trusted


def test_a_broken_policy_on_the_trusted_side_is_a_clear_refusal(repo, git_repo, capsys):
    base, _ = propose(repo, git_repo)
    (git_repo / "pyproject.toml").write_text("[tool.loopx.safety\n")
    git(git_repo, "add", "pyproject.toml")
    git(git_repo, "commit", "-q", "--no-verify", "-m", "broken")
    result = Cli(git_repo, capsys)("review-diff", f"{base}..loopx/proposals/a", "--policy-from", "main")
    assert result.code == 1 and "the safety policy of main" in result.err and "pyproject.toml" in result.err
    assert result.out == ""

"""`loopx review-diff BASE..HEAD` on two clones of one project: the examples its help prints run as
written, and a range based on the project's code (``main``, ``HEAD~1``) or headed by it is refused
with a hint naming a good range, nothing printed on stdout and no ref moved."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

import loopx_git
from tests.conftest import Cli, git
from tests.sync.helpers import GOAL, bare, clone

STATE = "refs/heads/loopx/state"


def refs(path: Path) -> str:
    return git(path, "for-each-ref", "--format=%(refname) %(objectname)")


@pytest.fixture
def clones(tmp_path) -> tuple[Path, Path]:
    """alice and bob share a remote. alice's state holds t1 (pushed) and t2 (proposed on
    loopx/proposals/agent-a); bob pulled before t1 and has fetched since: his loopx/state is behind
    origin/loopx/state, and the proposal is on no state branch of his."""
    remote = bare(tmp_path / "remote.git")
    alice = clone(tmp_path / "alice", str(remote))
    for subject in ("the project", "more code"):
        git(alice, "commit", "-q", "--allow-empty", "-m", subject)
    git(alice, "push", "-q", "--no-verify", "origin", "main")
    with loopx_git.open(alice) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.sync()
    bob = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(bob) as repo:
        repo.pull()
    with loopx_git.open(alice) as repo:
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        repo.sync()
        repo.todo_add(GOAL, "Write the parser", todo_id="t2")
        repo.propose("loopx/proposals/agent-a")
    git(bob, "fetch", "-q", "origin")
    return alice, bob


def help_examples(cli: Cli, monkeypatch) -> list[list[str]]:
    monkeypatch.setenv("COLUMNS", "200")  # one example per line: rich wraps at the terminal width
    result = cli("review-diff", "--help")
    assert result.code == 0, result.err
    lines = [line.strip() for line in result.out.splitlines() if line.strip().startswith("loopx review-diff ")]
    return [shlex.split(line, comments=True)[1:] for line in lines]


def test_the_examples_in_the_help_run_as_written(clones, capsys, monkeypatch, tmp_path):
    _, bob = clones
    cli = Cli(bob, capsys)
    examples = help_examples(cli, monkeypatch)
    assert len(examples) == 3 and examples[0] == ["review-diff", "loopx/state..origin/loopx/state"]
    before = refs(bob)
    outputs = []
    for argv in examples:
        target = None
        if ">" in argv:  # the shell's redirection, done here
            argv, target = argv[: argv.index(">")], tmp_path / argv[argv.index(">") + 1]
        result = cli(*argv)
        assert result.code == 0, (argv, result.err)
        if target is not None:
            target.write_text(result.out)
        outputs.append(result.out)
    # what a sync would bring: t1, which origin has and bob's loopx/state does not
    assert "t1" in outputs[0] and "Write the tokenizer" in outputs[0] and "t2" not in outputs[0]
    comment = (tmp_path / "comment.md").read_text()
    assert comment.startswith("## loopx state review: `origin/loopx/state`..`origin/loopx/proposals/agent-a`")
    assert "| added | t2 |" in comment and "t1" not in comment  # the proposal alone
    assert "Write the parser" in outputs[2] and "safety policy of origin/main" in outputs[2]
    assert refs(bob) == before  # a review writes nothing


@pytest.mark.parametrize("base", ["main", "HEAD~1", "HEAD", "origin/main"])
def test_a_base_on_the_code_branch_is_refused_with_a_good_range(clones, capsys, base):
    alice, _ = clones
    before = refs(alice)
    for fmt in ("text", "json"):
        result = Cli(alice, capsys)("review-diff", f"{base}..loopx/state", "--format", fmt)
        assert result.code == 1 and result.out == "", (base, fmt, result.out)
        assert "error[base-not-state]: field 'range'" in result.err
        assert f"BASE {base!r}" in result.err and "is not a commit of the state branch's history" in result.err
        assert "the rule: BASE is loopx/state, a remote's copy of it" in result.err
        assert "project's code branch, not the state branch" in result.err
        assert "`loopx review-diff loopx/state..origin/loopx/state`" in result.err
    assert refs(alice) == before


def test_a_refused_range_does_not_echo_a_secret_in_a_ref_name(clones, capsys):
    alice, _ = clones
    token = "gh" + "p_" + "Mn3Bv5Cx7Zl9Kj2Hg4Fd6Sa8Po1Iu3Yt5Re7W"
    git(alice, "branch", f"code-{token}", "main")
    result = Cli(alice, capsys)("review-diff", f"code-{token}..loopx/state")
    assert result.code == 1 and "error[base-not-state]" in result.err and "[REDACTED:github-token]" in result.err
    assert token not in result.err + result.out and token[4:] not in result.err


def test_a_head_with_no_history_in_common_is_refused(clones, capsys):
    alice, _ = clones
    before = refs(alice)
    result = Cli(alice, capsys)("review-diff", "loopx/state..main")
    assert result.code == 1 and result.out == ""
    assert "error[head-not-state]: field 'range': HEAD 'main'" in result.err
    assert "shares no history with BASE 'loopx/state' and is on no copy of the state branch" in result.err
    assert "`loopx review-diff loopx/state..origin/loopx/state`" in result.err
    assert refs(alice) == before


def test_a_clone_that_connected_on_its_own_reviews_what_a_sync_would_bring(clones, capsys, tmp_path):
    """Its loopx/state shares no history with origin's until the first sync: the remote's copy is
    state all the same, and the first example of the help reviews it."""
    alice, _ = clones
    url = git(alice, "remote", "get-url", "origin").strip()
    carol = clone(tmp_path / "carol", url, connect=False)
    git(carol, "config", "user.name", "Carol")  # else her root commit could equal alice's, made in the same second
    # offline when she connects (else connect fetches origin's branch and starts from it): a root of her own
    git(carol, "remote", "set-url", "origin", str(tmp_path / "unreachable.git"))
    with loopx_git.open(carol) as repo:
        repo.connect()
    git(carol, "remote", "set-url", "origin", url)
    git(carol, "fetch", "-q", "origin")
    unrelated = subprocess.run(["git", "-C", str(carol), "merge-base", "loopx/state", "origin/loopx/state"])
    assert unrelated.returncode == 1  # no common ancestor
    result = Cli(carol, capsys)("review-diff", "loopx/state..origin/loopx/state", "--format", "json")
    assert result.code == 0, result.err
    assert {c["todo_id"] for c in json.loads(result.out)["changes"] if c["section"] == "todos"} == {"t1"}


def test_any_copy_of_the_state_history_is_a_base(clones, capsys):
    """A remote's copy the local branch has not caught up with, an earlier commit of the local
    branch, a proposal under review in CI (--state-branch): each is state, and reviews."""
    alice, bob = clones
    cli = Cli(bob, capsys)
    data = json.loads(cli("review-diff", "origin/loopx/state..origin/loopx/proposals/agent-a", fmt="json").out)
    assert [c["todo_id"] for c in data["changes"] if c["section"] == "todos"] == ["t2"]
    assert Cli(alice, capsys)("review-diff", "loopx/state~1..loopx/state").code == 0
    # a head behind the base is an empty review, not a refusal: a sync would bring nothing
    empty = json.loads(cli("review-diff", "origin/loopx/state..loopx/state", fmt="json").out)
    assert empty["commits"] == [] and empty["ok"] is True
    proposal = git(bob, "rev-parse", "origin/loopx/proposals/agent-a").strip()
    git(bob, "update-ref", "refs/remotes/origin/proposal", proposal)
    # a proposal's own commit is on no state branch of bob's, until one names it (as the CI workflow does)
    assert cli("review-diff", f"{proposal}..origin/proposal").code == 1
    ci = cli("--state-branch", "refs/remotes/origin/proposal", "review-diff", f"{proposal}..origin/proposal")
    assert ci.code == 0, ci.err

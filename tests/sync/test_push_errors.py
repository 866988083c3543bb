"""A push that is refused — by the remote's hook or by this clone's own pre-push hook — says which side
refused and shows that side's own lines, redacted; nothing is lost, and no hint suggests rewriting
the append-only state branch."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest

import loopx_git
from loopx_git.errors import PushRefused
from loopx_git.hooks import runner
from tests.conftest import Cli, git
from tests.plumbing import plain_commit
from tests.safety.corpus import SHAPES
from tests.safety.parts import B64, cat, pem, rand
from tests.sync.helpers import GOAL, bare, clone

STATE = "refs/heads/loopx/state"


def planted_token() -> str:
    return SHAPES["github-token"][0](random.Random(11))  # assembled at run time: no literal in this file


def script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def tip(path: Path, ref: str = "loopx/state") -> str:
    return git(path, "rev-parse", ref).strip()


@pytest.fixture
def remote(tmp_path) -> Path:
    return bare(tmp_path / "remote.git")


@pytest.fixture
def alice(tmp_path, remote) -> Path:
    """Connected (no loopx hooks), a goal, synced once; then one unpushed todo."""
    path = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(path) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        assert repo.sync().pushed
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
    return path


def test_a_remote_hook_refusal_names_the_remote_shows_its_lines_redacted_and_loses_nothing(alice, remote, capsys):
    token = planted_token()
    script(
        remote / "hooks" / "pre-receive",
        "".join(f"echo 'banner line {n}'\n" for n in range(25))
        + f"echo 'policy: state pushes need a ticket; token {token} is not accepted here' >&2\nexit 1\n",
    )
    local, published = tip(alice), tip(remote)
    result = Cli(alice, capsys)("sync")
    assert result.code == 1
    err = result.err
    assert "error[push-refused]: remote origin refused the push of loopx/state" in err
    assert "pre-receive hook declined" in err
    assert "policy: state pushes need a ticket; token [REDACTED:github-token]" in err
    assert token not in err and token not in result.out
    assert "banner line 24" in err and "banner line 5\n" not in err  # the last 20 lines, not all of them
    assert "rebase" not in err and "nothing was lost" in err and "hint:" in err
    assert tip(alice) == local and tip(remote) == published  # nothing lost, nothing half-published

    (remote / "hooks" / "pre-receive").unlink()  # the remote accepts again: the same commits go out
    assert Cli(alice, capsys).json("sync")["pushed"]
    assert tip(remote) == local


def test_the_json_error_carries_who_refused_and_the_redacted_lines(alice, remote, capsys):
    token = planted_token()
    script(remote / "hooks" / "pre-receive", f"echo 'no: {token}'\nexit 1\n")
    for command in ("sync", "push"):
        result = Cli(alice, capsys)("--format", "json", command)
        assert result.code == 1 and "error[push-refused]" in result.err
        error = json.loads(result.out)["error"]
        assert error["code"] == "push-refused" and error["refused_by"] == "remote" and error["remote"] == "origin"
        assert error["messages"] == ["no: [REDACTED:github-token] fp=" + error["messages"][0].rsplit("fp=", 1)[1]]
        assert token not in result.out + result.err and "rebase" not in result.out
        assert error["hint"] and "remote origin refused" in error["message"]


def test_a_key_spread_over_lines_is_redacted_whole_and_control_characters_are_escaped(alice, remote, capsys):
    key = pem(random.Random(5), "RSA")
    (remote / "hooks" / "key.txt").write_text(key + "\n")
    script(remote / "hooks" / "pre-receive", 'cat "$(dirname "$0")/key.txt"\nprintf \'bell\\007 here\\n\'\nexit 1\n')
    result = Cli(alice, capsys)("sync")
    assert result.code == 1 and "[REDACTED:private-key]" in result.err
    assert not any(line in result.err for line in key.splitlines()[1:-1])
    assert "bell\\x07 here" in result.err and "\x07" not in result.err


def test_a_local_pre_push_hook_refusal_says_local_hook_and_a_later_sync_pushes(alice, remote, capsys):
    hook = script(alice / ".git" / "hooks" / "pre-push", "echo 'local policy: no pushes before review' >&2\nexit 1\n")
    local, published = tip(alice), tip(remote)
    result = Cli(alice, capsys)("--format", "json", "sync")
    assert result.code == 1
    assert "error[push-refused]: the local pre-push hook refused the push of loopx/state to origin" in result.err
    assert "local policy: no pushes before review" in result.err and "rebase" not in result.err
    error = json.loads(result.out)["error"]
    assert error["refused_by"] == "local-hook" and error["messages"] == ["local policy: no pushes before review"]
    assert tip(alice) == local and tip(remote) == published

    hook.unlink()
    assert Cli(alice, capsys).json("sync")["pushed"] and tip(remote) == local


def test_a_refusing_hook_beside_loopx_own_is_reported_as_the_local_hook(tmp_path, remote, capsys):
    path = clone(tmp_path / "bea", str(remote), connect=False)
    hook = script(path / ".git" / "hooks" / "pre-push", "cat >/dev/null\necho 'team rule: squash first'\nexit 1\n")
    cli = Cli(path, capsys)
    assert cli("connect", "--goal-id", GOAL, "--objective", "Ship it").code == 0  # loopx's hook goes beside it
    assert "loopx pre-push hook" in hook.read_text()
    local = tip(path)
    result = cli("sync")
    assert result.code == 1 and "the local pre-push hook refused" in result.err
    assert "team rule: squash first" in result.err and "rebase" not in result.err
    assert tip(path) == local and "loopx/state" not in git(remote, "branch", "--list")


def test_the_api_raises_a_push_refused_with_the_facts(alice, remote):
    script(remote / "hooks" / "pre-receive", "echo 'closed for maintenance'\nexit 1\n")
    with loopx_git.open(alice) as repo, pytest.raises(PushRefused) as err:
        repo.sync()
    assert (err.value.code, err.value.refused_by, err.value.remote) == ("push-refused", "remote", "origin")
    assert err.value.messages == ["closed for maintenance"]


def test_a_lost_race_is_still_retried_not_reported_as_a_refusal(alice, remote, tmp_path):
    other = clone(tmp_path / "other", str(remote), connect=False)
    with loopx_git.open(other) as repo:
        repo.pull()
        repo.todo_add(GOAL, "from the other clone", todo_id="t2")
        assert repo.push().pushed
    with loopx_git.open(alice) as repo:
        result = repo.sync()
    assert result.pushed and result.pull.action == "merged"


def test_the_pre_push_hook_never_advises_rebasing_the_state_branch(tmp_path, remote, capsys):
    path = clone(tmp_path / "cy", str(remote))
    git(path, "config", "loopx.stateRef", STATE)
    bad = plain_commit(path, tip(path), "a note", {"notes.txt": f"token {planted_token()}\n"})
    out = io.StringIO()
    code = runner.run(
        "pre-push",
        ["origin", str(remote)],
        repo=str(path),
        stdin=io.StringIO(f"{STATE} {bad} {STATE} {'0' * 40}\n"),
        out=out,
    )
    said = out.getvalue()
    assert code == 1 and "github-token" in said and "git rebase" not in said and "append-only" in said
    # a code branch still gets the rebase advice: its unpushed commits may be rewritten
    git(path, "branch", "topic", bad)
    out = io.StringIO()
    runner.run(
        "pre-push",
        ["origin", str(remote)],
        repo=str(path),
        stdin=io.StringIO(f"refs/heads/topic {bad} refs/heads/topic {'0' * 40}\n"),
        out=out,
    )
    assert "git rebase -i" in out.getvalue()


def long_key(rng: random.Random, lines: int) -> str:
    """A PEM-shaped key of ``lines`` body lines, assembled at run time like the corpus's."""
    body = "\n".join(rand(rng, 64, B64) for _ in range(lines))
    return cat("-----BEGIN ", "RSA PRIVATE KEY", "-----\n", body, "\n-----END ", "RSA PRIVATE KEY", "-----")


def test_a_long_key_a_local_hook_prints_is_redacted_whole_not_cut_first(alice, remote, capsys):
    key = long_key(random.Random(7), 30)  # more lines than are shown: the header must not be cut off first
    (alice / ".git" / "hooks" / "key.txt").write_text(key + "\n")
    script(alice / ".git" / "hooks" / "pre-push", 'cat "$(dirname "$0")/key.txt"\necho \'refused\' >&2\nexit 1\n')
    local, published = tip(alice), tip(remote)
    result = Cli(alice, capsys)("--format", "json", "sync")
    assert result.code == 1 and "the local pre-push hook refused" in result.err
    error = json.loads(result.out)["error"]
    assert error["refused_by"] == "local-hook" and error["messages"][-1] == "refused"
    assert "[REDACTED:private-key]" in result.err and "[REDACTED:private-key]" in result.out
    for line in key.splitlines()[1:-1]:  # not one body line, nor a piece of one
        for piece in (line[n : n + 16] for n in range(0, len(line) - 15, 8)):
            assert piece not in result.err and piece not in result.out
    assert tip(alice) == local and tip(remote) == published


def test_a_hook_line_without_a_newline_is_shown_without_git_own_trailer(alice, remote, capsys):
    script(alice / ".git" / "hooks" / "pre-push", "printf 'wait for the review' >&2\nexit 1\n")
    result = Cli(alice, capsys)("--format", "json", "sync")
    assert result.code == 1
    assert json.loads(result.out)["error"]["messages"] == ["wait for the review"]
    assert "  wait for the review\n" in result.err and "failed to push some refs" not in result.err


def test_a_refused_proposal_says_to_propose_again_not_to_sync(alice, remote, capsys):
    script(remote / "hooks" / "pre-receive", "echo 'proposals are closed today' >&2\nexit 1\n")
    result = Cli(alice, capsys)("propose", "--branch", "loopx/proposals/alice")
    assert result.code == 1 and "error[push-refused]" in result.err and "proposals are closed today" in result.err
    assert "`loopx propose` pushes them" in result.err and "loopx sync" not in result.err
    assert git(remote, "for-each-ref", "refs/heads/loopx/proposals").strip() == ""

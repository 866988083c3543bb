"""loopx through a real smart-HTTP server (issue 16, item 1): ``git http-backend`` run by Debian's
lighttpd on 127.0.0.1 behind basic auth (tests/sync/httpd.py), the user and password in the remote's
URL as a user may configure them. Two clones sync, race for one todo, push, pull, claim --sync and
propose over it. What the server refuses — a wrong password, a hook, a ref it cannot lock, a
connection that dies mid-push — is reported clearly (exit 1, no traceback, the server's words, never
the password), and nothing is lost: the write stays in the clone and lands once the server lets it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import loopx_git
from tests.conftest import git
from tests.sync.helpers import (
    GOAL,
    commands_round,
    dropped,
    fsck_clean,
    hook,
    lock_lost,
    loopx,
    reported,
    tip,
    tree_of,
)
from tests.sync.httpd import HttpServer, httpd
from tests.sync.test_distributed import _seeded, exchange, race


@pytest.fixture
def server(tmp_path) -> Iterator[HttpServer]:
    with httpd(tmp_path / "httpd") as srv:
        yield srv


@pytest.fixture
def remote(server) -> tuple[Path, str]:
    return server.repository("project.git"), server.url("project.git")


def test_two_clones_sync_over_http(tmp_path, remote, server):
    path, url = remote
    a, b = _seeded(tmp_path, url, ("http-a", "http-b"))
    exchange(a, b)
    assert tree_of(a) == tree_of(path)
    checked = loopx(a, "verify")
    assert checked.returncode == 0 and server.password not in checked.stdout + checked.stderr


def test_two_machines_racing_over_http_get_exactly_one_winner(tmp_path, remote):
    _, url = remote
    a, b = _seeded(tmp_path, url, ("race-a", "race-b"))
    winners, outcome = race(a, b)
    assert len(winners) == 1, outcome
    loser = ({"alice", "bob"} - set(winners)).pop()
    assert outcome[loser].startswith("claim-held: "), outcome
    with loopx_git.open(a) as ra:
        ra.pull()
        assert [e.agent_id for e in ra.events(GOAL, kind="todo_claim")] == winners


def test_push_pull_claim_and_propose_from_the_cli(tmp_path, remote, server):
    path, url = remote
    a, b = _seeded(tmp_path, url, ("cli-a", "cli-b"))
    said = commands_round(a, b, path)
    assert not any(server.password in r.stdout + r.stderr for r in said)


def test_a_wrong_password_is_reported_and_the_write_waits_in_the_clone(tmp_path, remote, server):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("auth-a",))
    with loopx_git.open(a) as ra:
        ra.todo_add(GOAL, "written before the password was changed", todo_id="tw")
    local, published = tip(a), tip(path)
    wrong = "placeholder-not-the-password"
    git(a, "remote", "set-url", "origin", server.url("project.git", wrong))
    # pull fetches as sync and claim --sync do first: the login is refused there, before any push
    for command in (("sync",), ("push",), ("todo", "claim", "-g", GOAL, "-t", "tw", "-a", "alice", "--sync")):
        result = loopx(a, *command)
        reported(result, "Authentication failed", secret=wrong)
        assert tip(a) == local and tip(path) == published, command
    git(a, "remote", "set-url", "origin", url)
    result = loopx(a, "sync")
    assert result.returncode == 0 and server.password not in result.stdout + result.stderr
    assert tip(path) == tip(a) == local


def test_a_server_hook_refusing_the_push_is_reported_and_loses_nothing(tmp_path, remote, server):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("hook-a",))
    refusing = hook(path, "pre-receive", "echo 'pushes are frozen for the release' >&2\nexit 1\n")
    with loopx_git.open(a) as ra:
        ra.todo_add(GOAL, "written while pushes are frozen", todo_id="th")
    local, published = tip(a), tip(path)
    for command in (("push",), ("sync",)):
        result = loopx(a, *command)
        reported(result, "pushes are frozen for the release", "pre-receive hook declined", secret=server.password)
        assert tip(a) == local and tip(path) == published
    refusing.unlink()
    assert loopx(a, "push").returncode == 0
    assert tip(path) == local
    fsck_clean(path)


def test_a_ref_the_server_cannot_lock_is_reported_and_lands_once_unlocked(tmp_path, remote, server):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("lock-a",))
    lock_lost(a, path, secret=server.password)


@pytest.mark.parametrize("after_update", [False, True], ids=["before-the-ref-moved", "after-the-ref-moved"])
def test_a_server_dying_mid_push_loses_nothing_and_the_next_sync_converges(tmp_path, remote, server, after_update):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("drop-a",))
    # the web server and the receive-pack it runs die at once: the client's request is cut off
    kill = f"kill -9 {server.proc.pid} $PPID"
    dropped(a, path, after_update=after_update, kill=kill, revive=server.restart, secret=server.password)

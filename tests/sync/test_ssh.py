"""loopx through a real SSH server (issue 16, item 1): ``sshd`` from Debian's openssh-server on
127.0.0.1 (tests/sync/sshd.py), reached through ``GIT_SSH_COMMAND`` as a user's own ssh would be.
Two clones sync, race for one todo, push, pull, claim --sync and propose over it; a refused key, a
server hook that refuses a push, a ref the server cannot lock and a connection that dies mid-push
are reported clearly (exit 1, no traceback, the server's words), and nothing is lost: the write
stays in the clone and lands once the server lets it."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopx_git
from tests.conftest import git
from tests.sync.helpers import GOAL, bare, commands_round, dropped, lock_lost, loopx, tree_of
from tests.sync.sshd import sshd
from tests.sync.test_distributed import _seeded, exchange, race


@pytest.fixture
def server(tmp_path, monkeypatch):
    with sshd(tmp_path / "sshd") as srv:
        monkeypatch.setenv("GIT_SSH_COMMAND", srv.command())
        yield srv


@pytest.fixture
def remote(tmp_path, server) -> tuple[Path, str]:
    path = bare(tmp_path / "served" / "project.git")
    return path, server.url(path)


def test_two_clones_sync_over_ssh(tmp_path, remote):
    path, url = remote
    a, b = _seeded(tmp_path, url, ("ssh-a", "ssh-b"))
    exchange(a, b)
    assert tree_of(a) == tree_of(path)
    assert loopx(a, "verify").returncode == 0


def test_two_machines_racing_over_ssh_get_exactly_one_winner(tmp_path, remote):
    _, url = remote
    a, b = _seeded(tmp_path, url, ("race-a", "race-b"))
    winners, outcome = race(a, b)  # spawned processes: they inherit GIT_SSH_COMMAND
    assert len(winners) == 1, outcome
    loser = ({"alice", "bob"} - set(winners)).pop()
    assert outcome[loser].startswith("claim-held: "), outcome


def test_push_pull_claim_and_propose_from_the_cli(tmp_path, remote):
    path, url = remote
    a, b = _seeded(tmp_path, url, ("cli-a", "cli-b"))
    commands_round(a, b, path)


def test_a_refused_key_is_reported_and_the_write_waits_in_the_clone(tmp_path, remote, server, monkeypatch):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("key-a",))
    with loopx_git.open(a) as ra:
        ra.todo_add(GOAL, "written before the key was refused", todo_id="tk")
    local = git(a, "rev-parse", "loopx/state").strip()
    served = git(path, "rev-parse", "loopx/state").strip()
    monkeypatch.setenv("GIT_SSH_COMMAND", server.command(server.stranger))
    for command in (("sync",), ("push",), ("pull",)):
        result = loopx(a, *command)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert "error[" in result.stderr and "Traceback" not in result.stderr
        assert "Permission denied" in result.stderr, result.stderr  # the server's own words
    assert git(a, "rev-parse", "loopx/state").strip() == local  # nothing lost here
    assert git(path, "rev-parse", "loopx/state").strip() == served  # nothing half-written there
    monkeypatch.setenv("GIT_SSH_COMMAND", server.command())
    assert loopx(a, "sync").returncode == 0
    assert git(path, "rev-parse", "loopx/state").strip() == git(a, "rev-parse", "loopx/state").strip()


def test_a_server_hook_refusing_the_push_is_reported_and_loses_nothing(tmp_path, remote):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("hook-a",))
    hook = path / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are frozen for the release' >&2\nexit 1\n")
    hook.chmod(0o755)
    with loopx_git.open(a) as ra:
        ra.todo_add(GOAL, "written while pushes are frozen", todo_id="th")
    local = git(a, "rev-parse", "loopx/state").strip()
    served = git(path, "rev-parse", "loopx/state").strip()
    result = loopx(a, "push")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "pushes are frozen for the release" in result.stderr and "Traceback" not in result.stderr
    assert git(a, "rev-parse", "loopx/state").strip() == local
    assert git(path, "rev-parse", "loopx/state").strip() == served
    hook.unlink()
    assert loopx(a, "push").returncode == 0
    assert git(path, "rev-parse", "loopx/state").strip() == local


def test_a_ref_the_server_cannot_lock_is_reported_and_lands_once_unlocked(tmp_path, remote):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("lock-a",))
    lock_lost(a, path)


@pytest.mark.parametrize("after_update", [False, True], ids=["before-the-ref-moved", "after-the-ref-moved"])
def test_a_connection_dying_mid_push_loses_nothing_and_the_next_sync_converges(tmp_path, remote, after_update):
    path, url = remote
    [a] = _seeded(tmp_path, url, ("drop-a",))
    # the receive-pack the server runs for this push dies: sshd closes the connection under it
    dropped(a, path, after_update=after_update, kill="kill -9 $PPID")

"""Clones on different "machines": a claim race between two processes through one remote, two
clones syncing over git's own network protocol (a `git daemon` on 127.0.0.1), and random
interleavings of writes and syncs on three clones that must converge."""

from __future__ import annotations

import multiprocessing
import random
from pathlib import Path

import pytest

import loopx_git
from loopx_git.errors import RuleError
from tests.conftest import git
from tests.sync.helpers import GOAL, bare, clone, event_ids, git_daemon, tree_of


def _seeded(tmp_path: Path, remote: str, names: tuple[str, ...]) -> list[Path]:
    first = clone(tmp_path / names[0], remote)
    with loopx_git.open(first) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        for agent in ("alice", "bob", "carol"):
            repo.agent_register(GOAL, agent)
        repo.todo_add(GOAL, "the contested todo", todo_id="t1")
        repo.sync()
    paths = [first]
    for name in names[1:]:
        path = clone(tmp_path / name, remote, connect=False)
        with loopx_git.open(path) as repo:
            repo.pull()
        paths.append(path)
    return paths


# --- the claim race ------------------------------------------------------------------------------


def _claimer(path: str, agent: str, start, results) -> None:
    repo = loopx_git.open(path)
    start.wait()
    try:
        repo.todo_claim_synced(GOAL, "t1", agent)
        results.put((agent, "won"))
    except RuleError as exc:
        results.put((agent, f"{exc.code}: {exc.message}"))
    except Exception as exc:  # reported, not left to hang the test
        results.put((agent, f"crashed: {type(exc).__name__}: {exc}"))
    finally:
        repo.close()


def race(a: Path, b: Path) -> tuple[list[str], dict[str, str]]:
    """alice on ``a`` and bob on ``b`` claim t1 with --sync at once, as two processes: the winners
    and what each was told."""
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=_claimer, args=(str(p), agent, start, results)) for p, agent in ((a, "alice"), (b, "bob"))
    ]
    for p in procs:
        p.start()
    outcome = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return [agent for agent, said in outcome.items() if said == "won"], outcome


@pytest.mark.parametrize("round_", range(3))
def test_two_machines_racing_for_one_todo_get_exactly_one_winner(tmp_path, round_):
    remote = bare(tmp_path / "remote.git")
    a, b = _seeded(tmp_path, str(remote), ("machine-a", "machine-b"))
    winners, outcome = race(a, b)
    assert len(winners) == 1, outcome
    loser = ({"alice", "bob"} - set(winners)).pop()
    assert outcome[loser].startswith("claim-held: ") and f"already claimed by '{winners[0]}'" in outcome[loser]
    check = clone(tmp_path / "checker", str(remote), connect=False)
    with loopx_git.open(check) as repo:
        repo.pull()
        assert repo.todo(GOAL, "t1").claimed_by == winners[0]
        assert [e.agent_id for e in repo.events(GOAL, kind="todo_claim")] == winners  # the loser's claim never landed
        assert repo.verify().ok


# --- over git's network protocol ---------------------------------------------------------------------


@pytest.fixture
def daemon(tmp_path):
    """``git daemon`` serving a bare repository on 127.0.0.1, pushes enabled; its URL."""
    with git_daemon(tmp_path / "served") as url:
        yield url


def exchange(a: Path, b: Path) -> None:
    """Two clones write, merge, fast-forward and claim with --sync through their remote, then agree."""
    with loopx_git.open(a) as ra, loopx_git.open(b) as rb:
        ra.todo_add(GOAL, "over the wire from a", todo_id="ta")
        rb.todo_add(GOAL, "over the wire from b", todo_id="tb")
        ra.sync()
        assert rb.sync().pull.action == "merged"
        assert ra.sync().pull.action == "fast-forward"
        assert rb.todo_claim_synced(GOAL, "ta", "bob").changed
        with pytest.raises(RuleError):
            ra.todo_claim_synced(GOAL, "ta", "alice")
        rb.sync()
        ra.sync()
    assert tree_of(a) == tree_of(b)


def test_two_clones_sync_through_a_git_daemon(tmp_path, daemon):
    a, b = _seeded(tmp_path, daemon, ("net-a", "net-b"))
    exchange(a, b)
    assert (
        git(a, "ls-remote", daemon, "refs/heads/loopx/state").split()[0] == git(a, "rev-parse", "loopx/state").strip()
    )


# --- convergence under random interleavings ------------------------------------------------------------


def _random_write(rng: random.Random, repo, name: str, n: int) -> None:
    todos = [t for t in repo.todos(GOAL) if t.status == "open"]
    choice = rng.random()
    if choice < 0.45 or not todos:
        repo.todo_add(GOAL, f"{name} todo {n}", todo_id=f"{name}-{n}")
    elif choice < 0.65:
        repo.event_append(GOAL, "note", summary=f"{name} note {n}", agent_id="alice")
    elif choice < 0.85:
        todo = rng.choice(todos)
        agent = rng.choice(["alice", "bob", "carol"])
        if todo.claimed_by in (None, agent):
            repo.todo_claim(GOAL, todo.todo_id, agent)
    else:
        todo = rng.choice(todos)
        repo.todo_complete(GOAL, todo.todo_id, evidence=[f"tests/test_{n}.py"])


@pytest.mark.parametrize("seed", [11, 23, 47])
def test_three_clones_converge_whatever_the_order_of_writes_and_syncs(tmp_path, seed):
    rng = random.Random(seed)
    remote = bare(tmp_path / "remote.git")
    paths = _seeded(tmp_path, str(remote), ("c0", "c1", "c2"))
    repos = [loopx_git.open(p) for p in paths]
    written: set[str] = set(event_ids(paths[0]))
    for step in range(40):
        i = rng.randrange(3)
        if rng.random() < 0.6:
            before = set(event_ids(paths[i]))
            _random_write(rng, repos[i], f"c{i}", step)
            written |= set(event_ids(paths[i])) - before
        else:
            repos[i].sync()
    for _ in range(2):  # two rounds: the last clone's merge reaches the first
        for repo in repos:
            repo.sync()
    trees = {tree_of(p) for p in paths}
    assert len(trees) == 1, "all clones hold the same tree"
    assert tree_of(remote, "refs/heads/loopx/state") in trees
    final = event_ids(paths[0])
    assert len(final) == len(set(final)), "no event duplicated"
    assert set(final) == written, "no event lost"
    for repo in repos:
        report = repo.verify()
        assert report.ok, report.problems
        repo.close()

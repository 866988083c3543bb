"""Two processes appending to one state branch at once: nothing lost, nothing duplicated, no work
thrown away in a lost race."""

from __future__ import annotations

import multiprocessing

import pytest

import loopx_git
from tests.conftest import GOAL

PER_WRITER = 500


def _writer(path: str, name: str, start, results) -> None:
    repo = loopx_git.open(path)
    start.wait()
    ids = []
    for i in range(PER_WRITER):
        ids.extend(repo.event_append(GOAL, "note", agent_id=name, summary=f"{name} {i}").event_ids)
    repo.close()
    results.put(ids)


@pytest.mark.slow
def test_two_processes_append_500_events_each(repo, git_repo):
    repo.close()
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(git_repo), name, start, results)) for name in ("alice", "bob")]
    for p in procs:
        p.start()
    written = results.get(timeout=600) + results.get(timeout=600)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0

    fresh = loopx_git.open(git_repo)
    notes = fresh.events(GOAL, kind="note")
    assert len(written) == 2 * PER_WRITER == len(notes)
    assert sorted(e.event_id for e in notes) == sorted(written)
    assert len({e.lamport for e in fresh.events(GOAL)}) == len(fresh.events(GOAL)), "lamport clocks never repeat"
    for name in ("alice", "bob"):
        mine = [e.summary for e in notes if e.agent_id == name]
        assert mine == [f"{name} {i}" for i in range(PER_WRITER)]
    report = fresh.verify()
    assert report.ok, report.problems
    from loopx_git.store import hygiene

    # the writers took turns under the clone's write lock: no write lost a race, so none left objects
    assert hygiene.unreachable(fresh.git).objects == 0

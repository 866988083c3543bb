"""The evidence index the replan context is selected from (issue 14): replays dropped, repeats
collapsed with their counts and times, at most 24 rows chosen by class, then route, then recency —
checked against a plain statement of each rule over histories drawn at random (hypothesis), and
built from scratch or extended run by run, the same index."""

from __future__ import annotations

import pickle
from itertools import groupby

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_git.model.progress import ProgressObservation
from loopx_git.model.run import RunRecord
from loopx_git.views.evidence_index import AgentEvidence, EvidenceIndex, Row, select
from loopx_git.views.replan_context import ROWS
from tests.conftest import GOAL

CLASSES = ["advanced", "unchanged", "blocked"]


def _run(
    n: int, progress: dict | None = None, *, at: int | None = None, action: str = "a", agent: str = "alice", **more
):
    t = n if at is None else at
    return RunRecord(
        run_id=f"r{n:04d}",
        generated_at=f"2026-03-01T{t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}Z",
        goal_id=GOAL,
        agent_id=agent,
        classification=more.pop("classification", "probe"),
        recommended_action=action,
        progress=ProgressObservation(**progress) if progress else None,
        **more,
    )


@st.composite
def histories(draw, max_runs: int = 80) -> list[RunRecord]:
    """Runs of alice (and a few of bob's and of nobody's), with few distinct times, actions, surfaces
    and classes: replays, repeats and shared routes are frequent."""
    size = draw(st.integers(0, max_runs))
    runs = []
    for n in range(size):
        progress = None
        if draw(st.integers(0, 4)) > 0:  # most runs carry typed progress
            result_class = draw(st.sampled_from(CLASSES))
            progress = {"result_class": result_class, "surface_id": f"s{draw(st.integers(0, 6))}"}
            if draw(st.integers(0, 3)) == 0:
                progress["hypothesis_id"] = f"h{draw(st.integers(0, 2))}"
            if result_class == "blocked":
                progress |= {"blocker_id": "b", "evidence_ids": ["e"]}
        # every field of what a run observed varies a little: runs alike in all of them collapse
        runs.append(
            _run(
                n,
                progress,
                at=draw(st.integers(0, 40)),
                action=f"a{draw(st.integers(0, 4))}",
                agent=draw(st.sampled_from(["alice"] * 8 + ["bob", None])),  # type: ignore[list-item]
                classification=draw(st.sampled_from(["probe"] * 4 + ["fix"])),
                evidence=draw(st.sampled_from([[]] * 4 + [["tests/a.py"], ["tests/a.py", "tests/b.py"]])),
                delivery_outcome=draw(st.sampled_from([None] * 4 + ["surface_only", "outcome_progress"])),
                todo_id=draw(st.sampled_from([None] * 4 + ["t1", "t2"])),
            )
        )
    return draw(st.permutations(runs))  # arrival order is not time order


def _observed(run: RunRecord) -> tuple:
    p = run.progress
    fingerprint = p.fingerprint if p is not None else None
    return (
        run.classification,
        run.recommended_action,
        tuple(run.evidence),
        run.delivery_outcome,
        run.todo_id,
        fingerprint,
    )


def expected_rows(runs: list[RunRecord]) -> list[tuple]:
    """The rule as the issue states it: alice's runs, in time order; an exact replay (the same
    observation at the same time) dropped; repeats collapsed, with count, first and latest time."""
    own = sorted((r for r in runs if r.agent_id == "alice"), key=lambda r: (r.generated_at, r.run_id))
    groups: dict[tuple, list[RunRecord]] = {}
    for run in own:
        groups.setdefault(_observed(run), []).append(run)
    rows = []
    for group in groups.values():
        times = [at for at, _ in groupby(r.generated_at for r in group)]
        latest = next(r for r in group if r.generated_at == times[-1])  # a replay is not the latest
        rows.append((group[0].generated_at, latest.generated_at, latest.run_id, len(times)))
    return sorted(rows, key=lambda r: (r[1], r[2]))


def expected_selection(rows: list[Row], limit: int = ROWS) -> list[int]:
    """One per observed result class (its newest), then one per distinct route (its newest), then the
    newest of the rest — up to ``limit``, in that order."""
    newest_first = list(range(len(rows) - 1, -1, -1))
    newest_of_class: dict[str, int] = {}
    newest_of_route: dict[tuple, int] = {}
    for i in newest_first:
        if rows[i].result_class is not None:
            newest_of_class.setdefault(rows[i].result_class, i)
        if rows[i].route is not None and any(rows[i].route):
            newest_of_route.setdefault(rows[i].route, i)
    picks = sorted(newest_of_class.values(), reverse=True)[:limit]
    for i in sorted(newest_of_route.values(), reverse=True) + newest_first:
        if len(picks) < limit and i not in picks:
            picks.append(i)
    return picks


def _content(index: EvidenceIndex) -> list:
    """Everything the index holds, its dicts' order included (which the selection reads)."""
    return [(name, list(v.items()) if isinstance(v, dict) else v) for name, v in vars(index).items()]


@pytest.mark.slow
@settings(max_examples=300)
@given(histories())
def test_rows_drop_replays_and_collapse_repeats(runs):
    rows = EvidenceIndex.of(GOAL, "alice", runs).rows()
    assert [(r.first_at, r.latest_at, r.latest_id, r.times) for r in rows] == expected_rows(runs)
    assert sum(r.times for r in rows) <= sum(r.agent_id == "alice" for r in runs)  # nothing invented


@pytest.mark.slow
@settings(max_examples=300)
@given(histories(max_runs=120), st.integers(1, ROWS))
def test_selection_keeps_classes_then_routes_then_recency_up_to_the_cap(runs, limit):
    index = EvidenceIndex.of(GOAL, "alice", runs)
    rows = index.rows()
    selection = select(index, limit, limit)
    assert selection.rows == [rows[i] for i in expected_selection(rows, limit)]
    assert len(selection.rows) == len(set(selection.rows)) == min(limit, len(rows)) and selection.total_rows == len(
        rows
    )
    # what it says of the rows it leaves out, whichever of its rows a budget keeps
    for keep in (len(selection.rows), len(selection.rows) // 2, 0):
        shown = {r.latest_id for r in selection.rows[:keep]}
        rest = [r for r in rows if r.latest_id not in shown]
        assert selection.omitted_bounds(shown) == (
            min((r.first_at for r in rest), default=None),
            max((r.latest_at for r in rest), default=None),
        )
    assert selection.observations == index.observations()[:limit]
    assert selection.total_observations == len(index.observations())


@settings(max_examples=200)
@given(histories(), st.randoms(use_true_random=False), st.lists(st.integers(0, 80), max_size=4))
def test_the_index_is_a_function_of_the_history_however_it_was_built(runs, rng, cuts):
    whole = EvidenceIndex.of(GOAL, "alice", runs)
    shuffled = list(runs)
    rng.shuffle(shuffled)
    assert _content(EvidenceIndex.of(GOAL, "alice", shuffled)) == _content(whole)
    # as a kept index is: built from the runs up to one tip, saved and loaded, extended by what the
    # next tips added, again and again
    ordered = sorted((r for r in runs if r.agent_id == "alice"), key=lambda r: (r.generated_at, r.run_id))
    kept = EvidenceIndex(GOAL, "alice")
    start = 0
    for cut in sorted(cuts) + [len(ordered)]:
        for run in ordered[start:cut]:
            assert kept.add(run)
        start = max(start, cut)
        kept = pickle.loads(pickle.dumps(kept))
    assert _content(kept) == _content(whole)
    assert select(kept, ROWS, ROWS) == select(whole, ROWS, ROWS)


@settings(max_examples=200)
@given(histories())
def test_observations_count_every_run_of_a_fingerprint(runs):
    own = [r for r in runs if r.agent_id == "alice" and r.progress is not None]
    observations = EvidenceIndex.of(GOAL, "alice", runs).observations()
    assert sorted((o.fingerprint, o.times) for o in observations) == sorted(
        (fp, sum(r.progress.fingerprint == fp for r in own)) for fp in {r.progress.fingerprint for r in own}
    )
    latest = [(o.latest_at, o.latest_id) for o in observations]
    assert latest == sorted(latest, reverse=True)  # the most recent first


def test_a_run_sorting_before_the_indexed_ones_is_refused_and_changes_nothing():
    index = EvidenceIndex.of(GOAL, "alice", [_run(1, at=10), _run(2, at=20)])
    before = _content(index)
    assert index.add(_run(3, at=15)) is False
    assert index.add(_run(2, at=20)) is False  # the same run again
    assert _content(index) == before


def test_other_agents_and_unattributed_runs_never_enter():
    runs = [_run(1, agent="bob"), _run(2, agent=None), _run(3)]  # type: ignore[arg-type]
    evidence = AgentEvidence.of_runs(GOAL, "alice", runs)
    assert [r.latest_id for r in evidence.index.rows()] == ["r0003"]
    assert evidence.load([("x", "r0001"), ("x", "r0003")]).keys() == {"r0003"}


def test_selection_example_classes_first_then_one_per_route():
    runs = [_run(n, {"result_class": "unchanged", "surface_id": f"s{n % 40}"}, action=f"a{n}") for n in range(100)]
    runs[5] = _run(5, {"result_class": "blocked", "blocker_id": "b", "evidence_ids": ["e"]}, action="old blocker")
    runs[7] = _run(7, {"result_class": "advanced", "surface_id": "rare"}, action="old advance")
    picked = select(EvidenceIndex.of(GOAL, "alice", runs), ROWS, 0).rows
    assert len(picked) == ROWS
    assert {r.result_class for r in picked[:3]} == set(CLASSES)  # one per class first, old ones too
    assert picked[0].latest_id == "r0099"  # the newest of its class
    assert len({r.route for r in picked}) == len(picked)  # then one per distinct route

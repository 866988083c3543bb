"""The index an agent's replan context is selected from (seed 000's full index): one entry per
distinct observation in the agent's run history and one per typed-progress fingerprint, folded from
its runs in time order.

It holds what the selection needs — times, counts, result class, route — and not the runs: a context
over 100k runs reads the few dozen it shows. The application layer (``loopx_git/evidence.py``) keeps
it per goal and agent beside the fold cache and extends it by the runs a later tip added; built from
scratch or extended, the same runs give the same index, so the same context.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import NamedTuple

from loopx_git.model.run import RunRecord, run_order_key

RunKey = tuple[str, str]
"""(generated_at, run_id): a run's place in time order, and what finds its file."""


class MissingRuns(LookupError):
    """An index names runs the branch does not hold: it was not built from this tip (only a rebuild
    is exact)."""


class Row(NamedTuple):
    """One distinct observation: its first and latest run (exact replays not counted)."""

    first_at: str
    latest_at: str
    latest_id: str
    times: int
    result_class: str | None
    route: tuple[str | None, str | None, str | None] | None
    """(surface, hypothesis, probe) of its typed progress; None without typed progress."""


class Observation(NamedTuple):
    """One typed-progress fingerprint: its latest run and how many runs made it."""

    fingerprint: str
    latest_at: str
    latest_id: str
    times: int


def observation_key(run: RunRecord) -> bytes:
    """What a run observed, apart from when and under which id (runs alike in it collapse), as a
    digest: the index keeps 16 bytes per observation, however long its texts."""
    p = run.progress
    seen = [
        run.classification,
        run.recommended_action,
        list(run.evidence),
        run.delivery_outcome,
        run.todo_id,
        p.fingerprint if p is not None else None,
    ]
    return hashlib.blake2b(json.dumps(seen, separators=(",", ":")).encode(), digest_size=16).digest()


class EvidenceIndex:
    """Fold ``add`` over one agent's runs of one goal in time order. Plain lists inside: it is
    pickled beside the fold cache and loaded by every context asked for at a new tip.

    Runs arrive in time order, so an entry that a run updates becomes the newest: it is moved to
    the end of its dict, which keeps every dict here in the order of its entries' latest runs and lets
    a selection read the newest few from the end instead of sorting the history."""

    # a group: [first_at, latest_at, latest_id, count, result_class, surface, hypothesis, probe]
    # an observation: [latest_at, latest_id, count]

    def __init__(self, goal_id: str, agent_id: str) -> None:
        self.goal_id = goal_id
        self.agent_id = agent_id
        self.groups: dict[bytes, list] = {}
        """Observation key -> group, oldest latest run first."""
        self.created: list[bytes] = []
        """Observation keys in the order their groups began (of their first runs)."""
        self.classes: dict[str, bytes] = {}
        """Result class -> its newest group, oldest first."""
        self.routes: dict[tuple, bytes] = {}
        """(surface, hypothesis, probe) -> its newest group, oldest first."""
        self.fingerprints: dict[str, list] = {}
        """Typed-progress fingerprint -> observation, oldest latest run first."""
        self.last: RunKey | None = None
        """The latest run added: a run sorting before it cannot be added (only a rebuild is exact)."""
        self.runs = 0

    @classmethod
    def of(cls, goal_id: str, agent_id: str, runs: Iterable[RunRecord]) -> EvidenceIndex:
        """The index of this agent's runs among ``runs`` (any order; others' runs left out)."""
        index = cls(goal_id, agent_id)
        for run in sorted((r for r in runs if index.holds(r)), key=run_order_key):
            index.add(run)
        return index

    def holds(self, run: RunRecord) -> bool:
        """Whether ``run`` is this agent's, on this goal: other agents' and unattributed runs never
        supply proof."""
        return run.agent_id == self.agent_id and run.goal_id == self.goal_id

    def add(self, run: RunRecord) -> bool:
        """Add the next run of this agent; False, with nothing changed, when it sorts before the
        last one added. A replay — the same observation at the same time — is not counted."""
        key = run_order_key(run)
        if self.last is not None and key <= self.last:
            return False
        self.last = key
        self.runs += 1
        at, p = run.generated_at, run.progress
        seen_as = observation_key(run)
        group = self.groups.get(seen_as)
        newest = True  # the run's group is now the newest (false for an exact replay)
        if group is None:
            route = (p.surface_id, p.hypothesis_id, p.probe_kind) if p is not None else (None, None, None)
            self.groups[seen_as] = [at, at, run.run_id, 1, p.result_class if p else None, *route]
            self.created.append(seen_as)
        elif group[1] != at:
            group[1], group[2], group[3] = at, run.run_id, group[3] + 1
            self.groups[seen_as] = self.groups.pop(seen_as)
        else:
            newest = False
        if p is not None:
            if newest:
                _newest_last(self.classes, p.result_class, seen_as)
                route = (p.surface_id, p.hypothesis_id, p.probe_kind)
                if any(route):
                    _newest_last(self.routes, route, seen_as)
            seen = self.fingerprints.pop(p.fingerprint, None)
            self.fingerprints[p.fingerprint] = [at, run.run_id, 1 if seen is None else seen[2] + 1]
        return True

    def rows(self) -> list[Row]:
        """Every distinct observation, in the time order of its latest run: the whole index, for checks
        and debugging (a context reads ``select``, which does not build them all)."""
        return sorted((_row(g) for g in self.groups.values()), key=lambda r: (r.latest_at, r.latest_id))

    def observations(self) -> list[Observation]:
        """Every distinct typed observation, the most recent first (the whole index, as ``rows``)."""
        found = [Observation(fp, o[0], o[1], o[2]) for fp, o in self.fingerprints.items()]
        found.sort(key=lambda o: (o.latest_at, o.latest_id), reverse=True)
        return found


def _row(group: list) -> Row:
    route = (group[5], group[6], group[7]) if group[4] is not None else None
    return Row(group[0], group[1], group[2], group[3], group[4], route)


@dataclass(frozen=True)
class Selection:
    """What one context shows of an index, and what it needs to say about the rest: a context over
    100k runs builds a few dozen rows, not 100k."""

    rows: list[Row]
    """Best first: one per observed result class (its newest), then one per distinct (surface,
    hypothesis, probe) route (its newest), then the most recent."""
    total_rows: int
    earliest: list[tuple[str, str]]
    """(first_at, latest_id) of the ``len(rows) + 1`` rows that began earliest: the earliest not shown
    is among them, whichever of the rows are shown."""
    latest: list[tuple[str, str]]
    """(latest_at, latest_id) of the ``len(rows) + 1`` most recent rows, the most recent first."""
    observations: list[Observation]
    """The most recent typed observations, the most recent first."""
    total_observations: int

    def omitted_bounds(self, shown: set[str]) -> tuple[str | None, str | None]:
        """The earliest first time and the latest latest time of the rows not in ``shown`` (latest
        run ids)."""
        first = next((at for at, run_id in self.earliest if run_id not in shown), None)
        latest = next((at for at, run_id in self.latest if run_id not in shown), None)
        return first, latest


def select(index: EvidenceIndex, limit: int, ledger: int) -> Selection:
    """At most ``limit`` rows of ``index`` and its ``ledger`` most recent typed observations, read from
    the newest ends of its dicts: the cost follows ``limit``, not the history."""
    groups = index.groups
    picks = sorted(index.classes.values(), key=lambda key: _order(groups[key]), reverse=True)[:limit]
    taken = set(picks)
    for candidates in (reversed(index.routes.values()), reversed(groups)):  # then routes, then recency
        for key in candidates:
            if len(picks) >= limit:
                break
            if key not in taken:
                taken.add(key)
                picks.append(key)
    around = limit + 1  # enough to find one not shown, whichever of the picks are
    return Selection(
        rows=[_row(groups[key]) for key in picks],
        total_rows=len(groups),
        earliest=[(groups[key][0], groups[key][2]) for key in index.created[:around]],
        latest=[(groups[key][1], groups[key][2]) for key in islice(reversed(groups), around)],
        observations=[Observation(fp, *index.fingerprints[fp]) for fp in islice(reversed(index.fingerprints), ledger)],
        total_observations=len(index.fingerprints),
    )


def _order(group: list) -> RunKey:
    return (group[1], group[2])


def _newest_last(newest: dict, name: object, key: bytes) -> None:
    """``key`` is now the newest entry of ``name``: moved to the end."""
    newest.pop(name, None)
    newest[name] = key


@dataclass(frozen=True)
class AgentEvidence:
    """An agent's index, and how to read the runs it names (by ``RunKey``; a missing one is left
    out of the answer)."""

    index: EvidenceIndex
    load: Callable[[Sequence[RunKey]], dict[str, RunRecord]]

    @classmethod
    def of_runs(cls, goal_id: str, agent_id: str, runs: Sequence[RunRecord]) -> AgentEvidence:
        """From runs in memory (tests, a caller holding the history)."""
        index = EvidenceIndex.of(goal_id, agent_id, runs)
        by_id = {r.run_id: r for r in runs if index.holds(r)}
        return cls(index, lambda keys: {k[1]: by_id[k[1]] for k in keys if k[1] in by_id})

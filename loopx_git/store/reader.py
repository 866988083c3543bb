"""The folded state at a tip: from memory, from the tip-keyed cache, incrementally from the
records added since the cached tip, or by folding every record from scratch."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import Any

from loopx_git.model.event_head import EventBase, EventHead
from loopx_git.model.run import RunRecord
from loopx_git.store import layout
from loopx_git.store.cache import FoldCache
from loopx_git.store.git import GitRepo
from loopx_git.store.records import parse_event, parse_for_fold, parse_run

Records = tuple[list[EventHead], list[RunRecord]]

SAVE_AFTER = 20
"""Records a state may be ahead of the saved cache before a process saves it again. Fewer are
cheaper to fold again from the saved tip (a diff and a few parses) than the whole state is to
pickle: a write of one todo on a 10k-todo goal does not rewrite the cache."""
FoldFn = Callable[[Iterable[EventHead], Iterable[RunRecord]], Any]
ExtendFn = Callable[[Any, list[EventHead], list[RunRecord]], bool]


class StateReader:
    """``fold(events, runs)`` builds a state; ``extend(state, events, runs)`` applies records added
    since and returns False when they cannot be applied incrementally (they sort before the tip).
    Events of ``payload_kinds`` reach the fold whole; of the others, only their validated head."""

    def __init__(self, git: GitRepo, cache: FoldCache, fold: FoldFn, extend: ExtendFn, payload_kinds: Collection[str]):
        self._git = git
        self._payload_kinds = payload_kinds
        self._cache = cache
        self._fold = fold
        self._extend = extend
        self._memory: tuple[str, Any] | None = None
        self._dirty = False
        self._ahead: int | None = 0
        """Records the state in memory has beyond the saved cache; None: not built from it (save)."""

    def state_at(self, tip: str | None) -> Any:
        if tip is None:
            return self._fold([], [])
        state = self.state_if_cheap(tip)
        return state if state is not None else self.fold_records(tip, *self.all_records(tip))

    def fold_records(self, tip: str, events: list[EventHead], runs: list[RunRecord]) -> Any:
        """The state at ``tip`` folded from scratch from its records (read as ``records_in`` reads
        them), kept as the state at hand: for a caller that reads every record anyway."""
        state = self._fold(events, runs)
        self.remember(tip, state)
        return state

    def cached(self) -> tuple[str, Any] | None:
        """The (tip, state) at hand without folding anything: the one in memory, else the one
        cached on disk (loaded once), else None. For a caller that can use a fold of some tip
        near the one it needs, and would rather do without than fold the history for it."""
        if self._memory is None:
            self._memory = self._usable(self._cache.load())
            self._ahead = 0 if self._memory is not None else None
        return self._memory

    def state_if_cheap(self, tip: str) -> Any | None:
        """The state at ``tip`` if it costs no fold of the history — it is the one at hand, or that
        one advanced by the records added after it — else None."""
        cached = self.cached()
        if cached is None:
            return None
        if cached[0] == tip:
            return cached[1]
        advanced = self._advance(cached[0], cached[1], tip)
        if advanced is None:
            return None
        self.remember(tip, advanced[0], added=advanced[1])
        return advanced[0]

    def _usable(self, cached: tuple[str, Any] | None) -> tuple[str, Any] | None:
        """The cached (tip, state) if it has the shape this reader folds — a tip that is a commit
        here, a state of the fold's own type — else None: a cache is never a source of truth, and a
        damaged or foreign one is only a slower read."""
        if cached is None:
            return None
        tip, state = cached
        if not isinstance(tip, str) or self._git.object_type(tip) != "commit":
            return None
        return cached if type(state) is type(self._fold([], [])) else None

    def remember(self, tip: str, state: Any, *, added: int | None = None) -> None:
        """``state`` is the fold at ``tip``: ``added`` records beyond the state in memory (None: built
        some other way, so the cache is saved at the end of the process)."""
        self._memory = (tip, state)
        self._dirty = True
        self._ahead = None if added is None or self._ahead is None else self._ahead + added

    def flush(self) -> None:
        """Write the in-memory fold to the on-disk cache (done once per process, not per write), unless
        it is only a few records ahead of the saved one (``SAVE_AFTER``)."""
        if self._dirty and self._memory is not None and (self._ahead is None or self._ahead >= SAVE_AFTER):
            self._cache.save(*self._memory)
            self._ahead = 0
        self._dirty = False

    def _advance(self, old_tip: str, state: Any, tip: str) -> tuple[Any, int] | None:
        """The state at ``tip`` from the state at its ancestor ``old_tip``, and how many records that
        took; None when only a fold from scratch is exact."""
        if not self._git.is_ancestor(old_tip, tip):
            return None
        added = self.added_records(self._git.commit(old_tip).tree, self._git.commit(tip).tree)
        if added is None:
            return None
        events, runs = added
        # the cached object may be shared with callers: extend a copy of the goals it touches
        state = state.copy_for({e.goal_id for e in events} | {r.goal_id for r in runs})
        return (state, len(events) + len(runs)) if self._extend(state, events, runs) else None

    def all_records(self, tip: str) -> Records:
        return self.records_in(self._git.commit(tip).tree)

    def records_in(self, tree: str) -> Records:
        events: list[EventHead] = []
        runs: list[RunRecord] = []
        for goal_id in self._git.list_dir(tree, "goals"):
            goal_dir = f"goals/{goal_id}"
            for path, oid in self._git.walk_files(tree, f"{goal_dir}/events"):
                events.append(parse_for_fold(self._git.read_blob(oid), path, self._payload_kinds))
            for path, oid in self._git.walk_files(tree, f"{goal_dir}/runs"):
                runs.append(parse_run(self._git.read_blob(oid), path))
        return events, runs

    def parse(self, files: Iterable[tuple[str, str]]) -> Records:
        """Records of the given (path, blob id) files, parsed as the fold reads them."""
        events: list[EventHead] = []
        runs: list[RunRecord] = []
        for path, oid in files:
            if layout.record_kind(path) == "event":
                events.append(parse_for_fold(self._git.read_blob(oid), path, self._payload_kinds))
            else:
                runs.append(parse_run(self._git.read_blob(oid), path))
        return events, runs

    def added_records(self, old_tree: str, new_tree: str) -> Records | None:
        """Records added between two trees, or None if any record was changed or removed
        (then only a full fold is exact, and ``verify`` will say what happened)."""
        events: list[EventHead] = []
        runs: list[RunRecord] = []
        for change in self._git.changes(old_tree, new_tree, within=layout.may_hold_records):
            kind = layout.record_kind(change.path)
            if kind is None:
                continue
            if change.old is not None or change.new is None:
                return None
            data = self._git.read_blob(change.new)
            if kind == "event":
                events.append(parse_for_fold(data, change.path, self._payload_kinds))
            else:
                runs.append(parse_run(data, change.path))
        return events, runs

    def goal_files(self, tip: str | None, goal_id: str, kind: str, since_shard: str = "") -> list[tuple[str, str]]:
        """(path, blob id) of one goal's record files (kind: events | runs), optionally only
        from the time shard ``since_shard`` (``YYYY/MM/DD/HH`` prefix, the same in both event layouts)
        on, without reading blobs."""
        if tip is None:
            return []
        base = f"goals/{goal_id}/{kind}"
        files = self._git.walk_files(self._git.commit(tip).tree, base)
        if not since_shard:
            return list(files)
        return [(p, o) for p, o in files if p[len(base) + 1 : len(base) + 1 + len(since_shard)] >= since_shard]

    def read_events(self, files: Iterable[tuple[str, str]], keep: re.Pattern[bytes] | None = None) -> list[EventBase]:
        """The events of ``files``; with ``keep``, only those whose stored bytes it finds (a filter on
        what a record holds is then exact after parsing, and cheap before it)."""
        if keep is None:
            return [parse_event(self._git.read_blob(oid), path) for path, oid in files]
        blobs = ((path, self._git.read_blob(oid)) for path, oid in files)
        return [parse_event(data, path) for path, data in blobs if keep.search(data)]

    def read_blob(self, oid: str) -> bytes:
        """A record's stored bytes, for a reader that looks before it parses (``views.derived``)."""
        return self._git.read_blob(oid)

    def read_runs(self, files: Iterable[tuple[str, str]], keep: re.Pattern[bytes] | None = None) -> list[RunRecord]:
        """The run records of ``files``; with ``keep``, only those whose stored bytes it finds."""
        if keep is None:
            return [parse_run(self._git.read_blob(oid), path) for path, oid in files]
        blobs = ((path, self._git.read_blob(oid)) for path, oid in files)
        return [parse_run(data, path) for path, data in blobs if keep.search(data)]

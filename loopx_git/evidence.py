"""Each agent's evidence index (``views/evidence_index.py``) at a tip, kept from one command to the
next: from memory, from its file under ``.git/loopx/`` extended by the agent's runs a later tip
added, or built from all of the agent's runs when nothing kept is usable.

The replan context is selected from the agent's whole history (``from_full_index``). Built from
scratch that reads every run file of the goal; kept, the first ask after a write reads the runs the
write added and the few dozen the context shows. Like the fold cache it is never a source of truth:
deleting the file changes no answer, and every way the kept index could be wrong (a changed or
removed run, a run that sorts before the ones indexed, a run it names that the branch does not hold,
a damaged file) falls back to a rebuild.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from loopx_git.model.run import RunRecord, run_order_key
from loopx_git.store import layout
from loopx_git.store.cache import FoldCache
from loopx_git.store.git import GitRepo
from loopx_git.store.reader import StateReader
from loopx_git.store.records import holding, parse_run
from loopx_git.views.evidence_index import AgentEvidence, EvidenceIndex, RunKey

INDEX_VERSION = "1"
"""Raise when what the index holds or how a run is read into it changes."""

SAVE_AFTER = 20
"""Run files a tree diff may look at before the index is saved at the new tip although none was the
agent's: fewer are cheaper to look at again than 100k observations are to pickle."""


class EvidenceIndexes:
    """The evidence indexes one process asked for, by (goal, agent), each with the tip it is of."""

    def __init__(self, git: GitRepo, reader: StateReader, ref: str, code_stamp: str) -> None:
        self._git = git
        self._reader = reader
        """Reads run files as the fold does (``read_runs``, with its byte prefilter)."""
        self.ref = ref
        self._version = f"{INDEX_VERSION}:{code_stamp}"
        self._memory: dict[tuple[str, str], tuple[str, EvidenceIndex]] = {}
        self._dirty: set[tuple[str, str]] = set()

    def at(self, tip: str, goal_id: str, agent_id: str) -> AgentEvidence:
        """The agent's evidence on ``goal_id`` at ``tip``, and a loader of the runs it names."""
        tree = self._git.commit(tip).tree
        index = self._index(tip, tree, goal_id, agent_id)

        def load(keys: Sequence[RunKey]) -> dict[str, RunRecord]:
            found = {}
            for at, run_id in keys:
                path = layout.run_path(goal_id, run_id, at)
                oid = self._git.tree_entry(tree, path)
                if oid is not None:
                    found[run_id] = parse_run(self._git.read_blob(oid), path)
            return found

        return AgentEvidence(index, load)

    def rebuilt(self, tip: str, goal_id: str, agent_id: str) -> AgentEvidence:
        """As ``at``, from all of the agent's runs whatever is kept (a kept index named a run the
        branch does not hold)."""
        tree = self._git.commit(tip).tree  # the kept file is replaced at the end of the command
        self._remember(tip, goal_id, agent_id, self._build(tree, goal_id, agent_id))
        return self.at(tip, goal_id, agent_id)

    def flush(self) -> None:
        """Save the indexes this process built or moved to a new tip (at the end of a command)."""
        for goal_id, agent_id in sorted(self._dirty):
            tip, index = self._memory[(goal_id, agent_id)]
            self._cache(goal_id, agent_id).save(tip, index)
        self._dirty.clear()

    def _index(self, tip: str, tree: str, goal_id: str, agent_id: str) -> EvidenceIndex:
        key = (goal_id, agent_id)
        kept = self._memory.get(key) or self._load(goal_id, agent_id)
        if kept is not None and kept[0] == tip:
            self._memory[key] = kept
            return kept[1]
        extended = self._extended(kept, tree, goal_id, agent_id) if kept is not None else None
        if extended is None:
            index = self._build(tree, goal_id, agent_id)
            self._remember(tip, goal_id, agent_id, index)
            return index
        index, added, examined = extended
        self._remember(tip, goal_id, agent_id, index, save=added > 0 or examined >= SAVE_AFTER)
        return index

    def _remember(self, tip: str, goal_id: str, agent_id: str, index: EvidenceIndex, *, save: bool = True) -> None:
        self._memory[(goal_id, agent_id)] = (tip, index)
        if save:
            self._dirty.add((goal_id, agent_id))

    def _load(self, goal_id: str, agent_id: str) -> tuple[str, EvidenceIndex] | None:
        """The kept (tip, index), when it is one of this agent's and its tip is a commit here."""
        kept = self._cache(goal_id, agent_id).load()
        if kept is None:
            return None
        tip, index = kept
        if not isinstance(index, EvidenceIndex) or (index.goal_id, index.agent_id) != (goal_id, agent_id):
            return None
        if not isinstance(tip, str) or self._git.object_type(tip) != "commit":
            return None
        return tip, index

    def _extended(
        self, kept: tuple[str, EvidenceIndex], tree: str, goal_id: str, agent_id: str
    ) -> tuple[EvidenceIndex, int, int] | None:
        """The kept index extended, in place, by the agent's runs added since its tip, with how many
        were added and how many run files the diff looked at; None, the index unchanged, when only a
        rebuild is exact: a run file changed or went, or the added runs sort before the indexed ones
        (then the first of them does: they are added in time order). The index is a function of the
        runs a tree holds, so a diff of two trees says what to add whatever lies between them (a
        reset, a merge): no ancestry is needed."""
        old_tip, index = kept
        runs_dir = f"goals/{goal_id}/runs/"
        files = []
        for change in self._git.changes(self._git.commit(old_tip).tree, tree, within=_within(runs_dir)):
            if not change.path.startswith(runs_dir) or layout.record_kind(change.path) != "run":
                continue
            if change.old is not None or change.new is None:
                return None
            files.append((change.path, change.new))
        added = sorted(self._agent_runs(files, index), key=run_order_key)
        for run in added:
            if not index.add(run):
                return None
        return index, len(added), len(files)

    def _build(self, tree: str, goal_id: str, agent_id: str) -> EvidenceIndex:
        index = EvidenceIndex(goal_id, agent_id)
        files = self._git.walk_files(tree, f"goals/{goal_id}/runs")
        for run in sorted(self._agent_runs(files, index), key=run_order_key):
            index.add(run)
        return index

    def _agent_runs(self, files: Iterable[tuple[str, str]], index: EvidenceIndex) -> list[RunRecord]:
        """The runs among ``files`` (path, blob id) that belong in ``index``; the others are not parsed."""
        runs = ((path, oid) for path, oid in files if layout.record_kind(path) == "run")
        return [
            run for run in self._reader.read_runs(runs, keep=holding("agent_id", index.agent_id)) if index.holds(run)
        ]

    def _cache(self, goal_id: str, agent_id: str) -> FoldCache:
        return FoldCache(self._git.common_dir, self.ref, self._version, kind="evidence", key=f"{goal_id}\0{agent_id}")


def _within(runs_dir: str) -> Callable[[str], bool]:
    """The folders of a tree diff that may hold the goal's runs (and those on the way to them)."""
    return lambda folder: folder.startswith(runs_dir) or runs_dir.startswith(folder)

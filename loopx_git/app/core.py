"""``Core``: what every family of ``StateRepo`` uses: the repository and its state branch, the fold
at the tip, the answers kept by tip, and ``apply``, which makes one write one commit."""

from __future__ import annotations

import importlib
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from loopx_git.app.branch import CONFIG_KEY, no_branch, not_code
from loopx_git.app.declared import operation_method
from loopx_git.app.result import WriteResult
from loopx_git.errors import LoopxError, Notice, ValidationError
from loopx_git.integrity import Integrity
from loopx_git.store import hygiene, layout
from loopx_git.store.cache import Answers
from loopx_git.store.git import GitRepo

if TYPE_CHECKING:
    from loopx_git.api import StateRepo
    from loopx_git.domain.operation import Operation
    from loopx_git.domain.write import Write
    from loopx_git.evidence import EvidenceIndexes
    from loopx_git.model.state import State
    from loopx_git.safety.policy import Policy
    from loopx_git.store.reader import StateReader

_T = TypeVar("_T")
_C = TypeVar("_C", bound="Core")

ANSWERS_VERSION = "1"
"""Part of the key of cached answers: raise it when what an answer holds changes shape."""


def code_stamp() -> str:
    """What computed the cached answers: loopx's version and the files of the code that computes
    them (the models, the views, the store, the application layer, the package's own modules), by
    size and modification time. An upgrade or an edit of any of them leaves earlier answers unused,
    with no version to remember to raise; it costs a few dozen ``stat`` calls, not an import."""
    import hashlib
    import os

    from loopx_git.version import __version__

    root = Path(__file__).parents[1]
    digest = hashlib.sha1(f"{ANSWERS_VERSION}:{__version__}".encode())
    try:
        for folder in (root / "model", root / "views", root / "store", root / "app", root):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    digest.update(f"{folder.name}/{entry.name}:{info.st_size}:{info.st_mtime_ns};".encode())
    except OSError:  # not files on a disk (a zip archive): what is installed changes only with the version
        digest.update(b"unlisted")
    return digest.hexdigest()[:16]


def answer_key(*parts: str | None) -> str:
    """An answer's key: its parts as JSON, so that no two questions share one (a goal id holding a
    ``/``, an agent filter of ``''`` and of none)."""
    import json

    return json.dumps(parts)


class OnFirstUse:
    """A module imported when first used: a read (``status``, a listing) never loads the write path
    (the domain operations, the safety gate, document rendering), which costs most of a command's
    start-up."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


def whole(part: Core) -> StateRepo:
    """A family's ``self`` as the ``StateRepo`` it is part of: the services (``sync``, ``upkeep``,
    ``defaults``, the dashboard) take the whole facade, and a family is only ever used inside it."""
    return cast("StateRepo", part)


class Core:
    def __init__(self, git: GitRepo, ref: str, *, redact: bool = False, named: bool = False):
        self.git = git
        self.ref = ref
        self.redact = redact
        """Redact blocking values with ``[REDACTED:<rule>]`` instead of refusing the write."""
        self.named = named
        """The caller named the state branch: reading it when it does not exist is an error."""
        self.notices: list[Notice] = []
        """What went wrong after a write had landed (upkeep), or is worth a word: never a failure."""
        self._reader: StateReader | None = None
        """Made on first use: a read answered from ``Answers`` never loads the models or the fold."""
        self._integrity = Integrity(git, ref)
        self._policy: Policy | None = None
        self._answers: tuple[str, dict[str, Any]] | None = None
        self._answers_dirty = False
        self._evidence: EvidenceIndexes | None = None
        """Each agent's evidence index, made on first use (a replan context)."""
        self._state_tip: str | None = None

    def _new_reader(self) -> StateReader:
        from loopx_git.views.folded import state_reader

        return state_reader(self.git, self.ref)

    @classmethod
    def open(cls: type[_C], path: str | Path = ".", *, state_ref: str | None = None, redact: bool = False) -> _C:
        git = GitRepo.discover(path)
        if state_ref is not None:
            return cls(git, not_code(git, layout.state_ref(state_ref)), redact=redact, named=True)
        configured = git.config_get(CONFIG_KEY)
        if configured is None:
            return cls(git, not_code(git, layout.DEFAULT_STATE_REF, linked=False), redact=redact)
        fix = f"set it to a branch of its own: `git config {CONFIG_KEY} {layout.DEFAULT_STATE_REF}`"
        try:
            ref = layout.state_ref(configured, field=f"git config {CONFIG_KEY}")
        except ValidationError as exc:
            exc.hint = fix
            raise
        return cls(git, not_code(git, ref, field=f"git config {CONFIG_KEY}", hint=fix, linked=False), redact=redact)

    @property
    def policy(self) -> Policy:
        """The connected repository's safety policy (``[tool.loopx.safety]``, ``.publicsafe-allow``)."""
        if self._policy is None:
            from loopx_git.safety.policy import load_from

            self._policy = load_from(self.git.workdir)
        return self._policy

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> list[Notice]:
        """End of a command: save the folded state for the next process, pack if objects piled up.
        Never raises: this runs after writes have landed, and a caller that retries a failed
        command must not write twice. What could not be done comes back as notices (also kept in
        ``notices``)."""
        upkeep = (
            ("save the caches under .git/loopx/", self._flush_caches),
            ("pack loose objects", lambda: hygiene.maybe_pack(self.git)),
        )
        for what, chore in upkeep:
            try:
                chore()
            except (OSError, LoopxError, pickle.PickleError, RecursionError, MemoryError) as exc:
                message = getattr(exc, "message", None) or getattr(exc, "strerror", None) or str(exc)
                self.notices.append(
                    Notice(
                        "upkeep",
                        f"could not {what} ({message}); nothing written was lost, the next command may be slower",
                    )
                )
        return list(self.notices)

    def _flush_caches(self) -> None:
        if self._reader is not None:
            self._reader.flush()
        if self._evidence is not None:
            self._evidence.flush()
        if self._answers_dirty and self._answers is not None and self._answers[0] == self.tip:
            self._answers_store().save(*self._answers)  # answers of a tip a write has since left are not kept
        self._answers_dirty = False

    @property
    def tip(self) -> str | None:
        return self.git.ref_target(self.ref)

    def state(self) -> State:
        return self._state_at(self.tip)

    def _state_at(self, tip: str | None) -> State:
        """The fold at ``tip``, remembered as the tip of the state last handed out (a reader that
        pairs the state with more of the branch reads it at that tip, whatever wrote since)."""
        if tip is None and self.named:
            raise no_branch(self.ref)
        state = self.reader.state_at(tip)
        self._state_tip = tip
        return state

    def _goal_state(self, goal_id: str) -> Any:
        """The goal's folded state at the tip (``model.state.GoalState``), or NotFoundError."""
        from loopx_git.model.state import require_goal

        return require_goal(self.state(), goal_id)

    def _answers_store(self) -> Answers:
        return Answers(self.git.common_dir, self.ref, code_stamp())

    def answer(self, key: str, compute: Callable[[State], Any]) -> Any:
        """``compute(state)`` at the tip — JSON data, a pure function of the state — from the answers
        cached for that tip when there is one (then no state is loaded at all), else computed and
        kept for the next process. The data is shared: callers must not change it."""
        tip = self.tip
        if tip is None:
            return compute(self.state())
        if self._answers is None or self._answers[0] != tip:
            loaded = self._answers_store().load() if self._answers is None else None
            self._answers = loaded if loaded is not None and loaded[0] == tip else (tip, {})
        answers = self._answers[1]
        if key not in answers:
            answers[key] = compute(self._state_at(tip))  # the state of the tip it is kept under
            self._answers_dirty = True
        return answers[key]

    @property
    def reader(self) -> StateReader:
        if self._reader is None:
            self._reader = self._new_reader()
        return self._reader

    @property
    def integrity(self) -> Integrity:
        return self._integrity

    def require_writable(self) -> None:
        """Only a branch is written: a remote-tracking ref or a tag may be read (a proposal under
        review), never moved by a write."""
        if not self.ref.startswith("refs/heads/"):
            raise ValidationError(
                f"field 'state_branch': {self.ref} can be read but not written; state branches live under refs/heads/",
                code="invalid-field",
                hint="write on a local branch (`loopx connect --state-branch NAME`), then push or propose it",
            )

    def require_intact(self, tip: str) -> None:
        """Refuse (``broken-branch``) unless the branch at ``tip`` verifies: checked since the last
        verified tip, so usually free. Every write calls it before building on ``tip``."""
        self.note(self._integrity.require(tip, self.reader, self.policy))

    def mark_built(self, commit: str, parent: str | None) -> None:
        """``commit`` was made (or fetched and checked) on top of ``parent``: verified when
        ``parent`` was (None: checked whole)."""
        self.note(self._integrity.built(commit, parent))

    def locked(self, attempt: Callable[[], Any]) -> Callable[[], Any]:
        """``attempt`` run under this clone's write lock: writers of one clone take turns instead of
        racing (compare-and-swap still guards against everyone else; see store/writelock.py)."""
        from loopx_git.store.writelock import write_lock

        def run() -> Any:
            with write_lock(self.git.common_dir, self.ref):
                return attempt()

        return run

    def note(self, notice: Notice | None) -> None:
        if notice is not None and notice not in self.notices:
            self.notices.append(notice)

    def apply(self, build: Callable[[State], Write]) -> WriteResult:
        """Run one domain operation as one commit: read the tip, validate against its state,
        commit with compare-and-swap; on a lost race, all of it again on the new tip."""
        from loopx_git.domain.guard import guard
        from loopx_git.errors import RefMoved
        from loopx_git.model.fold import fold
        from loopx_git.store import transaction
        from loopx_git.store.documents import render_touched, touched
        from loopx_git.store.records import encode

        self.require_writable()

        def attempt() -> WriteResult:
            tip = self.tip
            if tip is None:
                raise no_branch(self.ref)
            self.require_intact(tip)
            state = self.reader.state_at(tip)
            write = build(state)
            if write.is_empty:
                return WriteResult(None, write)
            guarded = guard(write, self.policy, redact=self.redact)
            write = guarded.write
            after = state.copy_for({write.goal_id})
            exact = after.runs_in_order(write.runs)  # a run dated before the latest: the next read refolds
            fold(write.events, write.runs, after)
            txn = transaction.Transaction(
                write.verb, write.summary, write.goal_id, write.agent_id, [e.event_id for e in write.events]
            )
            for event in write.events:
                txn.add(layout.event_path(event.goal_id, event.event_id, event.recorded_at), encode(event))
            for run in write.runs:
                txn.add(layout.run_path(run.goal_id, run.run_id, run.generated_at), encode(run))
            txn.files.update(render_touched(after, touched(write.events)))
            if self.tip != tip:  # lost already: retry before writing objects a lost race leaves behind
                raise RefMoved(f"{self.ref} moved while the write was prepared")
            commit = transaction.commit(self.git, self.ref, tip, txn)
            if exact:
                self.reader.remember(commit, after, added=len(write.events) + len(write.runs))
            self.note(self._integrity.built(commit, tip))
            return WriteResult(commit, write, tuple(guarded.redactions), tuple(guarded.warnings))

        return transaction.retrying(self.locked(attempt))

    def run(self, op: Operation, *, now: str | None = None) -> WriteResult:
        """Apply one declared operation (``domain/operation.py``) as one commit; ``record`` is what it
        returns. ``repo.gate_open(goal_id, gate_id, ...)`` is the same as ``repo.run(OpenGate(...))``."""
        return self.apply(lambda s: op.apply(s, self._now(now)))

    def __getattr__(self, name: str) -> Callable[..., WriteResult]:
        """A declared operation's method (``gate_open``), made on first use from its declaration."""
        if name.startswith("_"):
            raise AttributeError(name)
        from loopx_git.domain.catalog import OPERATIONS

        op = OPERATIONS.get(name)
        if op is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        setattr(type(self), name, operation_method(op))
        return getattr(self, name)

    def __dir__(self) -> list[str]:
        from loopx_git.domain.catalog import OPERATIONS

        return sorted({*super().__dir__(), *OPERATIONS})

    def _now(self, now: str | None) -> str:
        from loopx_git.model.ids import utc_now

        return now or utc_now()

    def _with_evidence_notes(self, result: WriteResult, evidence: Sequence) -> WriteResult:
        """``result`` warned of evidence paths found neither in the work tree nor in HEAD (written all
        the same: the commit under way may add them)."""
        from dataclasses import replace

        from loopx_git.domain.evidence import missing_paths

        return replace(result, warnings=result.warnings + missing_paths(evidence, self.git.path_exists))

    def preview(self, build: Callable[[State], Write]) -> WriteResult:
        """What ``apply(build)`` would write, checked the same way, without writing it."""
        from loopx_git.domain.guard import guard

        write = build(self.state())
        guarded = guard(write, self.policy, redact=self.redact)
        return WriteResult(None, guarded.write, tuple(guarded.redactions), tuple(guarded.warnings))

    def _write_or_preview(self, dry_run: bool, build: Callable[[State], Write]) -> WriteResult:
        return self.preview(build) if dry_run else self.apply(build)

    def _with_evidence(self, state: State, goal_id: str, agent_id: str | None, read: Callable[[Any], _T]) -> _T:
        """``read(evidence)``: the agent's evidence index at the tip when it has an open replan
        obligation (its context is selected from all of its runs: ``from_full_index``), else None.
        A kept index that names a run the branch does not hold is rebuilt, and read once more."""
        from loopx_git.views.evidence_index import MissingRuns

        gs = state.goals.get(goal_id)
        frontier = gs.frontiers.get(agent_id) if gs is not None and agent_id is not None else None
        tip = self._state_tip  # the state's own tip: a write since must not pair it with later runs
        if agent_id is None or frontier is None or frontier.open is None or tip is None:
            return read(None)
        if self._evidence is None or self._evidence.ref != self.ref:
            from loopx_git.evidence import EvidenceIndexes

            self._evidence = EvidenceIndexes(self.git, self.reader, self.ref, code_stamp())
        try:
            return read(self._evidence.at(tip, goal_id, agent_id))
        except MissingRuns:
            return read(self._evidence.rebuilt(tip, goal_id, agent_id))

"""``StateRepo``: the Python API, and the object the CLI drives. It wires the store, the domain
operations (writes) and the views (reads) together; it holds no rules of its own."""

from __future__ import annotations

import importlib
import pickle
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from loopx_git import defaults
from loopx_git.errors import LoopxError, Notice, RuleError, ValidationError
from loopx_git.integrity import Integrity
from loopx_git.store import hygiene, layout
from loopx_git.store.cache import Answers
from loopx_git.store.git import GitRepo

if TYPE_CHECKING:
    from loopx_git.domain.operation import Operation
    from loopx_git.domain.write import Write
    from loopx_git.evidence import EvidenceIndexes
    from loopx_git.model.state import State
    from loopx_git.safety.policy import Policy
    from loopx_git.store.reader import StateReader

_T = TypeVar("_T")

ANSWERS_VERSION = "1"
"""Part of the key of cached answers: raise it when what an answer holds changes shape."""


def _code_stamp() -> str:
    """What computed the cached answers: loopx's version and the files of the code that computes
    them (the models, the views, the store, the modules beside this one), by size and modification time. An upgrade or an edit
    of any of them leaves earlier answers unused, with no version to remember to raise; it costs a
    few dozen ``stat`` calls, not an import."""
    import hashlib
    import os

    from loopx_git.version import __version__

    root = Path(__file__).parent
    digest = hashlib.sha1(f"{ANSWERS_VERSION}:{__version__}".encode())
    try:
        for folder in (root / "model", root / "views", root / "store", root):
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    digest.update(f"{folder.name}/{entry.name}:{info.st_size}:{info.st_mtime_ns};".encode())
    except OSError:  # not files on a disk (a zip archive): what is installed changes only with the version
        digest.update(b"unlisted")
    return digest.hexdigest()[:16]


def _key(*parts: str | None) -> str:
    """An answer's key: its parts as JSON, so that no two questions share one (a goal id holding a
    ``/``, an agent filter of ``''`` and of none)."""
    import json

    return json.dumps(parts)


class _OnFirstUse:
    """A module imported when first used: a read (``status``, a listing) never loads the write path
    (the domain operations, the safety gate, document rendering), which costs most of a command's
    start-up."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)


event_ops = _OnFirstUse("loopx_git.domain.event")
goal_ops = _OnFirstUse("loopx_git.domain.goal")
run_ops = _OnFirstUse("loopx_git.domain.run")
todo_ops = _OnFirstUse("loopx_git.domain.todo")

CONFIG_KEY = "loopx.stateRef"


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the commit (None when nothing changed), its events, and the record."""

    commit: str | None
    write: Write
    redactions: tuple = ()
    """What ``redact=True`` replaced: field, rule and fingerprint of each value (never the value)."""
    warnings: tuple = ()
    """Warn-level findings (an e-mail address, a private IP) that did not stop the write."""

    @property
    def record(self) -> Any:
        return self.write.result

    @property
    def event_ids(self) -> list[str]:
        return [e.event_id for e in self.write.events]

    @property
    def changed(self) -> bool:
        return self.commit is not None


def not_code(
    git: GitRepo, ref: str, *, field: str = "state_branch", hint: str | None = None, linked: bool = True
) -> str:
    """``ref``, unless it is a branch of the project's code (checked out in a work tree, a
    remote's default branch): state written there would replace the project's files in its tip.
    ``linked=False`` lets a branch checked out in a linked work tree pass: the configured state
    branch may be checked out on purpose, to edit it with plain git (``loopx verify`` and
    ``repair`` must still read it), where a named ``--state-branch`` is refused everywhere."""
    aliased = git.symbolic_target(ref)
    if aliased is not None:  # `git symbolic-ref refs/heads/cur refs/heads/main`: a write would land on main
        raise ValidationError(
            f"field '{field}': {ref} is a symbolic ref to {aliased}; rule: the state branch is a branch of its own, "
            "never another name for one; nothing was read or written",
            code="state-branch-is-code",
            hint=hint or f"`git symbolic-ref --delete {ref}`, or name a branch of its own",
        )
    why = git.code_branches(linked=linked).get(ref)
    if why is None:
        tip = git.ref_target(ref)
        if tip is not None and not git.holds_path(tip, layout.ROOT_DOCUMENT, "goals"):
            raise ValidationError(
                f"field '{field}': {ref} holds neither {layout.ROOT_DOCUMENT} nor goals/ at its tip "
                f"({tip[:12]}): it is no state branch; rule: loopx reads and writes only a branch `loopx connect` "
                "made (repair would take every other file out of it); nothing was read or written",
                code="not-a-state-branch",
                hint=hint
                or f"leave --state-branch out (the default is {layout.DEFAULT_STATE_REF.removeprefix('refs/heads/')})",
            )
        return ref
    raise ValidationError(
        f"field '{field}': {ref} is {why}, a branch of the project's code; rule: the state branch is a "
        "branch of its own, never the checked-out branch, a remote's default branch or a branch with a "
        "work tree; nothing was read or written",
        code="state-branch-is-code",
        hint=hint
        or f"leave --state-branch out (the default is {layout.DEFAULT_STATE_REF.removeprefix('refs/heads/')})",
    )


def check_state_branch(path: str | Path, branch: str) -> str:
    """A ``--state-branch`` checked before any command runs, whether or not it reads the branch: a
    valid name, and, where ``path`` is in a repository, none of its code branches (``not_code``)."""
    ref = layout.state_ref(branch)
    try:
        git = GitRepo.discover(path)
    except LoopxError:
        return ref  # no repository: the command itself says so, if it needs one
    return not_code(git, ref)


class StateRepo:
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
    def open(cls, path: str | Path = ".", *, state_ref: str | None = None, redact: bool = False) -> StateRepo:
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

    def __enter__(self) -> StateRepo:
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

    # -- reading -------------------------------------------------------------------------------

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
            raise _no_branch(self.ref)
        state = self.reader.state_at(tip)
        self._state_tip = tip
        return state

    def _goal_state(self, goal_id: str) -> Any:
        """The goal's folded state at the tip (``model.state.GoalState``), or NotFoundError."""
        from loopx_git.model.state import require_goal

        return require_goal(self.state(), goal_id)

    def _answers_store(self) -> Answers:
        return Answers(self.git.common_dir, self.ref, _code_stamp())

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

    # -- writing -------------------------------------------------------------------------------

    def connect(
        self, *, state_branch: str | None = None, remote: str | None = None, progress: Any = None
    ) -> WriteResult:
        """Create the state branch if it is missing (idempotent), then remember its name: the
        configuration never names a branch that does not exist.

        In a clone whose remote already has the state branch (``git clone`` brought it to
        ``refs/remotes/<remote>/<branch>``), the branch starts there, after the check a pull makes,
        instead of at a new root that every later sync would have to merge: ``remote`` names the
        remote to join (else origin, else the only one with a copy). A clone that never fetched the
        remote's branch (``--single-branch``, a remote added and not fetched) fetches that one branch
        first. ``record`` is then the ``sync.Adopted`` copy; None for a new root or an existing branch."""
        from loopx_git import sync
        from loopx_git.domain.write import Write
        from loopx_git.model.state import State
        from loopx_git.store import transaction
        from loopx_git.store.documents import root_document
        from loopx_git.store.yaml_doc import render

        if state_branch is not None:
            self.ref = not_code(self.git, layout.state_ref(state_branch))
            self._reader = self._new_reader()
            self._integrity = Integrity(self.git, self.ref)
        self.require_writable()
        if remote is not None:  # an unknown or malformed remote is refused before anything is written
            self.remote(remote)
        empty = Write("connect", "state branch", "", None)

        def attempt() -> WriteResult:
            tip = self.tip
            if tip is not None:
                return WriteResult(None, empty)
            found = sync.adoptable(self, remote)
            if found is not None:
                adopted = sync.adopt(self, *found, progress=progress)
                return WriteResult(adopted.tip, Write("connect", f"adopt {adopted}", "", None, result=adopted))
            txn = transaction.Transaction("connect", f"create {self.ref}")
            txn.add(layout.ROOT_DOCUMENT, render(root_document(State())))
            commit = transaction.commit(self.git, self.ref, None, txn)
            self.note(self._integrity.built(commit, None))
            return WriteResult(commit, empty)

        sync.fetch_copy(self, remote)  # a clone that never fetched the remote's copy: fetch it to join it
        result = transaction.retrying(self.locked(attempt))
        if self.git.config_get(CONFIG_KEY) != self.ref:
            self.git.config_set(CONFIG_KEY, self.ref)
        self.named = True
        return result

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

    def connect_worktree(self, *, hooks: bool = True, ignore: bool = True):
        """Install the hook shims and the ``.gitignore`` block for local state (idempotent)."""
        from loopx_git.hooks import connection

        return connection.connect(self.git, hooks=hooks, ignore=ignore)

    def disconnect(self) -> dict[str, str]:
        """Remove loopx's hook sections only; the state branch and the ignore block stay."""
        from loopx_git.hooks import connection

        return connection.disconnect(self.git)

    # -- many clones ------------------------------------------------------------------------------

    def remote(self, name: str = "origin"):
        from loopx_git.store.remote import Remote

        return Remote(self.git, name, self.ref)

    def track(self, remote: str = "origin") -> bool:
        """Add the fetch refspec so a plain ``git fetch`` brings the state branch too."""
        return self.remote(remote).ensure_refspec()

    def pull(self, remote: str = "origin", *, progress: Any = None):
        """Fetch the remote state branch; fast-forward or merge. Never pushes. ``progress(stage,
        done, total)`` follows the check of a branch this clone has never seen."""
        from loopx_git import sync

        return sync.pull(self, self.remote(remote), progress)

    def push(self, remote: str = "origin"):
        """Push local state commits; refused if the remote moved since the last fetch."""
        from loopx_git import sync

        return sync.push(self, self.remote(remote))

    def sync(self, remote: str = "origin", *, progress: Any = None):
        """Pull, then push, retried when another clone pushed in between."""
        from loopx_git import sync

        return sync.sync(self, self.remote(remote), progress=progress)

    def todo_claim_synced(self, goal_id: str, todo_id: str, agent_id: str, *, remote: str = "origin") -> WriteResult:
        """Fetch, claim, push as one step: of several clones racing for a todo, one wins."""
        from loopx_git import sync

        return sync.claim_synced(self, self.remote(remote), goal_id, todo_id, agent_id)

    def propose(self, branch: str | None = None, *, remote: str = "origin") -> dict:
        """Push the local state commits to a proposal branch on the remote, for pull-request review;
        the remote state branch is left alone. A proposal branch only moves forward too."""
        from loopx_git import sync

        return sync.propose(self, self.remote(remote), branch)

    def repair(self) -> WriteResult:
        """One commit that re-derives every document from the fold (after a plain-git merge that
        left documents drifted) and removes stray files; no commit when all is in order."""
        from loopx_git import upkeep

        return WriteResult(*upkeep.repair(self))

    def apply(self, build: Callable[[State], Write]) -> WriteResult:
        """Run one domain operation as one commit: read the tip, validate against its state,
        commit with compare-and-swap; on a lost race, all of it again on the new tip."""
        from loopx_git.domain.guard import guard
        from loopx_git.errors import RefMoved
        from loopx_git.model.state import fold
        from loopx_git.store import transaction
        from loopx_git.store.documents import render_touched, touched
        from loopx_git.store.records import encode

        self.require_writable()

        def attempt() -> WriteResult:
            tip = self.tip
            if tip is None:
                raise _no_branch(self.ref)
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
        setattr(StateRepo, name, operation_method(op))
        return getattr(self, name)

    def __dir__(self) -> list[str]:
        from loopx_git.domain.catalog import OPERATIONS

        return sorted({*super().__dir__(), *OPERATIONS})

    def _now(self, now: str | None) -> str:
        from loopx_git.model.ids import utc_now

        return now or utc_now()

    def goal_create(
        self, goal_id: str, objective: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: goal_ops.create_goal(
                s, goal_id=goal_id, objective=objective, actor=actor, now=self._now(now), **kw
            )
        )

    def goal_update(self, goal_id: str, *, actor: str | None = None, now: str | None = None, **kw: Any) -> WriteResult:
        return self.apply(lambda s: goal_ops.update_goal(s, goal_id=goal_id, actor=actor, now=self._now(now), **kw))

    def goal_configure(
        self,
        goal_id: str,
        *,
        execute: bool = False,
        actor: str | None = None,
        now: str | None = None,
        **kw: Any,
    ) -> WriteResult:
        """The goal's explore policy (``explore_harness_enabled``, ``explore_composition_mode``,
        ``explore_composition_scope_id``): a preview of what would change, written only with
        ``execute``. The record says before and after, whether it changed and whether it was written."""
        from dataclasses import replace

        result = self._write_or_preview(
            not execute,
            lambda s: goal_ops.configure_goal(s, goal_id=goal_id, actor=actor, now=self._now(now), **kw),
        )
        change = result.record.model_copy(update={"executed": execute, "commit": result.commit})
        return replace(result, write=replace(result.write, result=change))

    def agent_register(
        self, goal_id: str, agent_id: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: goal_ops.register_agent(
                s, goal_id=goal_id, agent_id=agent_id, actor=actor, now=self._now(now), **kw
            )
        )

    def todo_add(
        self, goal_id: str, text: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.add_todo(s, goal_id=goal_id, text=text, actor=actor, now=self._now(now), **kw)
        )

    def todo_claim(self, goal_id: str, todo_id: str, agent_id: str, *, now: str | None = None) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.claim_todo(s, goal_id=goal_id, todo_id=todo_id, agent_id=agent_id, now=self._now(now))
        )

    def todo_update(
        self,
        goal_id: str,
        todo_id: str,
        status: str,
        *,
        actor: str | None = None,
        now: str | None = None,
        **kw: Any,
    ) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.update_todo(
                s, goal_id=goal_id, todo_id=todo_id, status=status, actor=actor, now=self._now(now), **kw
            )
        )

    def todo_complete(
        self, goal_id: str, todo_id: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        result = self.apply(
            lambda s: todo_ops.complete_todo(s, goal_id=goal_id, todo_id=todo_id, actor=actor, now=self._now(now), **kw)
        )
        return self._with_evidence_notes(result, kw.get("evidence", ()))

    def todo_supersede(
        self,
        goal_id: str,
        todo_id: str,
        by: str,
        reason: str,
        *,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.supersede_todo(
                s, goal_id=goal_id, todo_id=todo_id, by=by, reason=reason, actor=actor, now=self._now(now)
            )
        )

    def todo_suggest(
        self, goal_id: str, text: str, *, actor: str | None = None, now: str | None = None, **kw: Any
    ) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.suggest_todo(s, goal_id=goal_id, text=text, actor=actor, now=self._now(now), **kw)
        )

    def todo_promote(
        self, goal_id: str, todo_id: str, *, actor: str | None = None, now: str | None = None
    ) -> WriteResult:
        return self.apply(
            lambda s: todo_ops.promote_todo(s, goal_id=goal_id, todo_id=todo_id, actor=actor, now=self._now(now))
        )

    def event_append(self, goal_id: str, kind: str, *, now: str | None = None, **kw: Any) -> WriteResult:
        return self.apply(lambda s: event_ops.append_event(s, goal_id=goal_id, kind=kind, now=self._now(now), **kw))

    def events_import(
        self, goal_id: str, lines: Iterable[bytes], *, chunk_size: int | None = None, progress: Any = None
    ) -> Any:
        """Append another rollout-event log's lines (``loopx_rollout_event_v0`` JSON Lines) to
        ``goal_id`` as ``rollout_import`` events: every line is checked, and safety-scanned, before
        the first commit; then one commit per chunk, skipping lines whose event id the goal imported
        before. ``progress(done, total)`` is called after each chunk."""
        import functools

        from loopx_git.domain import interop
        from loopx_git.domain.guard import guard
        from loopx_git.errors import SafetyError
        from loopx_git.model.state import require_goal

        require_goal(self.state(), goal_id)
        parsed = interop.read_log(lines, goal_id)
        redactions: tuple = ()
        if parsed:  # every line scanned (and with redact, cleaned) before the first commit
            try:
                guarded = guard(interop.checking(goal_id, parsed), self.policy, redact=self.redact)
            except SafetyError:
                for line in parsed:  # name the first refused line
                    try:
                        guard(interop.checking(goal_id, [line]), self.policy, redact=self.redact)
                    except SafetyError as exc:
                        raise SafetyError(f"line {line.number}: {exc.message}", hint=exc.hint) from None
                raise
            if guarded.redactions:  # the record as written is the redacted one: its id is its hash
                parsed = interop.reidentified(parsed, guarded.write.events)
                redactions = tuple(guarded.redactions)
        commits: list[str] = []
        imported = differing = 0
        size = chunk_size or interop.IMPORT_CHUNK
        done = 0
        for chunk in interop.chunks(parsed, size):
            result = self.apply(functools.partial(interop.import_write, goal_id=goal_id, lines=chunk))
            differing += result.write.result
            if result.commit is not None:
                commits.append(result.commit)
                imported += len(result.write.events)
            done += len(chunk)
            if progress is not None:
                progress(done, len(parsed))
        return interop.EventsImport(
            goal_id=goal_id,
            lines=len(parsed),
            imported=imported,
            already_present=len(parsed) - imported - differing,
            differing=differing,
            commits=commits,
            redacted_fields=len(redactions),
        )

    def events_export(self, goal_id: str) -> Iterator[str]:
        """The goal's events as JSON Lines (one ``loopx_rollout_event_v0`` record each, no newline),
        in fold order: what ``events_import`` reads back."""
        from loopx_git.domain.interop import export_line

        return (export_line(e) for e in self.events(goal_id))

    def refresh_state(self, goal_id: str, classification: str, *, now: str | None = None, **kw: Any) -> WriteResult:
        result = self.apply(
            lambda s: run_ops.refresh_state(s, goal_id=goal_id, classification=classification, now=self._now(now), **kw)
        )
        return self._with_evidence_notes(result, kw.get("evidence", ()))

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

    def rollback(
        self,
        goal_id: str,
        *,
        event_id: str | None = None,
        commit: str | None = None,
        reason: str | None = None,
        trigger: str = "mistaken_transition",
        dry_run: bool = False,
        force_later_changes: bool = False,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """Compensate an event (with the events it caused) or a commit of the state branch: a
        rollback_packet_v0 plus compensating events, as one commit. A commit of the project itself
        gets a packet with a gated ``git_revert`` step and a todo; nothing is reverted."""
        from loopx_git.domain import rollback as ops
        from loopx_git.errors import ValidationError

        if (event_id is None) == (commit is None):
            raise ValidationError("fields 'event' and 'commit': give exactly one", code="invalid-field")
        events = self.events(goal_id)
        if commit is not None:
            sha = self.git.rev_parse(commit)
            tip = self.tip
            if tip is None or not self.git.is_ancestor(sha, tip):
                return self._write_or_preview(
                    dry_run,
                    lambda s: ops.rollback_commit(
                        s,
                        goal_id=goal_id,
                        commit_ref=sha,
                        reason=reason,
                        trigger=trigger,
                        actor=actor,
                        now=self._now(now),
                    ),
                )
            if len(self.git.commit(sha).parents) > 1:
                raise RuleError(
                    f"field 'commit': {sha[:12]} is a merge of two clones' histories, which wrote no event of "
                    "its own; rule: a rollback undoes the commit that wrote a transition, or its event (--event)",
                    code="merge-commit",
                    hint="`git log --no-merges -1 --format=%H loopx/state` names the last commit that wrote one; "
                    "`loopx events` lists the events",
                )
            added = {path for path, _ in self.git.added_records(sha)}
            targets = [
                e for e in events if not added.isdisjoint(layout.event_paths(e.goal_id, e.event_id, e.recorded_at))
            ]
            refs = [sha]
        else:
            assert event_id is not None  # exactly one of the two is given
            targets, refs = ops.targets_of(events, event_id), []
        later = ops.later_changes(targets, events)
        return self._write_or_preview(
            dry_run,
            lambda s: ops.rollback(
                s,
                goal_id=goal_id,
                targets=targets,
                later=later,
                reason=reason,
                trigger=trigger,
                force_later_changes=force_later_changes,
                commit_refs=refs,
                actor=actor,
                now=self._now(now),
            ),
        )

    def record_rollback(
        self, goal_id: str, packet: dict, *, actor: str | None = None, now: str | None = None
    ) -> WriteResult:
        """Record a packet written elsewhere (a reviewer's plan) as it is. Nothing in it is executed:
        its steps wait for their owners, and a history_rewrite is never automatic."""
        from loopx_git.domain import rollback as ops

        return self.apply(lambda s: ops.record(s, goal_id=goal_id, packet=packet, actor=actor, now=self._now(now)))

    def _write_or_preview(self, dry_run: bool, build: Callable[[State], Write]) -> WriteResult:
        return self.preview(build) if dry_run else self.apply(build)

    def rollbacks(self, goal_id: str) -> list:
        gs = self._goal_state(goal_id)
        return sorted(gs.rollbacks.values(), key=lambda p: (p.created_at, p.packet_id))

    # -- the loop ledger ---------------------------------------------------------------------------

    def ledger_add(
        self,
        goal_id: str,
        claim: str,
        action: str,
        *,
        entry_id: str | None = None,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import ledger as ops

        return self.apply(
            lambda s: ops.add_entry(
                s, goal_id=goal_id, claim=claim, action=action, entry_id=entry_id, actor=actor, now=self._now(now)
            )
        )

    def ledger_next(self, goal_id: str, *, agent_id: str | None = None, now: str | None = None) -> WriteResult:
        """Select exactly one runnable entry (marked active); ``record`` is its action contract, or
        None when nothing is runnable."""
        from loopx_git.domain import ledger as ops

        return self.apply(lambda s: ops.select_next(s, goal_id=goal_id, agent_id=agent_id, now=self._now(now)))

    def ledger_record(
        self,
        goal_id: str,
        entry_id: str,
        *,
        status: str,
        verdict: str,
        next: str,
        evidence: Sequence = (),
        agent_id: str | None = None,
        question: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """Write an iteration's result back. ``evidence`` items are ``Evidence`` or ``KIND:REF`` strings."""
        from loopx_git.domain import ledger as ops

        items = [_evidence(e) for e in evidence]
        result = self.apply(
            lambda s: ops.record_result(
                s,
                goal_id=goal_id,
                entry_id=entry_id,
                status=status,
                verdict=verdict,
                next_=next,
                evidence=items,
                agent_id=agent_id,
                question=question,
                now=self._now(now),
            )
        )
        return self._with_evidence_notes(result, items)

    def ledger(self, goal_id: str) -> list:
        gs = self._goal_state(goal_id)
        return sorted(gs.ledger.values(), key=lambda e: (e.created_at, e.id))

    def ledger_entry(self, goal_id: str, entry_id: str):
        from loopx_git.domain.ledger import require_entry

        return require_entry(self._goal_state(goal_id), entry_id)

    # -- operator gates ----------------------------------------------------------------------------

    def gates(self, goal_id: str, *, status: str | None = None) -> list:
        """The goal's gates, oldest first (``status``: only those in it)."""
        gs = self._goal_state(goal_id)
        found = sorted(gs.gates.values(), key=lambda g: (g.created_at, g.gate_id))
        return [g for g in found if status is None or g.status == status]

    def gate(self, goal_id: str, gate_id: str):
        from loopx_git.domain.gate import require_gate

        return require_gate(self._goal_state(goal_id), gate_id)

    # -- the explore graph and research observations -------------------------------------------------

    def explore_node_add(
        self,
        goal_id: str,
        node_id: str,
        *,
        kind: str,
        title: str,
        parent_id: str | None = None,
        evidence_ids: Sequence[str] = (),
        status: str | None = None,
        reason: str | None = None,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.add_node(
                s,
                goal_id=goal_id,
                node_id=node_id,
                kind=kind,
                title=title,
                parent_id=parent_id,
                evidence_ids=evidence_ids,
                status=status,
                reason=reason,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_node_update(
        self,
        goal_id: str,
        node_id: str,
        *,
        status: str | None = None,
        reason: str | None = None,
        evidence_ids: Sequence[str] = (),
        title: str | None = None,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """A new revision of the node. Anything but closing it (resolved or dead_end) leaves its
        observation stale until a fresh one is recorded."""
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.update_node(
                s,
                goal_id=goal_id,
                node_id=node_id,
                status=status,
                reason=reason,
                evidence_ids=evidence_ids,
                title=title,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_edge_add(
        self,
        goal_id: str,
        from_node_id: str,
        to_node_id: str,
        edge_type: str,
        *,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.add_edge(
                s,
                goal_id=goal_id,
                from_node_id=from_node_id,
                to_node_id=to_node_id,
                edge_type=edge_type,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_finding_add(
        self,
        goal_id: str,
        node_id: str,
        finding_id: str,
        *,
        state: str,
        evidence_ids: Sequence[str],
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        from loopx_git.domain import explore as ops

        return self.apply(
            lambda s: ops.add_finding(
                s,
                goal_id=goal_id,
                node_id=node_id,
                finding_id=finding_id,
                finding_state=state,
                evidence_ids=evidence_ids,
                actor=actor,
                now=self._now(now),
            )
        )

    def explore_observe(
        self,
        goal_id: str,
        observation: bytes | str | dict[str, Any],
        *,
        agent_id: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """Record a typed_research_observation_v0 envelope (JSON text or data) on its node. The record
        is a ``research_observation_receipt_v0``: an exact replay writes nothing and says so."""
        from loopx_git.domain import explore as ops

        envelope = ops.parse_observation(observation)
        result = self.apply(
            lambda s: ops.observe(s, goal_id=goal_id, observation=envelope, agent_id=agent_id, now=self._now(now))
        )
        result.write.result = result.record.model_copy(update={"commit": result.commit})
        return result

    def explore_nodes(self, goal_id: str, *, kind: str | None = None, status: str | None = None) -> list:
        gs = self._goal_state(goal_id)
        return [
            n
            for _, n in sorted(gs.explore.items())
            if (kind is None or n.kind == kind) and (status is None or n.status == status)
        ]

    def explore_node(self, goal_id: str, node_id: str):
        from loopx_git.domain.explore import require_node

        return require_node(self._goal_state(goal_id), node_id)

    def explore_summary(self, goal_id: str, agent_id: str | None = None):
        """research_frontier_v0: totals, the composition gaps' shadow states, at most three cards; with
        the live gate on, the selected agent's research_execution_frontier too."""
        from loopx_git.views.explore import summary

        return summary(self.state(), goal_id, agent_id)

    def explore_summary_data(self, goal_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """``explore summary``'s JSON, answered from the answers kept by tip when it was asked for at
        this tip before (as ``status_data``). Shared data: do not change it."""
        from loopx_git import upkeep

        def compute(state: State) -> dict[str, Any]:
            from loopx_git.views.explore import summary

            return summary(state, goal_id, agent_id).model_dump(mode="json")

        data = self.answer(_key("explore-summary", goal_id, agent_id), compute)
        self.note(upkeep.read_warning(self))
        return data

    def explore_graph(self, goal_id: str, graph_format: str) -> str:
        """The goal's explore graph as mermaid, dot or JSON text."""
        from loopx_git.views.explore import graph

        return graph(self.state(), goal_id, graph_format)

    # -- handoffs ----------------------------------------------------------------------------------

    def handoff_prepare(
        self,
        goal_id: str,
        handoff_id: str,
        *,
        from_agent_id: str,
        to_agent_id: str,
        stop_condition: str,
        todo_ids: Sequence[str] = (),
        scope: str | None = None,
        evidence_refs: Sequence[str] = (),
        review_required: bool = True,
        actor: str | None = None,
        as_operator: bool = False,
        now: str | None = None,
    ) -> WriteResult:
        """The source agent offers the todos it holds to ``to_agent_id``; ``record`` is the handoff.
        ``actor``: the agent this is done as, refused unless it is the source (None: the source);
        ``as_operator``: a person prepares it for the source, and the event says so."""
        from loopx_git.domain import handoff as ops

        return self.apply(
            lambda s: ops.prepare_handoff(
                s,
                goal_id=goal_id,
                handoff_id=handoff_id,
                from_agent_id=from_agent_id,
                to_agent_id=to_agent_id,
                todo_ids=todo_ids,
                scope=scope,
                stop_condition=stop_condition,
                evidence_refs=evidence_refs,
                review_required=review_required,
                actor=actor,
                as_operator=as_operator,
                now=self._now(now),
            )
        )

    def handoff_adopt(self, goal_id: str, handoff_id: str, agent_id: str, *, now: str | None = None) -> WriteResult:
        """The target takes the handoff: every claim moves to it in this one commit."""
        from loopx_git.domain import handoff as ops

        return self.apply(
            lambda s: ops.adopt_handoff(
                s, goal_id=goal_id, handoff_id=handoff_id, agent_id=agent_id, now=self._now(now)
            )
        )

    def handoff_cancel(
        self, goal_id: str, handoff_id: str, *, reason: str, agent_id: str | None = None, now: str | None = None
    ) -> WriteResult:
        from loopx_git.domain import handoff as ops

        return self.apply(
            lambda s: ops.cancel_handoff(
                s, goal_id=goal_id, handoff_id=handoff_id, reason=reason, agent_id=agent_id, now=self._now(now)
            )
        )

    def handoffs(self, goal_id: str, *, agent_id: str | None = None, status: str | None = None) -> list:
        """The goal's handoffs, oldest first (``agent_id``: from or to it; ``status``: only those in it)."""
        gs = self._goal_state(goal_id)
        found = sorted(gs.handoffs.values(), key=lambda h: (h.prepared_at, h.handoff_id))
        return [
            h
            for h in found
            if (agent_id is None or agent_id in (h.from_agent_id, h.to_agent_id))
            and (status is None or h.status == status)
        ]

    def handoff(self, goal_id: str, handoff_id: str):
        from loopx_git.domain.handoff import require_handoff

        return require_handoff(self._goal_state(goal_id), handoff_id)

    # -- quota: whether a turn should run, and spending after the write-back ------------------------

    def should_run(self, goal_id: str, agent_id: str, *, turn_instance_id: str | None = None):
        """``interaction_contract_v0`` and ``agent_lane_next_action_v0`` for this agent (read-only),
        with ``agent_workspace_guard_v1`` against the branch this work tree has checked out."""
        from loopx_git.views.quota import should_run

        state = self.state()
        branch = self.git.current_branch()
        return self._with_evidence(
            state,
            goal_id,
            agent_id,
            lambda evidence: should_run(
                state, goal_id, agent_id, turn_instance_id, branch=branch, agent_evidence=evidence
            ),
        )

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

            self._evidence = EvidenceIndexes(self.git, self.reader, self.ref, _code_stamp())
        try:
            return read(self._evidence.at(tip, goal_id, agent_id))
        except MissingRuns:
            return read(self._evidence.rebuilt(tip, goal_id, agent_id))

    def spend_slot(self, goal_id: str, agent_id: str, run_id: str, *, now: str | None = None) -> WriteResult:
        """Spend a compute slot after run ``run_id``, which must be this agent's compact write-back."""
        from loopx_git.domain import quota as ops

        return self.apply(
            lambda s: ops.spend_slot(s, goal_id=goal_id, agent_id=agent_id, run_id=run_id, now=self._now(now))
        )

    # -- human rewards -----------------------------------------------------------------------------

    def reward_add(
        self,
        goal_id: str,
        *,
        label: str,
        polarity: str,
        reason: str,
        run_id: str | None = None,
        follow_up: str | None = None,
        lesson_kind: str | None = None,
        lesson_summary: str | None = None,
        lesson_avoid: Sequence[str] = (),
        lesson_prefer: Sequence[str] = (),
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """Record a person's judgment of run ``run_id`` (or, without one, of now); ``record`` is the reward."""
        from loopx_git.domain import reward as ops

        return self.apply(
            lambda s: ops.add_reward(
                s,
                goal_id=goal_id,
                label=label,
                polarity=polarity,
                reason=reason,
                run_id=run_id,
                follow_up=follow_up,
                lesson_kind=lesson_kind,
                lesson_summary=lesson_summary,
                lesson_avoid=lesson_avoid,
                lesson_prefer=lesson_prefer,
                actor=actor,
                now=self._now(now),
            )
        )

    def rewards(self, goal_id: str, *, run_id: str | None = None) -> list:
        """The goal's rewards, newest first (``run_id``: those of one run)."""
        gs = self._goal_state(goal_id)
        found = sorted(gs.rewards.values(), key=lambda r: (r.judged_at, r.reward_id), reverse=True)
        return [r for r in found if run_id is None or r.run_id == run_id]

    # -- views -----------------------------------------------------------------------------------

    def goals(self) -> list:
        return [g.goal for g in sorted(self.state().goals.values(), key=lambda g: g.goal_id) if g.goal is not None]

    def goal_exists(self, goal_id: str) -> bool:
        return goal_id in self.goal_ids()

    def goal_ids(self) -> list[str]:
        """The ids of the goals on the branch, sorted (an answer cached by tip: no fold to read them)."""
        return list(self.answer(_key("goal-ids"), lambda state: sorted(g for g, gs in state.goals.items() if gs.goal)))

    def agent_ids(self, goal_id: str) -> list[str] | None:
        """The agents registered on ``goal_id``, sorted; None when there is no such goal (cached by tip)."""

        def compute(state: State) -> list[str] | None:
            gs = state.goals.get(goal_id)
            return sorted(gs.agents) if gs is not None and gs.goal is not None else None

        found = self.answer(_key("agent-ids", goal_id), compute)
        return None if found is None else list(found)

    def resolve_goal(
        self, goal_id: str | None = None, *, env: str | None = None, check: bool = True
    ) -> defaults.Resolved:
        """The goal a caller means, with its source: ``goal_id`` when given, else ``env`` (what the
        caller's LOOPX_GOAL_ID holds: the API reads no environment), else `git config loopx.goal`, else
        the only goal; refused (``goal-required``) when none of them names one."""
        return defaults.resolve_goal(self, goal_id, env=env, check=check)

    def resolve_agent(
        self,
        goal_id: str,
        agent_id: str | None = None,
        *,
        env: str | None = None,
        check: bool = True,
        required: bool = False,
    ) -> defaults.Resolved | None:
        """The agent acting on ``goal_id``, with its source (given, ``env``, `git config loopx.agent`),
        or None when none is named (a person acts); see ``defaults.resolve_agent``."""
        return defaults.resolve_agent(self, goal_id, agent_id, env=env, check=check, required=required)

    def set_default_goal(self, goal_id: str) -> bool:
        """Make an existing goal this clone's default (`git config loopx.goal`); True when it changed."""
        return defaults.set_goal(self, goal_id)

    def set_default_agent(self, goal_id: str, agent_id: str) -> bool:
        """Make a registered agent this clone's default (`git config loopx.agent`); True when it changed."""
        return defaults.set_agent(self, goal_id, agent_id)

    def goal(self, goal_id: str):
        return self._goal_state(goal_id).goal

    def agents(self, goal_id: str) -> list:
        return sorted(self._goal_state(goal_id).agents.values(), key=lambda a: a.agent_id)

    def todos(self, goal_id: str, **filters: Any) -> list:
        from loopx_git.views.listing import list_todos

        return list_todos(self.state(), goal_id, **filters)

    def suggestion_prompt(self, goal_id: str):
        """todo_suggestion_prompt_v0: the packet a user's agent fills to propose candidate todos."""
        from loopx_git.views.suggest import suggestion_prompt

        return suggestion_prompt(self.state(), goal_id)

    def suggestions(self, goal_id: str) -> list:
        from loopx_git.views.listing import list_suggested

        return list_suggested(self.state(), goal_id)

    def todo(self, goal_id: str, todo_id: str):
        from loopx_git.domain.todo_rules import require_todo

        return require_todo(self._goal_state(goal_id), todo_id)

    def events(self, goal_id: str, **filters: Any) -> list:
        from loopx_git.views.listing import list_events

        tip = self.tip
        return list_events(self.reader, tip, self.reader.state_at(tip), goal_id, **filters)

    def view(self, goal_id: str, kind: str, subject: str, *, include_task_graph: bool = False):
        """A derived view (``loopx_derived_view_v0``) of one agent, todo, case, benchmark or run over
        the goal's event stream; ``include_task_graph`` adds ``task_graph_projection_v0``."""
        from loopx_git.views.derived import VIEW_KINDS, derived_view

        if kind not in VIEW_KINDS:
            raise ValidationError(
                f"field 'kind': {kind!r} is not a view; rule: one of {', '.join(VIEW_KINDS)}", code="invalid-field"
            )
        tip = self.tip
        gs = self._goal_state(goal_id)
        files = self.reader.goal_files(tip, goal_id, "events")
        return derived_view(gs, self.reader, files, kind, subject, include_task_graph=include_task_graph)

    def history(self, goal_id: str, **filters: Any) -> list:
        """Run records, newest first, each with the rewards given for it (``HistoryEntry``)."""
        from loopx_git.views.listing import run_history

        tip = self.tip
        return run_history(self.reader, tip, self.reader.state_at(tip), goal_id, **filters)

    def status(self, goal_id: str, agent_id: str | None = None):
        """The goal card. When the branch moved past the last verified tip, what arrived is checked
        too (records only, no documents): a card built on records edited by hand says so."""
        from loopx_git import upkeep
        from loopx_git.views.status import goal_card

        card = goal_card(self.state(), goal_id, agent_id)
        self.note(upkeep.read_warning(self))
        return card

    def status_data(self, goal_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """The goal card as the JSON data ``status --format json`` prints (``GoalCard.model_dump``),
        answered from the cache when this tip's card was asked for before: the command line's read,
        which then loads no models at all. The data is shared: do not change it."""
        from loopx_git import upkeep

        def compute(state: State) -> dict[str, Any]:
            from loopx_git.views.status import goal_card

            return goal_card(state, goal_id, agent_id).model_dump(mode="json")

        data = self.answer(_key("status", goal_id, agent_id), compute)
        self.note(upkeep.read_warning(self))
        return data

    def prime(self, goal_id: str, agent_id: str | None = None):
        """The brief a fresh agent context reads first (``views/prime.py``): at most 4 KiB."""
        from loopx_git.views.prime import prime

        return prime(self.state(), goal_id, agent_id, self.git.current_branch())

    def prime_data(self, goal_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """``prime``'s JSON, kept per tip and branch (an agent asks for it at the start of every turn).
        Shared data: do not change it."""
        return self.projection_data("prime", goal_id, agent_id, self.git.current_branch())

    def dashboard(self, goal_ids: list[str] | None, out: Path, *, commit_url: str | None = None):
        """Write the static dashboard of ``goal_ids`` (None: every goal) into the folder ``out``
        (``dashboard/build.py``); refused, with nothing written, on a blocking safety finding."""
        from loopx_git import upkeep
        from loopx_git.dashboard.build import write_dashboard

        result = write_dashboard(self, goal_ids, out, commit_url=commit_url)
        self.note(upkeep.read_warning(self))  # as status: a page of records changed by hand says so
        return result

    def verify(self, progress: Any = None, *, policy_from: str | None = None):
        """Walk the whole branch; ``progress(stage, done, total)`` is called as it goes. Records
        are scanned with ``review_policy(policy_from)``."""
        from loopx_git import upkeep

        return upkeep.verify(self, progress, policy_from=policy_from)

    def review_packet(self, goal_id: str, agent_id: str | None = None, *, handoff_only: bool = False):
        """The operator's packet for one goal: attention items, gates, handoffs, evidence, rollback candidates."""
        from loopx_git.views.packets import review_packet

        state = self.state()
        return self._with_evidence(
            state,
            goal_id,
            None if handoff_only else agent_id,
            lambda evidence: review_packet(
                state, goal_id, agent_id, handoff_only=handoff_only, agent_evidence=evidence
            ),
        )

    def todo_index(self):
        """todo_index_v0: the live todos of every goal, best first, bounded."""
        from loopx_git.views.packets import todo_index

        return todo_index(self.state())

    def manager(self):
        """global_manager_command_v0: progress, gates, todos, risks and next actions of every goal."""
        from loopx_git.views.packets import manager

        return manager(self.state())

    def projection_data(self, name: str, *args: str | None) -> dict[str, Any]:
        """A read-only projection as the JSON its command prints, answered from the answers kept by tip
        when it was asked for at this tip before (as ``status_data``): ``should-run`` (goal, agent),
        ``review-packet`` (goal, agent, "handoff-only" or None), ``prime`` (goal, agent or None, branch),
        ``todo-index``, ``manager``. The
        data is shared: do not change it."""
        from loopx_git import upkeep

        def compute(state: State) -> dict[str, Any]:
            from loopx_git.views import packets, quota

            if name == "should-run":  # (goal, agent, the work tree's branch)
                goal, agent = args[0] or "", args[1] or ""
                return self._with_evidence(
                    state,
                    goal,
                    agent,
                    lambda evidence: quota.should_run(state, goal, agent, branch=args[2], agent_evidence=evidence),
                ).model_dump(mode="json")
            if name == "review-packet":
                scope, handoff_only = args[1], bool(args[2])
                found = self._with_evidence(
                    state,
                    args[0] or "",
                    None if handoff_only else scope,
                    lambda evidence: packets.review_packet(
                        state, args[0] or "", scope, handoff_only=handoff_only, agent_evidence=evidence
                    ),
                )
                return found.model_dump(mode="json")
            if name == "prime":  # (goal, agent or None, the work tree's branch)
                from loopx_git.views.prime import prime

                return prime(state, args[0] or "", args[1], args[2]).model_dump(mode="json")
            if name == "todo-index":
                return packets.todo_index(state).model_dump(mode="json")
            if name == "manager":
                return packets.manager(state).model_dump(mode="json")
            raise ValueError(f"no projection {name!r}")

        data = self.answer(_key(name, *args), compute)
        self.note(upkeep.read_warning(self))
        return data

    def should_run_data(self, goal_id: str, agent_id: str) -> dict[str, Any]:
        """``quota should-run``'s JSON for this work tree (its checked-out branch is part of the
        question: the answer is kept per branch). Shared data: do not change it."""
        return self.projection_data("should-run", goal_id, agent_id, self.git.current_branch())

    def protocol_check(self, goal_id: str | None = None, progress: Any = None):
        """Seed 003's acceptance checks over the branch (``verify`` first), each with its evidence."""
        from loopx_git.views.protocol import protocol_check

        report = self.verify(progress)
        return protocol_check(self.state(), report, goal_id)

    def review_policy(self, policy_from: str | None = None):
        """The safety policy a check of the branch uses (see ``upkeep.review_policy``)."""
        from loopx_git import upkeep

        return upkeep.review_policy(self, policy_from)

    def check(self):
        """Tracked or unignored local state, and a safety scan of every tracked file."""
        from loopx_git.hooks import connection

        return connection.check(self.git)

    def health(self):
        """Hooks present and current, the ignore block, the pre-commit framework, the loopx used."""
        from loopx_git.hooks import connection

        return connection.health(self.git)

    def remote_copies(self) -> list[dict]:
        """The state branch against each remote-tracking copy of it: pushed, ahead, behind or
        diverged. Read from refs the last fetch left; nothing is fetched here."""
        from loopx_git import sync

        return sync.remote_copies(self)

    def remote_status(self) -> list[dict]:
        """For each configured remote, whether it has the state branch at all (asked of the remote
        with ``git ls-remote``; ``None`` with the error when it cannot be reached)."""
        from loopx_git import sync

        return sync.remote_status(self)

    def object_stats(self) -> hygiene.ObjectStats:
        return hygiene.object_stats(self.git.common_dir)

    def gc(self):
        """Pack everything now (``git gc``), prune the objects of lost races once past the grace
        period (``git config loopx.pruneExpire``), remove a stale gc.log; sizes and counts before
        and after."""
        from loopx_git import upkeep

        return upkeep.gc(self)

    def store_health(self) -> dict:
        """What ``doctor`` says of the object store (see ``upkeep.store_health``)."""
        from loopx_git import upkeep

        return upkeep.store_health(self)


def _evidence(item: Any):
    """An ``Evidence`` from itself, a dict, or ``KIND:REF``; a bad one is refused naming the field."""
    import pydantic

    from loopx_git.errors import ValidationError
    from loopx_git.model.ledger import Evidence
    from loopx_git.model.record import first_error

    if isinstance(item, Evidence):
        return item
    try:
        return Evidence.model_validate(item) if isinstance(item, dict) else Evidence.parse(str(item))
    except pydantic.ValidationError as exc:
        raise ValidationError(f"field 'evidence': {first_error(exc, 'evidence')}", code="invalid-field") from exc
    except ValueError as exc:
        raise ValidationError(f"field 'evidence': {exc}", code="invalid-field") from exc


def _no_branch(ref: str):
    from loopx_git.errors import NotFoundError

    return NotFoundError(
        f"the state branch {ref} does not exist; only `loopx connect` creates one",
        code="no-state",
        hint=f"run `loopx connect` (with `--state-branch {ref.removeprefix('refs/heads/')}` to create "
        "this one), or check the --state-branch name",
    )


def operation_method(op: type[Operation]) -> Callable[..., WriteResult]:
    """``StateRepo``'s method for a declared operation: its positional fields by position (``goal_id``,
    then ``gate_id``...), the others by keyword, and ``now`` (the time stamped on its events)."""
    import inspect

    positional = op.positional

    def method(self: StateRepo, *args: Any, now: str | None = None, **values: Any) -> WriteResult:
        if len(args) > len(positional):
            raise TypeError(f"{op.method}() takes {len(positional)} positional arguments ({', '.join(positional)})")
        for name, value in zip(positional, args):
            if name in values:
                raise TypeError(f"{op.method}() got two values for {name!r}")
            values[name] = value
        return self.run(op.of(**values), now=now)

    fields = op.model_fields
    kind = inspect.Parameter
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # help() and editors read it
        [kind("self", kind.POSITIONAL_OR_KEYWORD)]
        + [kind(name, kind.POSITIONAL_OR_KEYWORD, annotation=fields[name].annotation) for name in positional]
        + [
            kind(
                name,
                kind.KEYWORD_ONLY,
                annotation=info.annotation,
                default=kind.empty if info.is_required() else info.default,
            )
            for name, info in fields.items()
            if name not in positional
        ]
        + [kind("now", kind.KEYWORD_ONLY, annotation=str | None, default=None)]
    )
    method.__name__ = method.__qualname__ = op.method
    method.__doc__ = op.__doc__
    return method

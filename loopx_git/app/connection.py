"""Connecting: the state branch made or joined, and the hooks of the work tree."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.app.branch import CONFIG_KEY, not_code
from loopx_git.app.core import Core, whole
from loopx_git.app.result import WriteResult
from loopx_git.integrity import Integrity
from loopx_git.store import layout

if TYPE_CHECKING:
    pass


class Connection(Core):
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
            found = sync.adoptable(whole(self), remote)
            if found is not None:
                adopted = sync.adopt(whole(self), *found, progress=progress)
                return WriteResult(adopted.tip, Write("connect", f"adopt {adopted}", "", None, result=adopted))
            txn = transaction.Transaction("connect", f"create {self.ref}")
            txn.add(layout.ROOT_DOCUMENT, render(root_document(State())))
            commit = transaction.commit(self.git, self.ref, None, txn)
            self.note(self._integrity.built(commit, None))
            return WriteResult(commit, empty)

        sync.fetch_copy(whole(self), remote)  # a clone that never fetched the remote's copy: fetch it to join it
        result = transaction.retrying(self.locked(attempt))
        if self.git.config_get(CONFIG_KEY) != self.ref:
            self.git.config_set(CONFIG_KEY, self.ref)
        self.named = True
        return result

    def connect_worktree(self, *, hooks: bool = True, ignore: bool = True):
        """Install the hook shims and the ``.gitignore`` block for local state (idempotent)."""
        from loopx_git.hooks import connection

        return connection.connect(self.git, hooks=hooks, ignore=ignore)

    def disconnect(self) -> dict[str, str]:
        """Remove loopx's hook sections only; the state branch and the ignore block stay."""
        from loopx_git.hooks import connection

        return connection.disconnect(self.git)

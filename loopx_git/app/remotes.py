"""Many clones: the state branch's remotes, pulled, pushed, synced and proposed (``loopx_git/sync/`` does the work)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.app.core import Core, whole
from loopx_git.app.result import WriteResult

if TYPE_CHECKING:
    pass


class Remotes(Core):
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

        return sync.pull(whole(self), self.remote(remote), progress)

    def push(self, remote: str = "origin"):
        """Push local state commits; refused if the remote moved since the last fetch."""
        from loopx_git import sync

        return sync.push(whole(self), self.remote(remote))

    def sync(self, remote: str = "origin", *, progress: Any = None):
        """Pull, then push, retried when another clone pushed in between."""
        from loopx_git import sync

        return sync.sync(whole(self), self.remote(remote), progress=progress)

    def todo_claim_synced(self, goal_id: str, todo_id: str, agent_id: str, *, remote: str = "origin") -> WriteResult:
        """Fetch, claim, push as one step: of several clones racing for a todo, one wins."""
        from loopx_git import sync

        return sync.claim_synced(whole(self), self.remote(remote), goal_id, todo_id, agent_id)

    def propose(self, branch: str | None = None, *, remote: str = "origin") -> dict:
        """Push the local state commits to a proposal branch on the remote, for pull-request review;
        the remote state branch is left alone. A proposal branch only moves forward too."""

        from loopx_git.sync.push import propose

        return propose(whole(self), self.remote(remote), branch)

    def remote_copies(self) -> list[dict]:
        """The state branch against each remote-tracking copy of it: pushed, ahead, behind or
        diverged. Read from refs the last fetch left; nothing is fetched here."""
        from loopx_git import sync

        return sync.remote_copies(whole(self))

    def remote_status(self) -> list[dict]:
        """For each configured remote, whether it has the state branch at all (asked of the remote
        with ``git ls-remote``; ``None`` with the error when it cannot be reached)."""
        from loopx_git import sync

        return sync.remote_status(whole(self))

"""Keeping the branch and the clone sound: verify, repair, checks and the object store (``loopx_git/upkeep.py`` does the work)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.app.core import Core, whole
from loopx_git.app.result import WriteResult
from loopx_git.store import hygiene

if TYPE_CHECKING:
    pass


class Upkeep(Core):
    def repair(self) -> WriteResult:
        """One commit that re-derives every document from the fold (after a plain-git merge that
        left documents drifted) and removes stray files; no commit when all is in order."""
        from loopx_git import upkeep

        return WriteResult(*upkeep.repair(whole(self)))

    def verify(self, progress: Any = None, *, policy_from: str | None = None):
        """Walk the whole branch; ``progress(stage, done, total)`` is called as it goes. Records
        are scanned with ``review_policy(policy_from)``."""
        from loopx_git import upkeep

        return upkeep.verify(whole(self), progress, policy_from=policy_from)

    def protocol_check(self, goal_id: str | None = None, progress: Any = None):
        """Seed 003's acceptance checks over the branch (``verify`` first), each with its evidence."""
        from loopx_git.views.protocol import protocol_check

        report = self.verify(progress)
        return protocol_check(self.state(), report, goal_id)

    def review_policy(self, policy_from: str | None = None):
        """The safety policy a check of the branch uses (see ``upkeep.review_policy``)."""
        from loopx_git import upkeep

        return upkeep.review_policy(whole(self), policy_from)

    def check(self):
        """Tracked or unignored local state, and a safety scan of every tracked file."""
        from loopx_git.hooks import connection

        return connection.check(self.git)

    def health(self):
        """Hooks present and current, the ignore block, the pre-commit framework, the loopx used."""
        from loopx_git.hooks import connection

        return connection.health(self.git)

    def object_stats(self) -> hygiene.ObjectStats:
        return hygiene.object_stats(self.git.common_dir)

    def gc(self):
        """Pack everything now (``git gc``), prune the objects of lost races once past the grace
        period (``git config loopx.pruneExpire``), remove a stale gc.log; sizes and counts before
        and after."""
        from loopx_git import upkeep

        return upkeep.gc(whole(self))

    def store_health(self) -> dict:
        """What ``doctor`` says of the object store (see ``upkeep.store_health``)."""
        from loopx_git import upkeep

        return upkeep.store_health(whole(self))

"""Never build on a broken branch.

Before a write, what changed on the state branch since the last tip this clone verified is checked
— the commits after it, as ``verify_since`` checks a push — and a write on top of a branch that
fails is refused, naming the commit and the path. The verified tip is kept under ``.git/loopx/``
beside the fold cache, and moves forward with every commit loopx itself makes (built on a verified
tip from validated records, it needs no second look), so the check costs nothing in the common case
and what another writer added otherwise. A clone with no mark verifies the whole branch once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.errors import BrokenBranch, Notice
from loopx_git.store.cache import VerifiedMark
from loopx_git.store.git import GitRepo

if TYPE_CHECKING:
    from loopx_git.store.reader import StateReader


class Integrity:
    def __init__(self, git: GitRepo, ref: str):
        self.git = git
        self.ref = ref
        self._mark = VerifiedMark(git.common_dir, ref)
        self._verified: str | None = None

    def verified(self) -> str | None:
        """The last verified tip: this process's, else the one kept on disk."""
        if self._verified is None:
            self._verified = self._mark.load()
        return self._verified

    def require(self, tip: str, reader: StateReader, policy: Any) -> Notice | None:
        """Refuse (BrokenBranch) unless the branch at ``tip`` verifies; cheap when ``tip`` was
        verified already, incremental when it descends from a verified tip."""
        if tip == self._verified:
            return None
        self._verified = None  # another writer may have moved the mark forward: read it again
        report = self.report(tip, reader, policy)
        if report is None:
            return None  # the mark on disk is at the tip already
        if not report.ok:
            raise _refusal(report)
        self._verified = tip
        return self._save(tip)

    def report(self, tip: str, reader: StateReader, policy: Any, *, documents: bool = True):
        """The verify report of what changed since the verified tip (None when nothing did)."""
        from loopx_git.views.verify import verify, verify_since

        since = self.verified()
        if since == tip:
            return None
        if since is not None and self.git.has_object(since) and self.git.is_ancestor(since, tip):
            return verify_since(self.git, self.ref, tip, since, documents=documents, policy=policy, reader=reader)
        return verify(self.git, self.ref, tip=tip, policy=policy)

    def built(self, commit: str, parent: str | None) -> Notice | None:
        """Record that loopx made ``commit`` on the verified ``parent``; a mark that cannot be
        saved is only a slower next write (a Notice), never a failed one."""
        if parent is not None and parent != self.verified():
            return None
        self._verified = commit
        return self._save(commit)

    def _save(self, tip: str) -> Notice | None:
        try:
            self._mark.save(tip)
        except OSError as exc:
            return Notice(
                "upkeep",
                f"could not record the verified tip under .git/loopx/ ({exc.strerror or exc}); "
                "the next write checks the branch again",
            )
        return None


def _refusal(report) -> BrokenBranch:
    first = report.problems[0]
    where = f"commit {first.commit[:12]}, " if first.commit else ""
    more = f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
    return BrokenBranch(
        f"the state branch {report.ref} fails verification at {where}{first.path}: {first.code}: "
        f"{first.message}{more}; nothing was written on top of it",
        hint="`loopx verify` lists every problem; `loopx repair` re-derives drifted documents and removes "
        "stray files; an edited or deleted record, an oversized file or a name git's fsck refuses stays in "
        "history: a person resets the branch to the last good commit",
    )

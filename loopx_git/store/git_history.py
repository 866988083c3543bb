"""History: the commits reachable from a tip, ranges of them, and the records a commit adds."""

from __future__ import annotations

from collections.abc import Iterator

import pygit2

from loopx_git.store.git_objects import CommitInfo
from loopx_git.store.git_trees import Trees


class History(Trees):
    def walk_commits(self, tip: str) -> Iterator[CommitInfo]:
        """Every commit reachable from ``tip``, oldest first (parents before children)."""
        walker = self._repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        for obj in walker:
            yield self.commit(str(obj.id))

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether commit ``ancestor`` is ``descendant`` or one of its ancestors; False when either
        is missing or not a commit (a stale cache key, a hand-written mark, odd hook input)."""
        if ancestor == descendant:
            return True
        try:
            return self._repo.descendant_of(descendant, ancestor)
        except (KeyError, ValueError, pygit2.GitError):  # InvalidError: "object is no commit object"
            return False

    def refs(self, prefix: str) -> list[tuple[str, str]]:
        """``(name, target)`` of every direct ref whose name starts with ``prefix``."""
        out = []
        for name in self._repo.references:
            if name.startswith(prefix):
                target = self._repo.references[name].target
                if isinstance(target, pygit2.Oid):
                    out.append((name, str(target)))
        return out

    def walk_range(self, include: list[str], exclude: list[str]) -> Iterator[CommitInfo]:
        """Commits reachable from ``include`` but from none of ``exclude``, parents first:
        what ``git rev-list include --not exclude`` lists."""
        tips = [c for c in (self._peel_commit(o) for o in include) if c is not None]
        if not tips:
            return
        walker = self._repo.walk(tips[0], pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        for tip in tips[1:]:
            walker.push(tip)
        for oid in exclude:
            peeled = self._peel_commit(oid)
            if peeled is not None:
                walker.hide(peeled)
        for obj in walker:
            yield self.commit(str(obj.id))

    def commit_messages(self, tip: str) -> Iterator[tuple[str, str]]:
        """(commit id, message) of every commit reachable from ``tip``, parents first: what a reader of
        trailers needs, without building a ``CommitInfo`` (a second lookup of each commit)."""
        peeled = self._peel_commit(tip)
        if peeled is None:
            return
        for obj in self._repo.walk(peeled, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE):
            yield str(obj.id), obj.message

    def merge_base(self, a: str, b: str) -> str | None:
        found = self._repo.merge_base(a, b)
        return str(found) if found is not None else None

    def added_records(self, commit: str) -> list[tuple[str, str]]:
        """``(path, blob id)`` of the record files ``commit`` adds to its first parent's tree, by
        hour and id (``layout.record_order``) in either event layout."""
        info = self.commit(commit)
        base = self.commit(info.parents[0]).tree if info.parents else None
        from loopx_git.store import layout

        added = [
            (c.path, c.new)
            for c in self.changes(base, info.tree)
            if c.old is None and c.new is not None and layout.is_record(c.path)  # added: no old, a new
        ]
        return sorted(added, key=lambda record: layout.record_order(record[0]))

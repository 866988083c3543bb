"""Writing objects: blobs, trees built from the changed paths only, and commits moved onto a ref by
compare-and-swap."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TypeAlias, cast

import pygit2

from loopx_git.errors import RefMoved, StoreError
from loopx_git.store.git_objects import FILE_MODE, TREE_MODE, Objects

_CAS_LOST = ("current tip is not the first parent", "old reference value does not match")


_LOCK_HELD = ("failed to lock file", "failed to create locked file")
"""What libgit2 says when a compare-and-swap on a ref loses (seen with two writers racing): the
tip moved before or under the ref lock, or the lock is held. Nothing else is a lost race."""


def lock_path(message: str) -> str | None:
    found = re.search(r"'([^']+\.lock)'", message)
    return found.group(1) if found else None


_Nested: TypeAlias = "dict[str, _Nested | str | None]"
"""The paths of a tree write, folder by folder: a sub-folder, a blob id, or None to remove."""


ROOM = (
    "check that the disk has room and that .git is a folder you can write, then run the command again; "
    "nothing half-written needs cleaning up (`git fsck` may list dangling objects: harmless, `loopx gc` drops them)"
)


class Writes(Objects):
    def write_blob(self, data: bytes) -> str:
        self.objects_written += 1
        return str(self._repo.create_blob(data))

    def write_tree(
        self,
        base: str | None,
        files: Mapping[str, bytes],
        *,
        blobs: Mapping[str, str] = {},
        remove: Iterable[str] = (),
    ) -> str:
        """A new tree: ``base`` with ``files`` (path -> content) and ``blobs`` (path -> id of a blob
        already stored) added or replaced, and the ``remove`` paths taken out. Only the directories
        on the changed paths are rebuilt; a directory left empty goes too."""
        nested: _Nested = {}
        entries = (
            [(p, self.write_blob(d)) for p, d in files.items()] + list(blobs.items()) + [(p, None) for p in remove]
        )
        for path, oid in entries:
            node = nested
            *dirs, name = path.split("/")
            for part in dirs:
                node = cast(_Nested, node.setdefault(part, {}))  # the paths of one write never make a file a folder
            node[name] = oid
        return self._build(base, nested) or str(self._repo.TreeBuilder().write())

    def _build(self, base: str | None, nested: _Nested) -> str | None:
        base_tree = self._tree(base) if base else None
        builder = self._repo.TreeBuilder(base_tree) if base_tree is not None else self._repo.TreeBuilder()
        for name, value in nested.items():
            if isinstance(value, dict):
                existing = base_tree[name].id if base_tree is not None and name in base_tree else None
                child = self._build(str(existing) if existing is not None else None, value)
                if child is None:
                    if builder.get(name) is not None:
                        builder.remove(name)
                else:
                    builder.insert(name, pygit2.Oid(hex=child), TREE_MODE)
            elif value is None:
                if builder.get(name) is not None:
                    builder.remove(name)
            else:
                builder.insert(name, pygit2.Oid(hex=value), FILE_MODE)
        if len(builder) == 0:
            return None
        self.objects_written += 1
        return str(builder.write())

    def signature(self) -> pygit2.Signature:
        try:
            return self._repo.default_signature
        except (KeyError, pygit2.GitError):
            return pygit2.Signature("loopx", "loopx@localhost")

    def commit_on_ref(self, ref: str, tree: str, parents: list[str], message: str) -> str:
        """Commit and move ``ref`` only if it still points at ``parents[0]`` (or is absent when
        there is no parent). libgit2 checks the expected tip under the ref lock."""
        sig = self.signature()
        try:
            oid = self._repo.create_commit(
                ref, sig, sig, message, pygit2.Oid(hex=tree), [pygit2.Oid(hex=p) for p in parents]
            )
        except pygit2.GitError as exc:
            # only a lost compare-and-swap is retried; anything else (a bad name, a full disk) would
            # fail the same way on every attempt
            if any(said in str(exc) for said in _CAS_LOST):
                raise RefMoved(str(exc)) from exc
            raise StoreError(
                f"git refused the commit on {ref}: {exc}; {ref} did not move", code="commit-failed", hint=ROOM
            ) from exc
        except OSError as exc:
            said = str(exc)
            if any(held in said for held in _LOCK_HELD) and "Permission denied" not in said:
                raise RefMoved(said, lock=lock_path(said)) from exc  # another writer holds the ref's lock
            raise StoreError(
                f"could not write the commit on {ref}: {exc}; {ref} did not move", code="commit-failed", hint=ROOM
            ) from exc
        self.objects_written += 1
        return str(oid)

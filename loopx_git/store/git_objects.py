"""The objects of a repository, read by id: the base of ``GitRepo`` (``store/git.py``), and what a
read or write of a damaged store becomes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ParamSpec, TypeVar, cast

import pygit2

from loopx_git.errors import StoreError

FILE_MODE = pygit2.GIT_FILEMODE_BLOB


TREE_MODE = pygit2.GIT_FILEMODE_TREE


_P = ParamSpec("_P")


_T = TypeVar("_T")


@dataclass(frozen=True)
class CommitInfo:
    oid: str
    parents: tuple[str, ...]
    tree: str
    message: str
    author: str
    time: int


@dataclass(frozen=True)
class Change:
    path: str
    old: str | None  # blob id before, None when added
    new: str | None  # blob id after, None when deleted
    mode: int | None = None
    """The entry's mode after (before, when deleted): a regular file is 0o100644."""


@dataclass(frozen=True)
class Entry:
    """A leaf of a tree: a blob (file, executable, symlink) or a submodule link."""

    path: str
    oid: str
    mode: int


class Objects:
    def __init__(self, repo: pygit2.Repository):
        self._repo = repo
        self.objects_written = 0
        """Blobs, trees and commits this handle has written (some may have existed already): a
        count that costs nothing, for deciding when to look at the loose objects during use."""
        self.objects_at_pack_check = 0
        """``objects_written`` when the loose objects were last looked at (``transaction.pack_if_due``)."""

    def object_type(self, oid: str) -> str | None:
        """``commit``, ``tree``, ``blob`` or ``tag``; None when the object is missing."""
        try:
            kind, _ = self._repo.odb.read_header(oid)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        return {
            pygit2.GIT_OBJECT_COMMIT: "commit",
            pygit2.GIT_OBJECT_TREE: "tree",
            pygit2.GIT_OBJECT_BLOB: "blob",
            pygit2.GIT_OBJECT_TAG: "tag",
        }.get(int(kind))

    def object_size(self, oid: str) -> int | None:
        """An object's size in bytes, read from its header (a 50 MB blob is not loaded to learn it);
        None when the object is missing."""
        try:
            return self._repo.odb.read_header(oid)[1]
        except (KeyError, ValueError, pygit2.GitError):
            return None

    def _tree(self, oid: str | pygit2.Oid) -> pygit2.Tree:
        # pygit2 types a lookup as Object; every caller names a tree (a commit's, or an entry of TREE_MODE)
        return cast(pygit2.Tree, self._repo[oid])

    def _peel_commit(self, oid: str) -> pygit2.Oid | None:
        """The commit an id names (an annotated tag is followed); None for a tree or blob."""
        try:
            return self._repo[oid].peel(pygit2.Commit).id
        except (KeyError, ValueError, pygit2.InvalidSpecError):
            return None

    def commit(self, oid: str) -> CommitInfo:
        obj = cast(pygit2.Commit, self._repo[oid])  # callers name commits: ref targets, parents, walked ids
        return CommitInfo(
            oid=str(obj.id),
            parents=tuple(str(p) for p in obj.parent_ids),
            tree=str(obj.tree_id),
            message=obj.message,
            author=f"{obj.author.name} <{obj.author.email}>",
            time=obj.commit_time,
        )

    def read_blob(self, oid: str) -> bytes:
        return self._repo.odb.read(oid)[1]  # the raw odb read skips building a Blob object: ~2x on a cold fold

    def has_object(self, oid: str) -> bool:
        try:
            return pygit2.Oid(hex=oid) in self._repo.odb
        except ValueError:
            return False


def bad_ref(ref: str, message: str) -> StoreError:
    return StoreError(
        message,
        code="bad-ref",
        hint=f"point it at a good commit (`git update-ref {ref} <commit>`) or delete it (`git update-ref -d {ref}`)",
    )


def unreadable(exc: Exception, *, writing: bool = False) -> StoreError:
    """What a read (or write) of a damaged, incomplete or unwritable object store becomes: a refusal
    naming the object or file, never an internal error (a corrupt loose object, a blob a partial
    copy left out, a read-only .git/objects)."""
    if isinstance(exc, OSError) and not isinstance(exc, pygit2.GitError):
        detail = str(
            exc
        )  # libgit2's message names the file: "failed to create temporary file '...': Permission denied"
    else:
        detail = (
            str(exc) if isinstance(exc, pygit2.GitError) else f"object {exc.args[0] if exc.args else '?'} is missing"
        )
    if writing:
        return StoreError(
            f"git cannot write into this repository: {detail}; nothing was committed",
            code="write-failed",
            hint="check that .git/objects is a folder you can write and that the disk has room; "
            "`git fsck --full` names damaged objects",
        )
    return StoreError(
        f"git cannot read this repository: {detail}",
        code="damaged-repo",
        hint="`git fsck --full` names every damaged or missing object: fetch them again from another clone "
        "(git fetch) or restore the repository from a copy; a damaged .git/index is rebuilt from HEAD by "
        "`git read-tree HEAD`",
    )


def guarded(method: Callable[_P, _T], *, writing: bool = False) -> Callable[_P, _T]:
    """``method`` with pygit2's errors (and the KeyError of a missing object; for a write, the
    OSError of a file system that refuses) turned into StoreError."""
    import functools
    import inspect

    caught = (pygit2.GitError, KeyError, OSError) if writing else (pygit2.GitError, KeyError)

    if inspect.isgeneratorfunction(method):
        generator = method

        @functools.wraps(method)
        def walking(*args: _P.args, **kwargs: _P.kwargs) -> Iterator[object]:
            try:
                yield from generator(*args, **kwargs)
            except caught as exc:
                raise unreadable(exc) from exc

        return cast(Callable[_P, _T], walking)  # a generator function, wrapped by one: the same type

    @functools.wraps(method)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        try:
            return method(*args, **kwargs)
        except caught as exc:
            raise unreadable(exc, writing=writing) from exc

    return guarded

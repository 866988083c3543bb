"""The one small interface to git objects, on pygit2. Nothing else knows the library.

Everything is addressed by hex object ids (``str``) so callers never hold pygit2 types.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeAlias, TypeVar, cast

import pygit2

from loopx_git.errors import RefMoved, StoreError, shown_path

FILE_MODE = pygit2.GIT_FILEMODE_BLOB
TREE_MODE = pygit2.GIT_FILEMODE_TREE

_P = ParamSpec("_P")
_T = TypeVar("_T")


_CAS_LOST = ("current tip is not the first parent", "old reference value does not match")
_LOCK_HELD = ("failed to lock file", "failed to create locked file")
"""What libgit2 says when a compare-and-swap on a ref loses (seen with two writers racing): the
tip moved before or under the ref lock, or the lock is held. Nothing else is a lost race."""


def _lock_path(message: str) -> str | None:
    found = re.search(r"'([^']+\.lock)'", message)
    return found.group(1) if found else None


_Nested: TypeAlias = "dict[str, _Nested | str | None]"
"""The paths of a tree write, folder by folder: a sub-folder, a blob id, or None to remove."""


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


class GitRepo:
    def __init__(self, repo: pygit2.Repository):
        self._repo = repo
        self.objects_written = 0
        """Blobs, trees and commits this handle has written (some may have existed already): a
        count that costs nothing, for deciding when to look at the loose objects during use."""
        self.objects_at_pack_check = 0
        """``objects_written`` when the loose objects were last looked at (``transaction.pack_if_due``)."""

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def discover(cls, path: str | os.PathLike[str] = ".") -> GitRepo:
        try:
            found = pygit2.discover_repository(str(path))
        except (OSError, pygit2.GitError) as exc:  # a name too long for the file system, a folder it cannot read
            # libgit2 says "'<the whole path>': File name too long": keep the reason, not the path again
            reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc).rsplit("': ", 1)[-1]
            raise StoreError(
                f"field 'repo': {shown_path(path)} cannot be searched for a git repository ({reason})",
                code="no-repo",
                hint="pass --repo PATH naming a folder inside a git repository",
            ) from exc
        if found is None:
            raise StoreError(
                f"{shown_path(path)} is not inside a git repository",
                code="no-repo",
                hint="run `git init` first, or pass --repo PATH",
            )
        try:
            return cls(pygit2.Repository(found))
        except pygit2.GitError as exc:  # InvalidError too: a format this libgit2 cannot read
            if "object format" in str(exc):
                raise StoreError(
                    f"{found} uses the SHA-256 object format, which the git library under loopx "
                    f"(libgit2 {pygit2.LIBGIT2_VERSION}) cannot read; nothing was done",
                    code="unsupported-repo",
                    hint="keep loopx state in a SHA-1 repository (`git init --object-format=sha1`)",
                ) from exc
            raise StoreError(f"cannot open the repository at {found}: {exc}", code="no-repo") from exc

    @property
    def git_dir(self) -> Path:
        return Path(self._repo.path)

    @property
    def common_dir(self) -> Path:
        """The git dir every worktree of the repository shares (a linked worktree's own is
        ``.git/worktrees/<name>``): the objects are there, and so are loopx's caches and locks,
        so that two worktrees of one clone take turns and pack one store."""
        own = self.git_dir
        try:
            pointer = (own / "commondir").read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return own
        return (own / pointer).resolve() if pointer else own

    @property
    def workdir(self) -> Path | None:
        return Path(self._repo.workdir) if self._repo.workdir else None

    # -- config --------------------------------------------------------------------------------

    def config_get(self, key: str) -> str | None:
        try:
            return self._repo.config[key]
        except KeyError:
            return None

    def config_set(self, key: str, value: str) -> None:
        self._repo.config[key] = value

    # -- refs ------------------------------------------------------------------------------------

    def ref_target(self, ref: str) -> str | None:
        """The commit ``ref`` points at, None when it does not exist. A ref that exists but is
        damaged, or names something other than a commit, is an error: treating it as absent
        would let a write start a new branch over it."""
        try:
            target = self._repo.references[ref].resolve().target
        except KeyError:
            return None
        except (pygit2.GitError, ValueError) as exc:
            raise _bad_ref(ref, f"{ref} is damaged: {exc}") from exc
        kind = self.object_type(str(target))
        if kind != "commit":
            raise _bad_ref(
                ref,
                f"{ref} points at {'a missing object' if kind is None else 'a ' + kind} "
                f"({str(target)[:12]}), not a commit",
            )
        return str(target)

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

    # -- reading -------------------------------------------------------------------------------

    def _tree(self, oid: str | pygit2.Oid) -> pygit2.Tree:
        # pygit2 types a lookup as Object; every caller names a tree (a commit's, or an entry of TREE_MODE)
        return cast(pygit2.Tree, self._repo[oid])

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

    def tree_entry(self, tree: str, path: str) -> str | None:
        root = self._tree(tree)  # a missing tree is damage (StoreError), not an absent path
        try:
            return str(root[path].id)
        except KeyError:
            return None

    def leaf(self, tree: str, path: str) -> Entry | None:
        """The file (or link) at ``path`` in ``tree``; None when absent or a directory."""
        root = self._tree(tree)
        try:
            entry = root[path]
        except KeyError:
            return None
        return None if entry.filemode == TREE_MODE else Entry(path, str(entry.id), entry.filemode)

    def list_dir(self, tree: str, path: str) -> list[str]:
        """Names of the sub-directories of ``path`` in ``tree`` (empty when it is absent)."""
        root = self._tree(tree)  # a missing tree must not read as an empty branch
        try:
            entry = root[path]
        except KeyError:
            return []
        if entry.filemode != TREE_MODE:  # a file or a submodule link of that name: no directory
            return []
        # a tree's entries are all named (pygit2 types the name as optional, for objects not read from a tree)
        return [e.name for e in self._tree(entry.id) if e.type_str == "tree" and e.name is not None]

    def walk_files(self, tree: str, prefix: str = "") -> Iterator[tuple[str, str]]:
        """(path, blob id) of every file below ``prefix`` in ``tree``."""
        start = self._tree(tree)
        if prefix:
            try:
                entry = start[prefix]
            except KeyError:
                return
            if entry.filemode != TREE_MODE:
                return
            start = self._tree(entry.id)  # missing: damage, never "no files"
        yield from self._walk(start, prefix + "/" if prefix else "")

    def _walk(self, tree: pygit2.Tree, base: str) -> Iterator[tuple[str, str]]:
        for path, oid, _ in self._leaves(tree, base):
            yield path, oid

    def walk_entries(self, tree: str) -> Iterator[Entry]:
        """Every leaf of ``tree`` with its mode: files, symlinks and submodule links alike
        (``walk_files`` is for trees loopx wrote; this is for checking trees it did not)."""
        for path, oid, mode in self._leaves(self._tree(tree), ""):
            yield Entry(path, oid, mode)

    def _leaves(self, tree: pygit2.Tree, base: str) -> Iterator[tuple[str, str, int]]:
        """(path, id, mode) of every leaf, in tree order (callers report the second of two
        duplicates), and without recursion: a hostile tree may nest deeper than Python's stack."""
        stack = [(base, iter(tree))]
        while stack:
            prefix, entries = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
            elif entry.filemode == TREE_MODE:
                stack.append((f"{prefix}{entry.name}/", iter(self._tree(entry.id))))
            else:
                yield f"{prefix}{entry.name}", str(entry.id), entry.filemode

    def changes(
        self, old_tree: str | None, new_tree: str, base: str = "", within: Callable[[str], bool] | None = None
    ) -> Iterator[Change]:
        """Files that differ between two trees. Identical subtrees are skipped by id, so the
        cost follows the size of the change, not of the history; ``within(folder)`` (a path ending
        in ``/``) says which changed folders to look into, when only some can matter. Iterative, not
        recursive: a hostile tree may nest deeper than Python's stack."""
        stack = [self._changed_entries(old_tree, new_tree, base)]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, Change):
                yield item
            elif within is None or within(item[2]):
                stack.append(self._changed_entries(*item))

    def _changed_entries(
        self, old_tree: str | None, new_tree: str | None, base: str
    ) -> Iterator[Change | tuple[str | None, str | None, str]]:
        """One level of ``changes``: a Change per differing leaf, a (old, new, base) triple per
        differing subtree, in name order. A side of None is an absent folder: nothing is written
        to stand for it (the reads that call this may run on a read-only store)."""
        if old_tree == new_tree:
            return
        # named entries only, as in list_dir
        old = {e.name: e for e in self._tree(old_tree) if e.name is not None} if old_tree else {}
        new = {e.name: e for e in self._tree(new_tree) if e.name is not None} if new_tree else {}
        for name in sorted(old.keys() | new.keys()):
            a, b = old.get(name), new.get(name)
            if a is not None and b is not None and a.id == b.id and a.filemode == b.filemode:
                continue
            path = f"{base}{name}"
            # each side as a folder or as a leaf, None when it is not one (compared to None: an empty Tree is falsy)
            a_tree = a if a is not None and a.filemode == TREE_MODE else None
            b_tree = b if b is not None and b.filemode == TREE_MODE else None
            if a_tree is not None or b_tree is not None:
                yield (
                    str(a_tree.id) if a_tree is not None else None,
                    str(b_tree.id) if b_tree is not None else None,
                    path + "/",
                )
            a_leaf = a if a_tree is None else None
            b_leaf = b if b_tree is None else None
            leaf = b_leaf if b_leaf is not None else a_leaf
            if leaf is not None:
                yield Change(
                    path,
                    str(a_leaf.id) if a_leaf is not None else None,
                    str(b_leaf.id) if b_leaf is not None else None,
                    leaf.filemode,
                )

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

    def has_object(self, oid: str) -> bool:
        try:
            return pygit2.Oid(hex=oid) in self._repo.odb
        except ValueError:
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

    def _peel_commit(self, oid: str) -> pygit2.Oid | None:
        """The commit an id names (an annotated tag is followed); None for a tree or blob."""
        try:
            return self._repo[oid].peel(pygit2.Commit).id
        except (KeyError, ValueError, pygit2.InvalidSpecError):
            return None

    # -- the index and the work tree (hooks read staged content from here) --------------------------

    def index_entries(self) -> Iterator[tuple[str, str, int]]:
        """``(path, blob id, mode)`` of every entry in the index (submodule links left out)."""
        for entry in self._repo.index:
            if entry.mode != pygit2.GIT_FILEMODE_COMMIT:
                yield entry.path, str(entry.id), entry.mode

    def index_blob(self, path: str) -> str | None:
        entry = self._repo.index[path] if path in self._repo.index else None
        return str(entry.id) if entry is not None else None

    def hooks_dir(self) -> Path:
        """Where git looks for hooks: ``core.hooksPath`` if set, else the (common) git dir's
        ``hooks``. Asked of git itself, which also knows linked worktrees."""
        return ((self.workdir or self.git_dir) / self.run_git("rev-parse", "--git-path", "hooks").strip()).resolve()

    def untracked(self) -> list[str]:
        """Files in the work tree that are neither tracked nor ignored (``git ls-files --others
        --exclude-standard``)."""
        if self.workdir is None:
            return []
        statuses = self._repo.status(untracked_files="all")
        return sorted(p for p, flags in statuses.items() if flags & pygit2.GIT_STATUS_WT_NEW)

    # -- writing ---------------------------------------------------------------------------------

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
                f"git refused the commit on {ref}: {exc}; {ref} did not move", code="commit-failed", hint=_ROOM
            ) from exc
        except OSError as exc:
            said = str(exc)
            if any(held in said for held in _LOCK_HELD) and "Permission denied" not in said:
                raise RefMoved(said, lock=_lock_path(said)) from exc  # another writer holds the ref's lock
            raise StoreError(
                f"could not write the commit on {ref}: {exc}; {ref} did not move", code="commit-failed", hint=_ROOM
            ) from exc
        self.objects_written += 1
        return str(oid)

    # -- the git binary, for what libgit2 does not do (packing) -----------------------------------

    def git_command(
        self, *args: str, stdin: str | None = None, timeout: float | None = None, quiet_auth: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run the ``git`` binary in this repository (its work tree, or the git dir when bare), as a
        user would: their config, credential helpers, SSH setup and hooks apply. ``quiet_auth``
        makes git fail rather than prompt for a password (for a report, not a push)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_DIR")}
        if quiet_auth:
            env.update(GIT_TERMINAL_PROMPT="0", GIT_SSH_COMMAND=env.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes"))
        try:
            return subprocess.run(
                ["git", *args],
                cwd=self.workdir or self.git_dir,
                capture_output=True,
                text=True,
                errors="surrogateescape",  # a path or name git prints that is not UTF-8
                env=env,
                input=stdin,
                check=False,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(["git", *args], 124, "", f"timed out after {timeout:.0f} s")

    def remotes(self) -> list[str]:
        proc = self.git_command("remote")
        return proc.stdout.split() if proc.returncode == 0 else []

    def run_git(self, *args: str) -> str:
        proc = self.git_command(*args)
        if proc.returncode != 0:
            raise StoreError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
        return proc.stdout

    def rev_parse(self, spec: str) -> str:
        """The commit ``spec`` names (a sha, a ref, ``HEAD~2``...)."""
        proc = self.git_command("rev-parse", "--verify", "--quiet", "--end-of-options", f"{spec}^{{commit}}")
        if proc.returncode != 0:
            from loopx_git.errors import NotFoundError

            raise NotFoundError(f"field 'commit': {spec!r} names no commit in this repository", code="not-found")
        return proc.stdout.strip()

    def symbolic_target(self, ref: str) -> str | None:
        """The ref ``ref`` names when it is a symbolic ref (``git symbolic-ref``), else None."""
        try:
            found = self._repo.references.get(ref)
        except (pygit2.GitError, ValueError):
            return None
        target = found.target if found is not None else None
        return target if isinstance(target, str) else None

    def holds_path(self, commit: str, *names: str) -> bool:
        """Whether ``commit``'s tree has an entry at any of the top-level ``names``; True when the tree
        cannot be read (a damaged store: the read that follows names what is damaged)."""
        try:
            tree = getattr(self._repo.get(commit), "tree", None)
            return tree is None or any(name in tree for name in names)
        except (pygit2.GitError, ValueError, KeyError):
            return True

    def code_branches(self, *, linked: bool = True) -> dict[str, str]:
        """Branches that hold the project's code, each with why: checked out in the main work tree
        (an unborn branch too; a bare repository's HEAD, its default branch), in a linked work tree
        (``linked``), or a remote's default branch (``refs/remotes/<remote>/HEAD``). Read from the
        HEAD files and refs themselves, so a state branch can be told apart from them before
        anything is written."""
        found: dict[str, str] = {}
        common = self.common_dir
        heads = [(common / "HEAD", "the repository's HEAD (its checked-out or default branch)")]
        try:
            linked_trees = sorted(os.listdir(common / "worktrees")) if linked else []
        except OSError:
            linked_trees = []
        heads += [
            (common / "worktrees" / name / "HEAD", f"checked out in the linked work tree {name!r}")
            for name in linked_trees
        ]
        for path, why in heads:
            try:
                head = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                continue
            if head.startswith("ref: refs/heads/"):
                found.setdefault(head.removeprefix("ref: "), why)
        try:
            remotes = list(self._repo.remotes.names())
        except pygit2.GitError:
            remotes = []
        for remote in remotes:
            try:
                target = self._repo.references.get(f"refs/remotes/{remote}/HEAD")
            except (pygit2.GitError, ValueError):
                continue
            name = target.target if target is not None else None  # a symbolic ref's target is its name
            prefix = f"refs/remotes/{remote}/"
            if isinstance(name, str) and name.startswith(prefix):
                found.setdefault("refs/heads/" + name.removeprefix(prefix), f"the default branch of remote {remote!r}")
        return found

    def current_branch(self) -> str | None:
        """The branch checked out in the work tree (``feature/x``), or None: a detached or unborn
        HEAD, or a bare repository."""
        if self._repo.is_bare or self._repo.head_is_detached:
            return None
        try:
            ref = self._repo.lookup_reference("HEAD").target
        except (KeyError, pygit2.GitError):
            return None
        return ref.removeprefix("refs/heads/") if isinstance(ref, str) else None

    def path_exists(self, path: str) -> bool:
        """Whether the project path ``path`` ('/'-separated, relative) is in the work tree or in HEAD."""
        workdir = self.workdir
        if workdir is not None and os.path.lexists(workdir / path):
            return True
        try:
            if self._repo.head_is_unborn:
                return False
            self._repo.head.peel(pygit2.Commit).tree[path]
            return True
        except (KeyError, ValueError, pygit2.GitError):
            return False

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

    def merge_base(self, a: str, b: str) -> str | None:
        found = self._repo.merge_base(a, b)
        return str(found) if found is not None else None

    def move_ref(self, ref: str, new: str, expected: str | None) -> None:
        """Point ``ref`` at ``new`` only if it is at ``expected`` (absent, when None): a
        compare-and-swap under git's ref lock."""
        proc = self.git_command("update-ref", "-m", "loopx", ref, new, expected or "")
        if proc.returncode != 0:
            said = proc.stderr.strip()
            if any(marker in said for marker in _UPDATE_REF_LOST):
                raise RefMoved(said, lock=_lock_path(said) if "File exists" in said else None)
            # a full disk, a read-only .git: not a race, and "run it again" would not help
            raise StoreError(
                f"git could not move {ref}: {said.splitlines()[-1] if said else 'no reason given'}; it did not move",
                code="write-failed",
                hint=_ROOM,
            )


_UPDATE_REF_LOST = ("but expected", "File exists", "already exists", "unable to resolve reference")
"""What git's update-ref says when the ref was not where the writer read it, or its lock is held."""

_ROOM = (
    "check that the disk has room and that .git is a folder you can write, then run the command again; "
    "nothing half-written needs cleaning up (`git fsck` may list dangling objects: harmless, `loopx gc` drops them)"
)


def _bad_ref(ref: str, message: str) -> StoreError:
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


def _guarded(method: Callable[_P, _T], *, writing: bool = False) -> Callable[_P, _T]:
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


for _name in (
    "commit",
    "read_blob",
    "tree_entry",
    "leaf",
    "list_dir",
    "walk_files",
    "walk_entries",
    "changes",
    "walk_commits",
    "walk_range",
    "refs",
    "merge_base",
    "added_records",
    "untracked",
    "index_entries",
    "index_blob",
    "code_branches",
):
    setattr(GitRepo, _name, _guarded(getattr(GitRepo, _name)))
for _name in ("write_blob", "write_tree"):
    setattr(GitRepo, _name, _guarded(getattr(GitRepo, _name), writing=True))

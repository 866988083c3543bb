"""Trees: the files of a commit, listed, walked and compared (the reads every fold makes)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pygit2

from loopx_git.store.git_objects import TREE_MODE, Change, Entry, Objects


class Trees(Objects):
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

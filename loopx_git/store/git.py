"""The one small interface to git objects, on pygit2. Nothing else knows the library.

Everything is addressed by hex object ids (``str``) so callers never hold pygit2 types. ``GitRepo`` is
made of ``git_objects.Objects`` (reads by id), ``git_trees.Trees``, ``git_history.History`` and
``git_writes.Writes``; what is here opens a repository and reads its refs, config, index and work tree."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pygit2

from loopx_git.errors import RefMoved, StoreError, shown_path
from loopx_git.store.git_history import History
from loopx_git.store.git_objects import bad_ref, guarded
from loopx_git.store.git_writes import ROOM, Writes, lock_path

_UPDATE_REF_LOST = ("but expected", "File exists", "already exists", "unable to resolve reference")
"""What git's update-ref says when the ref was not where the writer read it, or its lock is held."""


class GitRepo(Writes, History):
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

    def config_get(self, key: str) -> str | None:
        try:
            return self._repo.config[key]
        except KeyError:
            return None

    def config_set(self, key: str, value: str) -> None:
        self._repo.config[key] = value

    def ref_target(self, ref: str) -> str | None:
        """The commit ``ref`` points at, None when it does not exist. A ref that exists but is
        damaged, or names something other than a commit, is an error: treating it as absent
        would let a write start a new branch over it."""
        try:
            target = self._repo.references[ref].resolve().target
        except KeyError:
            return None
        except (pygit2.GitError, ValueError) as exc:
            raise bad_ref(ref, f"{ref} is damaged: {exc}") from exc
        kind = self.object_type(str(target))
        if kind != "commit":
            raise bad_ref(
                ref,
                f"{ref} points at {'a missing object' if kind is None else 'a ' + kind} "
                f"({str(target)[:12]}), not a commit",
            )
        return str(target)

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

    def move_ref(self, ref: str, new: str, expected: str | None) -> None:
        """Point ``ref`` at ``new`` only if it is at ``expected`` (absent, when None): a
        compare-and-swap under git's ref lock."""
        proc = self.git_command("update-ref", "-m", "loopx", ref, new, expected or "")
        if proc.returncode != 0:
            said = proc.stderr.strip()
            if any(marker in said for marker in _UPDATE_REF_LOST):
                raise RefMoved(said, lock=lock_path(said) if "File exists" in said else None)
            # a full disk, a read-only .git: not a race, and "run it again" would not help
            raise StoreError(
                f"git could not move {ref}: {said.splitlines()[-1] if said else 'no reason given'}; it did not move",
                code="write-failed",
                hint=ROOM,
            )


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
    setattr(GitRepo, _name, guarded(getattr(GitRepo, _name)))
for _name in ("write_blob", "write_tree"):
    setattr(GitRepo, _name, guarded(getattr(GitRepo, _name), writing=True))

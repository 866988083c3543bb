"""Read-only access to the index through the git binary, for the pre-commit hook.

Two reasons not to use pygit2 here. git runs hooks with its own environment, and for
``git commit -a`` or ``git commit <path>`` the staged content is in a temporary index named by
``GIT_INDEX_FILE``, which only git itself honours. And the hook runs on every commit: a few git
processes start faster than pygit2 imports.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from loopx_git.errors import StoreError, shown_path

GITLINK = 0o160000
_OID_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_CHUNK = 128
"""Object ids sent to ``git cat-file --batch`` at once: 128 lines of at most 65 bytes (SHA-256)
fit in a pipe's buffer (64 KiB on Linux, 16 KiB on macOS), so writing them never waits."""


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True)
    if check and proc.returncode != 0:
        raise StoreError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc


class IndexReader:
    """The staged state of one work tree: what the next commit will hold."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self._entries: dict[str, tuple[str, int]] | None = None
        self._cat: subprocess.Popen[bytes] | None = None

    @classmethod
    def discover(cls, path: str | os.PathLike[str] = ".") -> IndexReader:
        try:
            proc = _git(Path(path), "rev-parse", "--show-toplevel", check=False)
        except OSError as exc:  # missing, a file, a name too long: git cannot even start there
            raise StoreError(
                f"field 'repo': {shown_path(path)} cannot be searched for a git work tree "
                f"({exc.strerror or type(exc).__name__})",
                code="no-repo",
                hint="pass --repo PATH naming a folder inside a git work tree",
            ) from exc
        if proc.returncode != 0:
            raise StoreError(
                f"{shown_path(path)} is not inside a git work tree",
                code="no-repo",
                hint="the pre-commit check needs a work tree with an index",
            )
        return cls(Path(os.fsdecode(proc.stdout.rstrip(b"\n"))))  # a folder name need not be UTF-8

    def index_entries(self) -> list[tuple[str, str, int]]:
        """``(path, blob id, mode)`` of every index entry (submodule links left out)."""
        return [(path, oid, mode) for path, (oid, mode) in self._index().items()]

    def _index(self) -> dict[str, tuple[str, int]]:
        if self._entries is None:
            out = _git(self.workdir, "ls-files", "--stage", "-z").stdout.decode("utf-8", "surrogateescape")
            entries = {}
            for record in filter(None, out.split("\0")):
                meta, path = record.split("\t", 1)
                mode, oid, _stage = meta.split()
                if int(mode, 8) != GITLINK:
                    entries[path] = (oid, int(mode, 8))
            self._entries = entries
        return self._entries

    def index_blob(self, path: str) -> str | None:
        found = self._index().get(path)
        return found[0] if found else None

    def staged(self) -> list[tuple[str, str, int]]:
        """``(path, blob id, mode)`` the next commit adds or changes; deletions left out."""
        proc = _git(
            self.workdir, "diff-index", "--cached", "--no-renames", "-z", "--diff-filter=d", "HEAD", check=False
        )
        if proc.returncode != 0:  # no commit yet: everything staged is new
            return self.index_entries()
        fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        out = []
        for meta, path in zip(fields[0::2], fields[1::2]):
            _old_mode, new_mode, _old, new, status = meta.lstrip(":").split()
            if status == "U":  # unmerged: no staged blob yet (git commits nothing until it is resolved)
                continue
            if int(new_mode, 8) != GITLINK:
                out.append((path, new, int(new_mode, 8)))
        return out

    def read_blob(self, oid: str) -> bytes:
        """One object's content, through one long-lived ``git cat-file --batch``."""
        (data,) = self.read_blobs([oid])  # read to its end: a generator left open stops the process
        return data

    def read_blobs(self, oids: list[str]) -> Iterator[bytes]:
        """The contents of ``oids``, in order. The ids are sent ahead in chunks, so git does not
        wait on each answer being read (a round trip per object was ~0.1 ms of every staged file);
        a chunk's ids fit in the pipe, so writing them never blocks on git writing its answers.
        While a stream is being read it has the ``cat-file`` process to itself: a read started
        meanwhile gets a process of its own, never answers meant for this one."""
        bad = next((oid for oid in oids if not _OID_RE.fullmatch(oid)), None)
        if bad is not None:  # a newline or a space in an id would put every later answer out of step
            raise StoreError(f"git cat-file cannot read object {bad!r}: not an object id")
        if not oids:
            return
        cat, self._cat = self._cat, None
        if cat is None:
            cat = subprocess.Popen(
                ["git", "cat-file", "--batch"], cwd=self.workdir, stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        assert cat.stdin is not None and cat.stdout is not None
        finished = False
        try:
            for at in range(0, len(oids), _CHUNK):
                chunk = oids[at : at + _CHUNK]
                cat.stdin.write(b"".join(oid.encode() + b"\n" for oid in chunk))
                cat.stdin.flush()
                for oid in chunk:
                    header = cat.stdout.readline().split()
                    if len(header) != 3:
                        raise StoreError(f"git cat-file cannot read object {oid}")
                    data = cat.stdout.read(int(header[2]))
                    cat.stdout.read(1)  # the newline after each object
                    yield data
            finished = True
        finally:
            if finished and self._cat is None:
                self._cat = cat  # handed back for the next read
            else:  # answers may be left unread in the pipe (or another read has its own process)
                cat.kill()
                cat.communicate()

    def close(self) -> None:
        if self._cat is not None:
            self._cat.communicate()
            self._cat = None

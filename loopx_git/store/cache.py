"""A tip-keyed cache of a folded state under ``.git/loopx/``. Never a source of truth:
deleting it changes no answer, only how long the next read takes."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import pickle
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

CACHE_FORMAT = 2
"""In the names of the files here. 2 came with layout-2 event paths, which a loopx before it does
not see: a fold it cached or a tip it marked verified on such a branch is blind to those events, so
none of its files is trusted here, and it finds none of ours (it verifies, and refuses, instead)."""


MARK_FORMAT = 3
"""In the name of the verified mark. 3 came with layout 3 (bucketed documents): a loopx before it
sees those documents as stray files, so it must never find a tip this loopx marked verified (it
verifies, and refuses, instead). A mark it left (``verified-2-...``) is still read here: what it
verified, this loopx checks the same way."""

_DIGEST = 16


class FoldCache:
    """``kind`` and ``key`` name what is folded: the state of the branch (``fold``), or another fold
    of its records kept beside it (``evidence`` of one goal's agent, keyed by both)."""

    def __init__(self, git_dir: Path, ref: str, fold_version: str, *, kind: str = "fold", key: str = ""):
        digest = hashlib.sha1(ref.encode() + (b"\0" + key.encode() if key else b"")).hexdigest()[:12]
        self.path = git_dir / "loopx" / f"{kind}-{CACHE_FORMAT}-{digest}.pickle"
        self._version = (CACHE_FORMAT, fold_version)

    def load(self) -> tuple[str, Any] | None:
        """(tip, state) as last saved, or None when missing, stale in format, damaged or unreadable."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return None
        # a flipped bit can unpickle into a plausible state that answers wrongly: the digest of what
        # was saved comes first, and a file whose bytes do not match it is not read
        digest, payload = data[:_DIGEST], data[_DIGEST:]
        if hashlib.blake2b(payload, digest_size=_DIGEST).digest() != digest:
            return None
        gc.disable()  # unpickling many small objects is twice as fast without the cyclic GC
        try:
            version, tip, state = pickle.loads(payload)
        except Exception:  # a damaged or foreign cache is only a slower read, never an error
            return None
        finally:
            gc.enable()
        return (tip, state) if version == self._version else None

    def save(self, tip: str, state: Any) -> None:
        """Replace the cache atomically; raises OSError (a full disk, a read-only ``.git``) or a
        pickling error, with no temporary file left behind."""
        payload = pickle.dumps((self._version, tip, state), protocol=pickle.HIGHEST_PROTOCOL)
        digest = hashlib.blake2b(payload, digest_size=_DIGEST).digest()
        _write_atomically(self.path, lambda out: out.write(digest + payload))

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


class Answers:
    """The answers of reads at one tip (a goal card, the goal ids), as the JSON data a command
    prints. A read answered here loads no model, no fold and no pydantic: what a card costs is the
    commit id of the tip and one small file. Kept beside the fold cache, keyed like it by tip and
    by the version of the code that computed the answers; like it never a source of truth."""

    def __init__(self, git_dir: Path, ref: str, version: str):
        digest = hashlib.sha1(ref.encode()).hexdigest()[:12]
        self.path = git_dir / "loopx" / f"answers-{digest}.json"
        self._version = f"{CACHE_FORMAT}:{version}"

    def load(self) -> tuple[str, dict[str, Any]] | None:
        """(tip, answers) as last saved, or None when missing, stale, or unreadable."""
        import json

        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("version") != self._version:
            return None
        tip, answers = data.get("tip"), data.get("answers")
        if not isinstance(tip, str) or not _OID.fullmatch(tip) or not isinstance(answers, dict):
            return None
        return tip, answers

    def save(self, tip: str, answers: dict[str, Any]) -> None:
        import json

        body = json.dumps({"version": self._version, "tip": tip, "answers": answers}, separators=(",", ":"))
        _write_atomically(self.path, lambda out: out.write(body.encode("utf-8")))

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


class VerifiedMark:
    """The last tip of a state branch this clone verified (or built, on a verified tip): a write
    checks only what changed since. Kept beside the fold cache, and like it never a source of
    truth: without it the next write verifies the whole branch once."""

    def __init__(self, git_dir: Path, ref: str):
        digest = hashlib.sha1(ref.encode()).hexdigest()[:12]
        self.path = git_dir / "loopx" / f"verified-{MARK_FORMAT}-{digest}"
        # the mark of the loopx before layout 3 (named with CACHE_FORMAT 2 then), spelled out: a later
        # CACHE_FORMAT must not make this a newer loopx's mark
        self._before = git_dir / "loopx" / f"verified-2-{digest}"

    def load(self) -> str | None:
        for path in (self.path, self._before):
            try:
                text = path.read_text(encoding="ascii").strip()
            except (OSError, UnicodeDecodeError):
                continue
            return text if _OID.fullmatch(text) else None
        return None

    def save(self, tip: str) -> None:
        _write_atomically(self.path, lambda out: out.write(tip.encode("ascii") + b"\n"))


_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

LEFTOVER_SECONDS = 3600.0
"""Age past which a temporary file of a save is a killed process's: no save takes this long."""


def _write_atomically(path: Path, write: Callable[[Any], None]) -> None:
    """Write through a temporary file and rename it into place, so a concurrent reader sees the old
    or the new content; on any failure the temporary file is removed and the error raised."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-")
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _remove_leftovers(path)


def _remove_leftovers(path: Path) -> None:
    """The temporary files of saves of ``path`` that a process killed mid-save left (a fold can be
    megabytes, and each crash would leave one more): never read, removed once older than any save
    in progress could be."""
    prefix, now = f".{path.name}-", time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if entry.name.startswith(prefix):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > LEFTOVER_SECONDS:
                        os.unlink(entry.path)

"""A tip-keyed cache of a folded state under ``.git/loopx/``. Never a source of truth:
deleting it changes no answer, only how long the next read takes."""
from __future__ import annotations

import gc
import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Optional

CACHE_FORMAT = 1


class FoldCache:
    def __init__(self, git_dir: Path, ref: str, fold_version: str):
        digest = hashlib.sha1(ref.encode()).hexdigest()[:12]
        self.path = git_dir / "loopx" / f"fold-{digest}.pickle"
        self._version = (CACHE_FORMAT, fold_version)

    def load(self) -> Optional[tuple[str, Any]]:
        """(tip, state) as last saved, or None when missing, stale in format, or unreadable."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return None
        gc.disable()  # unpickling many small objects is twice as fast without the cyclic GC
        try:
            version, tip, state = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
            # a damaged or foreign cache is only a slower read, never an error
            return None
        finally:
            gc.enable()
        return (tip, state) if version == self._version else None

    def save(self, tip: str, state: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".fold-")
        with os.fdopen(fd, "wb") as out:
            pickle.dump((self._version, tip, state), out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.path)  # atomic: a concurrent reader sees the old or the new cache

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)

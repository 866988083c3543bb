"""Evidence that names a file of the project. A path that is neither in the work tree nor in HEAD
gets a notice, never a refusal: the commit under way may be the one that creates it. URLs, digests,
PR refs and prose are not paths and are not checked."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from loopx_git.errors import Notice

_PATH_TEXT = re.compile(r"[A-Za-z0-9_.@+-]+(?:/[A-Za-z0-9_.@+-]+)*/?")
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}\Z")
_LOCATION = re.compile(r"(?P<path>.+?)(?:::.*|:[0-9]+(?::[0-9]+)?)")  # tests/x.py::test_y, src/a.py:12:3
LIMIT = 10  # notices per write; the rest are counted in the last one


def path_of(text: str) -> str | None:
    """The project path a free-text evidence ref names (``tests/test_x.py``, ``README.md``,
    ``tests/test_x.py::test_y``, ``src/a.py:12``), or None when it does not look like one."""
    located = _LOCATION.fullmatch(text)
    candidate = located.group("path") if located else text
    if not _PATH_TEXT.fullmatch(candidate) or ".." in candidate.split("/"):
        return None
    if "/" not in candidate.rstrip("/") and not candidate.endswith("/") and not _EXTENSION.search(candidate):
        return None  # one word: a path only with a file extension or a final '/' (README.md, docs/; not v1.2.3)
    return candidate.rstrip("/")


def _ref(item: Any) -> str | None:
    """A ledger Evidence names a path only as ``test_path``; a plain string may be anything."""
    kind = getattr(item, "kind", None)
    if kind is not None:
        return path_of(item.ref) if kind == "test_path" else None
    return path_of(item) if isinstance(item, str) else None


def missing_paths(
    items: Iterable[Any], exists: Callable[[str], bool], *, field: str = "evidence"
) -> tuple[Notice, ...]:
    """One ``evidence-path-missing`` notice per evidence path that ``exists`` does not find."""
    missing: list[str] = []
    for item in items:
        path = _ref(item)
        if path is not None and path not in missing and not exists(path):
            missing.append(path)
    notices = [
        Notice(
            "evidence-path-missing",
            f"'{path}' is neither in the work tree nor in HEAD; the commit under way may add it",
            field=field,
        )
        for path in missing[:LIMIT]
    ]
    if len(missing) > LIMIT:
        notices.append(
            Notice("evidence-path-missing", f"and {len(missing) - LIMIT} more evidence path(s) not found", field=field)
        )
    return tuple(notices)

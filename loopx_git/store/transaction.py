"""One change to the state branch = one commit, moved into place by compare-and-swap."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from loopx_git.errors import ConflictError, RefMoved, StoreError
from loopx_git.store import layout
from loopx_git.store.git import GitRepo

T = TypeVar("T")

MAX_ATTEMPTS = 60
BACKOFF_BASE = 0.002
BACKOFF_CAP = 0.25


@dataclass
class Transaction:
    """New record files and changed documents, with what the commit message says about them."""

    verb: str
    summary: str
    goal_id: str | None = None
    agent_id: str | None = None
    event_ids: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    """Documents to take out (an orphan that ``repair`` removes); never a record."""

    def add(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def message(self) -> str:
        subject = f"loopx: {self.verb} {self.summary}".strip()
        if len(subject) > 100:
            subject = subject[:97] + "..."
        trailers = []
        if self.goal_id:
            trailers.append(f"Loopx-Goal: {self.goal_id}")
        if self.agent_id:
            trailers.append(f"Loopx-Agent: {self.agent_id}")
        trailers.extend(f"Loopx-Event: {event_id}" for event_id in self.event_ids)
        return subject + "\n\n" + "\n".join(trailers) + "\n" if trailers else subject + "\n"


def commit(git: GitRepo, ref: str, parent: str | None, txn: Transaction) -> str:
    """Write ``txn`` as one commit on top of ``parent``; raises RefMoved if ``ref`` is elsewhere."""
    base_tree = git.commit(parent).tree if parent else None
    if base_tree:
        for path in txn.files:
            if layout.is_record(path) and git.tree_entry(base_tree, path) is not None:
                raise StoreError(f"{path} already exists on {ref}; records are append-only", code="record-exists")
    if any(layout.is_record(path) for path in txn.removed):
        raise StoreError("records are append-only; a transaction never removes one", code="record-removed")
    # the first commit on an older layout's branch moves its documents and says the new layout
    from loopx_git.store.documents import layout_upgrade

    upgrade = layout_upgrade(git, base_tree, txn.files, txn.removed)
    files = {**txn.files, **upgrade.files}
    tree = git.write_tree(base_tree, files, blobs=upgrade.blobs, remove=[*txn.removed, *upgrade.removed])
    commit = git.commit_on_ref(ref, tree, [parent] if parent else [], txn.message())
    pack_if_due(git)
    return commit


PACK_CHECK_EVERY = 256
"""Objects a handle writes between two looks at the loose-object count (a ``listdir`` of one
fan-out directory). An append writes about a dozen, so a long-lived handle (an agent loop, the
Python API) looks every twenty-odd commits and packs once ``hygiene.LOOSE_THRESHOLD`` new loose
objects are there, instead of piling up objects until ``close()``."""


def pack_if_due(git: GitRepo) -> bool:
    """Pack during use when this handle has written enough since it last looked. Never raises: the
    commit has landed, and what could not be packed now ``close()`` packs (and reports) again."""
    if git.objects_written - git.objects_at_pack_check < PACK_CHECK_EVERY:
        return False
    git.objects_at_pack_check = git.objects_written
    from loopx_git.errors import LoopxError
    from loopx_git.store import hygiene

    try:
        return hygiene.maybe_pack(git)
    except (OSError, LoopxError):
        return False


def retrying(attempt: Callable[[], T], *, attempts: int | None = None) -> T:
    """Run ``attempt`` until it does not lose a race. Each try re-reads the tip and re-validates,
    so a retry never writes on stale state. Full jitter keeps racing writers from lock-stepping."""
    attempts = MAX_ATTEMPTS if attempts is None else attempts
    last: RefMoved | None = None
    for n in range(attempts):
        try:
            return attempt()
        except RefMoved as exc:
            last = exc
            time.sleep(random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * (2**n))))
    if last is not None and last.lock:  # the same held lock every time: maybe a crashed writer's
        raise ConflictError(
            f"the state branch's lock stayed held; gave up after {attempts} attempts",
            code="ref-locked",
            hint=f"if no other git or loopx process is running, one that crashed "
            f"left {last.lock} behind: remove that file and try again",
        )
    raise ConflictError(
        f"the state branch kept moving; gave up after {attempts} attempts",
        hint="another writer is very busy; try again",
    )

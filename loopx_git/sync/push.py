"""Pushing the state branch: fast-forward only (append-only, never forced), a refusal that says what
to run, and proposals pushed to a review branch."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loopx_git.errors import ConflictError, PushRefused
from loopx_git.store import layout
from loopx_git.store.remote import MAX_MESSAGES, NO_VERDICT, PushResult, Remote

if TYPE_CHECKING:
    from loopx_git.api import StateRepo


LOCK_ATTEMPTS = 3
"""Pushes tried while the remote cannot lock its ref, before the lock is reported as left behind."""


def backoff(attempt: int) -> None:
    time.sleep(random.uniform(0, min(2.0, 0.1 * 2**attempt)))


@dataclass(frozen=True)
class Pushed:
    ok: bool
    pushed: bool = False
    reason: str = ""


MAX_LINE = 300


_APPEND_ONLY = "the state branch is append-only: never rewrite or force-push it"


def _shown(repo: StateRepo, text: str) -> str:
    from loopx_git.model.canonical import visible
    from loopx_git.safety.mask import masked

    return visible(masked(text, repo.policy)).replace("\n", "\\x0a") if text else text


def refusal(repo: StateRepo, remote: str, branch: str, result: PushResult, *, again: str = "loopx sync") -> PushRefused:
    """The error for a refused push: which side refused, its last lines (all it said masked whole
    before the last lines are picked and cut, so a key that spans lines or a cut through a token
    cannot slip out; control characters escaped, so a server cannot drive the terminal) and what
    to do (``again``: the command that pushes them once the cause is gone)."""
    from loopx_git.model.canonical import visible
    from loopx_git.safety.mask import masked

    said = masked("\n".join(result.messages), repo.policy) if result.messages else ""
    lines = [visible(line) for line in said.splitlines() if line.strip()][-MAX_MESSAGES:]
    lines = [line if len(line) <= MAX_LINE else line[:MAX_LINE] + "..." for line in lines]
    if result.refused_by == "local-hook":
        message = f"the local pre-push hook refused the push of {branch} to {remote}; nothing was sent"
        hint = (
            "nothing was lost: the local state branch keeps its commits; fix what the hook reports (the hook is "
            "`git rev-parse --git-path hooks/pre-push`; `loopx doctor` checks loopx's part of it), then run "
            f"`{again}` again; {_APPEND_ONLY}"
        )
    elif result.locked:
        message = (
            f"remote {remote} could not lock its {branch} to update it ({_shown(repo, result.reason)}): a git "
            "process there holds the lock, or one that crashed left its lock file"
        )
        hint = (
            f"nothing was lost: the local state branch keeps its commits and {remote}'s branch is unchanged; once "
            f"no git process runs there, whoever runs {remote} removes the lock file it names, and `{again}` "
            f"pushes them; {_APPEND_ONLY}"
        )
    elif result.reason == NO_VERDICT:
        message = f"the push of {branch} to {remote} failed ({_shown(repo, result.reason)})"
        hint = (
            "nothing was lost: the local state branch keeps its commits; a push cut off midway may have reached "
            f"{remote} or not, and `{again}` finds out and pushes what it lacks once {remote} can be reached "
            f"and lets you in; {_APPEND_ONLY}"
        )
    else:
        message = f"remote {remote} refused the push of {branch} ({_shown(repo, result.reason)})"
        hint = (
            f"nothing was lost: the local state branch keeps its commits, and `{again}` pushes them once the "
            f"remote accepts them (its own lines say why; whoever runs {remote} can tell more); {_APPEND_ONLY}"
        )
    if lines:
        message += "; it said:\n" + "\n".join(f"  {line}" for line in lines)
    return PushRefused(message, remote=remote, refused_by=result.refused_by or "remote", messages=lines, hint=hint)


def _save_fold(repo: StateRepo) -> None:
    """Save the fold of the tip before git pushes it: the pre-push hook, a process of its own, then
    reads the state it checks the documents against from the cache instead of folding the branch
    again. It is the save ``close()`` makes anyway, made earlier; one that fails is left to it."""
    import contextlib
    import pickle

    with contextlib.suppress(OSError, pickle.PickleError, RecursionError, MemoryError):
        repo.reader.flush()


def push(repo: StateRepo, remote: Remote) -> Pushed:
    """Push the local tip if it descends from the remote tip last fetched, and the remote is still
    there. A refusal other than a lost race (a hook's, say) is an error."""
    ours, seen = repo.tip, repo.git.ref_target(remote.tracking_ref)
    if ours is None or ours == seen:
        return Pushed(True)
    repo.require_intact(ours)  # never publish a broken branch
    if seen is not None and not repo.git.is_ancestor(seen, ours):
        raise ConflictError(
            f"the remote state branch has commits this clone has not merged ({seen[:12]})",
            code="behind-remote",
            hint="run `loopx pull` (or `loopx sync`) first",
        )
    _save_fold(repo)
    result = remote.push(ours, seen)
    for attempt in range(1, LOCK_ATTEMPTS):
        if not result.locked:
            break
        # another push holds the lock for a moment, or a crashed one left it: the same push again
        # tells them apart (it lands, loses to the other push, or finds the lock still there)
        backoff(attempt)
        result = remote.push(ours, seen)
    if result.locked or (not result.ok and not result.lost_race):
        raise refusal(repo, remote.name, repo.ref.removeprefix("refs/heads/"), result)
    return Pushed(result.ok, result.ok, _shown(repo, result.reason))


def propose(repo: StateRepo, remote: Remote, branch: str | None) -> dict:
    """Push the local state commits to a proposal branch on the remote, for pull-request review;
    the remote state branch is left alone. A proposal branch only moves forward too."""
    from loopx_git.errors import NotFoundError

    tip = repo.tip
    if tip is None:
        raise NotFoundError("there is no state branch to propose", code="no-state", hint="run `loopx connect`")
    ref = layout.state_ref(branch or f"loopx/proposals/{tip[:12]}", field="branch")
    result = remote.propose(tip, ref)
    if result.refused_by is not None or result.locked:
        raise refusal(repo, remote.name, ref.removeprefix("refs/heads/"), result, again="loopx propose")
    if not result.ok:
        raise ConflictError(
            f"the remote refused the proposal push to {ref}: {_shown(repo, result.reason)}",
            code="push-refused",
            hint="pick another --branch, or pull the proposal first",
        )
    return {"remote": remote.name, "branch": ref, "tip": tip, "state_branch": repo.ref}

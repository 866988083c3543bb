"""The state branch on a remote, reached through the ``git`` binary so the user's SSH config,
credential helpers and proxies apply as they do for their code.

A fetch lands in ``refs/remotes/<remote>/<branch>``; a push carries an expected old value
(``--force-with-lease``) and is atomic, so it succeeds only if the remote is still where this
clone last saw it. It is never a force push: loopx pushes only descendants of the remote's tip.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loopx_git.errors import NotFoundError, StoreError, ValidationError
from loopx_git.store.git import GitRepo

if TYPE_CHECKING:
    import subprocess

ZERO = "0" * 40


def remote_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a git remote's name (git's own rule: ``refs/remotes/<name>/x`` is
    a valid ref), or None."""
    from loopx_git.store.layout import ref_name_problem

    if not name:
        return "is empty"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8 text"
    if name.startswith("-"):
        return "starts with '-' (git would read it as an option)"
    if len(name) > 255:
        return f"is {len(name)} characters long (at most 255)"
    return ref_name_problem(f"refs/remotes/{name}/x")


MAX_MESSAGES = 20
"""Lines of a refused push's own output shown (the last ones: where a hook says why)."""
MESSAGE_BYTES = 64 * 1024
"""Bytes of a refused push's own output kept, the last ones, in whole lines: all of them are redacted
before the last lines are picked, so a key over many lines is found whole, header and all."""

_LOST_RACE = ("stale info", "fetch first", "non-fast-forward", "cannot lock ref", "atomic transaction failed")
NO_VERDICT = "git could not push to the remote"
"""The reason of a push that ended before the remote said anything of the ref: not reached, not let
in, or cut off midway (which may have moved the ref or not)."""
_LOCK_HELD = (".lock': File exists", "Unable to create")
_TRANSPORT_FAILED = ("fatal: ", "error: RPC failed", "send-pack: ")
_GIT_TRAILER = "error: failed to push some refs to "
_STATUS_FLAGS = tuple(f"{flag}\t" for flag in " +-*=!")


@dataclass(frozen=True)
class PushResult:
    ok: bool
    reason: str = ""
    """git's verdict on the ref: ``[rejected] (stale info)`` (the remote moved), ``[remote rejected]
    (pre-receive hook declined)``, or what stopped the push before any ref was sent."""
    refused_by: str | None = None
    """``remote`` or ``local-hook`` when the push was refused rather than lost to another clone."""
    messages: tuple[str, ...] = ()
    """What the refusing side printed, as it printed it, its last ``MESSAGE_BYTES`` in whole lines (the
    caller redacts all of them before it picks the last lines to show)."""

    locked: bool = False
    """The remote could not lock its ref to move it: another push holds the lock for a moment, or a
    git process that crashed there left its lock file behind (``messages`` hold what it said)."""

    @property
    def lost_race(self) -> bool:
        # a remote that moved: refused by the lease, by git's fast-forward rule, or (two pushes at
        # once) by the remote's own ref lock; judged on git's verdict alone, so no hook's message
        # can pass for a race that is then retried
        return not self.ok and self.refused_by is None


def push_outcome(proc: subprocess.CompletedProcess[str], *, hooked: bool = True) -> PushResult:
    """Read ``git push --porcelain``: which side refused and the lines it printed. A remote's
    refusal carries a ``!`` status line and ``remote:`` lines on stderr; a local pre-push hook
    (``hooked``: this clone has one) stops git before any ref is sent (exit 1, no status line; the
    hook's stdout and stderr pass through); a remote that cannot be reached makes git die (exit 128),
    and one lost midway leaves no status line either, with git's own words on what broke."""
    if proc.returncode == 0:
        return PushResult(True)
    out = proc.stdout.splitlines()
    # the status lines follow git's "To <url>": a passing hook may print anything before it
    start = next((n for n, line in enumerate(out) if line.startswith("To ")), len(out))
    status = [line for line in out[start:] if line[:2] in _STATUS_FLAGS]
    rejected = [line.split("\t")[-1].strip() for line in status if line.startswith("!")]
    reason = rejected[0] if rejected else ""
    said = [line[len("remote:") :].strip() for line in proc.stderr.splitlines() if line.startswith("remote:")]
    if rejected and any(marker in reason for marker in _LOST_RACE):
        # a ref that moved under the push fails to lock too ("is at X but expected Y"): only a lock
        # file that is there is a lock, which a retry of the same push tells from a race
        locked = any(marker in line for line in said for marker in _LOCK_HELD)
        return PushResult(False, reason, messages=_kept(said) if locked else (), locked=locked)
    if status:
        return PushResult(False, reason, "remote", _kept(said))
    said = [line.rstrip() for line in proc.stdout.splitlines() if line not in ("Done",)]
    # a hook's last line without a newline has git's own trailer glued to its end
    said += [line.rpartition(_GIT_TRAILER)[0] if _GIT_TRAILER in line else line for line in proc.stderr.splitlines()]
    # a connection lost after the hook passed also ends in exit 1 with no status line: git's own
    # words on the transport tell it from a hook's refusal, and without a hook it is never one
    cut = any(line.startswith(_TRANSPORT_FAILED) for line in proc.stderr.splitlines())
    if proc.returncode == 1 and hooked and not cut:
        return PushResult(False, "stopped by the pre-push hook before anything was sent", "local-hook", _kept(said))
    return PushResult(False, NO_VERDICT, "remote", _kept(said))


def _kept(lines: list[str]) -> tuple[str, ...]:
    """The last ``MESSAGE_BYTES`` of ``lines``, whole lines only, the blank ones left out. Picking the
    last lines to show waits for the redaction: a key's body lines without its header are no key."""
    from loopx_git.safety.window import whole_lines

    text = whole_lines("\n".join(lines).encode("utf-8", "surrogateescape"), limit=MESSAGE_BYTES)
    return tuple(line.rstrip() for line in text.splitlines() if line.strip())


class Remote:
    def __init__(self, git: GitRepo, name: str, state_ref: str):
        self.git = git
        self.name = name
        self.state_ref = state_ref
        problem = remote_name_problem(name)
        if problem is not None:  # before git sees it: a config key or a command line it would choke on
            raise ValidationError(
                f"field 'remote': {name[:200]!r} is not a remote name: it {problem}",
                code="invalid-field",
                hint="a name as `git remote add NAME URL` accepts it, e.g. origin",
            )
        if git.config_get(f"remote.{name}.url") is None:
            raise NotFoundError(
                f"remote {name!r} is not configured in this repository",
                code="no-remote",
                hint="add it with `git remote add NAME URL`, or pass --remote NAME",
            )

    @property
    def tracking_ref(self) -> str:
        return f"refs/remotes/{self.name}/{self.state_ref.removeprefix('refs/heads/')}"

    @property
    def refspec(self) -> str:
        return f"+{self.state_ref}:{self.tracking_ref}"

    def ensure_refspec(self) -> bool:
        """Make a plain ``git fetch`` bring the state branch too; True if the config changed."""
        key = f"remote.{self.name}.fetch"
        if self.refspec in self.git.git_command("config", "--get-all", key).stdout.split():
            return False
        self.git.run_git("config", "--add", key, self.refspec)
        return True

    def brings_state_branch(self) -> bool:
        """Whether a plain ``git fetch`` of this remote has brought the state branch into the
        tracking ref, had the remote one: a refspec maps it there (a default clone's
        ``refs/heads/*`` does, a ``--single-branch`` clone's does not) and the remote was fetched."""
        if not self.git.refs(f"refs/remotes/{self.name}/"):
            return False  # `git remote add` without a fetch: nothing is known of the remote yet
        for spec in self.git.git_command("config", "--get-all", f"remote.{self.name}.fetch").stdout.split():
            src, _, dst = spec.lstrip("+").partition(":")
            if "*" not in src:
                mapped = dst if src == self.state_ref else None
            else:
                head, _, tail = src.partition("*")
                middle = self.state_ref[len(head) : len(self.state_ref) - len(tail)]
                fits = self.state_ref.startswith(head) and self.state_ref.endswith(tail) and middle
                mapped = dst.replace("*", middle, 1) if fits else None
            if mapped == self.tracking_ref:
                return True
        return False

    def fetch(self, *, quiet_auth: bool = False, timeout: float | None = None) -> str | None:
        """Bring the remote's state branch into the tracking ref; its tip, or None if the remote
        has no state branch (the tracking ref is then removed). ``quiet_auth``/``timeout``: for a
        fetch the user did not ask for, which must not prompt or hang."""
        proc = self.git.git_command(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            self.name,
            self.refspec,
            quiet_auth=quiet_auth,
            timeout=timeout,
        )
        if proc.returncode != 0:
            if "couldn't find remote ref" in proc.stderr:
                if self.git.ref_target(self.tracking_ref) is not None:
                    self.git.run_git("update-ref", "-d", self.tracking_ref)
                return None
            raise StoreError(f"git fetch {self.name} failed: {proc.stderr.strip()}", code="fetch-failed")
        return self.git.ref_target(self.tracking_ref)

    def push(self, local: str, expected: str | None) -> PushResult:
        """Push ``local`` to the remote state branch if the remote is at ``expected`` (absent when None)."""
        lease = f"--force-with-lease={self.state_ref}:{expected or ''}"
        proc = self.git.git_command("push", "--atomic", "--porcelain", lease, self.name, f"{local}:{self.state_ref}")
        outcome = push_outcome(proc, hooked=proc.returncode != 0 and self.has_pre_push_hook())
        if outcome.ok:
            seen = self.git.ref_target(self.tracking_ref)
            if seen != local:  # git moves it itself where a fetch refspec maps the branch there
                self.git.move_ref(self.tracking_ref, local, seen)
        return outcome

    def propose(self, local: str, ref: str) -> PushResult:
        """Push ``local`` to ``ref`` on the remote, a fast-forward only (no lease: a proposal branch
        is this clone's own)."""
        proc = self.git.git_command("push", "--porcelain", self.name, f"{local}:{ref}")
        return push_outcome(proc, hooked=proc.returncode != 0 and self.has_pre_push_hook())

    def has_pre_push_hook(self) -> bool:
        """Whether git runs a pre-push hook in this clone (in ``core.hooksPath`` when set)."""
        try:
            hook = self.git.hooks_dir() / "pre-push"
        except StoreError:
            return True  # not known: a refusal without a status line is then read as the hook's
        return hook.is_file() and os.access(hook, os.X_OK)

    def remote_tip(self) -> str | None:
        """The state branch's tip on the remote itself (``git ls-remote``), None when absent."""
        proc = self.git.git_command("ls-remote", "--refs", self.name, self.state_ref, timeout=20, quiet_auth=True)
        if proc.returncode != 0:
            raise StoreError(f"git ls-remote {self.name} failed: {proc.stderr.strip()}", code="remote-unreachable")
        line = proc.stdout.strip().split("\n")[0]
        return line.split()[0] if line else None

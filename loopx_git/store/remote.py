"""The state branch on a remote, reached through the ``git`` binary so the user's SSH config,
credential helpers and proxies apply as they do for their code.

A fetch lands in ``refs/remotes/<remote>/<branch>``; a push carries an expected old value
(``--force-with-lease``) and is atomic, so it succeeds only if the remote is still where this
clone last saw it. It is never a force push: loopx pushes only descendants of the remote's tip.
"""

from __future__ import annotations

from dataclasses import dataclass

from loopx_git.errors import NotFoundError, StoreError, ValidationError
from loopx_git.store.git import GitRepo

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


@dataclass(frozen=True)
class PushResult:
    ok: bool
    reason: str = ""
    """Why git refused: ``stale info`` (the remote moved), ``non-fast-forward``, a hook's message..."""


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

    def fetch(self) -> str | None:
        """Bring the remote's state branch into the tracking ref; its tip, or None if the remote
        has no state branch (the tracking ref is then removed)."""
        proc = self.git.git_command("fetch", "--quiet", "--no-tags", "--no-write-fetch-head", self.name, self.refspec)
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
        if proc.returncode == 0:
            self.git.move_ref(self.tracking_ref, local, self.git.ref_target(self.tracking_ref))
            return PushResult(True)
        rejected = [line for line in proc.stdout.splitlines() if line.startswith("!")]
        reason = rejected[0].split("\t")[-1] if rejected else ""
        return PushResult(False, (reason + " " + proc.stderr.strip()).strip())

    def remote_tip(self) -> str | None:
        """The state branch's tip on the remote itself (``git ls-remote``), None when absent."""
        proc = self.git.git_command("ls-remote", "--refs", self.name, self.state_ref, timeout=20, quiet_auth=True)
        if proc.returncode != 0:
            raise StoreError(f"git ls-remote {self.name} failed: {proc.stderr.strip()}", code="remote-unreachable")
        line = proc.stdout.strip().split("\n")[0]
        return line.split()[0] if line else None

"""What ``loopx connect`` / ``disconnect`` do to a repository's work tree and hooks, and what
``loopx doctor`` and ``loopx check`` report about them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from loopx_git.errors import StoreError
from loopx_git.hooks import install, shim
from loopx_git.hooks.checks import Report, boundary_of, check_tree, path_finding, policy_of
from loopx_git.safety.boundary import BLOCK_BEGIN, has_ignore_block, with_ignore_block
from loopx_git.store.git import GitRepo

GITIGNORE = ".gitignore"


@dataclass
class Connection:
    hooks: dict[str, str] = field(default_factory=dict)
    """hook name -> what was done"""
    ignore_block: str | None = None
    framework_snippet: str | None = None
    """Set when the repository uses the pre-commit framework: hooks to add to its config."""

    def to_json(self) -> dict:
        return {
            "hooks": self.hooks,
            "ignore_block": self.ignore_block,
            "pre_commit_framework": self.framework_snippet is not None,
            "framework_snippet": self.framework_snippet,
        }


def uses_framework(git: GitRepo) -> bool:
    return git.workdir is not None and (git.workdir / install.PRE_COMMIT_CONFIG).is_file()


def ensure_ignore_block(git: GitRepo) -> str:
    workdir = git.workdir
    assert workdir is not None, "connect() leaves a bare repository alone"
    path = workdir / GITIGNORE
    try:  # git reads .gitignore as bytes: lines in another encoding are kept as they are
        before = path.read_text(encoding="utf-8", errors="surrogateescape") if path.is_file() else ""
        after = with_ignore_block(before, boundary_of(policy_of(git)).patterns)
        if after == before:
            return "up to date"
        path.write_text(after, encoding="utf-8", errors="surrogateescape")
    except OSError as exc:  # a folder or a dangling link named .gitignore, a read-only work tree
        raise _cannot(
            "write the local-state block to .gitignore",
            exc,
            "make .gitignore a regular file you can write, or pass --no-ignore",
        ) from exc
    return "updated" if BLOCK_BEGIN in before.splitlines() else "added"


def _cannot(what: str, exc: OSError, hint: str) -> StoreError:
    """A work-tree or hooks change that the file system refused, as a refusal naming the path."""
    where = f" ({exc.filename})" if exc.filename else ""
    return StoreError(f"cannot {what}{where}: {exc.strerror or exc}", code="worktree", hint=hint)


_HOOKS_HINT = (
    "the hooks folder is `git rev-parse --git-path hooks` (core.hooksPath when set): make it a folder you "
    "can write with regular files for the hooks, or pass --no-hooks"
)


def connect(git: GitRepo, *, hooks: bool = True, ignore: bool = True, executable: str | None = None) -> Connection:
    """Install the hook shims (or, under the pre-commit framework, say what to add) and the
    ``.gitignore`` block. Idempotent. A bare repository has neither work tree nor hooks to guard.
    ``executable``: the one ``loopx`` the shims run, instead of the running installation."""
    result = Connection()
    if git.workdir is None:
        return result
    if ignore:
        result.ignore_block = ensure_ignore_block(git)
    if hooks:
        if uses_framework(git):
            result.framework_snippet = install.framework_snippet()
        else:
            hooks_dir = git.hooks_dir()
            target = target_for(git, hooks_dir)
            if executable:  # exactly this one, no fallback
                target = shim.Target(executable, None, portable=not os.path.isabs(executable))
            try:
                result.hooks = {name: install.install(hooks_dir, name, target) for name in install.HOOK_NAMES}
            except OSError as exc:  # a folder where a hook goes, core.hooksPath naming a file, a dangling link
                raise _cannot("install the git hooks", exc, _HOOKS_HINT) from exc
    return result


def target_for(git: GitRepo, hooks_dir: Path) -> shim.Target:
    """The loopx a shim in ``hooks_dir`` runs: the exact installation by absolute path, unless the
    folder may be committed, where an absolute path would carry a home folder into a commit."""
    return shim.PORTABLE if committable(git, hooks_dir) else shim.installed()


def committable(git: GitRepo, hooks_dir: Path) -> bool:
    """Whether ``hooks_dir`` is in the work tree proper (``core.hooksPath = .githooks``). The git
    dir is path-wise inside the work tree too, but nothing under it is ever committed."""
    workdir = git.workdir
    assert workdir is not None, "connect() and health() leave a bare repository alone"
    work = workdir.resolve()
    if not hooks_dir.is_relative_to(work):
        return False
    common = (work / git.run_git("rev-parse", "--git-common-dir").strip()).resolve()  # linked worktrees share it
    return not any(hooks_dir.is_relative_to(d) for d in (git.git_dir.resolve(), common))


def disconnect(git: GitRepo) -> dict[str, str]:
    """Remove only loopx's hook sections; the state branch and the ignore block stay."""
    if git.workdir is None:
        return {}
    hooks_dir = git.hooks_dir()
    try:
        return {name: install.uninstall(hooks_dir, name) for name in install.HOOK_NAMES}
    except OSError as exc:
        raise _cannot("remove loopx's hook sections", exc, _HOOKS_HINT) from exc


@dataclass
class Health:
    hooks: list = field(default_factory=list)
    framework: bool = False
    ignore_block: bool = False
    loopx: str = ""

    def to_json(self) -> dict:
        from loopx_git.version import __version__

        return {
            "loopx_version": __version__,
            "loopx_executable": self.loopx,
            "pre_commit_framework": self.framework,
            "hooks": [h.to_json() for h in self.hooks],
            "ignore_block_present": self.ignore_block,
        }


def health(git: GitRepo) -> Health:
    out = Health(loopx=install.loopx_executable())
    if git.workdir is None:
        return out
    out.framework = uses_framework(git)
    hooks_dir = git.hooks_dir()
    target = target_for(git, hooks_dir)
    out.hooks = [install.state(hooks_dir, name, target) for name in install.HOOK_NAMES]
    gitignore = git.workdir / GITIGNORE
    try:
        text = gitignore.read_text(encoding="utf-8", errors="surrogateescape") if gitignore.is_file() else ""
    except OSError:  # unreadable: reported as no block, which `loopx connect` then explains
        text = ""
    out.ignore_block = has_ignore_block(text, boundary_of(policy_of(git)).patterns)
    return out


def check(git: GitRepo) -> Report:
    """``loopx check``: tracked local state, local state in the work tree that is not ignored,
    and a scan of every tracked file as staged."""
    policy = policy_of(git)
    report = check_tree(git, policy) if git.workdir is not None else Report()
    if git.workdir is None:
        return report
    boundary = boundary_of(policy)
    for path in git.untracked():
        pattern = boundary.violates(path)
        if pattern is not None:
            finding = path_finding(path, pattern, policy, note="; not ignored: `loopx connect` adds the ignore block")
            if finding is not None:
                report.findings.append(finding)
    return report

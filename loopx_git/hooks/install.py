"""Installing the git hook shims, next to whatever hooks a repository already has.

A shim is a marked, versioned section of POSIX shell that runs ``loopx hook run <name>``:

- no hook yet: the hook file is a shebang plus the section;
- a shell hook already there: the section goes in right after its shebang, so the user's hook
  still runs after it (pre-push input is replayed to it on stdin);
- a hook in another language, or one that is not executable (switched off): it is moved aside to
  ``<name>.pre-loopx`` and the shim runs it if it is executable;
- running connect again replaces the section in place; ``disconnect`` removes only the section
  (and moves a moved-aside hook back).

What the section runs, and how it refuses when loopx cannot be found, is in ``hooks/shim.py``.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from loopx_git.errors import RuleError
from loopx_git.hooks import shim

HOOK_NAMES = ("pre-commit", "pre-push", "commit-msg")
SECTION_VERSION = shim.VERSION
_SHELLS = re.compile(r"^#!\s*(?:/usr/bin/env\s+)?(?:\S*/)?(?:sh|bash|dash|zsh|ksh|ash)\b")
ASIDE_SUFFIX = ".pre-loopx"
PRE_COMMIT_CONFIG = ".pre-commit-config.yaml"


def loopx_executable() -> str:
    """The ``loopx`` script of the running installation, else ``python -m loopx_git``."""
    target = shim.installed()
    return target.script or f"{target.python} -m loopx_git"


@dataclass(frozen=True)
class HookState:
    name: str
    path: Path
    installed: bool
    current: bool
    version: int | None
    chained: str | None
    """A user hook that also runs: ``"inline"`` (in the same file) or the moved-aside file's name."""
    target: str | None = None
    """The loopx the installed shim runs (its first choice when it finds none)."""
    target_missing: bool | None = None
    """The shim finds no loopx, so it refuses every commit (or push) until `loopx connect`; None for
    a shim older than ``shim.VERSION`` (those let the commit through instead: outdated)."""

    def to_json(self) -> dict:
        return {
            "hook": self.name,
            "path": self.path.name,
            "installed": self.installed,
            "current": self.current,
            "version": self.version,
            "chained": self.chained,
            "target": self.target,
            "target_missing": self.target_missing,
        }


def _find_section(lines: list[str], name: str) -> tuple[int, int, int] | None:
    for i, line in enumerate(lines):
        m = shim.BEGIN_RE.match(line)
        if m and m.group("name") == name:
            end_marker = shim.END.format(name=name)
            if end_marker not in lines[i:]:
                raise RuleError(
                    f"the {name} hook has loopx's begin marker but not {end_marker!r}; loopx will not guess "
                    "where its section ends",
                    code="hook-damaged",
                    hint="remove the loopx lines from the hook by hand, then run `loopx connect` again",
                )
            return i, lines.index(end_marker, i), int(m.group("version"))
    return None


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _not_shell(path: Path, lines: list[str]) -> bool:
    """A hook loopx must not edit: another language's ``#!``, or a program (a NUL byte, as git
    tells binary files) that runs without one."""
    if lines and lines[0].startswith("#!"):
        return not _SHELLS.match(lines[0])
    with open(path, "rb") as f:
        return b"\0" in f.read(8000)


def install(hooks_dir: Path, name: str, target: shim.Target) -> str:
    """Install or update the shim for ``name``; returns what was done, in a few words."""
    hooks_dir.mkdir(parents=True, exist_ok=True)
    path = hooks_dir / name
    aside = hooks_dir / (name + ASIDE_SUFFIX)
    if not path.exists():
        _write(path, ["#!/bin/sh", *shim.section(name, target)])
        return "installed"
    lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    found = _find_section(lines, name)
    if found is not None:
        begin, end, _ = found
        chained = aside.name if aside.exists() else None
        new = lines[:begin] + shim.section(name, target, chained=chained) + lines[end + 1 :]
        if new == lines:
            return "up to date"
        _write(path, new)
        return "updated"
    switched_off = not os.access(path, os.X_OK)
    if switched_off or _not_shell(path, lines):
        if aside.exists():
            raise RuleError(
                f"{aside.name} already exists beside the {name} hook; moving your hook there would overwrite it",
                code="hook-exists",
                hint=f"rename or remove {aside} and run `loopx connect` again",
            )
        path.rename(aside)  # not shell, or not executable: run it (if it may run) instead of editing it
        _write(path, ["#!/bin/sh", *shim.section(name, target, chained=aside.name)])
        return f"installed; your hook moved to {aside.name}" + (
            " (not executable, so it stays off)" if switched_off else " and still runs"
        )
    head = lines[:1] if lines and lines[0].startswith("#!") else ["#!/bin/sh"]
    rest = lines[1:] if lines and lines[0].startswith("#!") else lines
    _write(path, head + shim.section(name, target) + rest)
    return "installed before your existing hook, which still runs"


def uninstall(hooks_dir: Path, name: str) -> str:
    path = hooks_dir / name
    aside = hooks_dir / (name + ASIDE_SUFFIX)
    if not path.exists():
        return "not installed"
    lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    found = _find_section(lines, name)
    if found is None:
        return "not installed"
    begin, end, _ = found
    rest = lines[:begin] + lines[end + 1 :]
    if aside.exists():
        path.unlink()
        aside.rename(path)
        return f"removed; {aside.name} moved back"
    if all(not line.strip() or line.startswith("#!") for line in rest):
        path.unlink()
        return "removed"
    _write(path, rest)
    return "removed; your hook is unchanged"


def state(hooks_dir: Path, name: str, target: shim.Target) -> HookState:
    path = hooks_dir / name
    aside = hooks_dir / (name + ASIDE_SUFFIX)
    if not path.exists():
        return HookState(name, path, False, False, None, None)
    try:
        lines = path.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    except OSError:  # a folder where the hook goes: no shim is there (`loopx connect` says why)
        return HookState(name, path, False, False, None, None)
    found = _find_section(lines, name)
    if found is None:
        return HookState(name, path, False, False, None, "inline")
    begin, end, version = found
    chained = aside.name if aside.exists() else None
    current = lines[begin : end + 1] == shim.section(name, target, chained=chained)
    others = any(line.strip() and not line.startswith("#!") for line in lines[:begin] + lines[end + 1 :])
    runs = shim.target_of(lines[begin : end + 1])
    now = shim.resolve(runs)
    missing = now is None if version >= shim.VERSION else None  # an older shim skipped the check instead: outdated
    return HookState(
        name,
        path,
        True,
        current,
        version,
        chained or ("inline" if others else None),
        target=now or runs.first(),
        target_missing=missing,
    )


def framework_snippet() -> str:
    """What to add to ``.pre-commit-config.yaml`` when the repository uses the pre-commit
    framework: local hooks that run the ``loopx`` already installed."""
    return """\
  - repo: local
    hooks:
      - id: loopx-boundary
        name: loopx local-state boundary
        entry: loopx hook run boundary
        language: system
        types: []
        types_or: [file, symlink]
      - id: loopx-public-safety
        name: loopx public-safety scan
        entry: loopx hook run public-safety
        language: system
        types: []
        types_or: [text, symlink]
      - id: loopx-prepush
        name: loopx pre-push range check
        entry: loopx hook run prepush
        language: system
        stages: [pre-push]
        pass_filenames: false
        always_run: true
      - id: loopx-commit-msg
        name: loopx commit-message scan
        entry: loopx hook run commit-msg
        language: system
        stages: [commit-msg]
# then: pre-commit install --hook-type pre-commit --hook-type pre-push --hook-type commit-msg
"""

"""The shell a hook shim runs, and which ``loopx`` it runs.

Hooks fail closed: a shim tries the ``loopx`` script, then ``python -m loopx_git``, and when
neither is there it refuses the commit or push and says how to fix it — a safety check that
silently skips is worse than none. ``--no-verify`` stays git's deliberate way past any hook.

- A hooks folder under the git dir (``.git/hooks``) is never committed: its shim names the exact
  script and interpreter that installed it, by absolute path, so a GUI client or a shell without
  the environment still runs the same loopx.
- A hooks folder in the work tree (``core.hooksPath = .githooks``) is usually committed, and an
  absolute path would carry a home folder into a commit: its shim looks ``loopx`` up on PATH,
  then tries ``python3 -m loopx_git``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

VERSION = 2
"""Bumped whenever the shim's shell changes: `loopx doctor` calls older shims outdated."""

BEGIN = "# >>> loopx {name} hook v{version} (installed by `loopx connect`; `loopx disconnect` removes it) >>>"
BEGIN_RE = re.compile(r"^# >>> loopx (?P<name>[a-z-]+) hook v(?P<version>\d+) .*>>>$")
END = "# <<< loopx {name} hook <<<"
_TARGET_RE = re.compile(r"^loopx_(?P<kind>script|python|bin)=(?P<value>.*)$")  # v1 shims said loopx_bin=
_DOES = {
    "pre-commit": ("commit", "git commit --no-verify"),
    "commit-msg": ("commit", "git commit --no-verify"),
    "pre-push": ("push", "git push --no-verify"),
}


@dataclass(frozen=True)
class Target:
    """What a shim runs, in order: the ``loopx`` script, then ``python -m loopx_git``. Absolute
    paths (``portable=False``), or names looked up on PATH (``portable=True``)."""

    script: str | None
    python: str | None
    portable: bool = False

    def first(self) -> str | None:
        """The command the shim tries first."""
        return self.script or (f"{self.python} -m loopx_git" if self.python else None)

    def describe(self) -> str:
        tried = []
        if self.script:
            tried.append(f"`{self.script}` on PATH" if self.portable else self.script)
        if self.python:
            tried.append(f"{self.python} -m loopx_git")
        return ", then ".join(tried) or "nothing"


PORTABLE = Target("loopx", "python3", portable=True)


def installed() -> Target:
    """The running installation: the ``loopx`` script next to the interpreter, and the interpreter
    (not one found on PATH, which may be another installation's). Paths are not resolved: a
    venv's python is a symlink out of the venv."""
    beside = Path(sys.executable).parent / ("loopx.exe" if os.name == "nt" else "loopx")
    script = os.path.abspath(beside) if beside.is_file() else None
    return Target(script, _interpreter_of(script) or os.path.abspath(sys.executable))


def _interpreter_of(script: str | None) -> str | None:
    """The interpreter in the script's ``#!`` line: the same one whether loopx was started as
    ``loopx``, ``python -m loopx_git`` or ``python3 -m ...``, so a shim stays current."""
    if script is None:
        return None
    try:
        with open(script, "rb") as f:
            first = f.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    words = first[2:].split() if first.startswith("#!") else []
    if len(words) != 1 or not os.path.isabs(words[0]) or not os.path.isfile(words[0]):
        return None
    # pip writes a `#!/bin/sh` launcher for long or spaced venv paths: that is no Python to run -m with
    return words[0] if os.path.basename(words[0]).startswith(("python", "pypy")) else None


def quote(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"


def _found(var: str, portable: bool) -> str:
    """Shell that tests the command in ``$var`` (false when empty). dash's ``command -v /path``
    does not check that the file is executable, so an absolute path is tested with ``-x``."""
    return f'command -v "${var}" >/dev/null 2>&1' if portable else f'[ -x "${var}" ]'


def _refusal(name: str, target: Target) -> list[str]:
    action, bypass = _DOES[name]
    lines = [
        f"loopx: the {name} safety check cannot run: no loopx found (tried {target.describe()}); the {action} is refused.",
        "fix: install loopx-git or activate the environment it is installed in, then run `loopx connect` "
        "in this repository to update the hook.",
        f"to {action} without the check, deliberately: {bypass}",
    ]
    return [f"    printf '%s\\n' {quote(line)} >&2" for line in lines]  # printf: echo would expand backslashes


def runner(name: str, target: Target) -> list[str]:
    """Shell that defines ``loopx_run``: runs the target with its arguments, or refuses (exit 1)."""
    return [
        f"loopx_script={quote(target.script or '')}",
        f"loopx_python={quote(target.python or '')}",
        "loopx_run() {",
        f'  if {_found("loopx_script", target.portable)}; then "$loopx_script" "$@"',
        f"  elif {_found('loopx_python', target.portable)} && \"$loopx_python\" -c 'import loopx_git' 2>/dev/null; then "
        '"$loopx_python" -m loopx_git "$@"',
        "  else",
        *_refusal(name, target),
        "    return 1",
        "  fi",
        "}",
    ]


def section(name: str, target: Target, *, chained: str | None = None) -> list[str]:
    """The shim's lines for hook ``name``. ``chained`` names a moved-aside hook to run after."""
    lines = [BEGIN.format(name=name, version=VERSION), *runner(name, target)]
    run = f'loopx_run hook run {name} "$@" || exit $?'
    if name == "pre-push":  # git's ref lines arrive once on stdin; keep them for the hook that follows
        lines += [
            "loopx_stdin=$(cat)",
            f"printf '%s\\n' \"$loopx_stdin\" | {run}",
            'if [ -n "$loopx_stdin" ]; then',
            "exec <<loopx_stdin_end",
            "$loopx_stdin",
            "loopx_stdin_end",
            "else",
            "exec </dev/null",
            "fi",
        ]
    else:
        lines.append(run)
    if chained:  # run only if executable: a hook you had switched off stays off
        lines.append(f'if [ -x "$(dirname "$0")/{chained}" ]; then exec "$(dirname "$0")/{chained}" "$@"; fi')
    lines.append(END.format(name=name))
    return lines


def target_of(lines: list[str]) -> Target:
    """The target written in an installed section (any version)."""
    found: dict[str, str] = {}
    for line in lines:
        m = _TARGET_RE.match(line)
        if m:
            try:
                words = shlex.split(m.group("value"))
            except ValueError:  # edited by hand past what the shell would accept
                words = []
            found.setdefault(m.group("kind"), words[0] if words else "")
    script = found.get("script", found.get("bin")) or None
    python = found.get("python") or None
    portable = not any(v and os.path.isabs(v) for v in (script, python))
    return Target(script, python, portable)


def resolve(target: Target) -> str | None:
    """What the shim would run from this process's environment (the same lookups, in Python), or
    None when it would refuse. A portable target is looked up on this PATH, which may differ from
    the PATH a GUI client gives git."""
    if target.script and _runnable(target.script, target.portable):
        return target.script
    if target.python and _runnable(target.python, target.portable) and _imports_loopx(target.python, target.portable):
        return f"{target.python} -m loopx_git"
    return None


def _runnable(command: str, portable: bool) -> bool:
    if portable:
        return shutil.which(command) is not None
    return os.path.isfile(command) and os.access(command, os.X_OK)


def _imports_loopx(python: str, portable: bool) -> bool:
    if not portable and os.path.abspath(python) == os.path.abspath(sys.executable):
        return True  # the interpreter running this code has just imported loopx_git
    try:
        probe = subprocess.run([python, "-c", "import loopx_git"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0

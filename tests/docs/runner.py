"""Runs the shell examples of a Markdown document, in order, in one bash session.

A fenced ``sh`` block is a list of commands; each must exit 0 unless the line ends in a comment
``# exits N``. ``loopx`` is the package under test run by this interpreter (the venv's ``bin`` need
not be on PATH). A ``<!-- not run -->`` line just before a block leaves it out (an install command).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_FENCE = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
_EXITS = re.compile(r"#\s*exits\s+(\d+)")


@dataclass(frozen=True)
class Command:
    text: str
    exit_code: int


def commands(markdown: str, *, after: str | None = None, before: str | None = None) -> list[Command]:
    """The commands of every ``sh`` block between the headings ``after`` and ``before``."""
    if after is not None:
        markdown = markdown.split(after, 1)[1]
    if before is not None:
        markdown = markdown.split(before, 1)[0]
    out = []
    for match in _FENCE.finditer(markdown):
        if markdown[: match.start()].rstrip().endswith("<!-- not run -->"):
            continue
        for line in match.group(1).replace("\\\n", " ").splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            expected = _EXITS.search(line)
            out.append(Command(line, int(expected.group(1)) if expected else 0))
    return out


def script(steps: list[Command]) -> str:
    """One bash script that runs each step and stops at the first unexpected exit status."""
    lines = [f'loopx() {{ {shlex.quote(sys.executable)} -m loopx_git "$@"; }}']
    for number, step in enumerate(steps, 1):
        lines += [
            f"echo {shlex.quote(f'$ {step.text}')}",
            step.text,
            "rc=$?",
            f'if [ "$rc" -ne {step.exit_code} ]; then',
            f'  echo {shlex.quote(f"step {number} exited ")}"$rc"{shlex.quote(f" (expected {step.exit_code}): {step.text}")} >&2',
            "  exit 99",
            "fi",
        ]
    return "\n".join(lines) + "\n"


def run(steps: list[Command], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "--noprofile", "--norc"], input=script(steps), cwd=cwd, capture_output=True, text=True
    )

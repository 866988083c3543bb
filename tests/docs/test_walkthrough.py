"""The newcomer walk-through in docs/ runs as written: two clones, one remote, every step's exit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.docs import runner

DOC = Path(__file__).resolve().parents[2] / "docs" / "walkthrough.md"


@pytest.mark.slow
def test_the_walkthrough_runs_as_written(tmp_path):
    steps = runner.commands(DOC.read_text())
    assert len(steps) > 30 and any(step.exit_code == 1 for step in steps)
    done = runner.run(steps, tmp_path)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr

    # what the page promises, checked on the repositories it left behind
    def git(*args: str, where: str = "shared.git") -> str:
        return subprocess.run(
            ["git", "-C", str(tmp_path / where), *args], capture_output=True, text=True, check=True
        ).stdout

    assert (
        git("rev-list", "--max-parents=0", "loopx/state").split()
        == git("rev-list", "--max-parents=0", "loopx/state", where="alice").split()
    )
    assert len(git("rev-list", "--max-parents=0", "loopx/state").split()) == 1, "one root: Bob adopted the history"
    assert "bob" in done.stdout and "claim" in done.stdout
    assert git("rev-parse", "loopx/state", where="alice") == git("rev-parse", "loopx/state")

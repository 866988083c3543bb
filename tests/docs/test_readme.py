"""The README: its two set-up commands work on a PEP 668 Python, the package builds without
warnings, and the tour of the commands runs as written."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git
from tests.docs import runner

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_the_two_set_up_commands_install_into_a_virtual_environment():
    section = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 2 and all(len(b.strip().splitlines()) == 1 for b in blocks)
    demo, tests = (b.strip() for b in blocks)
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert demo == venv + "python3 -m pip install . && loopx demo"
    assert tests == venv + "python3 -m pip install -e '.[test]' && python3 -m pytest -q"
    assert tests in (ROOT / ".ci" / "run").read_text(), ".ci/run calls the README's test command"


def test_the_license_is_an_spdx_expression_with_its_file():
    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^license = "Apache-2.0"$', text, re.M)
    assert re.search(r'^license-files = \["LICENSE"\]$', text, re.M) and (ROOT / "LICENSE").is_file()


def test_the_package_builds_without_warnings(tmp_path):
    # a copy of what the build reads, so the build leaves nothing in the checkout; the backend runs
    # in its own isolated environment, as on a user's machine
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "loopx_git", source / "loopx_git", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    output = done.stdout + done.stderr
    assert not re.search(r"Deprecat|SetuptoolsWarning|license.*(table|deprecated)", output, re.I), [
        line for line in output.splitlines() if re.search("deprecat|warning", line, re.I)
    ]
    assert list(tmp_path.glob("loopx_git-*.whl"))


@pytest.mark.slow
def test_the_tour_runs_as_written(tmp_path):
    """The tour's commands, in order, in a new project whose `origin` is a bare repository."""
    project, remote = tmp_path / "project", tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    (project / "README.md").write_text("parser\n")
    git(project, "add", "README.md")
    git(project, "commit", "-q", "-m", "init")
    git(project, "remote", "add", "origin", str(remote))
    git(project, "push", "-q", "origin", "main")

    steps = runner.commands(README, after="## A tour of the commands", before="## Public safety")
    assert len(steps) >= 20
    done = runner.run(steps, project)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    pushed = git(remote, "rev-parse", "loopx/state").strip()  # the sync published what came before it
    git(project, "merge-base", "--is-ancestor", pushed, "loopx/state")
    assert "rollback_packet" in git(project, "log", "--stat", "-1", "loopx/state") or "rollbacks/" in git(
        project, "log", "--name-only", "--format=", "-3", "loopx/state"
    )

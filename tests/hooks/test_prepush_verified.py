"""The pre-push check of the state branch trusts this clone's verified mark for exactly the tip it
names (loopx checked or built every commit up to it) and verifies anything else (issue 11, item 4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import loopx_git
from tests.conftest import git

STATE = "refs/heads/loopx/state"

PROBE = """
import sys
from loopx_git.hooks.prepush import RefUpdate, check_push
from loopx_git.safety.policy import load_from
from loopx_git.store.git import GitRepo

repo = GitRepo.discover(".")
local, remote = sys.argv[1], sys.argv[2]
report = check_push(repo, [RefUpdate("refs/heads/loopx/state", local, "refs/heads/loopx/state", remote)],
                    load_from(repo.workdir), remote="origin", state_ref="refs/heads/loopx/state")
print(report.refused)
print("loopx_git.views.verify" in sys.modules)
"""


def probe(path: Path, local: str, remote: str) -> tuple[str, bool]:
    """The refusals and whether verify was loaded, from a process of its own (as git runs the hook)."""
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, local, remote], cwd=path, capture_output=True, text=True, check=True
    )
    refused, loaded = proc.stdout.splitlines()
    return refused, loaded == "True"


def test_a_tip_loopx_verified_is_not_verified_again_and_a_plain_git_tip_is(connected, remote):
    base = git(connected, "rev-parse", STATE).strip()
    with loopx_git.open(connected) as repo:
        repo.todo_add("g1", "written by loopx")
        tip = repo.tip
    assert tip is not None
    assert probe(connected, tip, base) == ("[]", False)  # the mark names it: no second look

    work = connected.parent / "state-edit"
    git(connected, "worktree", "add", "-q", str(work), "loopx/state")
    event = next(p for p in work.rglob("*.json") if "/events/" in str(p))
    data = json.loads(event.read_text())
    data["summary"] = "edited after the fact"
    event.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    git(work, "commit", "-q", "-am", "edit an event", "--no-verify")
    edited = git(work, "rev-parse", "HEAD").strip()
    refused, loaded = probe(connected, edited, base)
    assert loaded and "verify: record-changed" in refused  # past the mark: verified, and refused


def test_the_mark_never_excuses_a_push_that_is_not_a_fast_forward(connected, remote):
    with loopx_git.open(connected) as repo:
        repo.todo_add("g1", "first")
    pushed = git(connected, "rev-parse", STATE).strip()
    assert subprocess.run(["git", "-C", str(connected), "push", "-q", "origin", "loopx/state"]).returncode == 0
    git(connected, "update-ref", STATE, pushed + "~1")
    with loopx_git.open(connected) as repo:
        repo.todo_add("g1", "rewritten history")
        rewritten = repo.tip
    assert rewritten is not None
    refused, _ = probe(connected, rewritten, pushed)
    assert "not a fast-forward" in refused

"""Shared fixtures: real git repositories in temporary folders, hermetic git configuration."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import settings

import loopx_git
from loopx_git.cli.main import run_cli

GOAL = "g1"
NOW = "2026-03-01T10:00:00Z"

# property tests draw the same examples on every run (a failure in CI is one anybody can replay) and
# keep no example database in the checkout
settings.register_profile("loopx", derandomize=True, database=None, deadline=None)
settings.load_profile("loopx")


def hermetic(env: pytest.MonkeyPatch, home: Path) -> None:
    """Never read the developer's git config; pin identity so commits are reproducible."""
    env.setenv("HOME", str(home))
    env.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    env.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("AUTHOR", "COMMITTER"):
        env.setenv(f"GIT_{var}_NAME", "Test Person")
        env.setenv(f"GIT_{var}_EMAIL", "test@example.invalid")


@pytest.fixture(autouse=True)
def hermetic_git(tmp_path_factory, monkeypatch):
    """Every test: ``hermetic`` (a module-scoped fixture applies it itself, see tests/hostile)."""
    hermetic(monkeypatch, tmp_path_factory.mktemp("home"))
    monkeypatch.delenv("GIT_DIR", raising=False)
    for var in ("LOOPX_GOAL_ID", "LOOPX_AGENT_ID"):  # the caller's defaults must not reach a test
        monkeypatch.delenv(var, raising=False)


def git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def git_repo(tmp_path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test Person")
    git(path, "config", "user.email", "test@example.invalid")
    (path / "README.md").write_text("project\n")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "init")
    return path


@pytest.fixture
def repo(git_repo):
    """A connected repository with goal g1 and two registered agents, alice (lane core) and bob."""
    state = loopx_git.open(git_repo)
    state.connect()
    state.goal_create(GOAL, "Ship the parser", now=NOW)
    state.agent_register(GOAL, "alice", lane="core", now=NOW)
    state.agent_register(GOAL, "bob", now=NOW)
    yield state
    state.close()


class Cli:
    """Runs ``loopx`` in-process against one repository and captures what it prints."""

    def __init__(self, path: Path, capsys):
        self.path = path
        self._capsys = capsys

    def __call__(self, *args: str, fmt: str | None = None) -> Result:
        argv = ["--repo", str(self.path)] + (["--format", fmt] if fmt else []) + list(args)
        self._capsys.readouterr()
        code = run_cli(argv)
        out, err = self._capsys.readouterr()
        return Result(code, out, err)

    def json(self, *args: str):
        result = self(*args, fmt="json")
        assert result.code == 0, result.err
        return json.loads(result.out)


class Result:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def cli(repo, git_repo, capsys) -> Cli:
    return Cli(git_repo, capsys)


def state_tip(path: Path) -> str:
    return git(path, "rev-parse", "refs/heads/loopx/state").strip()


@pytest.fixture
def surface(record_property):
    """``surface(message)``: what a whole-surface test covered (how many commands, options, shapes it
    ran), printed at the end of the run under "surface covered" (``pytest_terminal_summary``)."""

    def say(message: str) -> None:
        record_property("surface", message)
        print(message)

    return say


def pytest_collection_modifyitems(items):
    """Long runs (marked ``slow``) first, in the order collected: the parallel workers then end
    together, instead of one running the last long test alone while the other waits."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_terminal_summary(terminalreporter):
    said = [
        (report.nodeid, value)
        for report in terminalreporter.stats.get("passed", [])
        for name, value in getattr(report, "user_properties", [])
        if name == "surface" and report.when == "call"
    ]
    if said:
        terminalreporter.section("surface covered")
        for nodeid, message in sorted(said):
            terminalreporter.write_line(f"{nodeid.split('::')[-1][:70]}: {message}")

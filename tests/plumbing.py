"""Commits made with git plumbing, as a tool other than loopx (or a person with plain git) makes
them: no hooks, no loopx, any tree and any message."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import git


def tree_with(path: Path, tree: str, files: dict[str, str], remove: tuple[str, ...] = ()) -> str:
    """``tree`` with ``files`` (path -> text) added or replaced and ``remove`` taken out, written
    with plumbing."""
    env = {**os.environ, "GIT_INDEX_FILE": str(path / ".git" / "plumbing-index")}

    def run(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["git", "-C", str(path), *args], input=stdin, env=env, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    run("read-tree", tree)
    for name, text in files.items():
        blob = run("hash-object", "-w", "--stdin", stdin=text)
        run("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
    for name in remove:
        run("update-index", "--force-remove", name)
    return run("write-tree")


def plain_commit(
    path: Path,
    parent: str,
    subject: str,
    files: dict[str, str] | None = None,
    tree: str | None = None,
    remove: tuple[str, ...] = (),
) -> str:
    """A commit on ``parent`` made with plumbing (no loopx, no hooks): ``tree`` (default: the
    parent's) with ``files`` (path -> text) added and ``remove`` taken out."""
    tree = tree or git(path, "rev-parse", f"{parent}^{{tree}}").strip()
    if files or remove:
        tree = tree_with(path, tree, files or {}, remove)
    return git(path, "commit-tree", tree, "-p", parent, "-m", subject).strip()

"""A reader that leaves (`| head`) ends a read quietly with exit 1, never an internal error."""

from __future__ import annotations

import subprocess
import sys


def test_a_listing_piped_into_head_ends_quietly(repo, git_repo):
    for n in range(5):
        repo.todo_add("g1", f"todo number {n}")
    repo.close()
    for args in (["todo", "list", "--json"], ["todo", "list", "-f", "yaml"], ["todo", "list"], ["status"]):
        code = f"from loopx_git.cli.main import run_cli; import sys; sys.exit(run_cli(['--repo', {str(git_repo)!r}, *{args!r}]))"
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()  # type: ignore[union-attr]  # gone before the first byte: every write fails
        err = proc.stderr.read().decode()  # type: ignore[union-attr]
        rc = proc.wait(timeout=60)
        assert "internal error" not in err and "Traceback" not in err, (args, err)
        assert rc in (0, 1), (args, rc, err)

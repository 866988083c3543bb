"""`loopx hook run` reads the command lines hooks are run with without argparse (it is on every
commit's path), and reads them exactly as argparse's ``parse_intermixed_args`` does (options may
stand between file names: the pre-commit framework puts a hook's ``args`` before the files);
anything else goes to argparse."""

from __future__ import annotations

import subprocess
import sys

import pytest

from loopx_git.hooks.runner import _Args, _parser, _plain_args

PLAIN = [
    ["pre-commit"],
    ["commit-msg", ".git/COMMIT_EDITMSG"],
    ["pre-push", "origin", "ssh://git@example.invalid/repo.git"],
    ["public-safety", "a.py", "docs/b.md", "--strict"],
    ["boundary", "--repo", "sub", "a.py"],
    ["--strict", "pre-commit"],
    ["pre-commit", "--repo=sub dir", "--strict"],
    ["public-safety", "-"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_the_command_lines_hooks_run_with_read_as_argparse_reads_them(argv):
    parsed = _parser().parse_intermixed_args(argv)
    assert _plain_args(argv) == _Args(parsed.name, parsed.args, parsed.repo, parsed.strict)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["pre-commit", "-h"],
        ["no-such-hook"],
        ["pre-commit", "--repo"],
        ["pre-commit", "--fast"],
        ["public-safety", "--", "-odd-name.py", "--strict"],
        ["--", "pre-commit", "--strict"],
    ],
    ids=repr,
)
def test_anything_else_is_left_to_argparse(argv):
    assert _plain_args(argv) is None


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (["no-such-hook"], 2, "invalid choice: 'no-such-hook'"),
        (["pre-commit", "--fast"], 2, "unrecognized arguments: --fast"),
        (["--help"], 0, "Usage: loopx hook run"),
    ],
)
def test_help_and_usage_errors_still_come_from_argparse(tmp_path, argv, code, said):
    proc = subprocess.run(
        [sys.executable, "-m", "loopx_git", "hook", "run", *argv], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == code
    assert said in proc.stdout + proc.stderr


@pytest.mark.parametrize("hook", [["pre-commit"], ["commit-msg", "msg.txt"]], ids=lambda a: a[0])
def test_a_hook_run_imports_no_argparse_and_no_dataclasses(tmp_path, hook):
    """Every commit runs two hook processes: argparse (~10 ms) is imported only to explain a command
    line, and the hook path's records are not dataclasses (``dataclasses`` brings ``inspect``:
    ~15 ms of CPU), nor is anything hashed until something is found."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "msg.txt").write_text("Fix the parser\n")
    (tmp_path / "a.py").write_text("token = read_token()\n")
    subprocess.run(["git", "add", "a.py"], cwd=tmp_path, check=True)
    code = (
        f"import sys; from loopx_git.hooks.runner import main; rc = main({hook!r}); "
        "print(rc, *(m for m in ('argparse', 'dataclasses', 'inspect', 'hashlib') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["0"]

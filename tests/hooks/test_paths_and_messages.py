"""A secret in a path or in a commit message is refused like one in a file: real `git commit` and
`git push` through the hooks `loopx connect` installs, the pre-commit framework's hooks, and
`loopx check`. A finding names the rule and the fingerprint, never the value: a path holding a
secret is shown with it masked."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from loopx_git.hooks import install
from loopx_git.safety.scan import fingerprint
from tests.conftest import Cli, git
from tests.hooks.test_pre_commit_config import local_config  # noqa: F401 - a fixture
from tests.hooks.test_pre_commit_framework import pre_commit
from tests.safety.parts import cat, rand

FAKE_TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # assembled: no token-shaped literal here
AWS_KEY_ID = cat("AK", "IA", rand(random.Random(12), 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"))
MASKED = "[REDACTED:github-token]"


def run_git(path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, env=env)


def head(path: Path) -> str:
    return git(path, "rev-parse", "HEAD").strip()


def stage(path: Path, name: str, content: str = "nothing secret\n") -> None:
    target = path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    git(path, "add", "-f", "--", name)


def all_messages(path: Path) -> str:
    return git(path, "log", "--all", "--format=%B")


# --- paths --------------------------------------------------------------------------------------


def test_a_token_as_a_file_name_refuses_the_commit_and_the_path_is_shown_masked(connected):
    before = head(connected)
    stage(connected, f"keys/{FAKE_TOKEN}.txt")
    result = run_git(connected, "commit", "-m", "add a key file")
    assert result.returncode == 1
    expected = f"keys/{MASKED}.txt:0:0: github-token (block) fp={fingerprint(FAKE_TOKEN)} (in the file name)"
    assert expected in result.stderr
    assert "rename the file" in result.stderr
    assert FAKE_TOKEN not in result.stderr + result.stdout
    assert head(connected) == before


def test_an_aws_key_id_as_a_folder_name_refuses_the_commit(connected):
    before = head(connected)
    stage(connected, f"deploy/{AWS_KEY_ID}/config.yaml", "region: eu-west-1\n")
    result = run_git(connected, "commit", "-m", "deploy config")
    assert result.returncode == 1
    line = "deploy/[REDACTED:aws-access-key-id]/config.yaml:0:0: aws-access-key-id (block) fp="
    assert line in result.stderr and "(in the file name)" in result.stderr
    assert AWS_KEY_ID not in result.stderr and head(connected) == before


def test_a_file_holding_a_secret_in_its_name_and_its_content_is_masked_in_both_findings(connected):
    stage(connected, f"{FAKE_TOKEN}.env", f"TOKEN={FAKE_TOKEN}\n")
    result = run_git(connected, "commit", "-m", "x")
    assert result.returncode == 1
    assert f"{MASKED}.env: 2 findings" in result.stderr
    assert "0:0: github-token (block)" in result.stderr and "1:7: github-token (block)" in result.stderr
    assert FAKE_TOKEN not in result.stderr


def test_the_public_safety_hook_checks_the_names_it_is_given_and_the_boundary_hook_does_not(connected, capsys):
    from loopx_git.hooks.runner import run

    stage(connected, f"docs/{FAKE_TOKEN}.md")
    cli = Cli(connected, capsys)
    safety = cli("hook", "run", "public-safety", str(connected / "docs" / f"{FAKE_TOKEN}.md"))
    assert safety.code == 1 and f"docs/{MASKED}.md:0:0: github-token (block)" in safety.err
    assert FAKE_TOKEN not in safety.err
    assert run("boundary", [], repo=str(connected)) == 0


def test_ordinary_names_are_not_findings(connected):
    for name in (
        "src/token_store.py",
        "docs/api-keys.md",
        "tests/fixtures/password_reset.json",
        "assets/0f3c9a1e7b2d4c6e8a0b1c2d3e4f5a6b.png",  # a content hash
        "migrations/2024_01_15_add_secret_column.sql",
        "config/.env.example",
    ):
        stage(connected, name)
    result = run_git(connected, "commit", "-m", "ordinary files")
    assert result.returncode == 0, result.stderr


def test_a_name_finding_is_allowlisted_by_its_fingerprint(connected):
    stage(connected, ".publicsafe-allow", f"github-token {fingerprint(FAKE_TOKEN)} keys/**  # a revoked token\n")
    stage(connected, f"keys/{FAKE_TOKEN}.txt")
    result = run_git(connected, "commit", "-m", "the revoked token's fixture")
    assert result.returncode == 0, result.stderr


def test_a_token_named_file_committed_without_hooks_refuses_the_push(connected, remote):
    stage(connected, f"keys/{FAKE_TOKEN}.txt")
    assert run_git(connected, "commit", "-q", "--no-verify", "-m", "x").returncode == 0
    result = run_git(connected, "push", "origin", "main")
    assert result.returncode != 0
    assert f"keys/{MASKED}.txt:0:0: github-token (block) fp=" in result.stderr and "in commit " in result.stderr
    assert FAKE_TOKEN not in result.stderr
    assert git(remote, "rev-parse", "main") != git(connected, "rev-parse", "main")


def test_a_rename_to_a_token_name_refuses_the_push_though_the_content_is_unchanged(connected, remote):
    stage(connected, "notes.txt")
    assert run_git(connected, "commit", "-q", "-m", "notes").returncode == 0
    git(connected, "mv", "notes.txt", f"{FAKE_TOKEN}.txt")
    assert run_git(connected, "commit", "-q", "--no-verify", "-m", "rename").returncode == 0
    result = run_git(connected, "push", "origin", "main")
    assert result.returncode != 0 and f"{MASKED}.txt:0:0: github-token (block)" in result.stderr


def test_check_reports_a_secret_in_a_path_at_line_0(git_repo, capsys):
    stage(git_repo, f"deploy/{AWS_KEY_ID}/config.yaml", "region: eu-west-1\n")
    result = Cli(git_repo, capsys)("check", fmt="json")
    assert result.code == 1 and AWS_KEY_ID not in result.out + result.err
    findings = json.loads(result.out)["findings"]
    assert findings == [
        {
            "rule": "aws-access-key-id",
            "severity": "block",
            "path": "deploy/[REDACTED:aws-access-key-id]/config.yaml",
            "line": 0,
            "column": 0,
            "fingerprint": fingerprint(AWS_KEY_ID),
            "note": "in the file name",
        }
    ]


# --- commit messages ----------------------------------------------------------------------------


def test_a_token_in_the_message_refuses_the_commit_before_it_exists(connected):
    before = head(connected)
    stage(connected, "a.txt")
    result = run_git(connected, "commit", "-m", f"use {FAKE_TOKEN} for CI")
    assert result.returncode == 1
    assert f"<commit message>:1:5: github-token (block) fp={fingerprint(FAKE_TOKEN)}" in result.stderr
    assert "loopx commit-msg: refused" in result.stderr and "scanned the commit message" in result.stderr
    assert FAKE_TOKEN not in result.stderr + result.stdout
    assert head(connected) == before and FAKE_TOKEN not in all_messages(connected)
    assert run_git(connected, "commit", "-q", "-m", "use the CI secret store").returncode == 0  # the fix


def test_a_hash_line_given_with_m_is_committed_so_it_is_scanned(connected):
    stage(connected, "a.txt")
    result = run_git(connected, "commit", "-m", "subject", "-m", f"# {FAKE_TOKEN}")
    assert result.returncode == 1 and "<commit message>:3:3: github-token (block)" in result.stderr


def editor(tmp_path: Path, first_lines: str) -> dict:
    """An environment whose editor puts ``first_lines`` above what git wrote into the message file."""
    lines = tmp_path / f"editor-{len(list(tmp_path.glob('editor-*')))}"
    lines.mkdir()
    (lines / "first").write_text(first_lines)
    script = lines / "editor.sh"
    script.write_text(f'#!/bin/sh\ncat \'{lines / "first"}\' "$1" > "$1.new" && mv "$1.new" "$1"\n')
    script.chmod(0o755)
    return {**os.environ, "GIT_EDITOR": str(script)}


def test_comment_lines_and_the_verbose_diff_are_not_the_message(connected, tmp_path):
    # a fixture token allowlisted for its path passes the pre-commit hook; `commit -v` shows it in the
    # diff below the scissors line, and the editor adds it in a comment line: git drops both
    stage(connected, ".publicsafe-allow", f"github-token {fingerprint(FAKE_TOKEN)} fixtures/**  # revoked\n")
    stage(connected, "fixtures/revoked.txt", f"{FAKE_TOKEN}\n")
    env = editor(tmp_path, f"Add the revoked token's fixture\n# was {FAKE_TOKEN}\n")
    result = run_git(connected, "commit", "-v", env=env)
    assert result.returncode == 0, result.stderr
    assert git(connected, "log", "-1", "--format=%B").strip() == "Add the revoked token's fixture"


def test_an_edited_message_is_scanned_outside_its_comments(connected, tmp_path):
    stage(connected, "a.txt")
    result = run_git(connected, "commit", env=editor(tmp_path, f"Subject\n\nkey {FAKE_TOKEN}\n"))
    assert result.returncode == 1 and "<commit message>:3:5: github-token (block)" in result.stderr


@pytest.mark.parametrize("cleanup", ["verbatim", "whitespace", "scissors"])
def test_a_comment_line_git_keeps_is_scanned(connected, tmp_path, cleanup):
    """Under these commit.cleanup modes git commits '#' lines as written: they are the message."""
    git(connected, "config", "commit.cleanup", cleanup)
    stage(connected, "a.txt")
    before = head(connected)
    refused = run_git(connected, "commit", env=editor(tmp_path, f"Subject\n# deploy with {FAKE_TOKEN}\n"))
    assert refused.returncode == 1 and "<commit message>:2:" in refused.stderr, refused.stderr
    assert FAKE_TOKEN not in refused.stderr and head(connected) == before


def test_the_comment_character_is_gits(connected, tmp_path):
    git(connected, "config", "core.commentChar", ";")
    stage(connected, "a.txt")
    passed = run_git(connected, "commit", env=editor(tmp_path, f"Subject\n; {FAKE_TOKEN}\n"))
    assert passed.returncode == 0, passed.stderr
    stage(connected, "b.txt")
    refused = run_git(connected, "commit", env=editor(tmp_path, f"Subject\n# {FAKE_TOKEN}\n"))
    assert refused.returncode == 1 and "<commit message>:2:3: github-token (block)" in refused.stderr


def test_the_commit_msg_hook_runs_beside_an_existing_one(git_repo, tmp_path, capsys):
    hooks = git_repo / ".git" / "hooks"
    log = tmp_path / "log.txt"
    (hooks / "commit-msg").write_text(f'#!/bin/sh\necho "commit-msg-ran $(head -n1 "$1")" >> \'{log}\'\n')
    (hooks / "commit-msg").chmod(0o755)
    cli = Cli(git_repo, capsys)
    assert cli.json("connect")["hooks"]["commit-msg"] == "installed before your existing hook, which still runs"
    stage(git_repo, "a.txt")
    assert run_git(git_repo, "commit", "-q", "-m", "clean").returncode == 0
    assert log.read_text() == "commit-msg-ran clean\n"
    stage(git_repo, "b.txt")
    assert run_git(git_repo, "commit", "-q", "-m", FAKE_TOKEN).returncode == 1
    assert log.read_text() == "commit-msg-ran clean\n"  # refused before the user's hook runs
    assert cli.json("disconnect")["hooks"]["commit-msg"] == "removed; your hook is unchanged"
    assert "loopx" not in (hooks / "commit-msg").read_text()
    assert set(cli.json("connect")["hooks"]) == set(install.HOOK_NAMES)


def test_the_commit_msg_hook_refuses_odd_input(git_repo, capsys):
    cli = Cli(git_repo, capsys)
    missing = cli("hook", "run", "commit-msg")
    assert missing.code == 1 and "commit-msg takes one argument" in missing.err
    gone = cli("hook", "run", "commit-msg", str(git_repo / "no-such-file"))
    assert gone.code == 1 and "cannot be read" in gone.err


# --- the pre-commit framework ---------------------------------------------------------------------


def test_the_framework_commit_msg_hook_refuses_a_real_commit(git_repo, local_config, loopx_env):  # noqa: F811
    loopx_env["PRE_COMMIT_HOME"] = str(git_repo.parent / "pre-commit-home")
    (Path(loopx_env["PATH"]) / "bash").symlink_to(shutil.which("bash") or "/bin/bash")  # its hook's #!
    installed = pre_commit(
        "install", "--config", str(local_config), "--hook-type", "commit-msg", cwd=git_repo, env=loopx_env
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    before = head(git_repo)
    stage(git_repo, "a.txt")
    refused = run_git(git_repo, "commit", "-m", f"token {FAKE_TOKEN}", env=loopx_env)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "loopx commit-message scan" in refused.stdout + refused.stderr
    assert "<commit message>:1:7: github-token (block)" in refused.stdout + refused.stderr
    assert FAKE_TOKEN not in refused.stdout + refused.stderr and head(git_repo) == before
    clean = run_git(git_repo, "commit", "-q", "-m", "clean", env=loopx_env)
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_the_framework_public_safety_hook_refuses_a_token_named_file(git_repo, local_config, loopx_env):  # noqa: F811
    loopx_env["PRE_COMMIT_HOME"] = str(git_repo.parent / "pre-commit-home")
    stage(git_repo, f"keys/{FAKE_TOKEN}.txt")
    result = pre_commit("run", "--config", str(local_config), cwd=git_repo, env=loopx_env)
    assert result.returncode == 1
    assert f"keys/{MASKED}.txt:0:0: github-token (block)" in result.stdout and FAKE_TOKEN not in result.stdout

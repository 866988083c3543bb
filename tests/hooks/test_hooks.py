"""The hooks end to end: `loopx connect` installs them into real repositories, and real `git
commit` / `git push` (to a bare remote on disk) run them."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import loopx_git
from loopx_git.hooks import install
from tests.conftest import Cli, git

FAKE_TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # assembled: no token-shaped literal here


def run_git(path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, input=stdin)


def commit(path: Path, name: str, content: str, *extra: str) -> subprocess.CompletedProcess:
    target = path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    run_git(path, "add", "-f", name)
    return run_git(path, "commit", "-m", f"add {name}", *extra)


def test_a_staged_secret_refuses_the_commit_with_the_finding(connected):
    head = git(connected, "rev-parse", "HEAD")
    result = commit(connected, "src/settings.py", f"TOKEN = '{FAKE_TOKEN}'\n")
    assert result.returncode == 1
    assert "src/settings.py:1:10: github-token (block) fp=" in result.stderr
    assert FAKE_TOKEN not in result.stderr + result.stdout
    assert git(connected, "rev-parse", "HEAD") == head


def test_a_staged_local_state_file_refuses_the_commit(connected):
    result = commit(connected, ".loopx/session.json", "{}\n")
    assert result.returncode == 1
    assert ".loopx/session.json:0:0: local-state (block)" in result.stderr and "'.loopx/'" in result.stderr


def test_the_index_is_scanned_not_the_work_tree(connected):
    (connected / "a.txt").write_text(f"key {FAKE_TOKEN}\n")
    run_git(connected, "add", "a.txt")
    (connected / "a.txt").write_text("clean now, but not staged\n")
    assert run_git(connected, "commit", "-m", "x").returncode == 1
    (connected / "b.txt").write_text("clean\n")
    run_git(connected, "add", "b.txt")
    run_git(connected, "reset", "-q", "--", "a.txt")
    (connected / "b.txt").write_text(f"dirty in the work tree only {FAKE_TOKEN}\n")
    assert run_git(connected, "commit", "-m", "y").returncode == 0


@pytest.mark.parametrize("how", [["-a"], ["--", "tracked.py"]], ids=["commit -a", "commit <path>"])
def test_commit_a_and_partial_commits_are_checked_through_gits_temporary_index(connected, how):
    assert commit(connected, "tracked.py", "x = 1\n").returncode == 0
    (connected / "tracked.py").write_text(f"x = '{FAKE_TOKEN}'\n")  # changed, never `git add`ed
    result = run_git(connected, "commit", "-m", "sneaky", *how)
    assert result.returncode == 1 and "tracked.py:1:6: github-token (block)" in result.stderr


def test_already_tracked_local_state_refuses_later_commits(connected):
    assert commit(connected, ".local/notes.md", "private\n", "--no-verify").returncode == 0
    result = commit(connected, "README.md", "project, edited\n")
    assert result.returncode == 1 and ".local/notes.md:0:0: local-state (block)" in result.stderr
    assert "already tracked" in result.stderr


def test_warnings_pass_unless_strict(connected):
    (connected / "ops.md").write_text("ask ops@acme-corp.io\n")
    run_git(connected, "add", "ops.md")
    os.chdir(connected)
    from loopx_git.hooks.runner import main

    assert main(["pre-commit"]) == 0
    assert main(["pre-commit", "--strict"]) == 1


def test_secret_committed_without_hooks_then_deleted_still_refuses_the_push(connected, remote):
    assert commit(connected, "deploy.sh", f"export GH={FAKE_TOKEN}\n", "--no-verify").returncode == 0
    run_git(connected, "rm", "-q", "deploy.sh")
    assert run_git(connected, "commit", "-q", "-m", "remove it").returncode == 0
    result = run_git(connected, "push", "origin", "main")
    assert result.returncode != 0
    assert "deploy.sh:1:11: github-token (block) fp=" in result.stderr and "in commit " in result.stderr
    assert FAKE_TOKEN not in result.stderr
    assert git(remote, "rev-parse", "main") != git(connected, "rev-parse", "main")


def test_a_token_in_a_commit_message_refuses_the_push(connected, remote):
    (connected / "a.txt").write_text("a\n")
    run_git(connected, "add", "a.txt")
    # past the commit-msg hook, as a commit made before `loopx connect` or with --no-verify is
    assert run_git(connected, "commit", "-q", "--no-verify", "-m", f"use {FAKE_TOKEN} for CI").returncode == 0
    result = run_git(connected, "push", "origin", "main")
    assert result.returncode != 0 and "<commit message>:1:5: github-token (block)" in result.stderr


def test_framework_prepush_without_refs_checks_everything_the_remote_lacks(connected, remote, monkeypatch):
    from loopx_git.hooks.runner import run

    for var in ("PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "PRE_COMMIT_REMOTE_NAME"):
        monkeypatch.delenv(var, raising=False)
    git(connected, "fetch", "-q", "origin")
    assert run("prepush", [], repo=str(connected)) == 0
    assert commit(connected, "x.env", f"TOKEN={FAKE_TOKEN}\n", "--no-verify").returncode == 0
    assert run("prepush", [], repo=str(connected)) == 1


def test_a_clean_push_passes(connected, remote):
    assert commit(connected, "docs/guide.md", "# Guide\n\nRun `make`.\n").returncode == 0
    loopx_git.open(connected).todo_add("g1", "write the guide")
    result = run_git(connected, "push", "origin", "main", "loopx/state")
    assert result.returncode == 0, result.stderr
    assert git(remote, "rev-parse", "loopx/state") == git(connected, "rev-parse", "loopx/state")


def test_a_pushed_annotated_tag_is_walked_like_a_branch(connected, remote):
    assert commit(connected, "notes.txt", f"{FAKE_TOKEN}\n", "--no-verify").returncode == 0
    git(connected, "tag", "-a", "v1", "-m", "release")
    result = run_git(connected, "push", "origin", "v1")
    assert result.returncode != 0 and "notes.txt:1:1: github-token (block)" in result.stderr


def test_the_hook_runs_through_the_full_cli_too(connected, capsys):
    (connected / "k.txt").write_text(f"{FAKE_TOKEN}\n")
    git(connected, "add", "k.txt")
    result = Cli(connected, capsys)("hook", "run", "pre-commit")
    assert result.code == 1 and "k.txt:1:1: github-token (block)" in result.err
    assert Cli(connected, capsys)("hook", "run", "nope").code == 2


def test_a_rewritten_state_branch_is_refused(connected, remote):
    state = loopx_git.open(connected)
    state.todo_add("g1", "first")
    assert run_git(connected, "push", "-q", "origin", "loopx/state").returncode == 0
    tip = git(connected, "rev-parse", "loopx/state").strip()
    git(connected, "update-ref", "refs/heads/loopx/state", tip + "~1")
    loopx_git.open(connected).todo_add("g1", "rewritten history")
    result = run_git(connected, "push", "--force", "origin", "loopx/state")
    assert result.returncode != 0
    assert "not a fast-forward" in result.stderr and "append-only" in result.stderr
    assert git(remote, "rev-parse", "loopx/state").strip() == tip


def test_deleting_the_remote_state_branch_is_refused(connected, remote):
    result = run_git(connected, "push", "origin", ":loopx/state")
    assert result.returncode != 0 and "deleting the state branch" in result.stderr


def test_a_state_branch_that_fails_verify_is_refused(connected, remote):
    # an event edited in place by plumbing: the push walks it and verify names it
    state_tip = git(connected, "rev-parse", "loopx/state").strip()
    work = connected.parent / "state-edit"
    git(connected, "worktree", "add", "-q", str(work), "loopx/state")
    event = next(p for p in work.rglob("*.json") if "/events/" in str(p))
    data = json.loads(event.read_text())
    data["summary"] = "edited after the fact"
    event.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    git(work, "commit", "-q", "-am", "edit an event", "--no-verify")
    result = run_git(connected, "push", "origin", "loopx/state")
    assert result.returncode != 0 and "verify: record-changed" in result.stderr
    assert git(remote, "rev-parse", "loopx/state").strip() == state_tip


# --- chaining with the user's own hooks ----------------------------------------------------


def test_existing_hooks_keep_running_after_connect_and_after_disconnect(git_repo, tmp_path, capsys):
    hooks = git_repo / ".git" / "hooks"
    log = tmp_path / "log.txt"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho pre-commit-ran >> '{log}'\n")
    (hooks / "pre-push").write_text(f"#!/bin/bash\ncat >> '{log}'\necho pre-push-ran >> '{log}'\n")
    for name in ("pre-commit", "pre-push"):
        (hooks / name).chmod(0o755)
    cli = Cli(git_repo, capsys)
    assert cli("connect").code == 0
    assert cli("connect").code == 0  # twice: the sections are updated, not duplicated
    for name in ("pre-commit", "pre-push"):
        text = (hooks / name).read_text()
        assert text.count(f"# >>> loopx {name} hook v{install.SECTION_VERSION} ") == 1 and text.startswith("#!")

    bare = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(git_repo, "remote", "add", "origin", str(bare))
    assert commit(git_repo, "a.txt", "a\n").returncode == 0
    assert run_git(git_repo, "push", "-q", "origin", "main").returncode == 0
    lines = log.read_text().splitlines()
    head = git(git_repo, "rev-parse", "HEAD").strip()
    assert lines[0] == "pre-commit-ran"
    assert lines[1] == f"refs/heads/main {head} refs/heads/main {'0' * 40}"  # the user's hook got git's stdin
    assert lines[2] == "pre-push-ran"

    assert cli("disconnect").code == 0
    assert "loopx" not in (hooks / "pre-commit").read_text()
    assert (hooks / "pre-commit").read_text() == f"#!/bin/sh\necho pre-commit-ran >> '{log}'\n"
    assert commit(git_repo, "b.txt", f"{FAKE_TOKEN}\n").returncode == 0  # loopx is gone, the user's hook is not
    assert log.read_text().splitlines()[-1] == "pre-commit-ran"


def test_a_hook_in_another_language_is_moved_aside_and_still_runs(git_repo, tmp_path, capsys):
    hooks = git_repo / ".git" / "hooks"
    marker = tmp_path / "python-hook-ran"
    (hooks / "pre-commit").write_text(f"#!/usr/bin/env python3\nopen({str(marker)!r}, 'w').write('yes')\n")
    (hooks / "pre-commit").chmod(0o755)
    cli = Cli(git_repo, capsys)
    assert cli("connect").code == 0
    assert (hooks / "pre-commit.pre-loopx").exists()
    assert commit(git_repo, "a.txt", "a\n").returncode == 0 and marker.read_text() == "yes"
    assert commit(git_repo, "b.txt", f"{FAKE_TOKEN}\n").returncode == 1
    assert cli("disconnect").code == 0
    assert not (hooks / "pre-commit.pre-loopx").exists() and "python3" in (hooks / "pre-commit").read_text()


def test_a_switched_off_hook_stays_off(git_repo, tmp_path, capsys):
    hooks = git_repo / ".git" / "hooks"
    marker = tmp_path / "ran"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch '{marker}'\n")  # not executable: git skips it
    assert Cli(git_repo, capsys)("connect").code == 0
    assert commit(git_repo, "a.txt", "a\n").returncode == 0 and not marker.exists()
    assert Cli(git_repo, capsys)("disconnect").code == 0
    assert not os.access(hooks / "pre-commit", os.X_OK) and "loopx" not in (hooks / "pre-commit").read_text()


def test_a_damaged_section_or_a_taken_aside_name_is_refused_not_guessed(git_repo, capsys):
    hooks = git_repo / ".git" / "hooks"
    cli = Cli(git_repo, capsys)
    assert cli("connect").code == 0
    shim = hooks / "pre-commit"
    shim.write_text(shim.read_text().replace("# <<< loopx pre-commit hook <<<", ""))
    result = cli("connect")
    assert result.code == 1 and result.err.startswith("error[hook-damaged]")
    shim.write_text("#!/usr/bin/env python3\nprint('mine')\n")
    (hooks / "pre-commit.pre-loopx").write_text("#!/bin/sh\necho older\n")
    result = cli("connect")
    assert result.code == 1 and result.err.startswith("error[hook-exists]")
    assert (hooks / "pre-commit.pre-loopx").read_text() == "#!/bin/sh\necho older\n"


def test_core_hooks_path_is_honoured(git_repo, capsys, loopx_env):
    git(git_repo, "config", "core.hooksPath", ".githooks")
    assert Cli(git_repo, capsys)("connect").code == 0
    shim = (git_repo / ".githooks" / "pre-commit").read_text()
    assert not (git_repo / ".git" / "hooks" / "pre-commit").exists()
    assert "loopx_script='loopx'" in shim  # a committed hooks folder gets no absolute path
    (git_repo / "k.txt").write_text(f"{FAKE_TOKEN}\n")
    git(git_repo, "add", "k.txt")
    git_commit = ["git", "-C", str(git_repo), "commit", "-m", "x"]
    refused = subprocess.run(git_commit, capture_output=True, text=True, env=loopx_env)  # a PATH with loopx
    assert refused.returncode == 1 and "k.txt:1:1: github-token (block)" in refused.stderr
    git(git_repo, "rm", "-q", "--cached", "k.txt")
    git(git_repo, "add", ".githooks")
    shared = subprocess.run(git_commit, capture_output=True, text=True, env=loopx_env)
    assert shared.returncode == 0, shared.stderr  # the shims themselves are public-safe
    doctor = json.loads(Cli(git_repo, capsys)("doctor", "--offline", fmt="json").out)
    assert all(h["current"] for h in doctor["hooks"])


def test_connect_under_the_pre_commit_framework_prints_the_snippet(git_repo, capsys):
    (git_repo / ".pre-commit-config.yaml").write_text("repos: []\n")
    out = Cli(git_repo, capsys).json("connect")
    assert out["pre_commit_framework"] is True and "loopx hook run public-safety" in out["framework_snippet"]
    assert out["hooks"] == {} and not (git_repo / ".git" / "hooks" / "pre-commit").exists()


def test_connect_keeps_gitignore_lines_and_is_idempotent(git_repo, capsys):
    (git_repo / ".gitignore").write_text("build/\n*.pyc\n")
    cli = Cli(git_repo, capsys)
    assert cli.json("connect")["ignore_block"] == "added"
    text = (git_repo / ".gitignore").read_text()
    assert text.startswith("build/\n*.pyc\n") and ".loopx/" in text
    assert cli.json("connect")["ignore_block"] == "up to date" and (git_repo / ".gitignore").read_text() == text


# --- loopx check and loopx doctor --------------------------------------------------------------


def test_check_reports_tracked_and_unignored_local_state_and_secrets(git_repo, capsys):
    cli = Cli(git_repo, capsys)
    (git_repo / ".codex" / "goals").mkdir(parents=True)
    (git_repo / ".codex" / "goals" / "g.md").write_text("goal\n")
    (git_repo / "raw-run.log").write_text("log\n")
    git(git_repo, "add", ".codex/goals/g.md")
    (git_repo / "conf.yaml").write_text(f"token: {FAKE_TOKEN}\n")
    git(git_repo, "add", "conf.yaml")
    result = cli("check", fmt="json")
    assert result.code == 1
    found = {(f["path"], f["rule"]) for f in json.loads(result.out)["findings"]}
    assert found == {
        (".codex/goals/g.md", "local-state"),
        ("raw-run.log", "local-state"),
        ("conf.yaml", "github-token"),
    }
    text = cli("check")
    assert "raw-run.log:0:0: local-state (block)" in text.out and "not ignored" in text.out
    git(git_repo, "rm", "-q", "--cached", ".codex/goals/g.md", "conf.yaml")
    assert cli("connect").code == 0
    assert cli("check").code == 0  # the ignore block now covers both local-state paths


def test_doctor_reports_hooks_and_the_ignore_block(git_repo, capsys):
    cli = Cli(git_repo, capsys)
    assert cli("connect", "--no-hooks", "--no-ignore").code == 0
    before = cli("doctor", fmt="json")
    assert before.code == 1
    report = json.loads(before.out)
    assert [h["installed"] for h in report["hooks"]] == [False] * len(install.HOOK_NAMES)
    assert report["ignore_block_present"] is False
    assert cli("connect").code == 0
    after = cli.json("doctor")
    assert all(h["installed"] and h["current"] for h in after["hooks"]) and after["ignore_block_present"]
    assert after["problems"] == [] and after["remote_copies"] == []
    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(hook.read_text().replace("hook run pre-commit", "hook run pre-commit --strict"))
    stale = json.loads(cli("doctor", fmt="json").out)
    assert stale["hooks"][0]["current"] is False and "pre-commit hook outdated" in stale["problems"][0]


def test_doctor_says_whether_the_state_branch_is_pushed(connected, remote, capsys):
    cli = Cli(connected, capsys)
    git(connected, "fetch", "-q", "origin")
    assert [c["relation"] for c in cli.json("doctor")["remote_copies"]] == ["pushed"]
    loopx_git.open(connected).todo_add("g1", "more")
    assert [c["relation"] for c in cli.json("doctor")["remote_copies"]] == ["ahead"]

"""A team's own rules guard real commits: a rule in pyproject.toml or .loopx-safety.toml, or in a
gitleaks configuration the team already keeps, refuses a `git commit` through the hook `loopx
connect` installs and through the pre-commit framework's; `loopx safety rules` lists them. Bad
config is refused (exit 1) with the rule and the field named, and nothing is written."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from loopx_git.safety.scan import fingerprint
from tests.conftest import GOAL, Cli, git, state_tip
from tests.hooks.test_pre_commit_config import local_config  # noqa: F401 - a fixture
from tests.hooks.test_pre_commit_framework import pre_commit
from tests.safety.parts import cat, rand

RNG = random.Random(31)
ACME = cat("acme", "_live_", rand(RNG, 24))
ACME_HEX = cat("ak", rand(RNG, 30, "0123456789abcdef"))

TEAM_RULE = """\
[tool.loopx.safety]
[[tool.loopx.safety.rules]]
id = "acme-live-key"
description = "Acme live API key"
regex = 'acme_live_[A-Za-z0-9]{24}'
keywords = ["acme_live_"]
"""

GITLEAKS = """\
[[rules]]
id = "acme-internal-key"
description = "Acme internal service key"
regex = '''(?i)acme[_-]?key\\s*[:=]\\s*['"]?(ak[0-9a-f]{30})'''
secretGroup = 1
keywords = ["acme"]

[[rules]]
id = "pkcs12-file"
path = '''(?i)\\.p12$'''
"""


def run_git(path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, env=env)


def write(path: Path, name: str, text: str) -> None:
    target = path / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    git(path, "add", "--", name)


def head(path: Path) -> str:
    return git(path, "rev-parse", "HEAD").strip()


def test_a_pyproject_rule_refuses_a_commit_through_the_hook(connected):
    write(connected, "pyproject.toml", TEAM_RULE)
    assert run_git(connected, "commit", "-q", "-m", "our own rule").returncode == 0
    before = head(connected)
    write(connected, "app/settings.py", f'ACME = "{ACME}"\n')
    result = run_git(connected, "commit", "-m", "settings")
    assert result.returncode == 1
    assert f"app/settings.py:1:9: acme-live-key (block) fp={fingerprint(ACME)}" in result.stderr
    assert ACME not in result.stderr + result.stdout and head(connected) == before


def test_a_rule_staged_with_the_commit_applies_to_it(connected):
    # the hooks read the policy as the commit will hold it: a rule added in the same commit counts
    write(connected, ".loopx-safety.toml", TEAM_RULE.replace("tool.loopx.safety.", "").split("\n", 1)[1])
    write(connected, "app/settings.py", f'ACME = "{ACME}"\n')
    result = run_git(connected, "commit", "-m", "rule and settings")
    assert result.returncode == 1 and "app/settings.py:1:9: acme-live-key (block)" in result.stderr


def test_a_gitleaks_rule_refuses_a_commit_and_a_message(connected):
    write(connected, "security/gitleaks.toml", GITLEAKS)
    write(connected, "pyproject.toml", '[tool.loopx.safety]\ngitleaks_config = "security/gitleaks.toml"\n')
    assert run_git(connected, "commit", "-q", "-m", "our gitleaks rules").returncode == 0
    before = head(connected)
    write(connected, "deploy.env", f"ACME_KEY={ACME_HEX}\n")
    result = run_git(connected, "commit", "-m", "deploy")
    assert result.returncode == 1
    assert f"deploy.env:1:10: acme-internal-key (block) fp={fingerprint(ACME_HEX)}" in result.stderr
    git(connected, "rm", "-q", "--cached", "deploy.env")
    write(connected, "notes.md", "deploy notes\n")
    message = run_git(connected, "commit", "-m", f"rotate acme-key: {ACME_HEX}")
    assert message.returncode == 1 and "<commit message>:1:18: acme-internal-key (block)" in message.stderr
    assert ACME_HEX not in result.stderr + message.stderr and head(connected) == before


def test_safety_rules_lists_the_teams_rules_and_says_what_was_left_out(connected, capsys):
    write(connected, "pyproject.toml", TEAM_RULE.replace("[[tool", 'gitleaks_config = ".gitleaks.toml"\n[[tool', 1))
    write(connected, ".gitleaks.toml", GITLEAKS)
    cli = Cli(connected, capsys)
    listed = cli("safety", "rules", fmt="json")
    assert listed.code == 0, listed.err
    custom = [row for row in json.loads(listed.out) if row["family"] == "custom"]
    assert [(row["rule"], row["reference"]) for row in custom] == [
        ("acme-live-key", "pyproject.toml"),
        ("acme-internal-key", ".gitleaks.toml"),
    ]
    assert "note: .gitleaks.toml rule 'pkcs12-file' skipped: it matches file names only" in listed.err
    text = cli("safety", "rules")
    assert "acme-internal-key" in text.out and "custom" in text.out and "github-token" in text.out
    check = cli("check")
    assert check.code == 0 and "rule 'pkcs12-file' skipped" in check.err  # loopx check says it too


def test_the_framework_hook_applies_a_team_rule(git_repo, local_config, loopx_env):  # noqa: F811
    loopx_env["PRE_COMMIT_HOME"] = str(git_repo.parent / "pre-commit-home")
    write(git_repo, "pyproject.toml", TEAM_RULE)
    write(git_repo, "conf.yaml", f"key: {ACME}\n")
    result = pre_commit("run", "--config", str(local_config), cwd=git_repo, env=loopx_env)
    assert result.returncode == 1
    assert "conf.yaml:1:6: acme-live-key (block)" in result.stdout and ACME not in result.stdout


def test_a_review_reads_the_team_rules_committed_at_its_base(git_repo):
    from loopx_git.store.git import GitRepo
    from loopx_git.views.policy import committed_policy

    write(git_repo, "security/gitleaks.toml", GITLEAKS)
    write(git_repo, ".loopx-safety.toml", 'gitleaks_config = "security/gitleaks.toml"\n')
    git(git_repo, "commit", "-q", "-m", "our gitleaks rules")
    (git_repo / ".loopx-safety.toml").unlink()  # the work tree does not count: the commit does
    policy = committed_policy(GitRepo.discover(git_repo), head(git_repo))
    assert [(r.id, r.reference) for r in policy.extra_rules] == [("acme-internal-key", "security/gitleaks.toml")]
    before = git(git_repo, "rev-parse", "HEAD~1").strip()
    assert committed_policy(GitRepo.discover(git_repo), before).extra_rules == ()


# --- bad config: exit 1, the field named, nothing written -----------------------------------------

BAD = {
    "bad regex": (
        TEAM_RULE.replace("acme_live_[A-Za-z0-9]{24}", "acme_live_([A-Za-z0-9]{24}"),
        "[[tool.loopx.safety.rules]] id 'acme-live-key' regex: a '(' is never closed",
    ),
    "duplicate id": (
        TEAM_RULE + TEAM_RULE.split("\n", 1)[1],
        "[[tool.loopx.safety.rules]] #2 (id 'acme-live-key') id: 'acme-live-key' is already a rule id",
    ),
    "built-in id": (
        TEAM_RULE.replace('id = "acme-live-key"', 'id = "github-token"'),
        "id: 'github-token' is already a rule id",
    ),
    "bad severity": (
        TEAM_RULE + 'severity = "fatal"\n',
        "[[tool.loopx.safety.rules]] id 'acme-live-key' severity: 'fatal' is not 'block' or 'warn'",
    ),
    "gitleaks regex": (
        '[tool.loopx.safety]\ngitleaks_config = ".gitleaks.toml"\n',
        ".gitleaks.toml rule 'letters' regex: \\p (a Unicode character class) has no equivalent",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_team_config_is_refused_with_the_field_named_and_nothing_written(connected, capsys, case):
    pyproject, message = BAD[case]
    (connected / "pyproject.toml").write_text(pyproject)
    (connected / ".gitleaks.toml").write_text("[[rules]]\nid = 'letters'\nregex = '''\\pL{20}'''\n")
    cli = Cli(connected, capsys)
    tip = state_tip(connected)
    for args in (["todo", "add", "-g", GOAL, "--text", "write the parser"], ["check"], ["safety", "rules"]):
        result = cli(*args)
        assert result.code == 1, (args, result.err)
        assert result.err.startswith("error[invalid-config]: ") and message in result.err, result.err
        assert "Traceback" not in result.err
    assert state_tip(connected) == tip  # the write was refused before anything was written
    before = head(connected)
    write(connected, "notes.md", "notes\n")
    commit = run_git(connected, "commit", "-m", "notes")
    assert commit.returncode == 1 and message in commit.stderr and head(connected) == before

"""`loopx safety rules`: every rule, built-in and the team's, as a table or JSON of its schema;
`loopx check --rules` keeps its own listing."""

from __future__ import annotations

import json
import subprocess
import sys

from loopx_git.safety.records import STRUCTURAL_RULES
from loopx_git.safety.rules import FAMILIES, RULES
from tests.cli.test_schemas import conforms_each
from tests.conftest import Cli

TEAM = """\
[[rules]]
id = "acme-live-key"
description = "Acme live API key"
regex = 'acme_live_[A-Za-z0-9]{24}'
keywords = ["acme_live_"]
"""


def test_every_rule_is_listed_in_json_of_its_schema(cli):
    rows = cli.json("safety", "rules")
    conforms_each("loopx_safety_rule_v0", rows)
    assert [r["rule"] for r in rows] == [*(r.id for r in RULES), "local-state", *STRUCTURAL_RULES]
    families = {r["rule"]: r["family"] for r in rows}
    assert all(families[rule.id] == family for family, rules in FAMILIES.items() for rule in rules)
    assert all(r["reference"] and r["description"] for r in rows)


def test_the_teams_rules_are_listed_with_their_file(git_repo, capsys):
    (git_repo / ".loopx-safety.toml").write_text(TEAM)
    cli = Cli(git_repo, capsys)
    rows = cli.json("safety", "rules")
    conforms_each("loopx_safety_rule_v0", rows)
    (team,) = [r for r in rows if r["family"] == "custom"]
    assert (team["rule"], team["reference"], team["description"]) == (
        "acme-live-key",
        ".loopx-safety.toml",
        "Acme live API key",
    )
    text = cli("safety", "rules")
    assert text.code == 0
    header, *lines = text.out.splitlines()
    assert header.split() == ["rule", "severity", "family", "description", "reference"]
    assert any(line.split()[:3] == ["acme-live-key", "block", "custom"] for line in lines)
    assert cli("check", "--rules").code == 0  # the older listing stays as it was
    assert "acme-live-key" not in cli("check", "--rules").out


def test_outside_a_repository_the_built_in_rules_are_listed(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "loopx_git", "--format", "json", "safety", "rules"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == len(RULES) + 1 + len(STRUCTURAL_RULES)


def test_safety_without_a_command_shows_its_help(cli):
    result = cli("safety")
    assert "rules" in result.out + result.err

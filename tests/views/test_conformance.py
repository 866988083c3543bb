"""`loopx ledger conformance`: the seed's fixtures pass, each negative case yields exactly its failure
code, and a fire recorded by `loopx fire` conforms."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from loopx_git.views.conformance import FAILURE_CODES, check
from tests.conftest import GOAL, Cli

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "loop-ledger" / "seed-conformance.json"
NEGATIVE = sorted((ROOT / "tests" / "fixtures" / "ledger").glob("*.json"))


def test_the_seed_and_its_positive_fixtures_pass():
    report = check(json.loads(SEED.read_text()))
    assert report["ok"] and report["cases"] == {
        "contract": [],
        "headless_scheduled_fire": [],
        "happy_path": [],
        "ask_user_escape": [],
    }


def test_there_is_one_negative_fixture_per_seed_case():
    seed = json.loads(SEED.read_text())
    expected = {(c["name"], c["failure_code"]) for c in seed["negative_test_cases"]}
    shipped = {(f.stem, json.loads(f.read_text())["expected_failure_code"]) for f in NEGATIVE}
    assert shipped == expected and {code for _, code in expected} == set(FAILURE_CODES)


@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.stem)
def test_each_negative_case_yields_exactly_its_failure_code(path, cli):
    document = json.loads(path.read_text())
    assert check(document)["failure_codes"] == [document["expected_failure_code"]]
    result = cli("ledger", "conformance", str(path), fmt="json")
    assert result.code == 1 and json.loads(result.out)["failure_codes"] == [document["expected_failure_code"]]


def test_a_seed_with_a_weakened_contract_fails(tmp_path):
    seed = json.loads(SEED.read_text())
    seed["contract"]["one_action_per_iteration"] = False
    seed["headless_scheduled_fire"]["dangerous_actions_always_denied"] = False
    assert check(seed)["failure_codes"] == ["multiple_actions_in_one_iteration", "dangerous_action_allowed"]


def test_a_recorded_fire_conforms(repo, git_repo, tmp_path, capsys):
    repo.ledger_add(GOAL, "claim", "act", entry_id="e1")
    step = tmp_path / "step.py"
    step.write_text(
        f"#!{sys.executable}\nimport json, sys\njson.load(sys.stdin)\n"
        "print(json.dumps({'status': 'done', 'verdict': 'MATCH', 'next': 'resume', "
        "'evidence': [{'kind': 'test_path', 'ref': 'tests/test_step.py'}]}))\n"
    )
    step.chmod(0o755)
    cli = Cli(git_repo, capsys)
    fired = cli(
        "fire",
        "-g",
        GOAL,
        "--max-iterations",
        "2",
        "--timeout",
        "30",
        "--approver-ceiling",
        "read_only",
        "--",
        str(step),
        fmt="json",
    )
    record = tmp_path / "fire.json"
    record.write_text(fired.out)
    result = cli("ledger", "conformance", str(record))
    assert result.code == 0 and "conformant" in result.out


def test_unreadable_input_is_a_clear_error(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    result = cli("ledger", "conformance", str(bad))
    assert result.code == 1 and "not a JSON object" in result.err
    assert cli("ledger", "conformance", str(tmp_path / "missing.json")).code == 1


def test_the_unverifiable_fixture_is_inherited_confidence_only():
    """Item 14: the previous verdict was UNVERIFIABLE, the entry says MATCH with no new evidence — the
    more specific code wins, and evidence_missing is never reported beside it."""
    fixture = json.loads(
        (ROOT / "tests" / "fixtures" / "ledger" / "unverifiable_previous_verdict_treated_as_match.json").read_text()
    )
    case = fixture["case"]
    assert case["previous_entry"]["verdict"] == "UNVERIFIABLE" and case["entry"]["verdict"] == "MATCH"
    assert case["entry"]["status"] == "done" and case["entry"]["evidence"] == case["previous_entry"]["evidence"]
    assert check(fixture)["failure_codes"] == ["unverifiable_inherited_confidence"]
    bare = {"case": {**case, "entry": {**case["entry"], "evidence": []}}}  # done, and no evidence at all
    assert check(bare)["failure_codes"] == ["unverifiable_inherited_confidence"]
    fresh = {"case": {**case, "entry": {**case["entry"], "evidence": ["tests/test_assets.py::test_new"]}}}
    assert check(fresh)["failure_codes"] == []
    plain = {"case": {"entry": {**case["entry"], "evidence": []}}}  # no previous verdict: the general rule
    assert check(plain)["failure_codes"] == ["evidence_missing"]

"""typed_progress_observation_v0 on every write-back (issue 14, item 1): `refresh-state --progress-*`
is validated at the boundary (each refusal exits 1, names the field and the rule, leaves the state ref
where it was), fingerprinted exactly as upstream does, and stored on the run record."""

from __future__ import annotations

import hashlib
import json
from typing import get_args

import pytest

from loopx_git.cli import choices
from loopx_git.model.progress import ProgressObservation, ResultClass, progress_fingerprint
from tests.cli.test_schemas import conforms_each, written
from tests.conftest import GOAL, state_tip

BASE = ["refresh-state", "-g", GOAL, "-a", "alice", "--classification", "probe"]


def _upstream(**fields) -> str:
    """The fingerprint as seed 000 defines it, computed here independently of loopx."""
    keys = ("work_item_id", "surface_id", "hypothesis_id", "probe_kind", "result_class", "blocker_id")
    keys += ("coverage_scope_id", "evidence_ids", "coverage_complete")
    data = {k: fields.get(k) for k in keys}
    data["evidence_ids"] = sorted(fields.get("evidence_ids", []))
    data["coverage_complete"] = fields.get("coverage_complete", False)
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def test_the_fingerprint_is_upstreams_and_ignores_evidence_order():
    a = ProgressObservation(result_class="unchanged", surface_id="auth", evidence_ids=["e2", "e1"])
    b = ProgressObservation(result_class="unchanged", surface_id="auth", evidence_ids=["e1", "e2"])
    assert (
        a.fingerprint
        == b.fingerprint
        == _upstream(result_class="unchanged", surface_id="auth", evidence_ids=["e1", "e2"])
    )
    assert ProgressObservation(result_class="advanced", surface_id="auth").fingerprint != a.fingerprint
    assert progress_fingerprint(a) == a.fingerprint


def test_a_given_fingerprint_that_does_not_match_is_refused():
    with pytest.raises(ValueError, match="fingerprint"):
        ProgressObservation(result_class="unchanged", fingerprint="0" * 16)


def test_the_cli_choices_are_the_models():
    assert list(get_args(choices.ProgressResultClass)) == [c.value for c in ResultClass]


def test_refresh_state_stores_typed_progress_on_the_run_and_its_event(cli):
    argv = [*BASE, "--run-id", "r1", "--progress-result-class", "unchanged", "--progress-work-item-id", "todo-a"]
    argv += ["--progress-surface-id", "auth", "--progress-probe-kind", "unit_test"]
    argv += ["--progress-evidence-id", "ci-2", "--progress-evidence-id", "ci-1"]
    result = cli.json(*argv)
    written(result, "loopx_run_record_v0")
    progress = result["record"]["progress"]
    expected = _upstream(
        result_class="unchanged",
        work_item_id="todo-a",
        surface_id="auth",
        probe_kind="unit_test",
        evidence_ids=["ci-1", "ci-2"],
    )
    assert progress["schema_version"] == "typed_progress_observation_v0" and progress["fingerprint"] == expected
    assert progress["evidence_ids"] == ["ci-2", "ci-1"]  # as given; the fingerprint sorts them
    history = cli.json("history", "-g", GOAL, "-a", "alice")
    conforms_each("loopx_history_entry_v0", history)
    assert history[0]["progress"]["fingerprint"] == expected
    [event] = cli.json("events", "-g", GOAL, "--run-id", "r1")
    assert event["details"]["progress_fingerprint"] == expected
    assert event["details"]["progress_result_class"] == "unchanged"
    assert cli.json("verify")["ok"] is True
    text = cli(*BASE, "--progress-result-class", "advanced", "--progress-surface-id", "parser").out
    assert "typed progress: advanced (fingerprint " in text


def test_terminal_classes_with_their_coverage_are_accepted(cli):
    exhausted = [*BASE, "--progress-result-class", "exploration_exhausted", "--progress-coverage-scope-id", "scope-a"]
    assert cli.json(*exhausted, "--progress-coverage-complete")["record"]["progress"]["coverage_complete"] is True
    followup = [*BASE, "--progress-result-class", "no_followup", "--progress-coverage-scope-id", "scope-b"]
    assert cli.json(*followup)["record"]["progress"]["result_class"] == "no_followup"
    blocked = [*BASE, "--progress-result-class", "blocked", "--progress-blocker-id", "ci-down"]
    assert cli.json(*blocked, "--progress-evidence-id", "ci-log-1")["record"]["progress"]["blocker_id"] == "ci-down"


@pytest.mark.parametrize(
    ("extra", "field", "rule"),
    [
        (["--progress-surface-id", "auth"], "progress_surface_id", "names its result class"),
        (["--progress-coverage-complete"], "progress_coverage_complete", "names its result class"),
        (["--progress-result-class", "exploration_exhausted"], "progress_coverage_scope_id", "name the coverage scope"),
        (
            ["--progress-result-class", "exploration_exhausted", "--progress-coverage-scope-id", "s"],
            "progress_coverage_complete",
            "asserts complete coverage",
        ),
        (["--progress-result-class", "no_followup"], "progress_coverage_scope_id", "name the coverage scope"),
        (
            ["--progress-result-class", "advanced", "--progress-coverage-complete"],
            "progress_coverage_complete",
            "names its scope",
        ),
        (
            ["--progress-result-class", "blocked", "--progress-coverage-scope-id", "s", "--progress-coverage-complete"],
            "progress_coverage_complete",
            "blocked cannot assert coverage",
        ),
        (
            [
                "--progress-result-class",
                "unchanged",
                *[a for i in range(13) for a in ("--progress-evidence-id", f"e{i}")],
            ],
            "progress_evidence_ids",
            "at most 12",
        ),
        (
            ["--progress-result-class", "unchanged", "--progress-evidence-id", "e1", "--progress-evidence-id", "e1"],
            "progress_evidence_ids",
            "each evidence id once",
        ),
        (["--progress-result-class", "unchanged", "--progress-surface-id", "a b"], "progress_surface_id", "an id"),
        (
            ["--progress-result-class", "unchanged", "--progress-work-item-id", "x" * 129],
            "progress_work_item_id",
            "an id",
        ),
        (["--progress-result-class", "unchanged", "--progress-evidence-id", "../x"], "progress_evidence_ids", "an id"),
        (
            ["--progress-result-class", "unchanged", "--progress-hypothesis-id", ""],
            "progress_hypothesis_id",
            "give a value",
        ),
    ],
)
def test_bad_typed_progress_is_refused_naming_the_field(cli, extra, field, rule):
    tip = state_tip(cli.path)
    result = cli(*BASE, *extra)
    assert result.code == 1, result.err
    assert f"'{field}'" in result.err and rule in result.err and "rule:" in result.err
    assert state_tip(cli.path) == tip


def test_an_unknown_result_class_is_a_usage_error(cli):
    tip = state_tip(cli.path)
    assert cli(*BASE, "--progress-result-class", "improved").code == 2
    assert state_tip(cli.path) == tip


def test_the_api_refuses_an_unsupported_schema_and_a_bad_class(repo, git_repo):
    from loopx_git.domain.progress import progress_observation
    from loopx_git.errors import ValidationError

    with pytest.raises(ValidationError, match=r"typed_progress_observation_v9.*is not supported"):
        progress_observation(result_class="unchanged", schema_version="typed_progress_observation_v9")
    tip = state_tip(git_repo)
    with pytest.raises(ValidationError, match="'progress_result_class'"):
        repo.refresh_state(GOAL, "probe", agent_id="alice", progress_result_class="improved")
    assert state_tip(git_repo) == tip

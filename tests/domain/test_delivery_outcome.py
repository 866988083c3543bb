"""Delivery outcome everywhere it belongs (issue 13, item 6): the tier and its derived flags on run
records and completions, and a failed external-resource setup that left a usable resource recorded
as partial_success with the resource named."""

from __future__ import annotations

import json
from typing import get_args

import pytest

import loopx_git
from loopx_git.cli import choices
from loopx_git.errors import LoopxError
from loopx_git.model.run import DeliveryFlags, DeliveryOutcome, ResourceSetup, RunRecord
from loopx_git.model.todo import TodoItem
from loopx_git.store import layout
from loopx_git.store.records import encode, parse_run
from loopx_git.views.schema import adapter
from tests.cli.test_schemas import conforms, conforms_each, written
from tests.conftest import GOAL, NOW, git, state_tip
from tests.plumbing import plain_commit

FLAGS = {
    "surface_only": {"material": False, "accountable": False, "follow_through_required": True},
    "outcome_gap": {"material": True, "accountable": False, "follow_through_required": True},
    "outcome_progress": {"material": True, "accountable": True, "follow_through_required": False},
    "primary_goal_outcome": {"material": True, "accountable": True, "follow_through_required": False},
}


def refused(git_repo, call, code: str, *fragments: str) -> LoopxError:
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as info:
        call()
    assert info.value.code == code, info.value.message
    for fragment in fragments:
        assert fragment in info.value.message, info.value.message
    assert state_tip(git_repo) == tip, "a refused command must not move the state ref"
    return info.value


def refused_cli(cli, git_repo, args, *fragments: str, code: int = 1):
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == code, (result.code, result.out, result.err)
    for fragment in fragments:
        assert fragment in result.err, result.err
    assert state_tip(git_repo) == tip, "a refused command must not move the state ref"
    return result


def verified(git_repo) -> None:
    report = loopx_git.open(git_repo).verify()
    assert report.ok, [(p.code, p.path, p.message) for p in report.problems]


# --- the flags: one definition, derived ---------------------------------------------------------


@pytest.mark.parametrize("tier", list(FLAGS))
def test_every_tier_has_its_flags(tier):
    assert DeliveryOutcome(tier).flags.model_dump() == FLAGS[tier]
    assert DeliveryFlags.of(tier) == DeliveryOutcome(tier).flags
    run = RunRecord(run_id="r1", generated_at=NOW, goal_id=GOAL, classification="progress", delivery_outcome=tier)
    assert run.delivery_flags is not None and run.delivery_flags.model_dump() == FLAGS[tier]
    assert run.model_dump(mode="json")["delivery_flags"] == FLAGS[tier]
    # follow-through is wanted exactly where the run does not count toward the goal
    assert FLAGS[tier]["follow_through_required"] is not FLAGS[tier]["accountable"]


def test_no_tier_no_flags():
    assert DeliveryFlags.of(None) is None
    run = RunRecord(run_id="r1", generated_at=NOW, goal_id=GOAL, classification="no_op")
    assert run.delivery_flags is None
    shown = run.model_dump(mode="json")
    assert shown["delivery_outcome"] is None and shown["delivery_flags"] is None


def test_the_cli_choices_are_the_models():
    assert list(get_args(choices.ResourceSetup)) == [s.value for s in ResourceSetup]
    assert list(get_args(choices.DeliveryOutcome)) == list(FLAGS)


def test_flags_are_never_taken_as_input():
    data = RunRecord(
        run_id="r1", generated_at=NOW, goal_id=GOAL, classification="progress", delivery_outcome="outcome_gap"
    ).model_dump(mode="json")
    assert RunRecord.model_validate(data).delivery_flags == DeliveryFlags.of("outcome_gap")  # read back: dropped
    for wrong in (FLAGS["outcome_progress"], None, {"material": True}):
        with pytest.raises(ValueError, match="derived from the tier, never given"):
            RunRecord.model_validate({**data, "delivery_flags": wrong})
    with pytest.raises(ValueError, match="derived from the tier"):
        RunRecord.model_validate({**data, "delivery_outcome": None, "delivery_flags": FLAGS["outcome_gap"]})


def test_the_schemas_name_the_flags_read_only():
    for name in ("loopx_run_record_v0", "loopx_history_entry_v0", "todo_item_v0"):
        schema = adapter(name).json_schema()
        prop = schema["properties"]["delivery_flags"]
        assert prop["readOnly"] is True and "delivery_flags" not in schema.get("required", [])


# --- stored run records: old ones load and encode again byte for byte ----------------------------


OLD_RUN = {
    "agent_id": "alice",
    "classification": "progress",
    "delivery_outcome": "outcome_progress",
    "evidence": ["docs/index.md"],
    "generated_at": NOW,
    "goal_id": GOAL,
    "run_id": "run-old",
    "schema_version": "loopx_run_record_v0",
}
"""A run record as loopx wrote it before resource setups and flags: sorted keys, 2-space indent."""


def old_bytes(record: dict) -> bytes:
    return (json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


@pytest.mark.parametrize("record", [OLD_RUN, {**OLD_RUN, "delivery_outcome": None}, {**OLD_RUN, "evidence": []}])
def test_an_old_run_record_loads_and_encodes_again_byte_for_byte(record):
    record = {k: v for k, v in record.items() if v is not None}
    data = old_bytes(record)
    run = parse_run(data, layout.run_path(GOAL, "run-old", NOW))
    assert encode(run) == data
    assert run.resource_setup is None and run.usable_resources == []


def test_a_new_run_file_holds_what_was_given_and_no_flags(repo, git_repo):
    run = repo.refresh_state(
        GOAL,
        "progress",
        delivery_outcome="outcome_gap",
        resource_setup="failed",
        usable_resources=["infra/db-staging"],
        run_id="run-1",
        now=NOW,
    ).record
    stored = json.loads(git(git_repo, "show", f"refs/heads/loopx/state:{layout.run_path(GOAL, 'run-1', NOW)}"))
    assert "delivery_flags" not in stored
    assert stored["resource_setup"] == "partial_success" and stored["usable_resources"] == ["infra/db-staging"]
    plain = repo.refresh_state(GOAL, "no_op", run_id="run-2", now=NOW)
    stored = json.loads(git(git_repo, "show", f"refs/heads/loopx/state:{layout.run_path(GOAL, 'run-2', NOW)}"))
    assert set(stored) == {"classification", "evidence", "generated_at", "goal_id", "run_id", "schema_version"}
    assert run.delivery_flags == DeliveryFlags.of("outcome_gap") and plain.record.delivery_flags is None
    verified(git_repo)


def test_an_old_run_on_the_branch_verifies_and_shows_its_flags(repo, git_repo, cli):
    tip = state_tip(git_repo)
    path = layout.run_path(GOAL, "run-old", NOW)
    commit = plain_commit(git_repo, tip, "loopx: refresh-state run-old progress", {path: old_bytes(OLD_RUN).decode()})
    git(git_repo, "update-ref", "refs/heads/loopx/state", commit, tip)
    repo.close()
    verified(git_repo)
    [entry] = cli.json("history", "-g", GOAL)
    assert entry["run_id"] == "run-old" and entry["delivery_flags"] == FLAGS["outcome_progress"]
    assert entry["resource_setup"] is None and entry["usable_resources"] == []
    conforms_each("loopx_history_entry_v0", [entry])
    card = cli.json("status", "-g", GOAL)
    assert card["latest_delivery_outcome"]["delivery_flags"] == FLAGS["outcome_progress"]
    conforms("status", card)  # the goal card's schema, by its alias
    newer = cli("refresh-state", "-g", GOAL, "--classification", "progress", "--delivery-outcome", "outcome_gap")
    assert newer.code == 0, newer.err
    verified(git_repo)
    assert git(git_repo, "show", f"refs/heads/loopx/state:{path}").encode() == old_bytes(OLD_RUN)


# --- history, refresh-state and the goal card carry the tier and its flags -----------------------


def test_history_and_status_json_carry_the_flags(cli, git_repo):
    written(
        cli.json("refresh-state", "-g", GOAL, "--classification", "progress", "--delivery-outcome", "outcome_progress"),
        "loopx_run_record_v0",
    )
    cli.json("refresh-state", "-g", GOAL, "--classification", "no_op", "-a", "bob")
    newest, older = cli.json("history", "-g", GOAL)
    assert newest["delivery_outcome"] is None and newest["delivery_flags"] is None
    assert older["delivery_outcome"] == "outcome_progress" and older["delivery_flags"] == FLAGS["outcome_progress"]
    keys = list(older)
    assert keys.index("delivery_flags") == keys.index("delivery_outcome") + 1  # read beside the tier
    conforms_each("loopx_history_entry_v0", [newest, older])
    card = cli.json("status", "-g", GOAL)
    assert card["latest_delivery_outcome"]["delivery_flags"] == FLAGS["outcome_progress"]
    conforms("status", card)
    text = cli("status", "-g", GOAL).out
    assert text.index("latest delivery outcome: outcome_progress") < text.index("todos:")  # the tier first
    assert "delivery_flags:" in cli("history", "-g", GOAL, fmt="yaml").out
    verified(git_repo)


# --- todo complete --delivery-outcome -----------------------------------------------------------


@pytest.fixture
def seeded(cli):
    cli.json("todo", "add", "-g", GOAL, "--text", "Write the tokenizer", "-t", "t1")
    cli.json("todo", "add", "-g", GOAL, "--text", "Document it", "-t", "t2")
    cli.json("todo", "claim", "-g", GOAL, "-t", "t1", "-a", "alice")
    return cli


def test_complete_records_the_tier_on_the_todo_and_the_event(seeded, git_repo):
    cli = seeded
    done = cli.json(
        "todo", "complete", "-g", GOAL, "-t", "t1", "--evidence", "README.md", "--delivery-outcome", "outcome_gap"
    )
    written(done, "todo_item_v0")
    assert done["record"]["delivery_outcome"] == "outcome_gap"
    assert done["record"]["delivery_flags"] == FLAGS["outcome_gap"]
    shown = cli.json("todo", "show", "-g", GOAL, "-t", "t1")
    assert shown["delivery_outcome"] == "outcome_gap" and shown["delivery_flags"] == FLAGS["outcome_gap"]
    conforms("todo_item_v0", shown)
    [event] = cli.json("events", "-g", GOAL, "-t", "t1", "--kind", "todo_complete")
    assert event["details"] == {"delivery_outcome": "outcome_gap"}
    assert [c["field"] for c in event["changes"] if c["field"].startswith("delivery")] == ["delivery_outcome"]
    doc = git(git_repo, "show", f"refs/heads/loopx/state:{layout.todo_document(GOAL, 't1')}")
    # the document on the branch holds the tier; its flags are derived whenever it is shown, never stored
    assert "delivery_outcome: outcome_gap\n" in doc and "delivery_flags" not in doc
    verified(git_repo)
    card = cli.json("status", "-g", GOAL)
    assert card["latest_completion_outcome"]["todo_id"] == "t1"
    assert card["latest_completion_outcome"]["delivery_flags"] == FLAGS["outcome_gap"]
    text = cli("status", "-g", GOAL).out
    assert "latest completion outcome: outcome_gap (todo t1; material, follow through required)" in text


def test_a_todo_without_a_tier_renders_as_before(seeded, git_repo):
    cli = seeded
    cli.json("todo", "complete", "-g", GOAL, "-t", "t1", "--no-follow-up", "--reason", "nothing follows")
    for todo_id in ("t1", "t2"):
        shown = cli.json("todo", "show", "-g", GOAL, "-t", todo_id)
        assert "delivery_outcome" not in shown and "delivery_flags" not in shown
        doc = git(git_repo, "show", f"refs/heads/loopx/state:{layout.todo_document(GOAL, todo_id)}")
        assert "delivery" not in doc
    [event] = cli.json("events", "-g", GOAL, "-t", "t1", "--kind", "todo_complete")
    assert event["details"] == {"no_follow_up": True}
    verified(git_repo)


def test_complete_through_the_python_api(repo, git_repo):
    repo.todo_add(GOAL, "Ship it", todo_id="t1", now=NOW)
    done = repo.todo_complete(
        GOAL, "t1", evidence=["README.md"], delivery_outcome="primary_goal_outcome", actor="alice", now=NOW
    )
    todo = done.record
    assert isinstance(todo, TodoItem) and todo.delivery_outcome == "primary_goal_outcome"
    assert todo.delivery_flags == DeliveryFlags.of("primary_goal_outcome")
    assert repo.todo(GOAL, "t1").delivery_flags == DeliveryFlags.of("primary_goal_outcome")
    reopened = loopx_git.open(git_repo)  # a cold fold of the events gives the same todo
    assert reopened.todo(GOAL, "t1").delivery_outcome == "primary_goal_outcome"
    verified(git_repo)


@pytest.mark.parametrize("tier", ["great", "", "OUTCOME_GAP", 3, ["outcome_gap"]])
def test_a_bad_tier_through_the_api_is_refused_naming_the_field(repo, git_repo, tier):
    repo.todo_add(GOAL, "Ship it", todo_id="t1", now=NOW)
    refused(
        git_repo,
        lambda: repo.todo_complete(GOAL, "t1", evidence=["README.md"], delivery_outcome=tier, now=NOW),
        "invalid-field",
        "field 'delivery_outcome'",
        "rule: one of surface_only, outcome_gap, outcome_progress, primary_goal_outcome",
    )
    assert repo.todo(GOAL, "t1").status == "open"
    refused(
        git_repo,
        lambda: repo.refresh_state(GOAL, "progress", delivery_outcome=tier, now=NOW),
        "invalid-field",
        "field 'delivery_outcome'",
        "rule: one of",
    )


def test_a_bad_tier_on_the_command_line_is_a_usage_error(seeded, git_repo):
    refused_cli(
        seeded,
        git_repo,
        ["todo", "complete", "-g", GOAL, "-t", "t1", "--evidence", "README.md", "--delivery-outcome", "great"],
        "outcome_gap",
        code=2,
    )


def test_a_tiered_completion_rolls_back_and_verifies(seeded, git_repo):
    cli = seeded
    done = cli.json(
        "todo", "complete", "-g", GOAL, "-t", "t1", "--evidence", "README.md", "--delivery-outcome", "outcome_progress"
    )
    assert cli("rollback", "-g", GOAL, "--event", done["event_ids"][0], "--reason", "not done after all").code == 0
    shown = cli.json("todo", "show", "-g", GOAL, "-t", "t1")
    assert shown["status"] == "open" and "delivery_outcome" not in shown and "delivery_flags" not in shown
    verified(git_repo)


# --- refresh-state --resource-setup --usable-resource --------------------------------------------


def test_a_failed_setup_that_left_a_usable_resource_is_a_partial_success(cli, git_repo):
    args = ["refresh-state", "-g", GOAL, "--classification", "progress", "--resource-setup", "failed"]
    result = cli(*args, "--usable-resource", "infra/db-staging", "--usable-resource", "bucket:assets-7")
    assert result.code == 0, result.err
    assert "failed, recorded as partial_success" in result.out and "infra/db-staging, bucket:assets-7" in result.out
    [entry] = cli.json("history", "-g", GOAL)
    assert entry["resource_setup"] == "partial_success"
    assert entry["usable_resources"] == ["infra/db-staging", "bucket:assets-7"]
    [event] = cli.json("events", "-g", GOAL, "--kind", "refresh_state")
    assert event["details"]["resource_setup"] == "partial_success"
    assert event["details"]["resource_setup_reported"] == "failed"
    assert "partial_success" in cli("history", "-g", GOAL).out
    verified(git_repo)


@pytest.mark.parametrize(
    "setup, resources, recorded",
    [
        ("failed", [], "failed"),
        ("success", [], "success"),
        ("success", ["infra/db"], "success"),
        ("partial_success", ["infra/db", "infra/db"], "partial_success"),  # named twice: one resource
    ],
)
def test_what_is_recorded_for_each_setup(repo, git_repo, setup, resources, recorded):
    run = repo.refresh_state(GOAL, "progress", resource_setup=setup, usable_resources=resources, now=NOW).record
    assert run.resource_setup == recorded and run.usable_resources == list(dict.fromkeys(resources))
    [event] = [e for e in repo.events(GOAL) if e.event_kind == "refresh_state"]
    assert event.details["resource_setup"] == recorded and "resource_setup_reported" not in event.details
    verified(git_repo)


@pytest.mark.parametrize(
    "extra, code, fragments",
    [
        (
            ["--resource-setup", "partial_success"],
            "usable-resource-required",
            ["field 'usable_resources' (--usable-resource)", "rule: a partial success names the usable resource"],
        ),
        (
            ["--usable-resource", "infra/db"],
            "resource-setup-required",
            ["field 'usable_resources' (--usable-resource)", "rule: usable resources are named with the"],
        ),
        (
            ["--resource-setup", "failed", *[f"--usable-resource=r{n}" for n in range(13)]],
            "invalid-field",
            ["field 'usable_resources' (--usable-resource): 13 given", "rule: at most 12"],
        ),
        (
            ["--resource-setup", "success", "--usable-resource", "/srv/db"],
            "invalid-field",
            ["'usable_resources.0'", "not a relative ref"],
        ),
        (
            ["--resource-setup", "success", "--usable-resource", "../db"],
            "invalid-field",
            ["'usable_resources.0'", "not a relative ref"],
        ),
    ],
    ids=["partial-without-resource", "resource-without-setup", "thirteen", "absolute", "climbs-out"],
)
def test_bad_resource_setups_are_refused(cli, git_repo, extra, code, fragments):
    args = ["refresh-state", "-g", GOAL, "--classification", "progress", *extra]
    result = refused_cli(cli, git_repo, args, f"error[{code}]", *fragments)
    assert result.out == ""
    assert cli.json("history", "-g", GOAL) == []


def test_twelve_usable_resources_are_recorded(repo, git_repo):
    refs = [f"infra/r{n}" for n in range(12)]
    run = repo.refresh_state(GOAL, "progress", resource_setup="failed", usable_resources=refs, now=NOW).record
    assert run.resource_setup == "partial_success" and run.usable_resources == refs
    verified(git_repo)


def test_bad_resource_setups_through_the_api(repo, git_repo):
    refused(
        git_repo,
        lambda: repo.refresh_state(GOAL, "progress", resource_setup="maybe", now=NOW),
        "invalid-field",
        "field 'resource_setup'",
        "rule: one of success, partial_success, failed",
    )
    refused(
        git_repo,
        lambda: repo.refresh_state(GOAL, "progress", resource_setup="failed", usable_resources="infra/db", now=NOW),
        "invalid-field",
        "'usable_resources'",
        "one string where a list belongs",
    )
    refused(
        git_repo,
        lambda: repo.refresh_state(GOAL, "progress", usable_resources=["infra/db"], now=NOW),
        "resource-setup-required",
        "field 'usable_resources'",
    )


def test_an_unknown_setup_on_the_command_line_is_a_usage_error(cli, git_repo):
    refused_cli(
        cli,
        git_repo,
        ["refresh-state", "-g", GOAL, "--classification", "progress", "--resource-setup", "maybe"],
        "partial_success",
        code=2,
    )


def test_a_secret_as_a_usable_resource_is_refused(cli, git_repo):
    secret = "gh" + "p_" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4Q5r6S7t8"  # assembled at run time: a fake
    result = refused_cli(
        cli,
        git_repo,
        ["refresh-state", "-g", GOAL, "--classification", "progress", "--resource-setup", "success"]
        + ["--usable-resource", secret],
        "usable_resources",
    )
    assert secret not in result.err


def test_redacting_a_run_or_a_completion_with_a_tier_keeps_its_flags(seeded, git_repo):
    cli = seeded
    secret = "gh" + "p_" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4Q5r6S7t8"  # assembled at run time: a fake
    run = cli.json(
        "refresh-state", "-g", GOAL, "--classification", "progress", "--delivery-outcome", "outcome_progress",
        "--resource-setup", "failed", "--usable-resource", secret, "--redact",
    )  # fmt: skip
    assert run["record"]["usable_resources"] == ["[REDACTED:github-token]"]
    assert run["record"]["resource_setup"] == "partial_success"
    assert run["record"]["delivery_flags"] == FLAGS["outcome_progress"]
    done = cli.json(
        "todo", "complete", "-g", GOAL, "-t", "t1", "--no-follow-up", "--reason", f"see {secret}",
        "--delivery-outcome", "surface_only", "--redact",
    )  # fmt: skip
    assert done["record"]["delivery_flags"] == FLAGS["surface_only"] and secret not in json.dumps(done)
    conforms_each("todo_item_v0", cli.json("todo", "list", "-g", GOAL, "--status", "done"))
    verified(git_repo)


def test_a_tier_this_version_does_not_know_is_shown_without_flags_not_a_crash():
    """The fold applies field changes without validating them: a hand-made or newer change may carry a
    tier this version does not know. Reading it never fails (exit 3); `verify` reports the record."""
    todo = TodoItem(todo_id="t1", text="x", updated_at=NOW, delivery_outcome="outcome_gap")
    odd = todo.model_copy(update={"delivery_outcome": "great"})
    shown = odd.model_dump(mode="json")
    assert shown["delivery_outcome"] == "great" and shown["delivery_flags"] is None
    assert DeliveryFlags.of("great") is None
    assert "delivery_flags" not in json.loads(encode(odd))

"""Every command's real ``--format json`` output, held to the schema ``loopx schema`` names for it.

Validation goes through the output's own pydantic model (``views.schema.adapter``), strictly: an
extra key fails (``extra="forbid"``), a missing required key fails, and the validated value dumped
again must equal what the command printed, so a key the model would fill in with a default (the
command left it out) or a value it would coerce fails too. The schema names the docs mention must
all be listed by ``loopx schema --list``, and each listed schema is documented."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from loopx_git.views.schema import adapter
from tests.conftest import GOAL, git
from tests.sync.helpers import bare

DOCS = Path(__file__).resolve().parents[2] / "docs" / "json-output.md"
OMITTED_WHEN_NULL = frozenset({"where", "note"})
"""Keys an output leaves out rather than print as null (a finding's ``where`` and ``note``)."""


def _strip(data):
    if isinstance(data, dict):
        return {k: _strip(v) for k, v in data.items() if not (k in OMITTED_WHEN_NULL and v is None)}
    if isinstance(data, list):
        return [_strip(v) for v in data]
    return data


def conforms(name: str, data) -> None:
    checker = adapter(name)
    value = checker.validate_python(data)
    again = checker.dump_python(value, mode="json", by_alias=True)
    assert _strip(again) == _strip(data), f"{name}: the output is not exactly its model's shape"


def conforms_each(name: str, items) -> None:
    assert isinstance(items, list) and items, f"{name}: expected a non-empty list"
    for item in items:
        conforms(name, item)


def written(data, record: str | None = None) -> None:
    """A write envelope, and its record against the record's own schema."""
    conforms("loopx_write_result_v0", data)
    if record is not None:
        conforms(record, data["record"])


# --- the listing --------------------------------------------------------------------------------


def test_every_schema_the_docs_name_is_listed_and_every_listed_one_documented(cli):
    documented = set(re.findall(r"\b([a-z][a-z_]*_v[0-9]+)\b", DOCS.read_text())) | {"agent"}
    listing = cli.json("schema", "--list")
    conforms_each("loopx_schema_list_v0", listing)
    listed = {row["name"] for row in listing}
    from loopx_git.views.schema import ALIASES

    old_names = {alias for alias in ALIASES if alias.endswith(tuple(f"_v{n}" for n in range(10)))}
    assert cli.json("schema", "loopx_status_v0") == cli.json("schema", "status_contract_v2")  # a former name
    assert documented - listed - old_names == set(), (
        "named in docs/json-output.md but not listed by `loopx schema --list`"
    )
    assert listed - documented == set(), "listed by `loopx schema --list` but not in docs/json-output.md"
    assert cli.json("schema") == listing  # no name: the same list
    text = cli("schema").out
    assert all(name in text for name in listed)


@pytest.mark.slow
def test_each_schema_prints_as_json_in_every_format(cli):
    for row in cli.json("schema", "--list"):
        expected = adapter(row["name"]).json_schema()
        assert cli.json("schema", row["name"]) == expected
        assert json.loads(cli("schema", row["name"]).out) == expected  # a schema is JSON, in text mode too
        assert row["emitted_by"]
    result = cli("schema", "no_such_schema_v0")
    assert result.code == 1 and "schema --list" in result.err


# --- reads --------------------------------------------------------------------------------------


@pytest.fixture
def seeded(cli):
    cli.json("todo", "add", "--goal-id", GOAL, "--text", "Write the tokenizer", "--todo-id", "t1", "--priority", "P1")
    cli.json(
        "todo", "add", "--goal-id", GOAL, "--text", "Document it", "--todo-id", "t2", "--resume-when", "todo_done:t1"
    )
    cli.json("todo", "claim", "--goal-id", GOAL, "--todo-id", "t1", "--agent-id", "alice")
    cli.json("todo", "suggest", "--goal-id", GOAL, "--text", "Fuzz it", "--todo-id", "s1", "--agent-id", "bob")
    cli.json("refresh-state", "--goal-id", GOAL, "--classification", "progress", "--agent-id", "alice")
    cli.json("ledger", "add", "--goal-id", GOAL, "--entry-id", "e1", "--claim", "CI is green", "--action", "run_ci")
    return cli


def test_reads_match_their_schemas(seeded):
    cli = seeded
    conforms("todo_item_v0", cli.json("todo", "show", "--goal-id", GOAL, "--todo-id", "t1"))
    conforms_each("todo_item_v0", cli.json("todo", "list", "--goal-id", GOAL))
    conforms_each("suggested_todo_v0", cli.json("todo", "list", "--goal-id", GOAL, "--suggested"))
    conforms("loopx_goal_v0", cli.json("goal", "show", "--goal-id", GOAL))
    conforms_each("loopx_goal_v0", cli.json("goal", "list"))
    conforms_each("agent", cli.json("agent", "list", "--goal-id", GOAL))
    conforms_each("loopx_rollout_event_v0", cli.json("events", "--goal-id", GOAL))
    conforms_each("loopx_history_entry_v0", cli.json("history", "--goal-id", GOAL))
    conforms("status_contract_v2", cli.json("status", "--goal-id", GOAL))
    conforms("status_contract_v2", cli.json("status", "--goal-id", GOAL, "--agent-id", "alice"))
    conforms("loopx_verify_report_v0", cli.json("verify"))
    conforms_each("loopx_ledger_entry_v0", cli.json("ledger", "list", "--goal-id", GOAL))
    conforms("loopx_ledger_entry_v0", cli.json("ledger", "show", "--goal-id", GOAL, "--entry-id", "e1"))


def test_every_write_prints_the_envelope(cli, git_repo):
    written(cli.json("goal", "create", "--goal-id", "g2", "--objective", "Another"), "loopx_goal_v0")
    written(cli.json("goal", "update", "--goal-id", "g2", "--add-acceptance", "it works"), "loopx_goal_v0")
    written(cli.json("agent", "register", "--goal-id", GOAL, "--agent-id", "carol"), "agent")
    add = cli.json("todo", "add", "--goal-id", GOAL, "--text", "a", "--todo-id", "t1")
    written(add, "todo_item_v0")
    cli.json("todo", "add", "--goal-id", GOAL, "--text", "b", "--todo-id", "t2", "--resume-when", "todo_done:t1")
    written(cli.json("todo", "claim", "--goal-id", GOAL, "--todo-id", "t1", "--agent-id", "alice"), "todo_item_v0")
    written(cli.json("todo", "claim", "--goal-id", GOAL, "--todo-id", "t1", "--agent-id", "alice"))  # unchanged
    woke = cli.json("todo", "complete", "--goal-id", GOAL, "--todo-id", "t1", "--evidence", "no/such/file.py")
    written(woke, "todo_item_v0")
    assert woke["warnings"] and len(woke["event_ids"]) == 2  # a notice, and t2 woken
    written(
        cli.json("todo", "update", "--goal-id", GOAL, "--todo-id", "t2", "--status", "blocked", "--reason", "wait"),
        "todo_item_v0",
    )
    cli.json("todo", "add", "--goal-id", GOAL, "--text", "c", "--todo-id", "t3")
    written(
        cli.json("todo", "supersede", "--goal-id", GOAL, "--todo-id", "t2", "--by", "t3", "--reason", "split"),
        "todo_item_v0",
    )
    written(cli.json("todo", "suggest", "--goal-id", GOAL, "--text", "d", "--todo-id", "s1"), "suggested_todo_v0")
    written(cli.json("todo", "promote", "--goal-id", GOAL, "--todo-id", "s1"), "todo_item_v0")
    written(
        cli.json("event", "append", "--goal-id", GOAL, "--kind", "note", "--summary", "mail ops@example.com"),
        "loopx_rollout_event_v0",
    )
    written(
        cli.json(
            "refresh-state", "--goal-id", GOAL, "--classification", "progress", "--delivery-outcome", "outcome_gap"
        ),
        "loopx_run_record_v0",
    )
    written(cli.json("repair"))
    secret = "gh" + "p_" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4Q5r6S7t8"  # assembled at run time: a fake
    redacted = cli.json("event", "append", "--goal-id", GOAL, "--kind", "note", "--summary", secret, "--redact")
    written(redacted, "loopx_rollout_event_v0")
    assert redacted["redacted"]


def test_rollback_outputs_match_their_schemas(cli, tmp_path):
    cli.json("todo", "add", "--goal-id", GOAL, "--text", "a", "--todo-id", "t1")
    claim = cli.json("todo", "claim", "--goal-id", GOAL, "--todo-id", "t1", "--agent-id", "alice")
    args = ["rollback", "--goal-id", GOAL, "--event", claim["event_ids"][0], "--reason", "by mistake"]
    conforms("loopx_rollback_dry_run_v0", cli.json(*args, "--dry-run"))
    done = cli.json(*args)
    written(done, "rollback_packet_v0")
    packets = cli.json("rollback", "list", "--goal-id", GOAL)
    conforms_each("rollback_packet_v0", packets)
    shown = cli.json("rollback", "show", "--goal-id", GOAL, "--packet-id", done["record"]["packet_id"])
    conforms("rollback_packet_v0", shown)
    packet = {**shown, "packet_id": "rb_recorded_elsewhere"}
    (tmp_path / "packet.json").write_text(json.dumps(packet))
    written(cli.json("rollback", "record", "--goal-id", GOAL, "--packet", str(tmp_path / "packet.json")))


def _script(tmp_path: Path) -> str:
    path = tmp_path / "step.py"
    path.write_text(
        f"#!{sys.executable}\nimport json, sys\njson.load(sys.stdin)\n"
        'print(json.dumps({"status": "done", "verdict": "MATCH", "next": "resume", '
        '"evidence": [{"kind": "test_path", "ref": "tests/test_step.py"}]}))\n'
    )
    path.chmod(0o755)
    return str(path)


def test_ledger_and_fire_outputs_match_their_schemas(cli, tmp_path):
    written(
        cli.json("ledger", "add", "--goal-id", GOAL, "--entry-id", "e1", "--claim", "CI green", "--action", "run_ci"),
        "loopx_ledger_entry_v0",
    )
    cli.json("ledger", "add", "--goal-id", GOAL, "--entry-id", "e2", "--claim", "docs build", "--action", "run_docs")
    conforms("loopx_ledger_action_v0", cli.json("ledger", "next", "--goal-id", GOAL, "--agent-id", "alice"))
    recorded = cli.json(
        "ledger",
        "record",
        "--goal-id",
        GOAL,
        "--entry-id",
        "e1",
        "--status",
        "done",
        "--verdict",
        "MATCH",
        "--next",
        "resume",
        "--evidence",
        "test_path:tests/test_ci.py",
        "--agent-id",
        "alice",
    )
    written(recorded, "loopx_ledger_entry_v0")
    result = cli(
        "fire",
        "--goal-id",
        GOAL,
        "--max-iterations",
        "3",
        "--timeout",
        "60",
        "--approver-ceiling",
        "workspace_write",
        "--agent-id",
        "alice",
        "--",
        _script(tmp_path),
        fmt="json",
    )
    assert result.code == 0, result.err
    record = json.loads(result.out)
    conforms("loopx_fire_record_v0", record)
    conforms("loopx_ledger_none_selected_v0", cli.json("ledger", "next", "--goal-id", GOAL, "--agent-id", "alice"))
    (tmp_path / "fire.json").write_text(result.out)
    checked = cli("ledger", "conformance", str(tmp_path / "fire.json"), fmt="json")
    assert checked.code in (0, 1), checked.err
    conforms("loopx_conformance_report_v0", json.loads(checked.out))


# --- the repository and its remotes -------------------------------------------------------------


def test_connect_check_doctor_and_gc_match_their_schemas(cli, git_repo):
    conforms("loopx_connect_result_v0", cli.json("connect"))
    (git_repo / "settings.py").write_text("a = 1\nmail = 'ops@corp.example.com'\n")
    (git_repo / ".loopx").mkdir()
    (git_repo / ".loopx" / "raw.log").write_text("local\n")
    git(git_repo, "add", "settings.py")
    git(git_repo, "add", "-f", ".loopx/raw.log")
    checked = cli("check", fmt="json")
    report = json.loads(checked.out)
    conforms("loopx_check_report_v0", report)
    assert checked.code == 1 and any("note" in f for f in report["findings"])  # the optional keys are exercised
    conforms_each("loopx_check_rule_v0", cli.json("check", "--rules"))
    git(git_repo, "rm", "-q", "--cached", ".loopx/raw.log")
    git(git_repo, "remote", "add", "origin", str(bare(git_repo.parent / "remote.git")))
    for extra in ([], ["--offline"]):
        doctor = cli("doctor", *extra, fmt="json")
        conforms("loopx_doctor_report_v0", json.loads(doctor.out))
    conforms("loopx_gc_result_v0", cli.json("gc"))
    conforms("loopx_disconnect_result_v0", cli.json("disconnect"))


def test_sync_pull_push_propose_and_review_match_their_schemas(cli, git_repo):
    git(git_repo, "remote", "add", "origin", str(bare(git_repo.parent / "remote.git")))
    base = git(git_repo, "rev-parse", "loopx/state").strip()
    conforms("loopx_sync_result_v0", cli.json("sync"))
    cli.json("todo", "add", "--goal-id", GOAL, "--text", "a", "--todo-id", "t1")
    conforms("loopx_push_result_v0", cli.json("push"))
    conforms("loopx_sync_result_v0", cli.json("pull"))
    cli.json("todo", "add", "--goal-id", GOAL, "--text", "b", "--todo-id", "t2")
    conforms("loopx_sync_result_v0", cli.json("sync"))
    cli.json("todo", "add", "--goal-id", GOAL, "--text", "c", "--todo-id", "t3")
    conforms("loopx_propose_result_v0", cli.json("propose", "--branch", "loopx/proposals/t3"))
    review = cli("review-diff", f"{base}..loopx/state", "--format", "json")
    assert review.code == 0, review.err
    conforms("loopx_review_diff_v0", json.loads(review.out))
    conforms("loopx_review_diff_v0", cli.json("review-diff", f"{base}..loopx/state"))


def test_demo_prints_one_json_report(cli):
    result = cli("demo", fmt="json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    conforms("loopx_demo_v0", report)
    assert report["ok"] is True and report["kept"] is None
    titles = [step["title"] for step in report["steps"]]
    assert any(t.startswith("claim race") for t in titles) and titles[-1].startswith("git log")
    assert all(step["said"] for step in report["steps"])

"""``loopx events export`` and ``loopx events import`` (issue 13, item 9): a goal's log as
loopx_rollout_event_v0 JSON Lines in fold order, and another log's lines appended as history —
checked and safety-scanned before the first commit, deduplicated by event id, one commit per chunk;
a refused line names its number and field, exits 1 and leaves the state ref where it was."""

from __future__ import annotations

import json

import pytest

import loopx_git
from loopx_git.errors import LoopxError
from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, NOW, git, state_tip

UPSTREAM = {
    "schema_version": "loopx_rollout_event_v0",
    "event_id": "3f1c2a9b8d7e6f50",
    "goal_id": "public-long-horizon-loop",
    "event_kind": "todo_update",
    "recorded_at": "2026-06-24T01:13:00+08:00",
    "agent_id": "codex-product-capability",
    "todo_id": "todo_minimal_rollout_fixture",
    "case_id": "public_frontstage_rollout",
    "lane": {"lane_id": "product_capability", "agent_model": "peer_v1"},
    "state_transition": {"from_state": "planned", "to_state": "required"},
    "causality": {"caused_by": "scope_reduction", "decision_id": "decision_minimal_fixture"},
    "status": "open",
    "classification": "todo_scope_refined",
    "summary": "The fixture scope narrows to a small public-safe sample.",
    "artifact_refs": ["examples/fixture.json"],
    "source_refs": [{"kind": "todo", "ref": "todo_minimal_rollout_fixture"}],
    "boundary": {"raw_logs_recorded": False, "credential_values_recorded": False},
}


def _line(**changes) -> str:
    return json.dumps({**UPSTREAM, **changes}, sort_keys=True)


def _write(path, *lines: str) -> str:
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


def test_an_upstream_line_keeps_its_id_time_and_join_keys_and_its_extras_in_origin(cli, tmp_path):
    log = _write(
        tmp_path / "log.jsonl", _line(), "", _line(event_id="4a", event_kind="validation", case_id="other_case")
    )
    before = state_tip(cli.path)
    report = cli.json("events", "import", "-g", GOAL, log)
    conforms("loopx_events_import_v0", report)
    assert report["lines"] == 2 and report["imported"] == 2 and len(report["commits"]) == 1
    assert git(cli.path, "rev-parse", "refs/heads/loopx/state^").strip() == before  # one commit
    imported = cli.json("events", "-g", GOAL, "--kind", "rollout_import")
    first = next(e for e in imported if e["origin"]["event_id"] == UPSTREAM["event_id"])
    conforms("loopx_rollout_event_v0", first)
    assert first["event_id"].startswith("imp_") and first["origin"]["event_id"] == UPSTREAM["event_id"]
    assert first["recorded_at"] == "2026-06-23T17:13:00Z"  # the same moment, in UTC
    assert (first["agent_id"], first["todo_id"], first["case_id"], first["lane"]) == (
        "codex-product-capability",
        "todo_minimal_rollout_fixture",
        "public_frontstage_rollout",
        {"lane_id": "product_capability"},
    )
    origin = first["origin"]
    assert origin["kind"] == "todo_update" and origin["recorded_at"] == UPSTREAM["recorded_at"]
    assert origin["status"] == "open" and origin["classification"] == "todo_scope_refined"
    assert origin["agent_model"] == "peer_v1" and origin["goal_id"] == "public-long-horizon-loop"
    assert origin["source_refs"] == [{"kind": "todo", "ref": "todo_minimal_rollout_fixture"}]
    # history, not state: the todo it names does not appear, and verify is clean
    assert all(t["todo_id"] != "todo_minimal_rollout_fixture" for t in cli.json("todo", "list", "-g", GOAL))
    assert cli.json("verify")["ok"] is True
    # by join key, as every view finds events
    by_case = cli.json("events", "-g", GOAL, "--case-id", "public_frontstage_rollout")
    assert [e["origin"]["event_id"] for e in by_case] == [UPSTREAM["event_id"]]
    # and by the kind the line had: imported validations are validations
    assert [e["origin"]["event_id"] for e in cli.json("events", "-g", GOAL, "--kind", "validation")] == ["4a"]


def test_importing_again_adds_nothing_and_moves_no_ref(cli, tmp_path):
    log = _write(tmp_path / "log.jsonl", _line(), _line(event_id="5b"))
    assert cli.json("events", "import", "-g", GOAL, log)["imported"] == 2
    tip = state_tip(cli.path)
    again = cli.json("events", "import", "-g", GOAL, log)
    assert (again["imported"], again["already_present"], again["commits"]) == (0, 2, [])
    assert state_tip(cli.path) == tip


def test_a_repeated_line_counts_once_and_a_conflicting_repeat_is_refused(cli, tmp_path):
    same = _write(tmp_path / "same.jsonl", _line(), _line())
    assert cli.json("events", "import", "-g", GOAL, same)["imported"] == 1
    tip = state_tip(cli.path)
    other = _write(tmp_path / "other.jsonl", _line(event_id="6c"), _line(event_id="6c", summary="something else"))
    result = cli("events", "import", "-g", GOAL, other)
    assert result.code == 1 and "line 2: field 'event_id'" in result.err and "line 1" in result.err
    assert state_tip(cli.path) == tip


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("{not json", "line 2: field '(line)': not JSON"),
        ("[1, 2]", "line 2: field '(line)': a JSON list, not an object"),
        (_line(schema_version="loopx_rollout_event_v9"), "line 2: field 'schema_version'"),
        (_line(event_kind="made_up"), "line 2: field 'event_kind': 'made_up' is not a known kind"),
        (_line(surprise=1), "line 2: field 'surprise': not a field of a rollout event"),
        (_line(recorded_at="yesterday"), "line 2: field 'recorded_at'"),
        (_line(recorded_at="2026-06-24T01:13:00"), "line 2: field 'recorded_at'"),
        (_line(event_id="../../x"), "line 2: field 'event_id': '../../x' is not an event id"),
        (_line(agent_id=""), "line 2: event field 'agent_id'"),
        (_line(artifact_refs=["/abs/path"]), "line 2: event field 'artifact_refs"),
        (_line(lane={"lane_id": "x", "colour": "red"}), "line 2: field 'lane'"),
        (_line(origin={"kind": "note"}), "line 2: field 'origin'"),
        (_line(details={"n": 1e400}), "line 2: field 'line.details.n': NaN or infinity"),
        ("x" * (64 << 10) + "x", "line 2: field '(line)'"),
        (_line(lamport=0), "line 2: field 'lamport'"),
        (_line(lamport="7"), "line 2: field 'lamport'"),
    ],
)
def test_a_bad_line_is_refused_by_number_and_field_and_nothing_is_written(cli, tmp_path, line, said):
    log = _write(tmp_path / "bad.jsonl", _line(event_id="good1"), line)
    tip = state_tip(cli.path)
    result = cli("events", "import", "-g", GOAL, log)
    assert result.code == 1, result.err
    assert said in result.err and "nothing was written" in result.err
    assert state_tip(cli.path) == tip  # the good first line was not written either


def test_invalid_utf8_is_refused_by_line(cli, tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(_line().encode() + b"\n" + b'{"summary": "caf\xe9"}\n')
    tip = state_tip(cli.path)
    result = cli("events", "import", "-g", GOAL, str(path))
    assert result.code == 1 and "line 2: field '(line)': not UTF-8" in result.err
    assert state_tip(cli.path) == tip


def test_a_secret_on_a_late_line_refuses_the_whole_file_before_any_chunk(repo, git_repo, tmp_path):
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # assembled: the allowlisted fake token
    lines = [_line(event_id=f"ok{i}") for i in range(7)] + [_line(event_id="leak", summary=f"token {token}")]
    path = tmp_path / "leak.jsonl"
    path.write_text("\n".join(lines) + "\n")
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as refused:
        repo.events_import(GOAL, path.open("rb"), chunk_size=2)
    assert refused.value.code == "unsafe" and refused.value.message.startswith("line 8: ")
    assert token not in refused.value.message
    assert state_tip(git_repo) == tip
    redacting = loopx_git.open(git_repo, redact=True)
    report = redacting.events_import(GOAL, path.open("rb"), chunk_size=2)
    assert report.imported == 8 and len(report.commits) == 4 and report.redacted_fields >= 1
    assert token not in git(git_repo, "log", "-p", "refs/heads/loopx/state")


def _stored(value):
    """A record as the branch stores it: absent optional fields left out (JSON listings print null)."""
    if isinstance(value, dict):
        return {k: _stored(v) for k, v in value.items() if v is not None}
    return [_stored(v) for v in value] if isinstance(value, list) else value


def test_export_is_fold_order_jsonl_and_imports_into_another_repository(cli, tmp_path, git_repo):
    assert cli("todo", "add", "-g", GOAL, "--todo-id", "tok", "--text", "Tokenizer").code == 0
    assert cli("event", "append", "-g", GOAL, "--kind", "note", "-a", "alice", "--benchmark-id", "b1").code == 0
    out = cli("events", "export", "-g", GOAL, "--format", "jsonl")
    assert out.code == 0, out.err
    lines = out.out.splitlines()
    listed = cli.json("events", "-g", GOAL)
    assert [json.loads(x) for x in lines] == [_stored(e) for e in listed]  # the records, in fold order
    assert cli.json("events", "export", "-g", GOAL) == listed  # --format json: one list
    assert cli.json("events", "-g", GOAL, "--benchmark-id", "b1")[0]["benchmark_id"] == "b1"

    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "init")
    copy = loopx_git.open(other)
    copy.connect()
    copy.goal_create("copy", "A copy of the parser's log", now=NOW)
    (tmp_path / "export.jsonl").write_text(out.out)
    report = copy.events_import("copy", (tmp_path / "export.jsonl").open("rb"))
    assert report.imported == len(lines)
    imported = [e for e in copy.events("copy") if e.event_kind == "rollout_import"]
    assert [e.origin.event_id for e in imported] == [e["event_id"] for e in listed]  # and in their order
    todo_add = next(e for e in imported if e.origin.kind == "todo_add")
    assert todo_add.origin.payload["changes"]  # what it changed, described, not applied
    assert [t.todo_id for t in copy.todos("copy")] == []
    assert copy.verify().ok
    # and the copy's own export reads back into a third goal of it unchanged in meaning
    again = list(copy.events_export("copy"))
    assert all(json.loads(x)["schema_version"] == "loopx_rollout_event_v0" for x in again)


def test_a_goal_export_imports_beside_it_and_each_copy_is_its_own_event(cli, tmp_path, repo):
    """The help's example: one line imported into two goals of one branch is two events (an event id
    names one event on the whole branch), each citing the line's own id."""
    repo.goal_create("g2", "Another goal", now=NOW)
    exported = cli("events", "export", "-g", GOAL).out
    path = _write(tmp_path / "mine.jsonl", *exported.splitlines())
    report = cli.json("events", "import", "-g", "g2", path)
    assert report["imported"] == len(exported.splitlines())
    mine = {e["event_id"] for e in cli.json("events", "-g", GOAL)}
    copies = cli.json("events", "-g", "g2", "--kind", "rollout_import")
    assert {e["origin"]["event_id"] for e in copies} == mine and not mine & {e["event_id"] for e in copies}
    assert cli.json("verify")["ok"] is True


def test_a_changed_line_under_a_known_id_is_skipped_and_counted(cli, tmp_path):
    assert cli.json("events", "import", "-g", GOAL, _write(tmp_path / "a.jsonl", _line()))["imported"] == 1
    tip = state_tip(cli.path)
    changed = cli.json("events", "import", "-g", GOAL, _write(tmp_path / "b.jsonl", _line(summary="Reworded.")))
    assert (changed["imported"], changed["already_present"], changed["differing"]) == (0, 0, 1)
    assert state_tip(cli.path) == tip
    text = cli("events", "import", "-g", GOAL, str(tmp_path / "b.jsonl"))
    assert "1 imported before with other content (skipped)" in text.out


def test_options_before_the_subcommand_are_refused_not_dropped(cli, tmp_path):
    tip = state_tip(cli.path)
    result = cli("events", "-g", GOAL, "import", _write(tmp_path / "l.jsonl", _line()))
    assert result.code == 2 and "put the options after it" in result.err
    assert state_tip(cli.path) == tip


def test_stdin_and_an_unknown_goal(cli, tmp_path, monkeypatch):
    import io
    import sys

    tip = state_tip(cli.path)
    result = cli("events", "import", "-g", "nope", _write(tmp_path / "l.jsonl", _line()))
    assert result.code == 1 and "goal 'nope'" in result.err and state_tip(cli.path) == tip
    missing = cli("events", "import", "-g", GOAL, str(tmp_path / "absent.jsonl"))
    assert missing.code == 1 and "field 'file'" in missing.err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((_line() + "\n").encode())))
    assert cli.json("events", "import", "-g", GOAL, "-")["imported"] == 1


def test_events_alone_still_lists_on_both_parsers(cli):
    fast = cli("events", "-g", GOAL, "--kind", "agent_register")  # the fast parser's reading
    assert fast.code == 0 and "alice" in fast.out
    typer_read = cli("events", "-g", GOAL, "--kind", "agent_register", "-n", "1", "--json")
    assert typer_read.code == 0 and json.loads(typer_read.out)[0]["agent_id"] == "bob"
    helped = cli("events", "--help")
    assert helped.code == 0 and "export" in helped.out and "import" in helped.out


def test_with_redact_a_secret_that_cannot_be_redacted_refuses_before_any_chunk(repo, git_repo, tmp_path):
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"  # assembled: the allowlisted fake token
    lines = [_line(event_id=f"ok{i}") for i in range(5)] + [_line(event_id="leak", todo_id=token)]
    path = tmp_path / "leak.jsonl"
    path.write_text("\n".join(lines) + "\n")
    tip = state_tip(git_repo)
    redacting = loopx_git.open(git_repo, redact=True)
    with pytest.raises(LoopxError) as refused:
        redacting.events_import(GOAL, path.open("rb"), chunk_size=2)
    assert refused.value.message.startswith("line 6: ") and token not in refused.value.message
    assert state_tip(git_repo) == tip


def test_imported_history_is_not_the_latest_activity_and_the_cache_agrees_with_a_cold_fold(repo, git_repo, tmp_path):
    for n in range(3):
        repo.event_append(GOAL, "note", summary=f"native {n}")
    lines = [_line(event_id=f"old{i}", summary=f"older {i}") for i in range(25)]  # past the cache's save point
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(lines) + "\n")
    repo.events_import(GOAL, path.open("rb"))
    warm = [e.summary for e in repo.status(GOAL).latest_events]
    assert warm[:3] == ["native 2", "native 1", "native 0"]  # imported lines sort by their own (older) clock
    cold = loopx_git.open(git_repo)
    assert [e.summary for e in cold.status(GOAL).latest_events] == warm
    import shutil

    shutil.rmtree(git_repo / ".git" / "loopx", ignore_errors=True)  # no cache at all
    assert [e.summary for e in loopx_git.open(git_repo).status(GOAL).latest_events] == warm


def test_events_kind_takes_an_upstream_only_kind(cli, tmp_path):
    path = _write(tmp_path / "case.jsonl", _line(event_id="cr1", event_kind="compact_case_result"))
    assert cli.json("events", "import", "-g", GOAL, path)["imported"] == 1
    found = cli.json("events", "-g", GOAL, "--kind", "compact_case_result")
    assert [e["origin"]["event_id"] for e in found] == ["cr1"]
    assert cli("events", "-g", GOAL, "--kind", "made_up").code == 2

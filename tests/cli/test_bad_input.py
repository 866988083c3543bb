"""Bad input through the CLI (issue 9, items 10-12 and 14): every case is a clean refusal — exit 1,
``error[code]:`` naming the field and the rule, nothing written — never exit 3 or a traceback."""

from __future__ import annotations

import json

import pytest

from tests.conftest import GOAL, state_tip

DIGEST = "sha256:" + "ab" * 32


def refused(cli, git_repo, args, code, *fragments):
    """Run ``args``; it must exit 1 with ``error[code]`` and every fragment, and leave the ref alone."""
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 1, (result.code, result.err)
    assert result.err.startswith(f"error[{code}]: "), result.err
    for fragment in fragments:
        assert fragment in result.err, result.err
    assert "Traceback" not in result.err and result.out == ""
    assert state_tip(git_repo) == tip, "a refusal must not move the state ref"
    return result


@pytest.fixture
def seeded(cli):
    assert cli("todo", "add", "-g", GOAL, "--text", "seed", "--todo-id", "t1").code == 0
    assert cli("ledger", "add", "-g", GOAL, "--entry-id", "e1", "--claim", "c", "--action", "a").code == 0
    return cli


# --- item 10: internal errors on bad input -------------------------------------------------------


@pytest.mark.parametrize(
    "detail, fragments",
    [
        ("k=²", ["field 'detail'", "'²'", "digits other than 0-9"]),
        ("k=٣", ["field 'detail'", "digits other than 0-9"]),
        ("k=" + "9" * 5000, ["field 'detail'", "5000 digits", "64 bits"]),
        ("k=-" + "9" * 5000, ["field 'detail'", "5000 digits"]),
        ("k=" + "9" * 19, ["field 'details.k'", "out of range", "64 bits"]),
        ("k=\udcff", ["field 'details.k'", "not UTF-8", "rule: text on the state branch is UTF-8"]),
        ("\udcff=1", ["not UTF-8"]),
        ("novalue", ["field 'detail'", "KEY=VALUE"]),
    ],
)
def test_bad_details_are_refused(seeded, git_repo, detail, fragments):
    refused(
        seeded,
        git_repo,
        ["event", "append", "-g", GOAL, "--kind", "note", "--detail", detail],
        "invalid-field",
        *fragments,
    )


def test_a_detail_key_given_twice_is_refused(seeded, git_repo):
    refused(
        seeded,
        git_repo,
        ["event", "append", "-g", GOAL, "--kind", "note", "--detail", "k=1", "--detail", "k=2"],
        "invalid-field",
        "'k' is given twice",
    )


def test_details_that_fit_are_written_with_their_types(seeded):
    data = seeded.json(
        "event",
        "append",
        "-g",
        GOAL,
        "--kind",
        "quota",
        "--detail",
        "capacity=gpu",
        "--detail",
        "available=true",
        "--detail",
        f"n={2**63 - 1}",
        "--detail",
        "m=-7",
        "--detail",
        "v=1.5",
    )
    assert data["record"]["details"] == {"capacity": "gpu", "available": True, "n": 2**63 - 1, "m": -7, "v": "1.5"}


@pytest.mark.parametrize("text", ["\udcff", "caf\udce9 au lait"])
def test_text_that_is_not_utf8_is_refused_everywhere(seeded, git_repo, text):
    for args, field in (
        (["todo", "add", "-g", GOAL, "--text", text], "'text'"),
        (["event", "append", "-g", GOAL, "--kind", "note", "--summary", text], "'summary'"),
        (["ledger", "add", "-g", GOAL, "--claim", text, "--action", "a"], "'claim'"),
        (["goal", "update", "-g", GOAL, "--objective", text], "'objective'"),
        (
            ["refresh-state", "-g", GOAL, "--classification", "progress", "--recommended-action", text],
            "'recommended_action'",
        ),
    ):
        refused(seeded, git_repo, args, "invalid-field", field, "not UTF-8")


JSON_INPUTS = {
    "deep.json": (b"[" * 200_000 + b"]" * 200_000, "nests too deeply"),
    "nested.json": (b"[" * 500 + b"]" * 500, "nests more than 64 levels"),
    "big.json": (b'{"a": ' + b"9" * 100_000 + b"}", "a number too long to read"),
    "latin1.json": (b'{"a": "caf\xe9"}', "is not UTF-8"),
    "surrogate.json": (b'{"a": "\\ud800"}', "not text"),
    "broken.json": (b'{"a": ', "is not JSON"),
    "list.json": (b"[1, 2]", "not a JSON object"),
}


@pytest.mark.parametrize("name", sorted(JSON_INPUTS))
def test_hostile_json_files_are_refused(seeded, git_repo, tmp_path, name):
    data, problem = JSON_INPUTS[name]
    path = tmp_path / name
    path.write_bytes(data)
    refused(seeded, git_repo, ["ledger", "conformance", str(path)], "invalid-field", "field 'file'", problem)
    refused(
        seeded,
        git_repo,
        ["rollback", "record", "-g", GOAL, "--packet", str(path)],
        "invalid-field",
        "field 'packet'",
        problem,
    )


@pytest.mark.parametrize(
    "case",
    [
        {
            "entry": {"status": [], "verdict": {}, "next": 1, "evidence": 5},
            "previous_entry": {"verdict": "UNVERIFIABLE", "evidence": 3},
        },
        {"iteration": {"read_ledger_first": True, "actions_executed": "two"}},
        {
            "fire": {
                "max_iterations": 1,
                "timeout_seconds": 1,
                "approved_actions": [[1], {"kind": []}],
                "terminal_status": [],
            }
        },
        {"contract": 5, "iteration": [], "fire": "x", "headless_result": 7},
    ],
)
def test_conformance_of_oddly_typed_cases_reports_codes_not_crashes(seeded, tmp_path, case):
    path = tmp_path / "case.json"
    path.write_text(json.dumps({"name": "odd", "case": case}))
    result = seeded("ledger", "conformance", str(path), fmt="json")
    assert result.code == 1 and "Traceback" not in result.err, result.err
    assert json.loads(result.out)["failure_codes"]


def test_conformance_of_an_oddly_typed_seed_reports_codes_not_crashes(seeded, tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(
        json.dumps(
            {
                "conformance_fixture": {"a": 1, "b": []},
                "contract": {},
                "headless_scheduled_fire": {"terminal_status_values": [[1], {}]},
            }
        )
    )
    result = seeded("ledger", "conformance", str(path), fmt="json")
    assert result.code == 1, result.err
    report = json.loads(result.out)
    assert report["cases"]["a"] == ["ledger_missing"] and "terminal_status_missing" in report["failure_codes"]


# --- item 11: a trailing newline never passes -----------------------------------------------------


@pytest.mark.parametrize(
    "args, field",
    [
        (["todo", "add", "-g", GOAL, "--text", "x", "--resume-when", "todo_done:t1\n"], "'resume_when'"),
        (["todo", "add", "-g", GOAL, "--text", "x", "--task-repository", "owner/repo\n"], "'task_repository'"),
        (["todo", "add", "-g", GOAL, "--text", "x", "--todo-id", "t2\n"], "'todo_id'"),
        (["todo", "add", "-g", GOAL, "--text", "x", "--action-kind", "fix\n"], "'action_kind'"),
        (
            [
                "todo",
                "update",
                "-g",
                GOAL,
                "-t",
                "t1",
                "--status",
                "deferred",
                "--reason",
                "r",
                "--resume-when",
                "capacity_available:gpu\n",
            ],
            "'resume_when'",
        ),
        (["event", "append", "-g", GOAL, "--kind", "pr_merge", "--pr-ref", "org/repo#7\n"], "field 'pr_ref'"),
        (["event", "append", "-g", GOAL, "--kind", "note", "--commit-ref", "abcdef1\n"], "'code_refs.commit_ref'"),
        (["event", "append", "-g", GOAL, "--kind", "note", "--label", "ci\n"], "'labels.0'"),
        (["event", "append", "-g", GOAL, "--kind", "note", "--artifact-ref", "tests/x.py\n"], "'artifact_refs.0'"),
        (["agent", "register", "-g", GOAL, "--agent-id", "carol\n"], "'agent_id'"),
        (["refresh-state", "-g", GOAL, "--classification", "progress\n"], "'classification'"),
        (["events", "-g", GOAL, "--since", "2026-01-01\n"], "'since'"),
    ],
)
def test_a_trailing_newline_is_refused(seeded, git_repo, args, field):
    refused(seeded, git_repo, args, "invalid-field", field)


@pytest.mark.parametrize(
    "evidence", [f"command_output:{DIGEST}\n", "url:https://ci.example.com/runs/1\n", "test_path:tests/x.py\n"]
)
def test_ledger_evidence_with_a_trailing_newline_is_refused(seeded, git_repo, evidence):
    assert seeded("ledger", "next", "-g", GOAL, "--agent-id", "alice").code == 0
    refused(
        seeded,
        git_repo,
        [
            "ledger",
            "record",
            "-g",
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
            evidence,
            "--agent-id",
            "alice",
        ],
        "invalid-field",
        "field 'evidence'",
    )


# --- item 12: every reference is checked -------------------------------------------------------------


@pytest.mark.parametrize(
    "args, code, fragments",
    [
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--agent-id", "ghost"],
            "unknown-agent",
            ["agent_id 'ghost'", "registered: alice, bob"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "handoff", "--agent-id", "alice", "--to-agent-id", "ghost"],
            "unknown-agent",
            ["to_agent_id 'ghost'", "registered: alice, bob"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--todo-id", "ghost"],
            "not-found",
            ["todo_id 'ghost'", "todos in play: t1"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--caused-by", "evt_ghost"],
            "unknown-event",
            ["caused_by 'evt_ghost'", "rule: an event named by a command exists"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--source-event-id", "evt_ghost"],
            "unknown-event",
            ["source_event_id 'evt_ghost'"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--run-id", "run_ghost"],
            "unknown-run",
            ["run_id 'run_ghost'"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--commit-ref", ""],
            "invalid-field",
            ["field 'commit_ref'", "empty"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--commit-ref", "a" * 41],
            "invalid-field",
            ["'code_refs.commit_ref'", "7-40", "64"],
        ),
        (
            ["event", "append", "-g", GOAL, "--kind", "note", "--revert-of", "a" * 63],
            "invalid-field",
            ["'code_refs.revert_of'"],
        ),
        (["event", "append", "-g", GOAL, "--kind", "handoff", "--to-agent-id", ""], "invalid-field", ["'to_agent_id'"]),
        (["event", "append", "-g", GOAL, "--kind", "note", "--caused-by", ""], "invalid-field", ["'caused_by'"]),
        (["ledger", "next", "-g", GOAL, "--agent-id", "ghost"], "unknown-agent", ["agent_id 'ghost'"]),
        (
            ["ledger", "add", "-g", GOAL, "--entry-id", "", "--claim", "c", "--action", "a"],
            "invalid-field",
            ["field 'entry_id'", "empty"],
        ),
        (
            ["ledger", "add", "-g", GOAL, "--claim", "c", "--action", "a", "--agent-id", "ghost"],
            "unknown-agent",
            ["agent_id 'ghost'"],
        ),
        (
            [
                "ledger",
                "record",
                "-g",
                GOAL,
                "--entry-id",
                "e1",
                "--status",
                "blocked",
                "--verdict",
                "DRIFT",
                "--next",
                "retry",
                "--agent-id",
                "ghost",
            ],
            "unknown-agent",
            ["agent_id 'ghost'"],
        ),
        (
            [
                "ledger",
                "record",
                "-g",
                GOAL,
                "--entry-id",
                "ghost",
                "--status",
                "blocked",
                "--verdict",
                "DRIFT",
                "--next",
                "retry",
            ],
            "not-found",
            ["entry_id 'ghost'", "entries: e1"],
        ),
        (
            ["status", "-g", GOAL, "--agent-id", "ghost"],
            "unknown-agent",
            ["agent_id 'ghost'", "registered: alice, bob"],
        ),
        (["todo", "add", "-g", GOAL, "--text", "x", "--agent-id", "ghost"], "unknown-agent", ["agent_id 'ghost'"]),
        (
            ["todo", "complete", "-g", GOAL, "-t", "t1", "--evidence", "x", "--agent-id", "ghost"],
            "unknown-agent",
            ["agent_id 'ghost'"],
        ),
        (
            ["goal", "update", "-g", GOAL, "--status", "paused", "--agent-id", "ghost"],
            "unknown-agent",
            ["agent_id 'ghost'"],
        ),
        (
            ["refresh-state", "-g", GOAL, "--classification", "progress", "--agent-id", "ghost"],
            "unknown-agent",
            ["agent_id 'ghost'"],
        ),
        (
            ["refresh-state", "-g", GOAL, "--classification", "progress", "--todo-id", "ghost"],
            "not-found",
            ["todo_id 'ghost'"],
        ),
        (["rollback", "-g", GOAL, "--commit", "HEAD", "--agent-id", "ghost"], "unknown-agent", ["agent_id 'ghost'"]),
        (["rollback", "-g", GOAL, "--commit", "HEAD", "--reason", ""], "invalid-field", ["field 'reason'"]),
        (
            ["todo", "add", "-g", GOAL, "--text", "x", "--claimed-by", ""],
            "invalid-field",
            ["field 'claimed_by'", "empty"],
        ),
        (["todo", "add", "-g", GOAL, "--text", "x", "--resume-when", ""], "invalid-field", ["field 'resume_when'"]),
        (["todo", "add", "-g", GOAL, "--text", "x", "--unblocks-todo-id", ""], "invalid-field", ["'unblocks_todo_id'"]),
        (
            ["todo", "update", "-g", GOAL, "-t", "t1", "--status", "deferred", "--reason", "r", "--resume-when", ""],
            "invalid-field",
            ["field 'resume_when'"],
        ),
        (
            [
                "ledger",
                "record",
                "-g",
                GOAL,
                "--entry-id",
                "e1",
                "--status",
                "blocked",
                "--verdict",
                "DRIFT",
                "--next",
                "ask_user",
                "--question",
                "",
            ],
            "invalid-field",
            ["field 'question'"],
        ),
        (
            [
                "fire",
                "-g",
                GOAL,
                "--max-iterations",
                "1",
                "--timeout",
                "9",
                "--approver-ceiling",
                "read_only",
                "--agent-id",
                "",
                "--",
                "true",
            ],
            "invalid-field",
            ["field 'agent_id'", "empty"],
        ),
    ],
)
def test_unknown_references_are_refused_with_the_known_ones(seeded, git_repo, args, code, fragments):
    refused(seeded, git_repo, args, code, *fragments)


def test_a_long_list_of_known_ids_is_bounded(cli, git_repo):
    for n in range(15):
        assert cli("agent", "register", "-g", GOAL, "--agent-id", f"agent{n:02d}").code == 0
    result = refused(
        cli,
        git_repo,
        ["event", "append", "-g", GOAL, "--kind", "note", "--agent-id", "ghost"],
        "unknown-agent",
        "and 7 more",
    )
    assert "agent09" in result.err and "agent10" not in result.err  # 17 agents, the first 10 listed, 7 counted


def test_known_references_are_accepted(seeded, git_repo):
    first = seeded.json("event", "append", "-g", GOAL, "--kind", "note", "--agent-id", "alice", "--todo-id", "t1")
    run = seeded.json("refresh-state", "-g", GOAL, "--classification", "progress", "--agent-id", "alice")
    data = seeded.json(
        "event",
        "append",
        "-g",
        GOAL,
        "--kind",
        "handoff",
        "--agent-id",
        "alice",
        "--to-agent-id",
        "bob",
        "--caused-by",
        first["record"]["event_id"],
        "--run-id",
        run["record"]["run_id"],
        "--commit-ref",
        "a" * 40,
        "--revert-of",
        "b" * 64,
    )
    assert data["record"]["causality"]["caused_by"] == first["record"]["event_id"]
    assert data["record"]["code_refs"] == {"commit_ref": "a" * 40, "revert_of": "b" * 64, "pr_ref": None}


def test_a_rerun_with_the_cache_still_knows_the_events(seeded, git_repo):
    """The event ids live in the cached fold: a later process, which loads the cache, checks them too."""
    from loopx_git.cli.main import run_cli  # noqa: F401  (the in-process CLI saves and loads the cache)

    first = seeded.json("event", "append", "-g", GOAL, "--kind", "note", "--summary", "one")
    assert seeded("status", "-g", GOAL).code == 0  # a read: state from the cache
    assert (
        seeded.json("event", "append", "-g", GOAL, "--kind", "note", "--caused-by", first["event_ids"][0])["changed"]
        is True
    )
    refused(
        seeded, git_repo, ["event", "append", "-g", GOAL, "--kind", "note", "--caused-by", "evt_nope"], "unknown-event"
    )


@pytest.mark.parametrize(
    "bounds, field",
    [
        (["--timeout", "nan"], "'timeout'"),
        (["--timeout", "inf"], "'timeout'"),
        (["--timeout", "1e12"], "'timeout'"),
        (["--timeout", "60", "--iteration-timeout", "nan"], "'iteration_timeout'"),
        (["--timeout", "60", "--iteration-timeout", "inf"], "'iteration_timeout'"),
    ],
)
def test_a_fire_with_an_unbounded_timeout_is_refused(seeded, git_repo, bounds, field):
    refused(
        seeded,
        git_repo,
        ["fire", "-g", GOAL, "--max-iterations", "1", *bounds, "--approver-ceiling", "read_only", "--", "true"],
        "headless_fire_unbounded",
        field,
        "30 days",
    )


def test_a_fire_for_an_unregistered_agent_is_refused_before_it_runs(seeded, git_repo):
    refused(
        seeded,
        git_repo,
        [
            "fire",
            "-g",
            GOAL,
            "--max-iterations",
            "1",
            "--timeout",
            "60",
            "--approver-ceiling",
            "read_only",
            "--agent-id",
            "ghost",
            "--",
            "true",
        ],
        "unknown-agent",
        "agent_id 'ghost'",
    )


def _warnings(data: dict) -> list[str]:
    return [w["message"] for w in data["warnings"] if w.get("code") == "evidence-path-missing"]


def test_evidence_naming_a_missing_path_is_written_with_a_warning(seeded, git_repo):
    data = seeded.json(
        "todo",
        "complete",
        "-g",
        GOAL,
        "-t",
        "t1",
        "--evidence",
        "tests/test_not_yet.py::test_it",
        "--evidence",
        "README.md",
        "--evidence",
        "https://ci.example.com/runs/1",
        "--evidence",
        "all 40 tests pass",
    )
    assert data["changed"] is True and data["commit"] == state_tip(git_repo)
    assert data["record"]["evidence"][0] == "tests/test_not_yet.py::test_it"
    [message] = _warnings(data)
    assert "'tests/test_not_yet.py'" in message and "neither in the work tree nor in HEAD" in message
    assert [w["field"] for w in data["warnings"]] == ["evidence"]


def test_evidence_in_the_work_tree_but_not_committed_gets_no_warning(seeded, git_repo):
    (git_repo / "tests").mkdir()
    (git_repo / "tests" / "test_new.py").write_text("def test(): pass\n")
    data = seeded.json(
        "refresh-state",
        "-g",
        GOAL,
        "--classification",
        "progress",
        "--evidence",
        "tests/test_new.py",
        "--evidence",
        "docs/missing.md",
    )
    assert [m.split("'")[1] for m in _warnings(data)] == ["docs/missing.md"]


def test_ledger_test_path_evidence_is_checked_other_kinds_are_not(seeded, git_repo):
    assert seeded("ledger", "next", "-g", GOAL, "--agent-id", "alice").code == 0
    data = seeded.json(
        "ledger",
        "record",
        "-g",
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
        "test_path:tests/test_gone.py",
        "--evidence",
        "diff_ref:src/also_gone.py",
        "--evidence",
        "url:https://ci.example.com/x",
        "--agent-id",
        "alice",
    )
    assert [m.split("'")[1] for m in _warnings(data)] == ["tests/test_gone.py"]
    text = seeded("todo", "complete", "-g", GOAL, "-t", "t1", "--evidence", "src/nowhere.py")
    assert text.code == 0 and "warning: field 'evidence': 'src/nowhere.py'" in text.err


# --- item 14: the more specific ledger rule wins ------------------------------------------------------


def test_unverifiable_turned_match_without_new_evidence_is_inherited_confidence(seeded, git_repo):
    assert seeded("ledger", "next", "-g", GOAL, "--agent-id", "alice").code == 0
    assert (
        seeded(
            "ledger",
            "record",
            "-g",
            GOAL,
            "--entry-id",
            "e1",
            "--status",
            "blocked",
            "--verdict",
            "UNVERIFIABLE",
            "--next",
            "ask_user",
            "--evidence",
            "test_path:tests/test_assets.py",
            "--agent-id",
            "alice",
        ).code
        == 0
    )
    for evidence in ([], ["--evidence", "test_path:tests/test_assets.py"]):  # none, or only what it had
        refused(
            seeded,
            git_repo,
            [
                "ledger",
                "record",
                "-g",
                GOAL,
                "--entry-id",
                "e1",
                "--status",
                "done",
                "--verdict",
                "MATCH",
                "--next",
                "resume",
                *evidence,
            ],
            "unverifiable_inherited_confidence",
            "field 'verdict'",
            "never inherits confidence",
        )
    done = seeded.json(
        "ledger",
        "record",
        "-g",
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
        f"command_output:{DIGEST}",
    )
    assert done["record"]["verdict"] == "MATCH"


def test_done_without_evidence_on_a_plain_entry_is_still_evidence_missing(seeded, git_repo):
    assert seeded("ledger", "next", "-g", GOAL, "--agent-id", "alice").code == 0
    refused(
        seeded,
        git_repo,
        [
            "ledger",
            "record",
            "-g",
            GOAL,
            "--entry-id",
            "e1",
            "--status",
            "done",
            "--verdict",
            "MATCH",
            "--next",
            "resume",
            "--agent-id",
            "alice",
        ],
        "evidence_missing",
    )

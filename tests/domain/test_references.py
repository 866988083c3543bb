"""The same refusals through the Python API (the domain checks them, not the CLI): references that
must exist, values that must fit JSON, and records an older version wrote that must stay readable."""

from __future__ import annotations

import pytest

from loopx_git.domain.write import EventMaker, Write
from loopx_git.errors import LoopxError
from loopx_git.model.event import PrMerge
from loopx_git.model.event_head import FieldChange
from loopx_git.model.todo import TodoAdd
from tests.conftest import GOAL, NOW


def refused(repo, call, code: str, *fragments: str) -> LoopxError:
    before = repo.tip
    with pytest.raises(LoopxError) as info:
        call()
    assert info.value.code == code, info.value.message
    for fragment in fragments:
        assert fragment in info.value.message, info.value.message
    assert repo.tip == before, "a refused command must not move the state ref"
    return info.value


@pytest.mark.parametrize(
    "details, fragment",
    [
        ({"k": float("nan")}, "not a finite number"),
        ({"k": float("inf")}, "not a finite number"),
        ({"k": 10**5000}, "out of range"),
        ({"k": -(2**63) - 1}, "out of range"),
        ({"k": 2**63}, "out of range"),
        ([("k", 1)], "not a mapping"),
    ],
    ids=["nan", "inf", "5001-digits", "below-int64", "above-int64", "not-a-dict"],
)
def test_details_must_fit_json(repo, details, fragment):
    refused(
        repo, lambda: repo.event_append(GOAL, "note", details=details, now=NOW), "invalid-field", "'details", fragment
    )


def test_details_at_the_edges_of_64_bits_are_written(repo):
    event = repo.event_append(GOAL, "note", details={"lo": -(2**63), "hi": 2**63 - 1, "f": 0.5}, now=NOW).record
    assert event.details == {"lo": -(2**63), "hi": 2**63 - 1, "f": 0.5}


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda r: r.event_append(GOAL, "note", labels="ci", now=NOW), "'labels'"),
        (lambda r: r.todo_complete(GOAL, "t1", evidence="tests/x.py", now=NOW), "'evidence'"),
        (lambda r: r.refresh_state(GOAL, "progress", evidence="tests/x.py", now=NOW), "'evidence'"),
        (lambda r: r.goal_update(GOAL, add_acceptance="fast", now=NOW), "'add_acceptance'"),
    ],
)
def test_one_string_where_a_list_belongs_is_refused(repo, call, field):
    repo.todo_add(GOAL, "x", todo_id="t1", now=NOW)
    refused(repo, lambda: call(repo), "invalid-field", field, "one string where a list belongs")


@pytest.mark.parametrize("scale", [-1, 2**53, 10**5000], ids=["negative", "2^53", "5001-digits"])
def test_delivery_batch_scale_is_bounded(repo, scale):
    refused(
        repo,
        lambda: repo.refresh_state(GOAL, "progress", delivery_batch_scale=scale, now=NOW),
        "invalid-field",
        "'delivery_batch_scale'",
    )


def test_run_ids_are_unique_and_never_empty(repo):
    repo.refresh_state(GOAL, "progress", run_id="run-1", now=NOW)
    refused(repo, lambda: repo.refresh_state(GOAL, "progress", run_id="run-1", now=NOW), "run-exists", "'run-1'")
    refused(
        repo, lambda: repo.refresh_state(GOAL, "progress", run_id="", now=NOW), "invalid-field", "'run_id'", "empty"
    )
    assert repo.event_append(GOAL, "validation", run_id="run-1", now=NOW).record.run_id == "run-1"


def test_references_are_checked_by_the_api(repo):
    refused(
        repo,
        lambda: repo.event_append(GOAL, "note", agent_id="ghost", now=NOW),
        "unknown-agent",
        "registered: alice, bob",
    )
    refused(repo, lambda: repo.event_append(GOAL, "note", caused_by="evt_ghost", now=NOW), "unknown-event")
    refused(repo, lambda: repo.ledger_next(GOAL, agent_id="ghost", now=NOW), "unknown-agent")
    refused(repo, lambda: repo.ledger_add(GOAL, "c", "a", entry_id="", now=NOW), "invalid-field", "'entry_id'")
    refused(repo, lambda: repo.status(GOAL, "ghost"), "unknown-agent")
    refused(repo, lambda: repo.todo_suggest(GOAL, "x", actor="ghost", now=NOW), "unknown-agent")
    refused(repo, lambda: repo.record_rollback(GOAL, {}, actor="ghost", now=NOW), "unknown-agent")
    assert repo.status(GOAL, "alice").agent_id == "alice"


def test_a_packet_nested_past_the_stack_is_a_refusal(repo):
    deep: list = []
    node = deep
    for _ in range(100_000):
        node.append([])
        node = node[0]
    refused(repo, lambda: repo.record_rollback(GOAL, {"packet_id": deep}, now=NOW), "invalid-field", "'packet_id'")
    refused(repo, lambda: repo.record_rollback(GOAL, [1], now=NOW), "invalid-field")


def test_text_that_is_not_utf8_is_refused_by_the_api(repo):
    refused(repo, lambda: repo.todo_add(GOAL, "caf\udce9", now=NOW), "invalid-field", "'text'", "not UTF-8")
    refused(
        repo, lambda: repo.event_append(GOAL, "note", details={"k": "\udcff"}, now=NOW), "invalid-field", "'details.k'"
    )


def test_ledger_evidence_given_as_a_dict_meets_todays_rules(repo):
    repo.ledger_add(GOAL, "c", "a", entry_id="e1", now=NOW)
    repo.ledger_next(GOAL, agent_id="alice", now=NOW)
    refused(
        repo,
        lambda: repo.ledger_record(
            GOAL,
            "e1",
            status="done",
            verdict="MATCH",
            next="resume",
            agent_id="alice",
            evidence=[{"kind": "url", "ref": "https://ci.example.com/1\n"}],
            now=NOW,
        ),
        "invalid-field",
        "http(s) URL",
    )


def test_records_an_older_version_wrote_with_a_final_newline_stay_readable(repo, git_repo):
    """Before item 11 a final newline passed (`$` in Python's re); such records are still read, so no
    branch becomes unreadable, while every new write is held to the exact rule."""

    def legacy(state):
        maker = EventMaker(state.goals[GOAL], NOW)
        todo = maker.make(
            TodoAdd,
            goal_id=GOAL,
            todo_id="old",
            changes=[
                FieldChange(field="text", after="written by 0.x"),
                FieldChange(field="updated_at", after=NOW),
                FieldChange(field="status", after="deferred"),
                FieldChange(field="task_repository", after="owner/repo\n"),
                FieldChange(field="resume_when", after="pr_merged:#7\n"),
            ],
        )
        merge = PrMerge.model_validate(
            {
                "event_id": "evt_legacy_merge",
                "goal_id": GOAL,
                "recorded_at": NOW,
                "lamport": todo.lamport + 1,
                "code_refs": {"pr_ref": "owner/repo#7\n", "commit_ref": "a" * 41},
            }
        )
        return Write("legacy", "records as an older version wrote them", GOAL, None, [todo, merge])

    repo.apply(legacy)
    fresh = type(repo).open(git_repo)
    todo = fresh.todo(GOAL, "old")
    assert todo.task_repository == "owner/repo\n" and todo.resume_condition.pr_number == 7
    assert [e.event_id for e in fresh.events(GOAL, kind="pr_merge")] == ["evt_legacy_merge"]
    assert fresh.status(GOAL).counts.deferred == 1
    refused(
        fresh,
        lambda: fresh.todo_add(GOAL, "new", task_repository="owner/repo\n", now=NOW),
        "invalid-field",
        "'task_repository'",
    )
    fresh.close()

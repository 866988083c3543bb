"""Every event kind: registered, JSON round-trip, and a fold step."""

from __future__ import annotations

import json

import pytest

from loopx_git.errors import FormatError, ValidationError
from loopx_git.model.event import EVENT_ADAPTER, EVENT_CLASSES, EVENT_KINDS
from loopx_git.model.fold import fold
from loopx_git.model.state import digest
from loopx_git.store.records import encode, parse_event

BASE = {"goal_id": "g1", "recorded_at": "2026-03-01T10:00:00Z", "lamport": 1}
GOAL_FIELDS = [
    {"field": "objective", "after": "ship"},
    {"field": "created_at", "after": BASE["recorded_at"]},
    {"field": "updated_at", "after": BASE["recorded_at"]},
]
TODO_FIELDS = [{"field": "text", "after": "do it"}, {"field": "updated_at", "after": BASE["recorded_at"]}]
SUGGEST_FIELDS = TODO_FIELDS + [{"field": "created_at", "after": BASE["recorded_at"]}]

PAYLOADS = {
    "goal_create": {"changes": GOAL_FIELDS},
    "goal_update": {"changes": [{"field": "status", "before": "active", "after": "paused"}]},
    "agent_register": {"agent_id": "alice", "changes": [{"field": "registered_at", "after": BASE["recorded_at"]}]},
    "todo_add": {"todo_id": "t1", "changes": TODO_FIELDS},
    "todo_claim": {"todo_id": "t1", "agent_id": "alice", "changes": [{"field": "claimed_by", "after": "alice"}]},
    "todo_update": {"todo_id": "t1", "changes": [{"field": "status", "before": "open", "after": "blocked"}]},
    "todo_resume": {"todo_id": "t1", "changes": [{"field": "status", "before": "deferred", "after": "open"}]},
    "todo_complete": {"todo_id": "t1", "changes": [{"field": "status", "before": "open", "after": "done"}]},
    "todo_supersede": {"todo_id": "t1", "changes": [{"field": "superseded_by", "after": "t2"}]},
    "todo_suggest": {"todo_id": "s1", "changes": SUGGEST_FIELDS},
    "todo_promote": {"todo_id": "s1", "changes": TODO_FIELDS},
    "pr_merge": {"code_refs": {"pr_ref": "org/repo#7"}},
    "validation": {"artifact_refs": ["tests/test_x.py"]},
    "refresh_state": {"run_id": "run_1"},
    "handoff": {"agent_id": "alice", "handoff": {"to_agent_id": "bob"}},
    "quota": {"details": {"capacity": "gpu", "available": True}},
    "repair": {"summary": "re-derived documents"},
    "failure": {"summary": "CI failed", "labels": ["ci"]},
    "note": {},
    "rollback_plan": {
        "packet": {
            "packet_id": "rb1",
            "goal_id": "g1",
            "created_at": BASE["recorded_at"],
            "trigger": {"kind": "operator_request", "summary": "undo a claim"},
            "decision": {
                "owner": "user",
                "required": False,
                "reason": "mistake",
                "default_safe_action": "apply_state_compensation",
            },
            "plan": [
                {
                    "step_id": "s1",
                    "kind": "state_compensation",
                    "action": "release",
                    "requires_gate": False,
                    "destructive": False,
                    "automatable_by_agent": True,
                }
            ],
        }
    },
    "todo_compensate": {
        "todo_id": "t1",
        "compensates": "evt_1",
        "packet_id": "rb1",
        "changes": [{"field": "claimed_by", "before": "alice", "after": None}],
    },
    "goal_compensate": {
        "compensates": "evt_2",
        "packet_id": "rb1",
        "changes": [{"field": "status", "before": "paused", "after": "active"}],
    },
    "fire": {
        "fire": {
            "fire_id": "fire_1",
            "terminal_status": "ok",
            "stop_condition": "ledger_empty",
            "iterations_run": 0,
            "max_iterations": 3,
            "timeout_seconds": 60.0,
            "iteration_timeout_seconds": 60.0,
            "approver_ceiling": "read_only",
            "command": "agent-step",
            "duration_seconds": 0.1,
            "started_at": BASE["recorded_at"],
            "ended_at": BASE["recorded_at"],
        }
    },
    "ledger_add": {
        "entry_id": "e1",
        "changes": [
            {"field": "claim", "after": "CI is red because of X"},
            {"field": "action", "after": "fix_x"},
            {"field": "created_at", "after": BASE["recorded_at"]},
            {"field": "updated_at", "after": BASE["recorded_at"]},
        ],
    },
    "ledger_select": {
        "entry_id": "e1",
        "agent_id": "alice",
        "changes": [
            {"field": "status", "before": "pending", "after": "active"},
            {"field": "selected_by", "after": "alice"},
        ],
    },
    "ledger_record": {
        "entry_id": "e1",
        "evidence": [{"kind": "test_path", "ref": "tests/test_x.py"}],
        "changes": [
            {"field": "status", "before": "active", "after": "done"},
            {"field": "verdict", "after": "MATCH"},
            {"field": "next", "after": "resume"},
        ],
    },
    "gate_open": {
        "gate_id": "gate1",
        "changes": [
            {"field": "owner_class", "after": "user"},
            {"field": "blocks", "after": ["t1"]},
            {"field": "question", "after": "ship it?"},
            {"field": "created_at", "after": BASE["recorded_at"]},
            {"field": "updated_at", "after": BASE["recorded_at"]},
        ],
    },
    "handoff_prepare": {
        "handoff_id": "h1",
        "agent_id": "alice",
        "changes": [
            {"field": "from_agent_id", "after": "alice"},
            {"field": "to_agent_id", "after": "bob"},
            {"field": "todo_ids", "after": ["t1"]},
            {"field": "stop_condition", "after": "tests pass"},
            {"field": "prepared_at", "after": BASE["recorded_at"]},
            {"field": "updated_at", "after": BASE["recorded_at"]},
        ],
    },
    "handoff_adopt": {
        "handoff_id": "h1",
        "agent_id": "bob",
        "changes": [{"field": "status", "before": "prepared", "after": "adopted"}],
    },
    "handoff_cancel": {
        "handoff_id": "h1",
        "changes": [{"field": "status", "before": "prepared", "after": "cancelled"}],
    },
    "quota_spend": {"run_id": "run1", "agent_id": "alice"},
    "rollout_import": {
        "todo_id": "t1",
        "origin": {
            "event_id": "up1",
            "kind": "todo_update",
            "goal_id": "upstream",
            "recorded_at": "2026-03-01T18:00:00+08:00",
        },
    },
    "reward_add": {
        "run_id": "run1",
        "reward": {
            "reward_id": "rw1",
            "run_id": "run1",
            "judged_at": BASE["recorded_at"],
            "label": "accept",
            "polarity": "positive",
            "reason": "clean",
        },
    },
    "gate_decide": {
        "gate_id": "gate1",
        "changes": [
            {"field": "status", "before": "open", "after": "approved"},
            {"field": "decision", "after": "approve"},
            {"field": "reason", "after": "reviewed"},
            {"field": "decided_by_class", "after": "user"},
        ],
    },
    "explore_node_add": {
        "node_id": "n1",
        "changes": [
            {"field": "kind", "after": "hypothesis"},
            {"field": "title", "after": "A holds"},
            {"field": "created_at", "after": BASE["recorded_at"]},
            {"field": "updated_at", "after": BASE["recorded_at"]},
        ],
    },
    "explore_node_update": {"node_id": "n1", "changes": [{"field": "status", "before": "open", "after": "exploring"}]},
    "explore_edge_add": {
        "node_id": "n1",
        "edge": {"to_node_id": "n1", "edge_type": "supports", "created_at": BASE["recorded_at"]},
    },
    "explore_finding_add": {
        "node_id": "n1",
        "finding": {
            "finding_id": "f1",
            "state": "tentative",
            "evidence_ids": ["ev1"],
            "recorded_at": BASE["recorded_at"],
        },
    },
    "explore_observe": {
        "node_id": "n1",
        "fingerprint": "05fa3a3beb7b818c",
        "observation": {
            "explore_node_id": "n1",
            "progress": {"work_item_id": "t1", "result_class": "advanced", "evidence_ids": ["ev1"]},
        },
    },
}


def make(kind: str, n: int = 1, **extra):
    return EVENT_ADAPTER.validate_python(
        {**BASE, "event_id": f"evt_{kind}_{n}", "event_kind": kind, "lamport": n, **PAYLOADS[kind], **extra}
    )


def test_every_kind_is_registered_and_has_a_test_payload():
    assert set(EVENT_KINDS) == set(PAYLOADS)
    assert len(EVENT_CLASSES) == len(set(EVENT_KINDS))


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_json_round_trip(kind):
    event = make(kind)
    data = encode(event)
    assert data.endswith(b"\n") and json.loads(data) == json.loads(json.dumps(json.loads(data), sort_keys=True))
    path = f"goals/g1/events/2026/03/01/10/{event.event_id}.json"
    assert parse_event(data, path) == event
    assert encode(parse_event(data, path)) == data


PRE = {
    "goal_update": ["goal_create"],
    "todo_claim": ["todo_add"],
    "todo_update": ["todo_add"],
    "todo_resume": ["todo_add"],
    "todo_complete": ["todo_add"],
    "todo_supersede": ["todo_add"],
    "todo_promote": ["todo_suggest"],
    "todo_compensate": ["todo_add", "todo_claim"],
    "goal_compensate": ["goal_create", "goal_update"],
    "ledger_select": ["ledger_add"],
    "ledger_record": ["ledger_add", "ledger_select"],
    "gate_decide": ["gate_open"],
    "handoff_adopt": ["handoff_prepare"],
    "handoff_cancel": ["handoff_prepare"],
    "explore_node_update": ["explore_node_add"],
    "explore_edge_add": ["explore_node_add"],
    "explore_finding_add": ["explore_node_add"],
    "explore_observe": ["explore_node_add"],
}


@pytest.mark.parametrize("kind", sorted(PAYLOADS))
def test_fold_step(kind):
    events = [make(k, i + 1) for i, k in enumerate(PRE.get(kind, []))] + [make(kind, len(PRE.get(kind, [])) + 1)]
    goal = fold(events).goals["g1"]
    assert goal.event_count == len(events) and goal.lamport == len(events)
    assert goal.recent[-1].event_kind == kind
    expected = {
        "goal_create": lambda: goal.goal.objective == "ship",
        "goal_update": lambda: goal.goal.status == "paused",
        "agent_register": lambda: "alice" in goal.agents,
        "todo_add": lambda: goal.todos["t1"].text == "do it",
        "todo_claim": lambda: goal.todos["t1"].claimed_by == "alice",
        "todo_update": lambda: goal.todos["t1"].status == "blocked",
        "todo_resume": lambda: goal.todos["t1"].status == "open",
        "todo_complete": lambda: goal.todos["t1"].status == "done",
        "todo_supersede": lambda: goal.todos["t1"].superseded_by == "t2",
        "todo_suggest": lambda: goal.suggested["s1"].text == "do it",
        "todo_promote": lambda: goal.suggested["s1"].promoted and goal.todos["s1"].status == "open",
        "pr_merge": lambda: ("org/repo", 7) in goal.merged_prs,
        "quota": lambda: "gpu" in goal.capacities,
        "rollback_plan": lambda: goal.rollbacks["rb1"].trigger.kind == "operator_request",
        "todo_compensate": lambda: goal.todos["t1"].claimed_by is None and not goal.conflicts,
        "goal_compensate": lambda: goal.goal.status == "active" and not goal.conflicts,
        "ledger_add": lambda: goal.ledger["e1"].status == "pending" and goal.ledger["e1"].action == "fix_x",
        "ledger_select": lambda: goal.ledger["e1"].status == "active" and goal.ledger["e1"].selected_by == "alice",
        "ledger_record": lambda: goal.ledger["e1"].verdict == "MATCH" and len(goal.ledger["e1"].evidence) == 1,
        "gate_open": lambda: goal.gates["gate1"].status == "open" and goal.gates["gate1"].blocks == ["t1"],
        "gate_decide": lambda: goal.gates["gate1"].status == "approved" and not goal.conflicts,
        "handoff_prepare": lambda: goal.handoffs["h1"].status == "prepared" and goal.handoffs["h1"].todo_ids == ["t1"],
        "handoff_adopt": lambda: goal.handoffs["h1"].status == "adopted" and not goal.conflicts,
        "handoff_cancel": lambda: goal.handoffs["h1"].status == "cancelled" and not goal.conflicts,
        "quota_spend": lambda: goal.spends["run1"][2] == "alice",
        "reward_add": lambda: goal.rewards["rw1"].polarity == "positive" and goal.todos == {},
        "explore_node_add": lambda: goal.explore["n1"].title == "A holds" and goal.explore["n1"].revision == 1,
        "explore_node_update": lambda: goal.explore["n1"].status == "exploring" and goal.explore["n1"].revision == 2,
        "explore_edge_add": lambda: goal.explore["n1"].edges[0].edge_type == "supports",
        "explore_finding_add": lambda: goal.explore["n1"].findings[0].finding_id == "f1",
        "explore_observe": lambda: (
            goal.explore["n1"].current_observation == "05fa3a3beb7b818c"
            and goal.research["05fa3a3beb7b818c"].evidence_ids == ("ev1",)
        ),
    }.get(kind, lambda: goal.todos == {} and not goal.conflicts)
    assert expected()


def test_fold_order_does_not_depend_on_arrival_order():
    events = [make("todo_add", 1), make("todo_claim", 2), make("todo_complete", 3)]
    assert fold(events).goals["g1"].todos == fold(list(reversed(events))).goals["g1"].todos


def test_second_claim_in_fold_order_becomes_a_recorded_conflict():
    events = [
        make("todo_add", 1),
        make("todo_claim", 2),
        make("todo_claim", 3, agent_id="bob", changes=[{"field": "claimed_by", "after": "bob"}]),
    ]
    goal = fold(events).goals["g1"]
    assert goal.todos["t1"].claimed_by == "alice"
    assert [c.kind for c in goal.conflicts] == ["claim_conflict"] and goal.conflicts[0].agent_id == "bob"


def test_unknown_kind_is_a_format_error_with_upgrade_hint():
    data = json.dumps({**BASE, "event_id": "evt_1", "event_kind": "teleport"}).encode()
    with pytest.raises(FormatError) as info:
        parse_event(data, "goals/g1/events/2026/03/01/10/evt_1.json")
    assert "unknown event kind" in info.value.message and "upgrade" in info.value.hint


def test_newer_schema_version_is_a_format_error():
    data = json.dumps(
        {**BASE, "event_id": "evt_1", "event_kind": "note", "schema_version": "loopx_rollout_event_v9"}
    ).encode()
    with pytest.raises(FormatError):
        parse_event(data, "goals/g1/events/2026/03/01/10/evt_1.json")


@pytest.mark.parametrize(
    "extra, where",
    [
        ({"surprise": 1}, "surprise"),
        ({"artifact_refs": ["/etc/passwd"]}, "artifact_refs"),
        ({"artifact_refs": ["docs/../../x"]}, "artifact_refs"),
        ({"recorded_at": "2026-03-01 10:00"}, "recorded_at"),
        ({"agent_id": "a/b"}, "agent_id"),
        ({"lamport": 0}, "lamport"),
    ],
)
def test_invalid_records_are_refused_naming_the_field(extra, where):
    data = json.dumps({**BASE, "event_id": "evt_1", "event_kind": "note", **extra}).encode()
    with pytest.raises(ValidationError) as info:
        parse_event(data, "goals/g1/events/2026/03/01/10/evt_1.json")
    assert where in info.value.message


def test_event_in_the_wrong_shard_is_refused():
    data = encode(make("note"))
    with pytest.raises(ValidationError, match="hour shard"):
        parse_event(data, "goals/g1/events/2026/03/01/11/evt_note_1.json")


def test_events_without_join_keys_are_allowed_and_marked():
    goal = fold([make("note")]).goals["g1"]
    assert goal.recent[-1].has_join_key is False and digest(goal.recent[-1]).has_join_key is False


@pytest.mark.parametrize("value", [None, "a", True, False, 0, 1, 2.5, ["x"], []])
def test_field_change_values_keep_their_json_type(value):
    from loopx_git.model.event_head import FieldChange

    parsed = FieldChange.model_validate_json(FieldChange(field="f", after=value).model_dump_json())
    assert parsed.after == value and type(parsed.after) is type(value)


def test_new_entity_events_leave_empty_fields_out_and_fold_to_the_same_todo():
    from loopx_git.domain.write import changes
    from loopx_git.model.todo import TodoItem

    todo = TodoItem(todo_id="t1", text="x", updated_at="2026-03-01T10:00:00Z")
    diff = changes(None, todo, skip=("todo_id", "schema_version"))
    assert all(c.after not in (None, []) for c in diff)
    assert TodoItem.model_validate({"todo_id": "t1", **{c.field: c.after for c in diff}}) == todo


# --- what the fold reads: whole events for kinds with a payload, the head of the rest ---------

FOLD_PATH = "goals/g1/events/2026/03/01/10/evt_1.json"


def fold_read(extra: dict, kind: str = "note"):
    from loopx_git.model.state import PAYLOAD_KINDS
    from loopx_git.store.records import parse_for_fold

    data = json.dumps({**BASE, "event_id": "evt_1", "event_kind": kind, **extra}).encode()
    return parse_for_fold(data, FOLD_PATH, PAYLOAD_KINDS)


def test_fold_reads_whole_events_of_kinds_whose_payload_it_uses():
    event = fold_read(PAYLOADS["pr_merge"], "pr_merge")
    assert event.code_refs.pr_ref == "org/repo#7"
    with pytest.raises(ValidationError, match="changes"):
        fold_read({"todo_id": "t1", "changes": [{"field": "Bad Field"}]}, "todo_update")


def test_fold_reads_only_the_head_of_other_facts_and_verify_checks_the_rest():
    head = fold_read({"summary": "ok", "artifact_refs": ["/etc/passwd"]})
    assert head.summary == "ok" and not hasattr(head, "artifact_refs")
    with pytest.raises(ValidationError, match="artifact_refs"):
        parse_event(
            json.dumps({**BASE, "event_id": "evt_1", "event_kind": "note", "artifact_refs": ["/x"]}).encode(), FOLD_PATH
        )


@pytest.mark.parametrize(
    "extra, error",
    [
        ({"lamport": 0}, ValidationError),
        ({"goal_id": "a/b"}, ValidationError),
        ({"schema_version": "loopx_rollout_event_v9"}, FormatError),
    ],
)
def test_fold_still_refuses_a_bad_head(extra, error):
    with pytest.raises(error):
        fold_read(extra)


def test_fold_refuses_unknown_kinds():
    with pytest.raises(FormatError, match="unknown event kind"):
        fold_read({}, "teleport")

"""The explore graph and typed research observations (issue 15, items 1-4; seed 002): nodes, edges and
findings as append-only node revisions; every rejection rule of the envelope with its own test (the
state ref unmoved); the content fingerprint (golden values) and exact replay; input eligibility over
a three-level lineage, a circular declaration and a missing input."""

from __future__ import annotations

import copy
import json

import pytest

from loopx_git.errors import LoopxError
from loopx_git.model.research import ResearchObservation, gap_id, observation_fingerprint
from loopx_git.store import layout
from tests.conftest import GOAL, NOW, git, state_tip
from tests.hooks.test_hooks import FAKE_TOKEN

SEED = {
    "schema_version": "typed_research_observation_v0",
    "explore_node_id": "node-a",
    "progress": {
        "schema_version": "typed_progress_observation_v0",
        "work_item_id": "todo-a",
        "result_class": "exploration_exhausted",
        "coverage_scope_id": "scope-a",
        "coverage_complete": True,
        "evidence_ids": ["ev-a"],
    },
    "closure_basis": {
        "schema_version": "research_closure_basis_v0",
        "disposition": "bounded",
        "constraints": [{"kind": "invariant", "id": "boundary", "role": "decisive"}],
        "evidence_ids": ["ev-a"],
    },
    "composition_candidates": [
        {
            "target_node_id": "node-b",
            "basis": "explicit",
            "interaction_kind": "state_interference",
            "evidence_ids": ["ev-a", "ev-b"],
        }
    ],
}
SEED_FINGERPRINT = "c78c921ec4eebf27"
"""Golden: sha256 of the normalised seed envelope's sorted compact JSON, first 16 hex (as computed by
loopx 0.x on CPython 3.11; any other result is a change of the fingerprint, not of the platform)."""


def refused(repo, git_repo, code, call, *said):
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        call()
    assert err.value.code == code, err.value.message
    assert state_tip(git_repo) == tip
    for text in said:
        assert text in err.value.message, err.value.message
    message = err.value.message
    if code != "unsafe" and "is not one of" not in message and "is not an id" not in message:
        assert "rule:" in message, message  # a choice or an id says its rule in the words it uses
    return err.value


@pytest.fixture
def graph(repo):
    repo.explore_node_add(GOAL, "node-a", kind="hypothesis", title="A holds", evidence_ids=["ev-a"], now=NOW)
    repo.explore_node_add(GOAL, "node-b", kind="hypothesis", title="B holds", evidence_ids=["ev-b"], now=NOW)
    return repo


def envelope(**changes) -> dict:
    """The seed's envelope with ``changes`` applied (dotted keys reach inside; None removes)."""
    data = copy.deepcopy(SEED)
    for dotted, value in changes.items():
        *path, last = dotted.split("__")
        holder = data
        for key in path:
            holder = holder[int(key)] if key.isdigit() else holder[key]
        if value is None:
            holder.pop(last, None)
        else:
            holder[last] = value
    return data


# --- the seed's envelope, fingerprints and replay --------------------------------------------------------


def test_the_seed_envelope_is_accepted_and_recorded_on_a_new_revision(graph, git_repo):
    result = graph.explore_observe(GOAL, json.dumps(SEED), agent_id="alice", now=NOW)
    receipt = result.record
    assert (receipt.replayed, receipt.written, receipt.fingerprint, receipt.revision) == (
        False,
        True,
        SEED_FINGERPRINT,
        2,
    )
    assert receipt.commit == state_tip(git_repo) and [e.event_kind for e in result.write.events] == ["explore_observe"]
    doc = git(git_repo, "show", f"refs/heads/loopx/state:{layout.entity_document('explore', GOAL, 'node-a')}")
    assert f"current_observation: {SEED_FINGERPRINT}" in doc and "revision: 2" in doc
    assert graph.verify().ok


CANONICAL_SEED = (
    '{"closure_basis":{"constraints":[{"id":"boundary","kind":"invariant","role":"decisive"}],"disposition":"bounded",'
    '"evidence_ids":["ev-a"],"schema_version":"research_closure_basis_v0"},"composition_candidates":[{"basis":'
    '"explicit","evidence_ids":["ev-a","ev-b"],"interaction_kind":"state_interference","target_node_id":"node-b"}],'
    '"explore_node_id":"node-a","input_observations":[],"progress":{"coverage_complete":true,"coverage_scope_id":'
    '"scope-a","evidence_ids":["ev-a"],"result_class":"exploration_exhausted","schema_version":'
    '"typed_progress_observation_v0","work_item_id":"todo-a"},"schema_version":"typed_research_observation_v0"}'
)
"""The normalised seed envelope as docs/json-output.md defines it, written out by hand."""


def test_fingerprints_are_golden_and_ignore_the_order_of_sets_but_not_of_constraints():
    import hashlib

    assert hashlib.sha256(CANONICAL_SEED.encode()).hexdigest()[:16] == SEED_FINGERPRINT
    seed = ResearchObservation.model_validate(SEED)
    assert observation_fingerprint(seed) == SEED_FINGERPRINT
    assert gap_id("research-demo", "node-a", "node-b") == "research-composition-7fe99d21dee17709"
    assert gap_id("research-demo", "node-b", "node-a") == gap_id("research-demo", "node-a", "node-b")
    two = envelope(
        progress__evidence_ids=["ev-a", "ev-c"],
        composition_candidates=[
            {
                "target_node_id": "node-b",
                "basis": "explicit",
                "interaction_kind": "unknown_interaction",
                "evidence_ids": ["ev-b", "ev-a"],
            },
            {
                "target_node_id": "node-c",
                "basis": "explicit",
                "interaction_kind": "resource_coupling",
                "evidence_ids": ["ev-c"],
            },
        ],
        closure_basis__constraints=[
            {"kind": "invariant", "id": "boundary", "role": "decisive"},
            {"kind": "stage", "id": "s1", "role": "supporting"},
        ],
    )
    base = observation_fingerprint(ResearchObservation.model_validate(two))
    assert base == "70b86fbc7d43a634"
    shuffled = copy.deepcopy(two)
    shuffled["progress"]["evidence_ids"].reverse()
    shuffled["composition_candidates"].reverse()
    shuffled["composition_candidates"][1]["evidence_ids"].reverse()
    assert observation_fingerprint(ResearchObservation.model_validate(shuffled)) == base
    reordered = copy.deepcopy(two)
    reordered["closure_basis"]["constraints"].reverse()  # a path: its order is part of what it says
    assert observation_fingerprint(ResearchObservation.model_validate(reordered)) != base


def test_an_exact_replay_writes_nothing_even_after_the_graph_changed(graph, git_repo):
    first = graph.explore_observe(GOAL, SEED, now=NOW).record
    graph.explore_node_update(GOAL, "node-b", title="B holds, restated", now=NOW)  # an input changed since
    tip = state_tip(git_repo)
    again = graph.explore_observe(GOAL, json.dumps(SEED, indent=4), now=NOW)
    assert not again.changed and state_tip(git_repo) == tip
    receipt = again.record
    assert (receipt.replayed, receipt.written, receipt.fingerprint, receipt.revision, receipt.commit) == (
        True,
        False,
        first.fingerprint,
        first.revision,
        None,
    )
    changed = envelope(progress__evidence_ids=["ev-a", "ev-z"], closure_basis__evidence_ids=["ev-a"])
    assert graph.explore_observe(GOAL, changed, now=NOW).record.written  # another envelope is a new revision


# --- every rejection rule, each with the ref unmoved ---------------------------------------------------------

SHAPE = [
    ("unknown top-level field", envelope(notes="free text"), "observation field 'notes': unknown"),
    ("unknown progress field", envelope(progress__raw_log="x"), "'progress.raw_log': unknown"),
    ("unknown closure field", envelope(closure_basis__comment="x"), "'closure_basis.comment': unknown"),
    ("unsupported envelope version", envelope(schema_version="typed_research_observation_v1"), "unsupported version"),
    (
        "unsupported progress version",
        envelope(progress__schema_version="typed_progress_observation_v9"),
        "unsupported version",
    ),
    (
        "unsupported closure version",
        envelope(closure_basis__schema_version="research_closure_basis_v1"),
        "unsupported version",
    ),
    ("missing node", envelope(explore_node_id=None), "'explore_node_id': missing"),
    ("missing work item", envelope(progress__work_item_id=None), "progress.work_item_id: missing"),
    ("bad opaque id", envelope(progress__work_item_id="todo a/../b"), "is not an id"),
    ("id of 129 characters", envelope(explore_node_id="n" * 129), "is not an id"),
    ("bad disposition", envelope(closure_basis__disposition="done"), "'closure_basis.disposition'"),
    (
        "bad constraint kind",
        envelope(closure_basis__constraints=[{"kind": "vibe", "id": "x", "role": "decisive"}]),
        "'closure_basis.constraints.0.kind'",
    ),
    (
        "bad constraint role",
        envelope(closure_basis__constraints=[{"kind": "stage", "id": "x", "role": "main"}]),
        "'closure_basis.constraints.0.role'",
    ),
    (
        "duplicate constraint identity",
        envelope(
            closure_basis__constraints=[
                {"kind": "stage", "id": "x", "role": "decisive"},
                {"kind": "stage", "id": "x", "role": "supporting"},
            ]
        ),
        "(stage, x) is given twice",
    ),
    (
        "13 constraints",
        envelope(closure_basis__constraints=[{"kind": "stage", "id": f"s{n}", "role": "decisive"} for n in range(13)]),
        "'closure_basis.constraints'",
    ),
    ("13 evidence ids", envelope(progress__evidence_ids=[f"ev-{n}" for n in range(13)]), "'progress.evidence_ids'"),
    ("empty closure evidence", envelope(closure_basis__evidence_ids=[]), "closure_basis"),
    (
        "closure evidence outside the progress",
        envelope(closure_basis__evidence_ids=["ev-a", "ev-q"]),
        "ev-q not in the progress evidence",
    ),
    ("exhausted without complete coverage", envelope(progress__coverage_complete=False), "coverage_complete"),
    (
        "no_followup without complete coverage",
        envelope(progress__result_class="no_followup", progress__coverage_complete=False),
        "progress.coverage_complete: missing for result_class no_followup",
    ),
    (
        "terminal without its scope",
        envelope(progress__coverage_scope_id=None, progress__coverage_complete=False),
        "coverage_scope_id",
    ),
    ("terminal without a closure basis", envelope(closure_basis=None), "closure_basis: missing for result_class"),
    (
        "terminal without a decisive constraint",
        envelope(closure_basis__constraints=[{"kind": "stage", "id": "s", "role": "supporting"}]),
        "a decisive constraint in closure_basis: missing",
    ),
    (
        "blocked disposition asserting coverage",
        envelope(closure_basis__disposition="blocked"),
        "a blocked disposition cannot assert terminal coverage",
    ),
    (
        "candidate basis not explicit",
        envelope(composition_candidates__0__basis="shared_constraint"),
        "'composition_candidates.0.basis'",
    ),
    (
        "candidate naming its own node",
        envelope(composition_candidates__0__target_node_id="node-a"),
        "is this observation's own node",
    ),
    (
        "bad interaction kind",
        envelope(composition_candidates__0__interaction_kind="synergy"),
        "'composition_candidates.0.interaction_kind'",
    ),
    ("candidate without evidence", envelope(composition_candidates__0__evidence_ids=[]), "composition_candidates.0"),
    (
        "four candidates",
        envelope(
            composition_candidates=[
                {
                    "target_node_id": f"n{k}",
                    "basis": "explicit",
                    "interaction_kind": "unknown_interaction",
                    "evidence_ids": ["ev-a"],
                }
                for k in range(4)
            ]
        ),
        "at most 3 candidates per observation (the excess is rejected, never truncated)",
    ),
    (
        "the same target twice",
        envelope(
            composition_candidates=[
                {
                    "target_node_id": "node-b",
                    "basis": "explicit",
                    "interaction_kind": "unknown_interaction",
                    "evidence_ids": ["ev-a"],
                }
            ]
            * 2
        ),
        "a target is named twice",
    ),
    (
        "a malformed input fingerprint",
        envelope(input_observations=[{"node_id": "node-b", "fingerprint": "xyz"}]),
        "'input_observations.0.fingerprint'",
    ),
]


@pytest.mark.parametrize(("name", "data", "said"), SHAPE, ids=[s[0] for s in SHAPE])
def test_each_shape_rule_is_refused_naming_the_field(graph, git_repo, name, data, said):
    refused(
        graph, git_repo, "invalid-observation", lambda: graph.explore_observe(GOAL, json.dumps(data), now=NOW), said
    )


def test_not_json_and_not_an_object_are_refused(graph, git_repo):
    refused(
        graph, git_repo, "invalid-observation", lambda: graph.explore_observe(GOAL, b"{not json", now=NOW), "not JSON"
    )
    refused(
        graph, git_repo, "invalid-observation", lambda: graph.explore_observe(GOAL, b"[1, 2]", now=NOW), "observation"
    )


GRAPH_RULES = [
    (
        "unknown node",
        envelope(explore_node_id="node-z"),
        "unknown-node",
        "'explore_node_id': 'node-z' is no explore node",
    ),
    (
        "unknown candidate target",
        envelope(composition_candidates__0__target_node_id="node-z"),
        "unknown-node",
        "'composition_candidates.0.target_node_id'",
    ),
    (
        "candidate evidence attributable to neither node",
        envelope(composition_candidates__0__evidence_ids=["ev-a", "ev-q"]),
        "candidate-evidence",
        "ev-q attributable to neither node",
    ),
    (
        "candidate evidence attributable to the source only",
        envelope(composition_candidates__0__evidence_ids=["ev-a"]),
        "candidate-evidence",
        "none attributable to node-b",
    ),
    (
        "candidate evidence attributable to the target only",
        envelope(composition_candidates__0__evidence_ids=["ev-b"]),
        "candidate-evidence",
        "none attributable to node-a",
    ),
    (
        "input observations on a node that is no binary experiment",
        envelope(input_observations=[{"node_id": "node-b", "fingerprint": "0123456789abcdef"}]),
        "not-a-binary-experiment",
        "input observations belong to a binary experiment",
    ),
    (
        "execution lineage written by another actor than its agent",
        envelope(
            progress__work_item_id="todo_joint",
            execution_lineage={
                "goal_id": GOAL,
                "gap_id": "research-composition-0123456789abcdef",
                "replan_obligation_id": "replan-0123456789abcdef",
                "successor_todo_id": "todo_joint",
                "agent_id": "alice",
            },
        ),
        "lineage-mismatch",
        "written by no agent",
    ),
]


@pytest.mark.parametrize(("name", "data", "code", "said"), GRAPH_RULES, ids=[r[0] for r in GRAPH_RULES])
def test_each_graph_rule_is_refused_naming_the_field(graph, git_repo, name, data, code, said):
    refused(graph, git_repo, code, lambda: graph.explore_observe(GOAL, data, now=NOW), said)


def test_a_secret_in_an_envelope_is_refused_by_the_safety_gate_without_echoing_it(graph, git_repo):
    data = envelope(progress__evidence_ids=["ev-a", FAKE_TOKEN])
    err = refused(graph, git_repo, "unsafe", lambda: graph.explore_observe(GOAL, data, now=NOW))
    assert FAKE_TOKEN not in err.message and "field 'observation.progress.evidence_ids[1]'" in err.message


def test_unknown_agent_is_refused(graph, git_repo):
    refused(graph, git_repo, "unknown-agent", lambda: graph.explore_observe(GOAL, SEED, agent_id="mallory", now=NOW))


# --- nodes, edges and findings ----------------------------------------------------------------------------


def test_nodes_edges_and_findings_are_revisions_of_one_node(graph, git_repo):
    graph.explore_node_add(GOAL, "exp-ab", kind="experiment", title="A with B", parent_id="node-a", now=NOW)
    graph.explore_edge_add(GOAL, "exp-ab", "node-a", "depends_on", now=NOW)
    graph.explore_edge_add(GOAL, "exp-ab", "node-b", "depends_on", now=NOW)
    graph.explore_finding_add(GOAL, "node-a", "f1", state="tentative", evidence_ids=["ev-a"], now=NOW)
    graph.explore_finding_add(GOAL, "node-a", "f1", state="confirmed", evidence_ids=["ev-a"], now=NOW)
    before = state_tip(git_repo)
    assert not graph.explore_finding_add(
        GOAL, "node-a", "f1", state="confirmed", evidence_ids=["ev-a"], now=NOW
    ).changed
    assert state_tip(git_repo) == before
    graph.explore_node_update(GOAL, "node-b", status="blocked", reason="needs the lab", now=NOW)
    exp, a, b = (graph.explore_node(GOAL, n) for n in ("exp-ab", "node-a", "node-b"))
    assert exp.depends_on() == ["node-a", "node-b"] and exp.revision == 3 and exp.parent_id == "node-a"
    assert [(f.finding_id, f.state) for f in a.findings] == [("f1", "confirmed")] and a.revision == 3
    assert (b.status, b.reason, b.revision) == ("blocked", "needs the lab", 2)
    events = git(git_repo, "log", "--format=%s", "refs/heads/loopx/state").splitlines()
    assert len([e for e in events if "explore" in e]) >= 6  # one commit per revision
    assert graph.verify().ok
    assert [n.node_id for n in graph.explore_nodes(GOAL, status="blocked")] == ["node-b"]


NODE_RULES = [
    (
        "blocked without a reason",
        "invalid-field",
        "field 'reason': missing for status blocked",
        lambda r: r.explore_node_add(GOAL, "n1", kind="question", title="Q", status="blocked", now=NOW),
    ),
    (
        "a node id twice",
        "node-exists",
        "node ids are unique within a goal",
        lambda r: r.explore_node_add(GOAL, "node-a", kind="question", title="Q", now=NOW),
    ),
    (
        "an unknown parent",
        "unknown-node",
        "field 'parent_id'",
        lambda r: r.explore_node_add(GOAL, "n1", kind="question", title="Q", parent_id="nope", now=NOW),
    ),
    (
        "a bad kind",
        "invalid-field",
        "field 'kind'",
        lambda r: r.explore_node_add(GOAL, "n1", kind="idea", title="Q", now=NOW),
    ),
    (
        "a bad node id",
        "invalid-field",
        "is not an id",
        lambda r: r.explore_node_add(GOAL, "../n1", kind="question", title="Q", now=NOW),
    ),
    (
        "the same evidence twice",
        "invalid-field",
        "an id is given twice",
        lambda r: r.explore_node_add(GOAL, "n1", kind="question", title="Q", evidence_ids=["e", "e"], now=NOW),
    ),
    (
        "update to blocked without a reason",
        "invalid-field",
        "a blocked node says why",
        lambda r: r.explore_node_update(GOAL, "node-a", status="blocked", now=NOW),
    ),
    (
        "a reason without a status",
        "invalid-field",
        "a reason says why the status changes",
        lambda r: r.explore_node_update(GOAL, "node-a", reason="because", now=NOW),
    ),
    (
        "update of an unknown node",
        "unknown-node",
        "field 'node_id'",
        lambda r: r.explore_node_update(GOAL, "nope", title="x", now=NOW),
    ),
    (
        "an edge from an unknown node",
        "unknown-node",
        "field 'from_node_id'",
        lambda r: r.explore_edge_add(GOAL, "nope", "node-a", "supports", now=NOW),
    ),
    (
        "an edge to an unknown node",
        "unknown-node",
        "field 'to_node_id'",
        lambda r: r.explore_edge_add(GOAL, "node-a", "nope", "supports", now=NOW),
    ),
    (
        "an edge to itself",
        "invalid-field",
        "an edge joins two distinct nodes",
        lambda r: r.explore_edge_add(GOAL, "node-a", "node-a", "supports", now=NOW),
    ),
    (
        "a bad edge type",
        "invalid-field",
        "field 'edge_type'",
        lambda r: r.explore_edge_add(GOAL, "node-a", "node-b", "likes", now=NOW),
    ),
    (
        "a finding without evidence",
        "invalid-field",
        "a finding names its evidence",
        lambda r: r.explore_finding_add(GOAL, "node-a", "f1", state="tentative", evidence_ids=[], now=NOW),
    ),
    (
        "a bad finding state",
        "invalid-field",
        "field 'state'",
        lambda r: r.explore_finding_add(GOAL, "node-a", "f1", state="sure", evidence_ids=["e"], now=NOW),
    ),
    (
        "a title that holds a secret",
        "unsafe",
        "field 'title'",
        lambda r: r.explore_node_add(GOAL, "n1", kind="question", title=f"key {FAKE_TOKEN}", now=NOW),
    ),
]


@pytest.mark.parametrize(("name", "code", "said", "call"), NODE_RULES, ids=[r[0] for r in NODE_RULES])
def test_each_graph_write_rule_is_refused(graph, git_repo, name, code, said, call):
    refused(graph, git_repo, code, lambda: call(graph), said)


def test_edges_once_and_an_experiment_stays_binary(graph, git_repo):
    graph.explore_node_add(GOAL, "node-c", kind="hypothesis", title="C", now=NOW)
    graph.explore_node_add(GOAL, "exp", kind="experiment", title="A with B", now=NOW)
    graph.explore_edge_add(GOAL, "exp", "node-a", "depends_on", now=NOW)
    refused(
        graph, git_repo, "edge-exists", lambda: graph.explore_edge_add(GOAL, "exp", "node-a", "depends_on", now=NOW)
    )
    graph.explore_edge_add(GOAL, "exp", "node-b", "depends_on", now=NOW)
    refused(
        graph,
        git_repo,
        "experiment-not-binary",
        lambda: graph.explore_edge_add(GOAL, "exp", "node-c", "depends_on", now=NOW),
        "exactly two outgoing depends_on edges",
    )
    graph.explore_edge_add(GOAL, "exp", "node-c", "supports", now=NOW)  # other edges are free


# --- lineage: which results are still inputs -----------------------------------------------------------------


def _terminal(node: str, evidence: str, *, candidates=(), inputs=(), result_class="exploration_exhausted") -> dict:
    data = {
        "schema_version": "typed_research_observation_v0",
        "explore_node_id": node,
        "progress": {
            "schema_version": "typed_progress_observation_v0",
            "work_item_id": f"todo-{node}",
            "result_class": result_class,
            "coverage_scope_id": "scope",
            "coverage_complete": True,
            "evidence_ids": [evidence],
        },
        "closure_basis": {
            "schema_version": "research_closure_basis_v0",
            "disposition": "no_followup" if result_class == "no_followup" else "bounded",
            "constraints": [{"kind": "invariant", "id": "boundary", "role": "decisive"}],
            "evidence_ids": [evidence],
        },
        "composition_candidates": [
            {
                "target_node_id": t,
                "basis": "explicit",
                "interaction_kind": "producer_consumer",
                "evidence_ids": [evidence, e],
            }
            for t, e in candidates
        ],
    }
    if inputs:
        data["input_observations"] = [{"node_id": n, "fingerprint": f} for n, f in inputs]
    return data


def _gaps(repo) -> dict:
    return {tuple(g.inputs): g for g in _all_gaps(repo)}


def _all_gaps(repo):
    from loopx_git.model.composition import gaps

    return gaps(repo.state().goals[GOAL])


@pytest.fixture
def lineage(repo):
    """A+B -> AB and AB+C -> ABC, every input resolved with a coverage-backed observation."""
    for node, kind in (
        ("A", "hypothesis"),
        ("B", "hypothesis"),
        ("C", "hypothesis"),
        ("AB", "experiment"),
        ("ABC", "experiment"),
    ):
        repo.explore_node_add(GOAL, node, kind=kind, title=f"node {node}", evidence_ids=[f"ev-{node}"], now=NOW)
    for exp, inputs in (("AB", ("A", "B")), ("ABC", ("AB", "C"))):
        for node in inputs:
            repo.explore_edge_add(GOAL, exp, node, "depends_on", now=NOW)
    fp = {}
    fp["B"] = repo.explore_observe(GOAL, _terminal("B", "ev-B"), now=NOW).record.fingerprint
    fp["C"] = repo.explore_observe(GOAL, _terminal("C", "ev-C", result_class="no_followup"), now=NOW).record.fingerprint
    fp["A"] = repo.explore_observe(GOAL, _terminal("A", "ev-A", candidates=[("B", "ev-B")]), now=NOW).record.fingerprint
    for node in ("A", "B", "C"):
        repo.explore_node_update(GOAL, node, status="resolved", reason="covered", now=NOW)  # closing keeps it current
    return repo, fp


def test_a_pending_gap_is_observed_by_its_binary_experiment_and_lineage_carries_eligibility(lineage, git_repo):
    repo, fp = lineage
    gap = _gaps(repo)[("A", "B")]
    assert gap.state == "pending" and gap.gap_id == gap_id(GOAL, "A", "B")
    assert gap.input_observations == [("A", fp["A"]), ("B", fp["B"])] and gap.experiments == ["AB"]
    stale = _terminal("AB", "ev-AB", inputs=[("A", fp["A"]), ("B", fp["C"])])
    refused(
        repo,
        git_repo,
        "stale-input-observations",
        lambda: repo.explore_observe(GOAL, stale, now=NOW),
        "exact current observations",
    )
    ab = _terminal("AB", "ev-AB", inputs=gap.input_observations, candidates=[("C", "ev-C")])
    fp["AB"] = repo.explore_observe(GOAL, ab, now=NOW).record.fingerprint
    repo.explore_node_update(GOAL, "AB", status="resolved", reason="joint probe ran", now=NOW)
    gaps = _gaps(repo)
    assert gaps[("A", "B")].state == "observed" and gaps[("A", "B")].observed_by == ("AB", fp["AB"])
    assert gaps[("AB", "C")].state == "pending"
    abc = _terminal("ABC", "ev-ABC", inputs=gaps[("AB", "C")].input_observations, result_class="no_followup")
    repo.explore_observe(GOAL, abc, now=NOW)  # a negative result observes the gap as well as a positive one
    assert _gaps(repo)[("AB", "C")].state == "observed"
    # reopening A: AB is no longer a current input to ABC, though AB's own fingerprint is unchanged
    repo.explore_node_update(GOAL, "A", status="exploring", reason="a new lead", now=NOW)
    gaps = _gaps(repo)
    assert gaps[("A", "B")].state == "ineligible" and any("A is exploring" in r for r in gaps[("A", "B")].reasons)
    assert gaps[("AB", "C")].state == "ineligible"
    assert any("input A is ineligible: A is exploring" in r for r in gaps[("AB", "C")].reasons)
    assert repo.explore_node(GOAL, "AB").current_observation == fp["AB"]
    assert repo.verify().ok


def test_changing_an_inputs_observation_makes_the_joint_result_stale(lineage):
    repo, _ = lineage
    gap = _gaps(repo)[("A", "B")]
    repo.explore_observe(GOAL, _terminal("AB", "ev-AB", inputs=gap.input_observations), now=NOW)
    repo.explore_node_update(GOAL, "AB", status="resolved", reason="ran", now=NOW)
    again = _terminal("B", "ev-B2", result_class="no_followup")
    repo.explore_observe(GOAL, again, now=NOW)  # B's observation changes; B stays resolved
    gaps = _gaps(repo)
    assert gaps[("A", "B")].state == "pending"  # AB saw B's old observation: the gap is open again
    from loopx_git.model.composition import Lineage

    found = Lineage(repo.state().goals[GOAL]).of("AB")
    assert not found.eligible and "input B is now observation" in found.reason
    # one level up, that cause is said whole (it holds colons of its own), not cut at the first one
    above = Lineage._ineligible("ABD", None, "input AB is ineligible", found)
    assert above.reason == f"input AB is ineligible: {found.reason}"


def test_a_circular_declaration_and_a_missing_input_supply_no_coverage(repo):
    for node, kind in (
        ("X", "experiment"),
        ("Y", "experiment"),
        ("P", "hypothesis"),
        ("Q", "hypothesis"),
        ("Z", "hypothesis"),
    ):
        repo.explore_node_add(GOAL, node, kind=kind, title=node, evidence_ids=[f"ev-{node}"], now=NOW)
    for a, b in (("X", "Y"), ("X", "P")):
        repo.explore_edge_add(GOAL, a, b, "depends_on", now=NOW)
    # Y is observed before it depends on anything, X on Y's observation; then Y gains its two
    # dependencies, X among them, and is observed on X's: X -> Y -> X
    fps = {n: repo.explore_observe(GOAL, _terminal(n, f"ev-{n}"), now=NOW).record.fingerprint for n in ("P", "Q", "Y")}
    fps["X"] = repo.explore_observe(
        GOAL, _terminal("X", "ev-X", inputs=[("Y", fps["Y"]), ("P", fps["P"])]), now=NOW
    ).record.fingerprint
    for a, b in (("Y", "X"), ("Y", "Q")):
        repo.explore_edge_add(GOAL, a, b, "depends_on", now=NOW)
    fps["Y"] = repo.explore_observe(
        GOAL, _terminal("Y", "ev-Y2", inputs=[("X", fps["X"]), ("Q", fps["Q"])], candidates=[("Z", "ev-Z")]), now=NOW
    ).record.fingerprint
    for node in ("X", "Y", "P", "Q", "Z"):
        repo.explore_node_update(GOAL, node, status="resolved", reason="closed", now=NOW)
    from loopx_git.model.composition import Lineage

    lineage = Lineage(repo.state().goals[GOAL])
    assert not lineage.of("Y").eligible and not lineage.of("X").eligible
    assert "circular lineage (Y -> X -> Y)" in lineage.of("Y").reason, lineage.of("Y").reason
    gap = _gaps(repo)[("Y", "Z")]
    assert gap.state == "ineligible"
    assert any("Z has no observation" in r for r in gap.reasons)  # a missing input observation


# --- found by review: fail-closed lineage, deep graphs, strict envelopes ---------------------------------------


def test_a_binary_experiment_observed_without_its_inputs_is_refused_and_never_an_input(lineage, git_repo):
    repo, _ = lineage
    bare = _terminal("AB", "ev-AB")
    refused(
        repo, git_repo, "missing-input-observations", lambda: repo.explore_observe(GOAL, bare, now=NOW), "two inputs"
    )
    # an experiment observed with one dependency, which gains its second later: no input until re-observed
    repo.explore_node_add(GOAL, "AC", kind="experiment", title="A with C", evidence_ids=["ev-AC"], now=NOW)
    repo.explore_edge_add(GOAL, "AC", "A", "depends_on", now=NOW)
    repo.explore_observe(GOAL, _terminal("AC", "ev-AC"), now=NOW)
    repo.explore_edge_add(GOAL, "AC", "C", "depends_on", now=NOW)
    repo.explore_node_update(GOAL, "AC", status="resolved", reason="ran", now=NOW)
    from loopx_git.model.composition import Lineage

    found = Lineage(repo.state().goals[GOAL]).of("AC")
    assert not found.eligible and "names no input observations" in found.reason


def test_a_lineage_thousands_deep_is_an_answer_not_a_recursion_error():
    """E1 = A+B, E2 = E1+L2, ... E3000: built as the fold would hold it, walked without recursion."""
    from loopx_git.model.composition import Lineage, gaps
    from loopx_git.model.explore import ExploreEdge, ExploreNode
    from loopx_git.model.research import ObservationFacts
    from loopx_git.model.state import GoalState

    gs = GoalState(goal_id=GOAL)

    def node(node_id, kind="hypothesis", depends=()):
        fp = f"{len(gs.research):016x}"
        gs.explore[node_id] = ExploreNode(
            node_id=node_id,
            kind=kind,
            title=node_id,
            status="resolved",
            current_observation=fp,
            edges=[ExploreEdge(to_node_id=d, edge_type="depends_on", created_at=NOW) for d in depends],
            created_at=NOW,
            updated_at=NOW,
        )
        inputs = tuple((d, gs.explore[d].current_observation) for d in sorted(depends))
        gs.research[fp] = ObservationFacts("exploration_exhausted", True, (f"ev-{node_id}",), (), inputs)

    node("A")
    node("B")
    node("E1", "experiment", ("A", "B"))
    for k in range(2, 3001):
        node(f"L{k}")
        node(f"E{k}", "experiment", (f"E{k - 1}", f"L{k}"))
    assert Lineage(gs).of("E3000").eligible
    gs.explore["A"] = gs.explore["A"].model_copy(update={"status": "open"})  # reopening A, 3000 levels down
    found = Lineage(gs).of("E3000")
    assert not found.eligible and found.reason.startswith("input E2999 is ineligible: A is open")
    assert len(found.reason) < 200  # the root cause once, not 3000 nested prefixes
    assert gaps(gs) == []


def test_envelopes_are_read_strictly(graph, git_repo):
    raw = json.dumps(SEED)
    twice = raw.replace('"explore_node_id": "node-a"', '"explore_node_id": "node-b", "explore_node_id": "node-a"')
    assert twice != raw
    refused(graph, git_repo, "invalid-observation", lambda: graph.explore_observe(GOAL, twice, now=NOW), "given twice")
    yes = envelope(progress__coverage_complete="yes")
    refused(
        graph,
        git_repo,
        "invalid-observation",
        lambda: graph.explore_observe(GOAL, json.dumps(yes), now=NOW),
        "coverage_complete",
    )
    for part in ("schema_version", "progress__schema_version", "closure_basis__schema_version"):
        missing = envelope(**{part: None})
        refused(
            graph,
            git_repo,
            "invalid-observation",
            lambda missing=missing: graph.explore_observe(GOAL, json.dumps(missing), now=NOW),
            "schema_version': missing",
        )
    escape = envelope(**{"\x1b[31mred": 1})
    err = refused(
        graph, git_repo, "invalid-observation", lambda: graph.explore_observe(GOAL, json.dumps(escape), now=NOW)
    )
    assert "\x1b" not in err.message


def test_a_recorded_fingerprint_that_is_not_its_envelopes_is_refused_where_it_is_read():
    from loopx_git.errors import FormatError, ValidationError
    from loopx_git.store.records import parse_event

    record = {
        "schema_version": "loopx_rollout_event_v0",
        "event_id": "evt_forged",
        "goal_id": GOAL,
        "event_kind": "explore_observe",
        "recorded_at": NOW,
        "lamport": 1,
        "node_id": "node-a",
        "fingerprint": "0123456789abcdef",
        "observation": SEED,
    }
    with pytest.raises((FormatError, ValidationError)) as err:
        parse_event(json.dumps(record).encode(), f"goals/{GOAL}/events/2026/03/01/10/evt_forged.json")
    assert "is not the observation's" in err.value.message

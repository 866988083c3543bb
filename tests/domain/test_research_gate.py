"""The explicit-only live research gate (issue 15 item 6, seed 002) through the Python API, on real
repositories: every attribution rule of an observation under execution lineage refused with its own
code (the state ref unmoved), the live gap states (scheduled, observed, dismissed, deferred and a
deferral that stops holding), the order in which ``quota should-run`` raises a gap, and two clones
agreeing on the live frontier after a sync."""

from __future__ import annotations

import pytest

from loopx_git.model.research_gate import live_gaps
from tests.conftest import GOAL, NOW, git, state_tip
from tests.domain.test_explore import _terminal, refused

SCOPE = "joint-scope"


def _live(repo) -> dict:
    [gap] = live_gaps(repo.state().goals[GOAL])
    return gap


@pytest.fixture
def gate(repo):
    """A+B closed with a pending gap, experiment AB over it, the live gate on."""
    for node, kind in (("A", "hypothesis"), ("B", "hypothesis"), ("AB", "experiment")):
        repo.explore_node_add(GOAL, node, kind=kind, title=node, evidence_ids=[f"ev-{node}"], now=NOW)
    for node in ("A", "B"):
        repo.explore_edge_add(GOAL, "AB", node, edge_type="depends_on", now=NOW)
    repo.explore_observe(GOAL, _terminal("B", "ev-B"), now=NOW)
    repo.explore_observe(GOAL, _terminal("A", "ev-A", candidates=[("B", "ev-B")]), now=NOW)
    for node in ("A", "B"):
        repo.explore_node_update(GOAL, node, status="resolved", reason="covered", now=NOW)
    repo.goal_configure(
        GOAL,
        execute=True,
        explore_harness_enabled=True,
        explore_composition_mode="explicit_only",
        explore_composition_scope_id=SCOPE,
        now=NOW,
    )
    return repo


def _obligation(repo, agent="alice") -> tuple[str, str]:
    packet = repo.should_run(GOAL, agent).replan_action_packet
    return packet.obligation_id, packet.capability_guard.gap_id


def _admit(repo, agent="alice", todo="todo-joint", claim=True) -> tuple[str, str]:
    obligation, gap = _obligation(repo, agent)
    repo.todo_add(
        GOAL,
        "joint probe",
        todo_id=todo,
        action_kind="joint_probe",
        explore_result_node_refs=["AB"],
        replan_obligation_id=obligation,
        actor=agent,
        now=NOW,
    )
    if claim:
        repo.todo_claim(GOAL, todo, agent, now=NOW)
    return obligation, gap


def _joint(repo, obligation, gap, *, todo="todo-joint", agent="alice", result_class="no_followup", **progress):
    [card] = repo.explore_summary(GOAL).gaps
    data = _terminal(
        "AB", "ev-AB", inputs=[(i.node_id, i.fingerprint) for i in card.input_observations], result_class=result_class
    )
    data["progress"].update({"work_item_id": todo, "coverage_scope_id": SCOPE, **progress})
    data["execution_lineage"] = {
        "schema_version": "research_execution_lineage_v0",
        "goal_id": GOAL,
        "gap_id": gap,
        "replan_obligation_id": obligation,
        "successor_todo_id": todo,
        "agent_id": agent,
    }
    return data


def test_an_observation_under_lineage_observes_the_live_gap(gate, git_repo):
    obligation, gap = _admit(gate)
    assert _live(gate).state == "scheduled"
    # the successor closes only with its exact result
    refused(
        gate,
        git_repo,
        "closeout-needs-result",
        lambda: gate.todo_complete(GOAL, "todo-joint", actor="alice", evidence=["ev-AB"], now=NOW),
        "no terminal result or dismissal",
    )
    receipt = gate.explore_observe(GOAL, _joint(gate, obligation, gap), agent_id="alice", now=NOW).record
    assert receipt.written
    live = _live(gate)
    assert live.state == "observed" and live.experiment == "AB"
    # the same envelope again is a replay, even after the todo is done: history stands, nothing written
    gate.todo_complete(GOAL, "todo-joint", actor="alice", evidence=["ev-AB"], now=NOW)
    tip = state_tip(git_repo)
    again = gate.explore_observe(GOAL, _joint(gate, obligation, gap), agent_id="alice", now=NOW)
    assert again.record.replayed and state_tip(git_repo) == tip


def test_a_shadow_observed_result_without_lineage_does_not_discharge_the_live_gap(gate):
    [card] = gate.explore_summary(GOAL).gaps
    inputs = [(i.node_id, i.fingerprint) for i in card.input_observations]
    data = _terminal("AB", "ev-AB", inputs=inputs, result_class="no_followup")
    data["progress"]["coverage_scope_id"] = SCOPE
    gate.explore_observe(GOAL, data, now=NOW)
    assert gate.explore_summary(GOAL).gaps[0].state == "observed"  # the shadow projection
    assert _live(gate).state == "pending"  # the live gate: no execution lineage, no live evidence


@pytest.mark.parametrize(
    ("name", "change", "code", "said"),
    [
        ("another goal", {"execution_lineage": {"goal_id": "g2"}}, "lineage-mismatch", "goal_id"),
        ("another agent", {"execution_lineage": {"agent_id": "bob"}}, "lineage-mismatch", "written by alice"),
        (
            "an unknown gap",
            {"execution_lineage": {"gap_id": "research-composition-0123456789abcdef"}},
            "unknown-gap",
            "gap_id",
        ),
        (
            "an unrelated obligation",
            {"execution_lineage": {"replan_obligation_id": "replan-0123456789abcdef"}},
            "no-execution-authority",
            "was not admitted for obligation",
        ),
        ("an unchanged read", {"result_class": "unchanged"}, "not-an-execution-result", "unchanged"),
        ("another scope", {"coverage_scope_id": "elsewhere"}, "scope-mismatch", "joint-scope"),
    ],
)
def test_each_attribution_rule_is_refused(gate, git_repo, name, change, code, said):
    obligation, gap = _admit(gate)
    data = _joint(gate, obligation, gap)
    for key, value in change.items():
        if isinstance(value, dict):
            data[key].update(value)
        elif key == "result_class":
            data["progress"] = {
                "schema_version": "typed_progress_observation_v0",
                "work_item_id": "todo-joint",
                "result_class": "unchanged",
                "evidence_ids": ["ev-AB"],
            }
            data.pop("closure_basis")
        else:
            data["progress"][key] = value
    refused(gate, git_repo, code, lambda: gate.explore_observe(GOAL, data, agent_id="alice", now=NOW), said)


def test_work_that_is_not_this_agents_runnable_joint_probe_supplies_no_attribution(gate, git_repo):
    obligation, gap = _admit(gate, claim=False)
    gate.todo_claim(GOAL, "todo-joint", "bob", now=NOW)  # held by another agent
    refused(
        gate,
        git_repo,
        "no-execution-authority",
        lambda: gate.explore_observe(GOAL, _joint(gate, obligation, gap), agent_id="alice", now=NOW),
        "held by bob",
    )
    # a plain todo naming the experiment, not admitted for the obligation
    gate.todo_add(
        GOAL, "plain", todo_id="todo-plain", action_kind="joint_probe", explore_result_node_refs=["AB"], now=NOW
    )
    refused(
        gate,
        git_repo,
        "no-execution-authority",
        lambda: gate.explore_observe(GOAL, _joint(gate, obligation, gap, todo="todo-plain"), agent_id="alice", now=NOW),
        "todo-plain was not admitted",
    )


def test_a_deferred_successor_cannot_carry_a_result(gate, git_repo):
    obligation, gap = _admit(gate)
    gate.todo_update(GOAL, "todo-joint", "blocked", reason="waiting", actor="alice", now=NOW)
    refused(
        gate,
        git_repo,
        "no-execution-authority",
        lambda: gate.explore_observe(GOAL, _joint(gate, obligation, gap), agent_id="alice", now=NOW),
        "not runnable",
    )


def test_successor_admission_rules(gate, git_repo):
    obligation, _ = _obligation(gate)
    refused(
        gate,
        git_repo,
        "unknown-obligation",
        lambda: gate.todo_add(
            GOAL,
            "x",
            action_kind="joint_probe",
            explore_result_node_refs=["AB"],
            replan_obligation_id=obligation,
            actor="bob",
            now=NOW,
        ),
        "not an open replan obligation of bob",
    )
    refused(
        gate,
        git_repo,
        "unknown-node",
        lambda: gate.todo_add(GOAL, "x", explore_result_node_refs=["nowhere"], now=NOW),
        "'nowhere'",
    )
    refused(
        gate,
        git_repo,
        "not-a-joint-probe",
        lambda: gate.todo_add(
            GOAL,
            "x",
            action_kind="joint_probe",
            explore_result_node_refs=["A"],
            replan_obligation_id=obligation,
            actor="alice",
            now=NOW,
        ),
        "experiments: AB",
    )
    _admit(gate)
    # scheduled now: the obligation is no longer open for a second successor
    refused(
        gate,
        git_repo,
        "unknown-obligation",
        lambda: gate.todo_add(
            GOAL,
            "again",
            action_kind="joint_probe",
            explore_result_node_refs=["AB"],
            replan_obligation_id=obligation,
            actor="alice",
            now=NOW,
        ),
    )


def test_a_dismissal_counts_dismissed_never_observed(gate, git_repo):
    obligation, gap = _admit(gate)
    data = _joint(gate, obligation, gap)
    data["closure_basis"]["disposition"] = "no_followup"
    data["composition_resolution"] = {
        "schema_version": "research_composition_resolution_v0",
        "disposition": "dismissed",
        "basis": "duplicate",
        "evidence_ids": ["ev-AB"],
    }
    refused(
        gate,
        git_repo,
        "dismissal-not-dead-end",
        lambda: gate.explore_observe(GOAL, data, agent_id="alice", now=NOW),
        "dead_end",
    )
    gate.explore_node_update(GOAL, "AB", status="dead_end", reason="a duplicate of A", now=NOW)
    gate.explore_observe(GOAL, data, agent_id="alice", now=NOW)
    assert _live(gate).state == "dismissed"
    assert gate.explore_summary(GOAL).gaps[0].state != "observed"


def _deferral(repo, obligation, gap):
    data = _joint(repo, obligation, gap)
    data["progress"] = {
        "schema_version": "typed_progress_observation_v0",
        "work_item_id": "todo-joint",
        "result_class": "blocked",
        "blocker_id": "todo-prereq",
        "evidence_ids": ["ev-AB"],
    }
    data["closure_basis"] = {
        "schema_version": "research_closure_basis_v0",
        "disposition": "blocked",
        "constraints": [{"kind": "dependency", "id": "prereq", "role": "decisive"}],
        "evidence_ids": ["ev-AB"],
    }
    data["composition_resolution"] = {
        "schema_version": "research_composition_resolution_v0",
        "disposition": "deferred",
        "evidence_ids": ["ev-AB"],
    }
    return data


def _wait_for_prerequisite(repo):
    """todo-joint deferred until todo-prereq, alice's live blocker that names it: a deferral that holds."""
    repo.todo_add(
        GOAL,
        "prerequisite",
        todo_id="todo-prereq",
        unblocks_todo_id="todo-joint",
        claimed_by="alice",
        actor="alice",
        now=NOW,
    )
    repo.todo_update(
        GOAL,
        "todo-joint",
        "deferred",
        reason="prerequisite",
        resume_when="todo_done:todo-prereq",
        actor="alice",
        now=NOW,
    )


def test_a_deferral_holds_while_its_blocker_is_pending_and_then_the_gap_is_scheduled_again(gate, git_repo):
    obligation, gap = _admit(gate)
    data = _deferral(gate, obligation, gap)
    gate.explore_node_update(GOAL, "AB", status="blocked", reason="needs the prerequisite", now=NOW)
    # the successor does not wait yet: the deferral is refused, naming why
    refused(
        gate,
        git_repo,
        "deferral-not-held",
        lambda: gate.explore_observe(GOAL, data, agent_id="alice", now=NOW),
        "not waiting",
    )
    _wait_for_prerequisite(gate)
    gate.explore_observe(GOAL, data, agent_id="alice", now=NOW)
    assert _live(gate).state == "deferred"
    # the prerequisite resolved: the wait no longer holds; the successor is runnable again (scheduled, not observed)
    gate.todo_complete(GOAL, "todo-prereq", actor="alice", evidence=["ev-prereq"], now=NOW)
    assert _live(gate).state == "scheduled"


def test_should_run_raises_the_gap_only_after_gates_runnable_work_and_handoffs(gate):
    assert gate.should_run(GOAL, "alice").decision == "replan_required"
    gate.todo_add(GOAL, "ordinary work", todo_id="todo-work", now=NOW)
    answer = gate.should_run(GOAL, "alice")
    assert answer.decision == "run" and answer.agent_lane_next_action.todo_id == "todo-work"
    gate.todo_complete(GOAL, "todo-work", evidence=["ev"], now=NOW)
    gate.gate_open(GOAL, "gate-ship", question="Ship?", owner_class="user", blocks=[], scope="release", now=NOW)
    assert gate.should_run(GOAL, "alice").decision == "wait_for_user"


def _second_clone(gate, git_repo, tmp_path):
    """Another clone of the project meeting this one through a bare remote, synced with it."""
    import loopx_git

    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(git_repo, "remote", "add", "origin", str(bare))
    gate.sync("origin")
    other_dir = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other_dir))
    other = loopx_git.open(other_dir)
    other.connect()
    other.sync("origin")
    return other


def _both_retire(gate, other, obligation, turns):
    """Both clones retire the same stale duty in their own turns, then meet: the two run ids."""
    _invalidate_and_pause(gate)
    _invalidate_and_pause(other)
    ours = _retire(gate, obligation, turn=turns[0]).record.run_id
    theirs = _retire(other, obligation, turn=turns[1], now="2026-03-01T10:05:00Z").record.run_id
    gate.sync("origin")
    other.sync("origin")
    gate.sync("origin")
    return ours, theirs


def test_two_clones_agree_on_the_live_frontier_after_a_sync(gate, git_repo, tmp_path):
    other = _second_clone(gate, git_repo, tmp_path)
    obligation, gap = _obligation(other, "bob")
    assert _obligation(gate, "bob") == (obligation, gap)  # the same facts give the same obligation id
    _admit(other, agent="bob")
    other.explore_observe(GOAL, _joint(other, obligation, gap, agent="bob"), agent_id="bob", now=NOW)
    gate.explore_node_add(GOAL, "C", kind="hypothesis", title="C", now=NOW)
    other.sync("origin")
    gate.sync("origin")
    ours, theirs = live_gaps(gate.state().goals[GOAL]), live_gaps(other.state().goals[GOAL])
    assert [(g.gap.gap_id, g.state, g.experiment) for g in ours] == [
        (g.gap.gap_id, g.state, g.experiment) for g in theirs
    ]
    assert ours[0].state == "observed"
    other.close()


def test_a_guarded_todo_survives_the_fold_cache(gate):
    import pickle

    _admit(gate)
    state = gate.state()
    again = pickle.loads(pickle.dumps(state))
    ours, theirs = state.goals[GOAL].todos["todo-joint"], again.goals[GOAL].todos["todo-joint"]
    assert theirs == ours and theirs.capability_guard is not None
    assert theirs.capability_guard == ours.capability_guard


def _retire(repo, obligation, turn="t1", agent="alice", now=NOW):
    return repo.refresh_state(
        GOAL,
        "blocked",
        agent_id=agent,
        delivery_outcome="outcome_gap",
        replan_obligation_id=obligation,
        turn_instance_id=turn,
        progress_result_class="blocked",
        progress_work_item_id="todo-joint",
        progress_blocker_id="input-changed",
        progress_evidence_ids=["ev-changed"],
        evidence=["ev-changed"],
        now=now,
    )


def _invalidate_and_pause(repo, agent="alice"):
    repo.goal_configure(GOAL, execute=True, explore_composition_scope_id="other-scope", now=NOW)
    repo.todo_update(GOAL, "todo-joint", "blocked", reason="scope changed", actor=agent, now=NOW)


def test_a_turn_id_that_is_not_an_id_is_refused_before_anything_is_built(gate, git_repo):
    obligation, _ = _obligation(gate)
    refused(
        gate,
        git_repo,
        "invalid-field",
        lambda: gate.todo_add(
            GOAL,
            "x",
            action_kind="joint_probe",
            explore_result_node_refs=["AB"],
            replan_obligation_id=obligation,
            turn_instance_id="x y",
            actor="alice",
            now=NOW,
        ),
        "field 'turn_instance_id'",
    )
    _admit(gate)
    _invalidate_and_pause(gate)
    refused(gate, git_repo, "invalid-field", lambda: _retire(gate, obligation, turn="x y"), "field 'turn_instance_id'")


def test_a_retired_obligation_never_comes_back_and_takes_no_new_write_back(gate, git_repo):
    obligation, _ = _admit(gate)
    _invalidate_and_pause(gate)
    run = _retire(gate, obligation).record
    assert run.capability_retirement is not None
    # the same facts again (the scope restored): the gap's next obligation has another id
    gate.goal_configure(GOAL, execute=True, explore_composition_scope_id=SCOPE, now=NOW)
    again, _ = _obligation(gate)
    assert again != obligation
    # the retiring turn's write-back again: its closeout; anything else under the retired id: refused
    assert _retire(gate, obligation).record.run_id == run.run_id
    refused(gate, git_repo, "duty-retired", lambda: _retire(gate, obligation, turn="t2"), "was retired by run")


def test_every_retiring_run_spends_nothing_also_a_second_clones(gate, git_repo, tmp_path):
    obligation, _ = _admit(gate)
    other = _second_clone(gate, git_repo, tmp_path)
    ours, theirs = _both_retire(gate, other, obligation, ("t1", "t2"))
    tip = state_tip(git_repo)
    for repo, run_id in ((gate, ours), (other, theirs), (gate, theirs)):
        result = repo.spend_slot(GOAL, "alice", run_id, now=NOW)
        assert not result.changed and result.record.closeout_kind == "capability_duty_retired_no_spend"
    assert state_tip(git_repo) == tip
    other.close()


def test_a_joint_probe_does_not_close_on_a_stale_duty_nor_by_supersession(gate, git_repo):
    obligation, gap = _admit(gate)
    gate.todo_add(GOAL, "a replacement", todo_id="todo-other", now=NOW)
    refused(
        gate,
        git_repo,
        "closeout-needs-result",
        lambda: gate.todo_supersede(GOAL, "todo-joint", "todo-other", "replaced", actor="alice", now=NOW),
    )
    gate.explore_observe(GOAL, _joint(gate, obligation, gap), agent_id="alice", now=NOW)
    gate.explore_node_update(GOAL, "A", status="open", reason="recheck", now=NOW)
    refused(
        gate,
        git_repo,
        "stale-capability-duty",
        lambda: gate.todo_complete(GOAL, "todo-joint", actor="alice", evidence=["ev-AB"], now=NOW),
        "no longer holds",
    )


def test_the_write_back_of_a_result_also_follows_its_completion(gate):
    obligation, gap = _admit(gate)
    data = _joint(gate, obligation, gap)
    gate.explore_observe(GOAL, data, agent_id="alice", now=NOW)
    gate.todo_complete(GOAL, "todo-joint", actor="alice", evidence=["ev-AB"], now=NOW)
    run = gate.refresh_state(
        GOAL,
        "done",
        agent_id="alice",
        replan_obligation_id=obligation,
        progress_result_class="no_followup",
        progress_work_item_id="todo-joint",
        progress_coverage_scope_id=SCOPE,
        progress_coverage_complete=True,
        progress_evidence_ids=["ev-AB"],
        now=NOW,
    ).record
    assert run.replan_obligation_id == obligation


def test_a_successor_that_cannot_produce_the_result_schedules_nothing(gate, git_repo):
    obligation, _ = _obligation(gate)
    refused(
        gate,
        git_repo,
        "not-a-joint-probe",
        lambda: gate.todo_add(
            GOAL,
            "x",
            action_kind="joint_probe",
            explore_result_node_refs=["AB"],
            replan_obligation_id=obligation,
            claimed_by="bob",
            actor="alice",
            now=NOW,
        ),
        "field 'claimed_by'",
    )
    _admit(gate)
    assert _live(gate).state == "scheduled"
    # an input observed afresh: the admitted todo is stale, and the gap is pending again for everyone
    gate.explore_node_update(GOAL, "A", status="open", reason="recheck", now=NOW)
    gate.explore_observe(GOAL, _terminal("A", "ev-A2", candidates=[("B", "ev-B")]), now=NOW)
    gate.explore_node_update(GOAL, "A", status="resolved", reason="again", now=NOW)
    assert _live(gate).state == "pending"
    assert gate.should_run(GOAL, "bob").decision == "replan_required"


def test_no_gap_is_raised_for_a_paused_goal_and_an_inactive_policy_adds_nothing(gate, repo):
    gate.goal_update(GOAL, status="paused", now=NOW)
    assert gate.should_run(GOAL, "alice").decision == "idle"
    gate.goal_configure(GOAL, execute=True, explore_composition_mode="disabled", now=NOW)
    assert "bounded_research_frontier" not in gate.status_data(GOAL, "alice")
    assert "research_execution_frontier" not in gate.explore_summary_data(GOAL, "alice")


def test_turning_off_what_was_never_on_writes_nothing(repo, git_repo):
    tip = state_tip(git_repo)
    result = repo.goal_configure(
        GOAL, execute=True, explore_harness_enabled=False, explore_composition_mode="disabled", now=NOW
    )
    assert not result.changed and not result.record.changed and state_tip(git_repo) == tip


def _shape(gate, change):
    obligation, gap = _admit(gate)
    data = _joint(gate, obligation, gap)
    change(data)
    return data


def _resolution(disposition, **extra):
    return {"schema_version": "research_composition_resolution_v0", "disposition": disposition, **extra}


SHAPE_RULES = [
    (
        "a lineage whose successor is not the progress work item",
        lambda d: d["execution_lineage"].update(successor_todo_id="todo-other"),
        "is not the successor todo",
    ),
    (
        "a resolution without execution lineage",
        lambda d: (d.pop("execution_lineage"), d.update(composition_resolution=_resolution("deferred"))),
        "missing beside composition_resolution",
    ),
    (
        "a resolution without evidence of the same progress",
        lambda d: d.update(
            composition_resolution=_resolution("dismissed", basis="duplicate", evidence_ids=["ev-elsewhere"])
        ),
        "empty or not in the progress evidence",
    ),
    (
        "a dismissal without a typed basis",
        lambda d: d.update(composition_resolution=_resolution("dismissed", evidence_ids=["ev-AB"])),
        "dismissed without its proof",
    ),
    (
        "a deferral without blocked progress",
        lambda d: d.update(composition_resolution=_resolution("deferred", evidence_ids=["ev-AB"])),
        "deferred without a blocker",
    ),
]


@pytest.mark.parametrize(("name", "change", "said"), SHAPE_RULES, ids=[r[0] for r in SHAPE_RULES])
def test_each_lineage_and_resolution_shape_rule_is_refused(gate, git_repo, name, change, said):
    data = _shape(gate, change)
    refused(
        gate, git_repo, "invalid-observation", lambda: gate.explore_observe(GOAL, data, agent_id="alice", now=NOW), said
    )


def test_archived_held_misplaced_and_empty_work_supplies_no_attribution(gate, git_repo):
    obligation, gap = _admit(gate)
    observe = lambda data: lambda: gate.explore_observe(GOAL, data, agent_id="alice", now=NOW)  # noqa: E731
    # on a node that is no binary experiment
    data = _joint(gate, obligation, gap)
    data["explore_node_id"] = "A"
    data.pop("input_observations")
    refused(gate, git_repo, "not-a-binary-experiment", observe(data), "is a hypothesis")
    # on an experiment over other inputs
    gate.explore_node_add(GOAL, "C", kind="hypothesis", title="C", now=NOW)
    gate.explore_node_add(GOAL, "AC", kind="experiment", title="AC", now=NOW)
    for node in ("A", "C"):
        gate.explore_edge_add(GOAL, "AC", node, edge_type="depends_on", now=NOW)
    data = _joint(gate, obligation, gap)
    data["explore_node_id"] = "AC"
    refused(gate, git_repo, "lineage-mismatch", observe(data), "not on the gap's inputs")
    # a result without evidence
    data = _joint(gate, obligation, gap)
    data["progress"] = {
        "schema_version": "typed_progress_observation_v0",
        "work_item_id": "todo-joint",
        "result_class": "advanced",
        "surface_id": "joint",
    }
    data.pop("closure_basis")
    refused(gate, git_repo, "not-an-execution-result", observe(data), "without evidence")
    # held by a gate: not runnable
    gate.gate_open(GOAL, "gate-hold", question="Hold it?", owner_class="user", blocks=["todo-joint"], now=NOW)
    refused(gate, git_repo, "no-execution-authority", observe(_joint(gate, obligation, gap)), "not runnable")
    gate.gate_decide(GOAL, "gate-hold", decision="approve", reason="go", decided_by_class="user", now=NOW)
    # the gap observed: a second result is no new attribution; the todo done: archived work
    gate.explore_observe(GOAL, _joint(gate, obligation, gap), agent_id="alice", now=NOW)
    second = _joint(gate, obligation, gap)
    second["progress"]["evidence_ids"] = ["ev-AB", "ev-AB2"]
    refused(gate, git_repo, "gap-not-pending", observe(second), "is observed")
    gate.todo_complete(GOAL, "todo-joint", actor="alice", evidence=["ev-AB"], now=NOW)
    refused(gate, git_repo, "no-execution-authority", observe(second), "todo-joint is done")


def test_a_retired_dutys_todo_keeps_no_authority_and_closes_as_any_todo(gate, git_repo):
    obligation, gap = _admit(gate)
    gate.goal_configure(GOAL, execute=True, explore_composition_mode="disabled", now=NOW)
    gate.todo_update(GOAL, "todo-joint", "blocked", reason="gate off", actor="alice", now=NOW)
    _retire(gate, obligation)
    gate.goal_configure(GOAL, execute=True, explore_composition_mode="explicit_only", now=NOW)
    gate.todo_update(GOAL, "todo-joint", "open", reason="back", actor="alice", now=NOW)
    # the reopened todo schedules nothing: the gap is owed again, under a new id
    assert _live(gate).state == "pending"
    owed = gate.explore_summary(GOAL, "alice").research_execution_frontier.owed_obligation
    assert owed is not None and owed.obligation_id != obligation
    refused(
        gate,
        git_repo,
        "no-execution-authority",
        lambda: gate.explore_observe(GOAL, _joint(gate, obligation, gap), agent_id="alice", now=NOW),
        "was retired by run",
    )
    gate.todo_complete(GOAL, "todo-joint", actor="alice", no_follow_up=True, reason="duty retired", now=NOW)


def test_with_the_gate_off_a_joint_probe_closes_as_any_todo(gate):
    _admit(gate)
    gate.goal_configure(GOAL, execute=True, explore_composition_mode="disabled", now=NOW)
    gate.todo_complete(GOAL, "todo-joint", actor="alice", evidence=["ev-AB"], now=NOW)


def test_a_current_duty_keeps_its_id_when_an_older_one_of_the_gap_is_retired(gate):
    first, _ = _admit(gate)
    # an input observed afresh: the first duty is stale, and the gap owes a second obligation
    gate.explore_node_update(GOAL, "A", status="open", reason="recheck", now=NOW)
    gate.explore_observe(GOAL, _terminal("A", "ev-A2", candidates=[("B", "ev-B")]), now=NOW)
    gate.explore_node_update(GOAL, "A", status="resolved", reason="again", now=NOW)
    gate.todo_update(GOAL, "todo-joint", "blocked", reason="stale", actor="alice", now=NOW)
    second, _ = _admit(gate, todo="todo-joint-2")
    assert second != first
    _retire(gate, first)
    gate.todo_update(GOAL, "todo-joint-2", "blocked", reason="paused", actor="alice", now=NOW)
    assert _obligation(gate)[0] == second  # still current: its id stands


def test_each_clones_retiring_turn_may_ask_again_after_a_merge(gate, git_repo, tmp_path):
    obligation, _ = _admit(gate)
    other = _second_clone(gate, git_repo, tmp_path)
    ours, theirs = _both_retire(gate, other, obligation, ("turn-a", "turn-b"))
    for repo in (gate, other):
        assert _retire(repo, obligation, turn="turn-a").record.run_id == ours
        assert _retire(repo, obligation, turn="turn-b").record.run_id == theirs
    other.close()


def test_a_paused_goal_owes_and_admits_nothing(gate, git_repo):
    obligation, _ = _obligation(gate)
    gate.goal_update(GOAL, status="paused", now=NOW)
    frontier = gate.explore_summary(GOAL, "alice").research_execution_frontier
    assert frontier is not None and frontier.owed_obligation is None
    refused(
        gate,
        git_repo,
        "unknown-obligation",
        lambda: gate.todo_add(
            GOAL,
            "x",
            action_kind="joint_probe",
            explore_result_node_refs=["AB"],
            replan_obligation_id=obligation,
            actor="alice",
            now=NOW,
        ),
    )


def test_a_retired_dutys_deferral_holds_nothing_back(gate):
    obligation, gap = _admit(gate)
    gate.explore_node_update(GOAL, "AB", status="blocked", reason="needs the prerequisite", now=NOW)
    _wait_for_prerequisite(gate)
    gate.explore_observe(GOAL, _deferral(gate, obligation, gap), agent_id="alice", now=NOW)
    assert _live(gate).state == "deferred"
    gate.goal_configure(GOAL, execute=True, explore_composition_scope_id="other-scope", now=NOW)
    _retire(gate, obligation)
    gate.goal_configure(GOAL, execute=True, explore_composition_scope_id=SCOPE, now=NOW)
    assert _live(gate).state == "pending"
    owed = gate.explore_summary(GOAL, "bob").research_execution_frontier.owed_obligation
    assert owed is not None


def test_the_retiring_write_back_again_must_be_the_same_write_back(gate, git_repo):
    obligation, _ = _admit(gate)
    _invalidate_and_pause(gate)
    _retire(gate, obligation)
    changed = lambda: gate.refresh_state(  # noqa: E731 - the same turn and progress, another outcome
        GOAL,
        "done",
        agent_id="alice",
        delivery_outcome="primary_goal_outcome",
        replan_obligation_id=obligation,
        turn_instance_id="t1",
        progress_result_class="blocked",
        progress_work_item_id="todo-joint",
        progress_blocker_id="input-changed",
        progress_evidence_ids=["ev-changed"],
        evidence=["other"],
        now=NOW,
    )
    refused(gate, git_repo, "duty-retired", changed, "was retired by run")

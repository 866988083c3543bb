"""The explicit-only live research gate (seed 002, issue 15 item 6) through the CLI only:
``configure-goal`` previews and applies the policy, ``quota should-run`` raises a pending gap's
capability obligation once nothing comes before it, a joint_probe successor schedules it, an
observation under execution lineage observes it, and a duty whose inputs changed is retired without
spending a slot. Every refusal exits 1, names its rule and leaves the state ref where it was."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_schemas import conforms, written
from tests.conftest import state_tip
from tests.domain.test_explore import _terminal

G = "research-demo"
AGENT = "research-agent"
SCOPE = "joint-scope"


def _ok(cli, *args):
    result = cli(*args)
    assert result.code == 0, result.err
    return result


@pytest.fixture
def gap(cli, monkeypatch):
    """A goal with one agent and a pending gap A+B, with experiment AB over it."""
    monkeypatch.chdir(cli.path)
    _ok(cli, "goal", "create", "--goal-id", G, "--objective", "Find which results compose")
    _ok(cli, "agent", "register", "-g", G, "--agent-id", AGENT)
    for node, kind in (("A", "hypothesis"), ("B", "hypothesis"), ("AB", "experiment")):
        _ok(cli, "explore", "node", "add", "-g", G, "--node-id", node, "--kind", kind, "--title", node,
            "--evidence-id", f"ev-{node}")  # fmt: skip
    for node in ("A", "B"):
        _ok(cli, "explore", "edge", "add", "-g", G, "--from-node-id", "AB", "--to-node-id", node,
            "--edge-type", "depends_on")  # fmt: skip
    observe(cli, _terminal("B", "ev-B"))
    observe(cli, _terminal("A", "ev-A", candidates=[("B", "ev-B")]))
    for node in ("A", "B"):
        _ok(cli, "explore", "node", "update", "-g", G, "--node-id", node, "--status", "resolved", "--reason", "covered")
    return cli


def observe(cli, data, *extra):
    (cli.path / "obs.json").write_text(json.dumps(data))
    return cli("explore", "observe", "-g", G, "--observation-json", "obs.json", *extra)


def enable(cli):
    _ok(cli, "configure-goal", "--goal-id", G, "--explore-harness-enabled", "--explore-composition-mode",
        "explicit_only", "--explore-composition-scope-id", SCOPE, "--execute")  # fmt: skip


def should_run(cli):
    return cli.json("quota", "should-run", "--goal-id", G, "--agent-id", AGENT, "--turn-instance-id", "research-turn")


def admit(cli, obligation, todo="todo-joint"):
    _ok(cli, "todo", "add", "-g", G, "-a", AGENT, "--todo-id", todo, "--text", "Run the joint probe",
        "--action-kind", "joint_probe", "--explore-result-node-ref", "AB", "--replan-obligation-id", obligation,
        "--turn-instance-id", "research-turn")  # fmt: skip
    _ok(cli, "todo", "claim", "-g", G, "-t", todo, "-a", AGENT)


def joint(cli, todo, obligation, gap_id, *, result_class="no_followup", scope=SCOPE, evidence="ev-AB"):
    [card] = cli.json("explore", "summary", "-g", G)["gaps"]
    data = _terminal(
        "AB", evidence, inputs=[(i["node_id"], i["fingerprint"]) for i in card["input_observations"]],
        result_class=result_class,
    )  # fmt: skip
    data["progress"]["work_item_id"] = todo
    data["progress"]["coverage_scope_id"] = scope
    data["execution_lineage"] = {
        "schema_version": "research_execution_lineage_v0",
        "goal_id": G,
        "gap_id": gap_id,
        "replan_obligation_id": obligation,
        "successor_todo_id": todo,
        "agent_id": AGENT,
    }
    return data


def refused(cli, args, code, *said):
    before = state_tip(cli.path)
    result = cli(*args)
    assert result.code == 1, (result.out, result.err)
    assert f"error[{code}]" in result.err, result.err
    for words in said:
        assert words in result.err, result.err
    assert state_tip(cli.path) == before
    return result


def test_configure_goal_previews_without_execute_and_writes_with_it(gap):
    before = state_tip(gap.path)
    preview = gap.json("configure-goal", "--goal-id", G, "--explore-harness-enabled", "--explore-composition-mode",
                       "explicit_only", "--explore-composition-scope-id", SCOPE)  # fmt: skip
    conforms("explore_policy_change_v0", preview)
    assert (preview["changed"], preview["executed"], preview["commit"]) == (True, False, None)
    assert preview["before"]["active"] is False and preview["after"]["active"] is True
    assert state_tip(gap.path) == before  # a preview writes nothing
    assert "replan_action_packet" not in should_run(gap) or should_run(gap)["replan_action_packet"] is None
    enable(gap)
    assert state_tip(gap.path) != before
    again = gap.json("configure-goal", "--goal-id", G, "--explore-composition-scope-id", SCOPE, "--execute")
    assert (again["changed"], again["commit"]) == (False, None)
    goal = gap.json("goal", "show", "-g", G)
    assert goal["explore_composition_mode"] == "explicit_only" and goal["explore_composition_scope_id"] == SCOPE
    # disable only the new policy: the gap is no longer raised
    _ok(gap, "configure-goal", "--goal-id", G, "--explore-composition-mode", "disabled", "--execute")
    assert should_run(gap)["decision"] == "idle"
    assert gap("verify").code == 0


def test_explicit_only_without_a_scope_is_refused(gap):
    refused(
        gap,
        [
            "configure-goal",
            "-g",
            G,
            "--explore-harness-enabled",
            "--explore-composition-mode",
            "explicit_only",
            "--execute",
        ],
        "invalid-field",
        "field 'explore_composition_scope_id': missing",
    )


def test_a_pending_gap_is_raised_scheduled_observed_and_written_back(gap):
    assert should_run(gap)["decision"] == "idle"  # gate off: the gap is diagnostic only
    enable(gap)
    answer = should_run(gap)
    conforms("loopx_should_run_v0", answer)
    assert answer["decision"] == "replan_required"
    packet = answer["replan_action_packet"]
    guard = packet["capability_guard"]
    obligation, gap_id = packet["obligation_id"], guard["gap_id"]
    assert guard["obligation_id"] == obligation and guard["coverage_scope_id"] == SCOPE
    assert packet["capability_experiments"] == ["AB"] and packet["triggers"][0]["kind"] == "research_composition_gap"
    assert f"--replan-obligation-id {obligation}" in packet["writeback_contract"]["command_template"]
    # the asking turn is filled in where the kept answer says <turn-instance-id>
    assert "--turn-instance-id research-turn" in packet["writeback_contract"]["command_template"]
    assert guard["turn_instance_id"] == "research-turn"
    # the live frontier, bounded, in status and explore summary
    card = gap.json("status", "-g", G, "--agent-id", AGENT)
    live = card["bounded_research_frontier"]
    conforms("bounded_research_frontier_v0", live)
    assert live["gaps_by_state"]["pending"] == 1 and live["owed_obligation"]["obligation_id"] == obligation
    summary = gap.json("explore", "summary", "-g", G, "--agent-id", AGENT)
    conforms("research_execution_frontier_v0", summary["research_execution_frontier"])
    # an unrelated successor is refused; the joint probe is admitted and schedules the gap
    refused(
        gap,
        ["todo", "add", "-g", G, "-a", AGENT, "--text", "something else", "--replan-obligation-id", obligation],
        "not-a-joint-probe",
        "--action-kind joint_probe",
    )
    admit(gap, obligation)
    todo = gap.json("todo", "show", "-g", G, "-t", "todo-joint")
    assert todo["capability_guard"]["obligation_id"] == obligation
    assert todo["capability_guard"]["turn_instance_id"] == "research-turn"
    assert should_run(gap)["agent_lane_next_action"]["todo_id"] == "todo-joint"  # runnable work first
    [live_card] = gap.json("explore", "summary", "-g", G, "--agent-id", AGENT)["research_execution_frontier"]["gaps"]
    assert live_card["state"] == "scheduled" and live_card["successor_todo_ids"] == ["todo-joint"]
    # a result without the configured scope does not count; with it, the gap is observed live
    data = joint(gap, "todo-joint", obligation, gap_id)
    (gap.path / "obs.json").write_text(json.dumps(joint(gap, "todo-joint", obligation, gap_id, scope="other")))
    refused(gap, ["explore", "observe", "-g", G, "-a", AGENT, "--observation-json", "obs.json"], "scope-mismatch")
    result = observe(gap, data, "-a", AGENT)
    assert result.code == 0, result.err
    live = gap.json("explore", "summary", "-g", G, "--agent-id", AGENT)["research_execution_frontier"]
    assert live["gaps_by_state"]["observed"] == 1 and live["owed_obligation"] is None
    # the write-back repeats the result's complete progress, bound to the obligation
    progress = ["--progress-result-class", "no_followup", "--progress-work-item-id", "todo-joint",
                "--progress-coverage-scope-id", SCOPE, "--progress-coverage-complete", "--progress-evidence-id", "ev-AB"]  # fmt: skip
    refused(
        gap,
        [
            "refresh-state",
            "-g",
            G,
            "-a",
            AGENT,
            "--classification",
            "done",
            "--replan-obligation-id",
            obligation,
            *progress[:-2],
            "--progress-evidence-id",
            "ev-other",
        ],
        "writeback-not-bound",
    )
    run = gap.json("refresh-state", "-g", G, "-a", AGENT, "--classification", "done", "--replan-obligation-id",
                   obligation, *progress)  # fmt: skip
    written(run, "loopx_run_record_v0")
    assert run["record"]["replan_obligation_id"] == obligation
    assert gap("verify").code == 0


def test_an_invalidated_duty_is_retired_without_spending_a_slot(gap):
    enable(gap)
    packet = should_run(gap)["replan_action_packet"]
    obligation, gap_id = packet["obligation_id"], packet["capability_guard"]["gap_id"]
    admit(gap, obligation)
    stale_envelope = joint(gap, "todo-joint", obligation, gap_id)
    # an input changes: A is reopened, observed afresh and closed again
    _ok(gap, "explore", "node", "update", "-g", G, "--node-id", "A", "--status", "open", "--reason", "recheck")
    assert observe(gap, _terminal("A", "ev-A2", candidates=[("B", "ev-B")])).code == 0
    _ok(gap, "explore", "node", "update", "-g", G, "--node-id", "A", "--status", "resolved", "--reason", "again")
    # the old envelope is stale; a fresh one under the old duty too: both supply the retirement contract
    (gap.path / "obs.json").write_text(json.dumps(stale_envelope))
    refused(
        gap, ["explore", "observe", "-g", G, "-a", AGENT, "--observation-json", "obs.json"], "stale-capability-duty"
    )
    (gap.path / "obs.json").write_text(json.dumps(joint(gap, "todo-joint", obligation, gap_id)))
    stale = refused(
        gap,
        ["explore", "observe", "-g", G, "-a", AGENT, "--observation-json", "obs.json"],
        "stale-capability-duty",
        "input A is now observation",
        "retirement_contract:",
    )
    assert f"--replan-obligation-id {obligation} --turn-instance-id research-turn" in stale.err
    status = gap.json("explore", "summary", "-g", G, "--agent-id", AGENT)["research_execution_frontier"]
    [duty] = status["duties"]
    assert duty["state"] == "stale" and duty["obligation_id"] == obligation
    retire = ["refresh-state", "-g", G, "-a", AGENT, "--classification", "blocked", "--delivery-outcome",
              "outcome_gap", "--replan-obligation-id", obligation, "--progress-result-class", "blocked",
              "--progress-work-item-id", "todo-joint", "--progress-blocker-id", "input-a-changed",
              "--progress-evidence-id", "ev-A2", "--evidence", "ev-A2"]  # fmt: skip
    refused(gap, [*retire, "--turn-instance-id", "research-turn"], "duty-has-runnable-todo")
    _ok(gap, "todo", "update", "-g", G, "-t", "todo-joint", "--status", "blocked", "--reason", "input A changed",
        "-a", AGENT)  # fmt: skip
    refused(gap, retire, "invalid-field", "field 'turn_instance_id': missing")
    run = gap.json(*retire, "--turn-instance-id", "research-turn")
    retirement = run["record"]["capability_retirement"]
    conforms("capability_obligation_retirement_v0", retirement)
    assert retirement["closeout_kind"] == "capability_duty_retired_no_spend"
    assert any("input A is now observation" in why for why in retirement["invalidated_by"])
    run_id = run["record"]["run_id"]
    # no slot is spent, now or on a second ask; the old turn's write-back again writes nothing
    before = state_tip(gap.path)
    closeout = gap.json("quota", "spend-slot", "-g", G, "--agent-id", AGENT, "--run-id", run_id)
    assert closeout["changed"] is False and closeout["record"]["closeout_kind"] == "capability_duty_retired_no_spend"
    again = gap.json(*retire, "--turn-instance-id", "research-turn")
    assert again["changed"] is False and again["record"]["run_id"] == run_id
    assert state_tip(gap.path) == before
    todo = gap.json("todo", "show", "-g", G, "-t", "todo-joint")
    assert todo["status"] == "blocked"  # no todo completed
    # the next turn reassesses: the gap (with A's new observation) is owed under a new obligation
    assert should_run(gap)["replan_action_packet"]["obligation_id"] != obligation
    assert gap("verify").code == 0


def test_a_current_duty_is_not_retired(gap):
    enable(gap)
    obligation = should_run(gap)["replan_action_packet"]["obligation_id"]
    admit(gap, obligation)
    _ok(gap, "todo", "update", "-g", G, "-t", "todo-joint", "--status", "blocked", "--reason", "paused", "-a", AGENT)
    refused(
        gap,
        [
            "refresh-state",
            "-g",
            G,
            "-a",
            AGENT,
            "--classification",
            "blocked",
            "--delivery-outcome",
            "outcome_gap",
            "--replan-obligation-id",
            obligation,
            "--turn-instance-id",
            "t1",
            "--progress-result-class",
            "blocked",
            "--progress-work-item-id",
            "todo-joint",
            "--progress-blocker-id",
            "b1",
            "--progress-evidence-id",
            "ev-1",
        ],
        "capability-duty-current",
    )


def test_a_turn_that_is_not_an_id_is_refused_by_should_run(gap):
    enable(gap)
    for turn in ("x y", "x; rm -rf ~", ""):
        refused(gap, ["quota", "should-run", "-g", G, "-a", AGENT, "--turn-instance-id", turn], "invalid-field",
                "field 'turn_instance_id'")  # fmt: skip


def test_explore_summary_in_text_with_the_gate_off_and_on(gap):
    off = gap("explore", "summary", "-g", G)
    assert off.code == 0 and "gaps (1 pending)" in off.out and "live research gate" not in off.out
    enable(gap)
    on = gap("explore", "summary", "-g", G)  # the only agent is selected for presentation
    assert on.code == 0 and f"live research gate for {AGENT} (scope {SCOPE}): 1 pending" in on.out
    status = gap("status", "-g", G, "--agent-id", AGENT)
    assert status.code == 0 and "owed when idle: replan-" in status.out

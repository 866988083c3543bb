"""Replan obligations and the write gate (issue 14, items 2, 3 in part and 5): one reducer folded from
each agent's own runs opens an obligation when it stalls; `quota should-run` and `status` show the
same one; `refresh-state` then accepts only a typed semantic delta bound to one settlement identity,
and every refusal exits 1, names the field and what is missing, and leaves the state ref unmoved."""

from __future__ import annotations

import json

import pytest

import loopx_git
from loopx_git.model.frontier import DEAD_MONITOR, MONITOR_NO_CHANGE, REVIEW_EVERY, AgentFrontier, step
from loopx_git.model.progress import ProgressObservation
from loopx_git.model.run import RunRecord
from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, NOW, state_tip

UNCHANGED = ["--progress-result-class", "unchanged", "--progress-surface-id", "auth", "--progress-evidence-id", "ci-1"]


def _run(cli, *extra: str) -> object:
    return cli("refresh-state", "-g", GOAL, "-a", "alice", "--classification", "probe", *extra)


def _stalled(cli) -> dict:
    for _ in range(2):
        assert _run(cli, *UNCHANGED).code == 0
    should = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")
    assert should["decision"] == "replan_required"
    return should


def test_two_identical_unchanged_runs_open_one_obligation_seen_alike_everywhere(cli):
    should = _stalled(cli)
    conforms("loopx_should_run_v0", should)
    packet = should["replan_action_packet"]
    assert packet["obligation_id"].startswith("replan-") and len(packet["obligation_id"]) == len("replan-") + 16
    assert [t["kind"] for t in packet["triggers"]] == ["repeated_progress"]
    assert packet["uncovered_frontier"]["baseline"]["surface_id"] == "auth"
    assert packet["uncovered_frontier"]["required_any_of"] == [
        "new_surface",
        "new_hypothesis",
        "new_probe_family",
        "new_runnable_successor",
    ]
    assert packet["required_outcome"] == "semantic_delta" and packet["allowed_terminal"] == [
        "exploration_exhausted",
        "blocked",
        "no_followup",
    ]
    contract = packet["writeback_contract"]
    assert (
        contract["schema_version"] == "typed_progress_observation_v0" and contract["transport"] == "loopx_refresh_state"
    )
    assert f"--replan-obligation-id {packet['obligation_id']}" in contract["command_template"]
    assert should["interaction_contract"]["agent_channel"]["must_attempt"] is True
    # stable across calls, and the same on the card
    assert cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["replan_action_packet"] == packet
    card = cli.json("status", "-g", GOAL)
    assert [o["obligation_id"] for o in card["replan_obligations"]] == [packet["obligation_id"]]
    assert cli.json("status", "-g", GOAL, "-a", "bob")["replan_obligations"] == []  # alice's, not bob's
    assert cli.json("quota", "should-run", "-g", GOAL, "-a", "bob")["decision"] != "replan_required"
    assert "Replan obligations" in cli("status", "-g", GOAL).out


@pytest.mark.parametrize(
    ("extra", "field", "missing"),
    [
        ([], "progress", "no typed progress"),
        (UNCHANGED, "progress", "unchanged is not a delta"),
        (["--progress-result-class", "advanced", "--progress-surface-id", "auth"], "progress", "tried before"),
        (["--progress-result-class", "advanced"], "progress", "ungrounded"),
        (
            ["--progress-result-class", "blocked", "--progress-blocker-id", "ci-down"],
            "progress",
            "without its id and evidence",
        ),
        (
            ["--progress-result-class", "no_followup", "--progress-coverage-scope-id", "s"],
            "progress",
            "without evidence",
        ),
    ],
)
def test_the_write_gate_refuses_what_is_not_a_semantic_delta(cli, extra, field, missing):
    obligation = _stalled(cli)["replan_action_packet"]["obligation_id"]
    tip = state_tip(cli.path)
    result = _run(cli, "--replan-obligation-id", obligation, *extra)
    assert result.code == 1, result.err
    assert f"field '{field}'" in result.err and missing in result.err and "rule:" in result.err
    assert "error[not-a-semantic-delta]" in result.err and "nothing was written" in result.err
    assert state_tip(cli.path) == tip


def test_settlement_identity_rules(cli, repo):
    obligation = _stalled(cli)["replan_action_packet"]["obligation_id"]
    repo.todo_add(GOAL, "Try the parser surface", todo_id="next", now=NOW)
    delta = ["--progress-result-class", "advanced", "--progress-surface-id", "parser", "--progress-evidence-id", "ci-2"]
    tip = state_tip(cli.path)
    both = _run(cli, "--replan-obligation-id", obligation, "-t", "next", *delta)
    assert both.code == 1 and "error[settlement-identity]" in both.err and "never both" in both.err
    neither = _run(cli, *delta)
    assert neither.code == 1 and "error[settlement-identity]" in neither.err and obligation in neither.err
    stale = _run(cli, "--replan-obligation-id", "replan-0000000000000000", *delta)
    assert stale.code == 1 and "error[unknown-obligation]" in stale.err and f"the open one is {obligation}" in stale.err
    assert state_tip(cli.path) == tip  # none of the three refusals wrote anything
    # a todo alice does not hold (bob's) is no settlement identity for her
    repo.todo_add(GOAL, "Bob's work", todo_id="bobs", now=NOW)
    repo.todo_claim(GOAL, "bobs", "bob", now=NOW)
    tip = state_tip(cli.path)
    foreign = _run(cli, "-t", "bobs", *delta)
    assert foreign.code == 1 and "is not a todo agent alice holds" in foreign.err
    assert state_tip(cli.path) == tip
    # once alice holds a todo, it owns the receipt: --todo-id, not the obligation id
    repo.todo_claim(GOAL, "next", "alice", now=NOW)
    tip = state_tip(cli.path)
    settle = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["interaction_contract"]["cli_channel"]
    assert settle["replan_settlement_contract"]["identity_option"] == "--todo-id next"
    by_id = _run(cli, "--replan-obligation-id", obligation, *delta)
    assert by_id.code == 1 and "--todo-id next" in by_id.err and state_tip(cli.path) == tip
    assert _run(cli, "-t", "next", *delta).code == 0
    assert cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["decision"] != "replan_required"


def test_the_same_coverage_claim_does_not_settle_twice(cli):
    obligation = _stalled(cli)["replan_action_packet"]["obligation_id"]
    claim = ["--progress-result-class", "no_followup", "--progress-coverage-scope-id", "s1"]
    claim += ["--progress-evidence-id", "e1"]
    assert _run(cli, "--replan-obligation-id", obligation, *claim).code == 0
    for _ in range(2):
        assert _run(cli, *UNCHANGED).code == 0
    again = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["replan_action_packet"]["obligation_id"]
    tip = state_tip(cli.path)
    refused = _run(cli, "--replan-obligation-id", again, *claim)
    assert refused.code == 1 and "was claimed before" in refused.err and state_tip(cli.path) == tip


def test_end_to_end_stall_obligation_refused_ack_accepted_delta_gone(cli):
    """Through the CLI only: stall -> obligation -> a refused ACK -> an accepted delta -> no obligation."""
    packet = _stalled(cli)["replan_action_packet"]
    obligation = packet["obligation_id"]
    ack = _run(cli, "--replan-obligation-id", obligation, "--recommended-action", "read the history")
    assert ack.code == 1 and "no typed progress" in ack.err
    delta = ["--progress-result-class", "advanced", "--progress-hypothesis-id", "token-expiry"]
    accepted = cli.json(
        "refresh-state",
        "-g",
        GOAL,
        "-a",
        "alice",
        "--classification",
        "probe",
        "--replan-obligation-id",
        obligation,
        *delta,
        "--progress-evidence-id",
        "ci-3",
    )
    assert accepted["record"]["replan_obligation_id"] == obligation
    assert cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["replan_action_packet"] is None
    assert cli.json("status", "-g", GOAL)["replan_obligations"] == []
    assert _run(cli, *UNCHANGED).code == 0  # no obligation: an ordinary write-back again
    assert cli.json("verify")["ok"] is True


def test_other_agents_and_unattributed_runs_never_count(cli, repo):
    for _ in range(2):
        repo.refresh_state(GOAL, "probe", agent_id="bob", progress_result_class="unchanged", progress_surface_id="x")
    for _ in range(3):
        repo.refresh_state(GOAL, "probe", progress_result_class="unchanged", progress_surface_id="x")
    assert _run(cli, *UNCHANGED).code == 0  # alice once: no streak of her own yet
    assert cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["decision"] != "replan_required"
    assert cli.json("quota", "should-run", "-g", GOAL, "-a", "bob")["decision"] == "replan_required"


def _r(n: int, progress: dict | None = None, todo: str | None = None, outcome: str | None = None) -> RunRecord:
    return RunRecord(
        run_id=f"r{n:03d}",
        generated_at=f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}Z",
        goal_id=GOAL,
        agent_id="alice",
        todo_id=todo,
        classification="probe",
        delivery_outcome=outcome,
        progress=ProgressObservation(**progress) if progress else None,
    )


def test_periodic_review_every_twenty_runs_of_fresh_progress():
    f = AgentFrontier()
    for n in range(REVIEW_EVERY - 1):
        step(f, _r(n, {"result_class": "advanced", "surface_id": f"s{n}"}), monitor=False)
    assert f.open is None
    step(f, _r(99, {"result_class": "advanced", "surface_id": "s99"}), monitor=False)
    assert f.open is not None and [t.kind for t in f.open.triggers] == ["periodic_review"]
    assert f.open.triggers[0].run_ids == ("r000", "r099")


def test_dead_monitor_and_monitor_no_change_streaks():
    dead = AgentFrontier()
    for n in range(DEAD_MONITOR):
        step(dead, _r(n, outcome="surface_only"), monitor=True)
    assert dead.open is not None and dead.open.triggers[0].kind == "dead_monitor"
    quiet = AgentFrontier()
    for n in range(MONITOR_NO_CHANGE):
        step(quiet, _r(n, {"result_class": "unchanged", "surface_id": f"m{n}"}), monitor=True)
    assert quiet.open is not None and [t.kind for t in quiet.open.triggers] == ["monitor_no_change"]
    fresh = AgentFrontier()
    for n in range(DEAD_MONITOR):
        step(fresh, _r(n, outcome="outcome_progress"), monitor=True)
    assert fresh.open is None


def test_the_obligation_id_is_the_same_on_two_clones_after_a_sync(tmp_path):
    from tests.sync.helpers import bare, clone

    remote = bare(tmp_path / "remote.git")
    a_path = clone(tmp_path / "a", str(remote))
    with loopx_git.open(a_path) as a:
        a.goal_create(GOAL, "Ship the parser")
        a.agent_register(GOAL, "alice")
        for _ in range(2):
            a.refresh_state(GOAL, "probe", agent_id="alice", progress_result_class="unchanged", progress_surface_id="x")
        a.sync()
        ours = a.should_run(GOAL, "alice").replan_action_packet
    b_path = clone(tmp_path / "b", str(remote), connect=False)
    with loopx_git.open(b_path) as b:
        b.pull()
        theirs = b.should_run(GOAL, "alice").replan_action_packet
    assert ours is not None and theirs is not None
    assert json.dumps(ours.model_dump(mode="json")) == json.dumps(theirs.model_dump(mode="json"))


def test_a_runnable_successor_added_for_the_obligation_settles_it(cli, repo):
    obligation = _stalled(cli)["replan_action_packet"]["obligation_id"]
    tip = state_tip(cli.path)
    add = ["todo", "add", "-g", GOAL, "-a", "alice", "--text", "Probe the lexer instead"]
    stale = cli(*add, "--todo-id", "lex", "--replan-obligation-id", "replan-0000000000000000")
    assert stale.code == 1 and "error[unknown-obligation]" in stale.err and state_tip(cli.path) == tip
    bobs = cli("todo", "add", "-g", GOAL, "-a", "bob", "--text", "x", "--replan-obligation-id", obligation)
    assert bobs.code == 1 and "error[unknown-obligation]" in bobs.err  # alice's obligation, not bob's
    deferred = cli(*add, "--todo-id", "later", "--resume-when", "todo_done:nope", "--replan-obligation-id", obligation)
    assert deferred.code == 1 and state_tip(cli.path) == tip
    added = cli.json(*add, "--todo-id", "lex", "--replan-obligation-id", obligation)
    assert added["record"]["replan_obligation_id"] == obligation
    required = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["replan_action_packet"]
    assert "new_runnable_successor" in required["uncovered_frontier"]["required_any_of"]
    # advanced on the successor (the same surface as before: the successor is what is new)
    delta = ["--progress-result-class", "advanced", "--progress-work-item-id", "lex", "--progress-surface-id", "auth"]
    assert _run(cli, "--replan-obligation-id", obligation, *delta).code == 0
    assert cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["replan_action_packet"] is None
    assert cli.json("verify")["ok"] is True
    plain = cli.json("todo", "add", "-g", GOAL, "--text", "An ordinary todo")["record"]
    assert "replan_obligation_id" not in plain  # a todo without one renders as before


def test_an_unbound_or_unrunnable_work_item_is_no_successor(cli, repo):
    obligation = _stalled(cli)["replan_action_packet"]["obligation_id"]
    repo.todo_add(GOAL, "Unrelated", todo_id="plain", now=NOW)
    tip = state_tip(cli.path)
    delta = ["--progress-result-class", "advanced", "--progress-work-item-id", "plain", "--progress-surface-id", "auth"]
    refused = _run(cli, "--replan-obligation-id", obligation, *delta)
    assert refused.code == 1 and "was not added for this obligation" in refused.err and state_tip(cli.path) == tip
    assert (
        cli.json(
            "todo",
            "add",
            "-g",
            GOAL,
            "-a",
            "alice",
            "--text",
            "S",
            "--todo-id",
            "succ",
            "--replan-obligation-id",
            obligation,
        )["record"]["todo_id"]
        == "succ"
    )
    repo.todo_update(GOAL, "succ", status="blocked", reason="waits for CI", now=NOW)
    tip = state_tip(cli.path)
    blocked = _run(cli, "--replan-obligation-id", obligation, *[a if a != "plain" else "succ" for a in delta])
    assert blocked.code == 1 and "successor succ is not runnable now (blocked)" in blocked.err
    assert state_tip(cli.path) == tip

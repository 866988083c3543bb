"""``quota should-run`` and ``quota spend-slot`` (seed 003, items 4 and 5 of issue 13): the interaction
contract names concrete user work, a turn that must attempt is never a quiet no-op, two agents never
get the same todo, a gate is named instead of the work it holds, and compute is spent only after a
compact write-back."""

from __future__ import annotations

import random

import pytest

from loopx_git.errors import LoopxError
from tests.cli.test_schemas import conforms, written
from tests.conftest import GOAL, NOW, state_tip


def refused(repo, git_repo, code, call):
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        call()
    assert err.value.code == code, err.value.message
    assert state_tip(git_repo) == tip
    return err.value


def test_an_agent_with_work_must_attempt_and_may_not_stay_quiet(repo):
    repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", now=NOW)
    answer = repo.should_run(GOAL, "alice", turn_instance_id="turn-7")
    contract, lane = answer.interaction_contract, answer.agent_lane_next_action
    assert answer.decision == "run" and answer.turn_instance_id == "turn-7"
    assert lane.todo_id == "t1" and lane.basis == "runnable"
    assert contract.agent_channel.must_attempt and not contract.agent_channel.quiet_noop_allowed
    assert contract.mode == "agent_work" and not contract.user_channel.action_required
    assert "refresh-state -g g1 -a alice -t t1" in contract.cli_channel.writeback_command


def test_two_agents_never_get_the_same_todo(repo):
    rng = random.Random(5)
    repo.agent_register(GOAL, "carol", now=NOW)
    for i in range(6):
        repo.todo_add(GOAL, f"work {i}", todo_id=f"t{i}", priority=rng.choice(["P1", "P2"]), now=NOW)
    for step in range(6):
        picks = [repo.should_run(GOAL, a).agent_lane_next_action.todo_id for a in ("alice", "bob", "carol")]
        chosen = [p for p in picks if p is not None]
        assert len(chosen) == len(set(chosen)), picks
        agent = rng.choice(["alice", "bob", "carol"])  # one of them takes its pick, and the race goes on
        mine = repo.should_run(GOAL, agent).agent_lane_next_action
        if mine.basis == "runnable":
            repo.todo_claim(GOAL, mine.todo_id, agent, now=NOW)
        elif mine.basis == "claimed":
            repo.todo_complete(GOAL, mine.todo_id, evidence=[f"tests/test_{step}.py"], actor=agent, now=NOW)


def test_a_gate_holding_the_work_is_named_with_the_user_todo_instead_of_the_blocked_todo(repo):
    repo.todo_add(GOAL, "Ship the release", todo_id="ship", now=NOW)
    repo.todo_claim(GOAL, "ship", "alice", now=NOW)
    repo.todo_add(GOAL, "Confirm the release date", todo_id="ask", role="user", task_class="user_gate", now=NOW)
    repo.gate_open(GOAL, "release", owner_class="user", question="Release 1.0 now?", blocks=["ship"], now=NOW)
    answer = repo.should_run(GOAL, "alice")
    lane, user = answer.agent_lane_next_action, answer.interaction_contract.user_channel
    assert lane.todo_id is None and lane.basis == "none"
    assert [g.gate_id for g in lane.held_by_gates] == ["release"] and "gate release" in lane.basis_detail
    assert [t.todo_id for t in user.user_todos] == ["ask"] and [q.gate_id for q in user.questions] == ["release"]
    assert answer.decision == "wait_for_user" and answer.interaction_contract.mode == "user_required"
    channel = answer.interaction_contract.agent_channel
    assert not channel.must_attempt and not channel.quiet_noop_allowed and user.notify
    assert "todo ask" in channel.primary_action and "gate release" in channel.primary_action


def test_safe_bypass_work_runs_and_the_gate_stays_visible(repo):
    repo.todo_add(GOAL, "Ship", todo_id="ship", now=NOW)
    repo.todo_add(GOAL, "Docs", todo_id="docs", now=NOW)
    repo.gate_open(GOAL, "release", owner_class="user", question="Release?", blocks=["ship"], now=NOW)
    answer = repo.should_run(GOAL, "alice")
    assert answer.agent_lane_next_action.todo_id == "docs"
    assert answer.interaction_contract.mode == "agent_and_user"
    assert [q.gate_id for q in answer.interaction_contract.user_channel.questions] == ["release"]


def test_nothing_to_do_is_idle_and_may_be_quiet(repo):
    answer = repo.should_run(GOAL, "bob")
    assert answer.decision == "idle" and answer.interaction_contract.agent_channel.quiet_noop_allowed


def test_a_handoff_waiting_for_the_agent_is_its_next_action(repo):
    repo.todo_add(GOAL, "Parser", todo_id="t1", now=NOW)
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    repo.handoff_prepare(GOAL, "h1", from_agent_id="alice", to_agent_id="bob", todo_ids=["t1"], stop_condition="s")
    lane = repo.should_run(GOAL, "bob").agent_lane_next_action
    assert lane.basis == "handoff" and lane.handoff_id == "h1"
    assert "handoff adopt" in repo.should_run(GOAL, "bob").interaction_contract.agent_channel.primary_action


def test_should_run_is_for_a_registered_agent(repo, git_repo):
    refused(repo, git_repo, "unknown-agent", lambda: repo.should_run(GOAL, "carol"))


@pytest.fixture
def ran(repo):
    full = repo.refresh_state(
        GOAL, "progress", agent_id="alice", delivery_outcome="outcome_progress", evidence=["tests/test_a.py"], now=NOW
    ).record.run_id
    bare = repo.refresh_state(GOAL, "progress", agent_id="alice", now=NOW).record.run_id
    return repo, full, bare


def test_a_slot_is_spent_only_after_a_compact_write_back(ran, git_repo):
    repo, full, bare = ran
    err = refused(repo, git_repo, "writeback-required", lambda: repo.spend_slot(GOAL, "alice", bare))
    assert "field 'run_id'" in err.message and "write-back precede" in err.message
    refused(repo, git_repo, "not-own-run", lambda: repo.spend_slot(GOAL, "bob", full))
    refused(repo, git_repo, "unknown-run", lambda: repo.spend_slot(GOAL, "alice", "run_nope"))
    refused(repo, git_repo, "unknown-agent", lambda: repo.spend_slot(GOAL, "carol", full))
    repo.spend_slot(GOAL, "alice", full, now=NOW)
    entry = next(e for e in repo.history(GOAL) if e.run_id == full)
    assert entry.slot_spent_at == NOW
    refused(repo, git_repo, "slot-spent", lambda: repo.spend_slot(GOAL, "alice", full))
    assert repo.verify().ok


def test_quota_cli_shape_and_json(cli, git_repo):
    assert cli("todo", "add", "-g", GOAL, "--todo-id", "t1", "--text", "Parser").code == 0
    answer = cli.json("quota", "should-run", "-g", GOAL, "--agent-id", "alice", "--turn-instance-id", "t-1")
    conforms("loopx_should_run_v0", answer)
    assert answer["agent_lane_next_action"]["todo_id"] == "t1"
    run = cli.json(
        "refresh-state",
        "-g",
        GOAL,
        "-a",
        "alice",
        "--classification",
        "progress",
        "--delivery-outcome",
        "outcome_progress",
        "--evidence",
        "tests/test_p.py",
    )["record"]["run_id"]
    written(cli.json("quota", "spend-slot", "-g", GOAL, "--agent-id", "alice", "--run-id", run))
    conforms("loopx_history_entry_v0", cli.json("history", "-g", GOAL)[0])
    tip = state_tip(git_repo)
    again = cli("quota", "spend-slot", "-g", GOAL, "--agent-id", "alice", "--run-id", run)
    assert again.code == 1 and "error[slot-spent]" in again.err and state_tip(git_repo) == tip
    text = cli("quota", "should-run", "-g", GOAL, "-a", "bob")
    assert text.code == 0 and text.out.startswith("idle")


def test_refresh_state_takes_a_chosen_run_id_once(cli, git_repo):
    args = ["refresh-state", "-g", GOAL, "-a", "alice", "--run-id", "run-a1", "--classification", "progress"]
    assert cli.json(*args)["record"]["run_id"] == "run-a1"
    tip = state_tip(git_repo)
    again = cli(*args)
    assert again.code == 1 and "error[run-exists]" in again.err and "field 'run_id'" in again.err
    assert state_tip(git_repo) == tip


def test_the_user_channel_is_bounded_and_counts_what_it_left_out(repo):
    for i in range(14):
        repo.todo_add(GOAL, f"Decide {i}", todo_id=f"ask{i}", role="user", now=NOW)
        repo.todo_add(GOAL, f"Work {i}", todo_id=f"w{i}", now=NOW)
        repo.gate_open(GOAL, f"g{i}", owner_class="user", question=f"Go {i}?", blocks=[f"w{i}"], now=NOW)
    user = repo.should_run(GOAL, "alice").interaction_contract.user_channel
    assert len(user.user_todos) == 10 and user.user_todos_omitted == 4
    assert len(user.questions) == 10 and user.questions_omitted == 4
    assert "and 8 more" in repo.should_run(GOAL, "alice").interaction_contract.agent_channel.primary_action


def test_a_gate_an_agent_owns_is_its_next_action_and_held_work_is_never_quiet(repo):
    repo.todo_add(GOAL, "Write", todo_id="w", now=NOW)
    repo.todo_claim(GOAL, "w", "alice", now=NOW)
    repo.gate_open(GOAL, "review", owner_class="agent", owner_agent_id="bob", question="ok?", blocks=["w"], now=NOW)
    bob = repo.should_run(GOAL, "bob")
    assert bob.agent_lane_next_action.basis == "gate" and bob.agent_lane_next_action.gate_id == "review"
    assert bob.decision == "run" and bob.interaction_contract.agent_channel.must_attempt
    assert "loopx gate decide" in bob.interaction_contract.agent_channel.primary_action
    alice = repo.should_run(GOAL, "alice")
    assert [g.gate_id for g in alice.agent_lane_next_action.held_by_gates] == ["review"]
    assert not alice.interaction_contract.agent_channel.quiet_noop_allowed
    repo.gate_decide(GOAL, "review", decision="approve", reason="ok", decided_by_class="agent", agent_id="bob")
    assert repo.should_run(GOAL, "alice").agent_lane_next_action.todo_id == "w"


def test_a_delivery_branch_policy_blocks_delivery_until_the_work_tree_is_on_a_matching_branch(repo, git_repo):
    from tests.conftest import git

    repo.todo_add(GOAL, "Write", todo_id="w", now=NOW)
    assert repo.should_run(GOAL, "alice").agent_workspace_guard is None  # no policy: nothing to guard
    repo.goal_update(GOAL, delivery_branch_pattern="agent/{agent_id}/*", now=NOW)
    on_main = repo.should_run(GOAL, "alice")
    channel, guard = on_main.interaction_contract.agent_channel, on_main.agent_workspace_guard
    assert not channel.delivery_allowed and "'main'" in channel.delivery_blocked_reason
    assert guard.expected == "agent/alice/*" and guard.branch == "main" and not guard.compliant
    assert on_main.decision == "run"  # the work is still there to do; only delivery waits
    git(git_repo, "checkout", "-q", "-b", "agent/alice/parser")
    assert repo.should_run(GOAL, "alice").interaction_contract.agent_channel.delivery_allowed
    assert not repo.should_run(GOAL, "bob").interaction_contract.agent_channel.delivery_allowed
    git(git_repo, "checkout", "-q", "--detach")
    assert "no branch" in repo.should_run(GOAL, "alice").agent_workspace_guard.reason
    assert repo.verify().ok


def test_the_cli_answer_follows_the_branch_and_a_bad_pattern_is_refused(cli, git_repo):
    from tests.conftest import git

    tip = state_tip(git_repo)
    bad = cli("goal", "update", "-g", GOAL, "--delivery-branch-pattern", "agent alice")
    assert bad.code == 1 and "delivery_branch_pattern" in bad.err and state_tip(git_repo) == tip
    assert cli("goal", "update", "-g", GOAL, "--delivery-branch-pattern", "agent/{agent_id}/*").code == 0
    args = ["quota", "should-run", "-g", GOAL, "-a", "alice"]
    first = cli.json(*args)
    conforms("loopx_should_run_v0", first)
    assert first["interaction_contract"]["agent_channel"]["delivery_allowed"] is False
    git(git_repo, "checkout", "-q", "-b", "agent/alice/x")  # the tip has not moved: the answer must still follow
    assert cli.json(*args)["interaction_contract"]["agent_channel"]["delivery_allowed"] is True
    shown = cli.json("goal", "show", "-g", GOAL)
    assert shown["delivery_branch_pattern"] == "agent/{agent_id}/*"

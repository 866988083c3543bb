"""Human rewards (seed 003): bound to a run that exists, or to the time they are given; shown beside
their run in history and compactly on the goal card; never a grant or change of write authority."""

from __future__ import annotations

import pytest

from loopx_git.errors import LoopxError
from loopx_git.store import layout
from tests.cli.test_schemas import conforms, conforms_each, written
from tests.conftest import GOAL, NOW, git, state_tip
from tests.hooks.test_hooks import FAKE_TOKEN


@pytest.fixture
def judged(repo):
    repo.todo_add(GOAL, "Write the parser", todo_id="t1", now=NOW)
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    run = repo.refresh_state(GOAL, "progress", agent_id="alice", delivery_outcome="outcome_progress", now=NOW)
    return repo, run.record.run_id


def refused(repo, git_repo, code, call):
    tip = state_tip(git_repo)
    with pytest.raises(LoopxError) as err:
        call()
    assert err.value.code == code, err.value.message
    assert state_tip(git_repo) == tip
    return err.value


def test_a_reward_is_bound_to_its_run_and_shown_beside_it(judged, git_repo):
    repo, run_id = judged
    reward = repo.reward_add(
        GOAL,
        run_id=run_id,
        label="accept",
        polarity="positive",
        reason="tests cover the edge cases",
        follow_up="keep the fixtures small",
        lesson_kind="route",
        lesson_summary="small changes land first",
        lesson_avoid=["one PR for three fixes"],
        lesson_prefer=["one change per PR"],
    ).record
    assert reward.run_id == run_id and reward.lesson.prefer == ["one change per PR"]
    [entry] = repo.history(GOAL)
    assert entry.run_id == run_id and [(w.polarity, w.label) for w in entry.rewards] == [("positive", "accept")]
    assert [w.reward_id for w in repo.status(GOAL).latest_rewards] == [reward.reward_id]
    doc = git(git_repo, "show", f"refs/heads/loopx/state:{layout.entity_document('reward', GOAL, reward.reward_id)}")
    assert "polarity: positive" in doc and "run_id: " + run_id in doc
    assert repo.verify().ok


def test_without_a_run_a_reward_is_bound_to_when_it_was_given(judged):
    repo, _ = judged
    reward = repo.reward_add(GOAL, label="needs_rework", polarity="mixed", reason="good idea, rough edges", now=NOW)
    assert reward.record.run_id is None and reward.record.judged_at == NOW
    assert all(e.rewards == [] for e in repo.history(GOAL))


def test_a_reward_changes_no_todo_claim_gate_or_agent(judged, git_repo):
    repo, run_id = judged
    repo.gate_open(GOAL, "release", owner_class="user", question="Release?", blocks=["t1"])
    state = repo.state().goals[GOAL]
    before = (dict(state.todos.items()), dict(state.gates), dict(state.agents), list(state.conflicts))
    tip = state_tip(git_repo)
    repo.reward_add(GOAL, run_id=run_id, label="reject", polarity="negative", reason="wrong approach")
    after_state = repo.state().goals[GOAL]
    assert (dict(after_state.todos.items()), dict(after_state.gates), dict(after_state.agents)) == before[:3]
    changed = git(git_repo, "diff", "--name-only", tip, "refs/heads/loopx/state").split()
    assert [p.split("/")[2] for p in changed] == ["events", "rewards"]  # the event and its document only
    assert repo.todo(GOAL, "t1").claimed_by == "alice"  # a negative judgment takes no claim away


def test_bad_rewards_are_refused_naming_the_field(judged, git_repo):
    repo, run_id = judged
    good = {"run_id": run_id, "label": "accept", "polarity": "positive", "reason": "fine"}
    assert (
        "run_id 'nope'"
        in refused(repo, git_repo, "unknown-run", lambda: repo.reward_add(GOAL, **{**good, "run_id": "nope"})).message
    )
    assert (
        "'polarity'"
        in refused(
            repo, git_repo, "invalid-field", lambda: repo.reward_add(GOAL, **{**good, "polarity": "great"})
        ).message
    )
    assert (
        "'reason'"
        in refused(repo, git_repo, "invalid-field", lambda: repo.reward_add(GOAL, **{**good, "reason": ""})).message
    )
    assert (
        "lesson_summary"
        in refused(repo, git_repo, "invalid-field", lambda: repo.reward_add(GOAL, **good, lesson_kind="route")).message
    )
    assert (
        "lesson_kind"
        in refused(
            repo,
            git_repo,
            "invalid-field",
            lambda: repo.reward_add(GOAL, **good, lesson_summary="x", lesson_prefer=["y"]),
        ).message
    )
    assert (
        "'lesson.kind'"
        in refused(
            repo,
            git_repo,
            "invalid-field",
            lambda: repo.reward_add(GOAL, **good, lesson_kind="vibes", lesson_summary="x"),
        ).message
    )
    refused(repo, git_repo, "unknown-agent", lambda: repo.reward_add(GOAL, **good, actor="carol"))
    err = refused(repo, git_repo, "unsafe", lambda: repo.reward_add(GOAL, **{**good, "reason": f"used {FAKE_TOKEN}"}))
    assert FAKE_TOKEN not in err.message


def test_reward_cli_and_json_shapes(cli):
    run = cli.json("refresh-state", "-g", GOAL, "--classification", "progress", "-a", "alice")["record"]["run_id"]
    added = cli.json(
        "reward",
        "add",
        "-g",
        GOAL,
        "--run-id",
        run,
        "--label",
        "accept",
        "--polarity",
        "positive",
        "--reason",
        "clean",
        "--lesson-kind",
        "priority",
        "--lesson-summary",
        "tests first",
    )
    written(added, "human_reward_v0")
    conforms_each("human_reward_v0", cli.json("reward", "list", "-g", GOAL))
    conforms_each("loopx_history_entry_v0", cli.json("history", "-g", GOAL))
    conforms("status_contract_v2", cli.json("status", "-g", GOAL))
    assert cli.json("reward", "list", "-g", GOAL, "--run-id", "other") == []
    bad = cli("reward", "add", "-g", GOAL, "--label", "x", "--polarity", "great", "--reason", "r")
    assert bad.code == 2

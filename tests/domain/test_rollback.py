"""Rollback as compensation: every reversible transition is restored, verify stays clean, history
stays, and protected steps are never executed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import loopx_git
from loopx_git.errors import RuleError
from loopx_git.model.rollback import RollbackPacket
from loopx_git.store import layout
from tests.conftest import GOAL, Cli, git, state_tip

# A copy of upstream LoopX's public example (Apache-2.0), so that the tests run in any clone; the
# upstream file itself is checked only where the shared folder sits beside the repository.
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "upstream-loopx" / "rollback-packet.public.json"
UPSTREAM = (
    Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "upstream-loopx" / "rollback-packet.public.json"
)


def last_event(repo, **filters):
    return repo.events(GOAL, **filters)[-1]


def snapshot(repo, todo_id):
    return repo.todo(GOAL, todo_id).model_dump(exclude={"updated_at"})


def rollback_and_check(repo, event_id, **kw):
    before_events = {e.event_id for e in repo.events(GOAL)}
    result = repo.rollback(GOAL, event_id=event_id, reason="a test undoes it", **kw)
    after = repo.events(GOAL)
    assert before_events <= {e.event_id for e in after}, "history stays: no event removed"
    compensating = [e for e in result.write.events if e.event_kind.endswith("_compensate")]
    assert compensating and all(e.compensates for e in compensating)
    report = repo.verify()
    assert report.ok, report.problems
    return result


@pytest.fixture
def todo(repo):
    repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
    repo.todo_add(GOAL, "Replacement", todo_id="t2")
    return repo


def test_a_claim_is_released(todo):
    before = snapshot(todo, "t1")
    claim = todo.todo_claim(GOAL, "t1", "alice").event_ids[0]
    result = rollback_and_check(todo, claim)
    assert snapshot(todo, "t1") == before and todo.todo(GOAL, "t1").claimed_by is None
    [comp] = [e for e in result.write.events if e.event_kind == "todo_compensate"]
    assert comp.compensates == claim and comp.packet_id == result.record.packet_id


def test_a_completed_todo_is_reopened_and_its_wake_ups_undone(todo):
    todo.todo_add(GOAL, "Docs", todo_id="t3", resume_when="todo_done:t1")
    todo.todo_claim(GOAL, "t1", "alice")
    before_t1, before_t3 = snapshot(todo, "t1"), snapshot(todo, "t3")
    done = todo.todo_complete(GOAL, "t1", evidence=["tests/test_tok.py"], actor="alice")
    assert todo.todo(GOAL, "t3").status == "open"  # woken by the completion
    rollback_and_check(todo, done.event_ids[0])
    assert snapshot(todo, "t1") == before_t1 and todo.todo(GOAL, "t1").status == "open"
    assert snapshot(todo, "t3") == before_t3 and todo.todo(GOAL, "t3").status == "deferred"


def test_a_superseded_todo_is_restored_with_its_successor(todo):
    before_t1, before_t2 = snapshot(todo, "t1"), snapshot(todo, "t2")
    sup = todo.todo_supersede(GOAL, "t1", "t2", "the plan changed")
    rollback_and_check(todo, sup.event_ids[0])
    assert snapshot(todo, "t1") == before_t1 and todo.todo(GOAL, "t1").superseded_by is None
    assert snapshot(todo, "t2") == before_t2 and todo.todo(GOAL, "t2").supersedes == []


@pytest.mark.parametrize(
    "status, extra",
    [("blocked", {"reason": "waiting"}), ("deferred", {"reason": "later", "resume_when": "todo_done:t2"})],
)
def test_a_blocked_or_deferred_todo_is_put_back(todo, status, extra):
    before = snapshot(todo, "t1")
    update = todo.todo_update(GOAL, "t1", status, **extra)
    rollback_and_check(todo, update.event_ids[0])
    assert snapshot(todo, "t1") == before and todo.todo(GOAL, "t1").status == "open"


def test_a_resumed_todo_can_be_put_back_to_deferred(todo):
    todo.todo_update(GOAL, "t1", "deferred", reason="later", resume_when="todo_done:t2")
    before = snapshot(todo, "t1")
    done = todo.todo_complete(GOAL, "t2", evidence=["tests/x.py"])
    resume = [e for e in done.write.events if e.event_kind == "todo_resume"][0]
    rollback_and_check(todo, resume.event_id)
    assert snapshot(todo, "t1") == before


def test_a_goal_update_is_restored(repo):
    before = repo.goal(GOAL).model_dump(exclude={"updated_at"})
    update = repo.goal_update(GOAL, status="paused", objective="Something else")
    rollback_and_check(repo, update.event_ids[0])
    assert repo.goal(GOAL).model_dump(exclude={"updated_at"}) == before


def test_a_rollback_of_a_rollback_restores_the_compensated_state(todo):
    todo.todo_claim(GOAL, "t1", "alice")
    claimed = snapshot(todo, "t1")
    first = rollback_and_check(todo, last_event(todo, kind="todo_claim").event_id)
    plan_event = first.write.events[0]
    assert plan_event.event_kind == "rollback_plan"
    rollback_and_check(todo, plan_event.event_id)
    assert snapshot(todo, "t1") == claimed and todo.todo(GOAL, "t1").claimed_by == "alice"


def test_later_changes_refuse_unless_forced_and_are_listed(todo, git_repo):
    claim = todo.todo_claim(GOAL, "t1", "alice").event_ids[0]
    later = todo.todo_update(GOAL, "t1", "blocked", reason="stuck").event_ids[0]
    tip = state_tip(git_repo)
    with pytest.raises(RuleError) as err:
        todo.rollback(GOAL, event_id=claim)
    assert (
        err.value.code == "later-changes" and later in err.value.message and "--force-later-changes" in err.value.hint
    )
    assert state_tip(git_repo) == tip
    rollback_and_check(todo, claim, force_later_changes=True)
    assert todo.todo(GOAL, "t1").claimed_by is None and todo.todo(GOAL, "t1").status == "blocked"


def test_creations_are_not_compensated(todo, git_repo):
    add = todo.events(GOAL, todo_id="t1")[0]
    tip = state_tip(git_repo)
    with pytest.raises(RuleError) as err:
        todo.rollback(GOAL, event_id=add.event_id)
    assert err.value.code == "not-reversible" and "supersede" in err.value.hint
    assert state_tip(git_repo) == tip


def test_dry_run_writes_nothing_and_shows_the_transitions(todo, git_repo, capsys):
    claim = todo.todo_claim(GOAL, "t1", "alice").event_ids[0]
    tip = state_tip(git_repo)
    out = Cli(git_repo, capsys).json("rollback", "-g", GOAL, "--event", claim, "--reason", "oops", "--dry-run")
    assert out["dry_run"] is True and out["packet"]["schema_version"] == "rollback_packet_v0"
    assert out["transitions"][0]["changes"][0] == {"field": "claimed_by", "from": "alice", "to": None}
    assert state_tip(git_repo) == tip


def test_a_state_commit_is_compensated_whole(todo, git_repo, capsys):
    todo.todo_add(GOAL, "Docs", todo_id="t3", resume_when="todo_done:t1")
    before = snapshot(todo, "t3")
    done = todo.todo_complete(GOAL, "t1", evidence=["tests/x.py"])
    out = Cli(git_repo, capsys).json("rollback", "-g", GOAL, "--commit", done.commit[:10], "--reason", "not done yet")
    assert out["changed"] and out["record"]["scope"]["repository_refs"]["commit_refs"] == [done.commit]
    assert todo.todo(GOAL, "t1").status == "open" and snapshot(todo, "t3") == before
    assert todo.verify().ok


def test_a_project_commit_gets_a_gated_revert_plan_and_a_todo(repo, git_repo, capsys):
    head = git(git_repo, "rev-parse", "HEAD").strip()
    out = Cli(git_repo, capsys).json(
        "rollback", "-g", GOAL, "--commit", "HEAD", "--reason", "broke the build", "--trigger", "regression"
    )
    packet = RollbackPacket.model_validate(out["record"])
    assert [s.kind for s in packet.plan] == ["git_revert", "validation"] and packet.plan[0].requires_gate
    assert packet.scope.repository_refs.commit_refs == [head] and packet.decision.required
    assert any(t.text.startswith(f"Revert {head[:12]}") for t in repo.todos(GOAL))
    assert git(git_repo, "rev-parse", "HEAD").strip() == head  # nothing reverted
    card = Cli(git_repo, capsys).json("status", "-g", GOAL)
    assert [r["packet_id"] for r in card["open_rollbacks"]] == [packet.packet_id]


def test_the_upstream_packet_loads_unchanged_and_its_history_rewrite_never_runs(repo, git_repo, capsys):
    data = json.loads(FIXTURE.read_text())
    assert RollbackPacket.model_validate(data).model_dump(mode="json") == data
    repo.goal_create(data["goal_id"], "the upstream example goal")
    heads = git(git_repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main")
    events_before = len(repo.events(data["goal_id"]))
    out = Cli(git_repo, capsys).json("rollback", "record", "-g", data["goal_id"], "--packet", str(FIXTURE))
    assert out["record"] == data and len(out["event_ids"]) == 1
    assert len(repo.events(data["goal_id"])) == events_before + 1  # the packet only: nothing executed
    assert git(git_repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main") == heads
    card = Cli(git_repo, capsys).json("status", "-g", data["goal_id"])
    assert card["open_rollbacks"][0]["pending_steps"][0] == "clean_main_history (history_rewrite)"
    doc = git(git_repo, "show", f"loopx/state:{layout.entity_document('rollback', data['goal_id'], data['packet_id'])}")
    assert "history_rewrite" in doc
    assert repo.verify().ok


@pytest.mark.skipif(
    not UPSTREAM.is_file(),
    reason="no ../shared/fixtures beside the repository (a plain clone): "
    "the copy in tests/fixtures/upstream-loopx is what the other tests use",
)
def test_the_upstream_file_itself_loads_unchanged_and_matches_the_copy():
    data = json.loads(UPSTREAM.read_text())
    assert RollbackPacket.model_validate(data).model_dump(mode="json") == data
    assert data == json.loads(FIXTURE.read_text()), "tests/fixtures/upstream-loopx is out of date: copy the file again"


def test_a_history_rewrite_step_can_never_claim_to_be_automatic():
    data = json.loads(FIXTURE.read_text())
    data["plan"][0]["automatable_by_agent"] = True
    with pytest.raises(ValueError, match="history_rewrite step is always protected"):
        RollbackPacket.model_validate(data)


def test_bad_rollback_input_is_refused_and_writes_nothing(todo, git_repo, capsys):
    cli = Cli(git_repo, capsys)
    claim = todo.todo_claim(GOAL, "t1", "alice").event_ids[0]
    tip = state_tip(git_repo)
    for args, code in (
        (["--event", "evt_nope"], "not-found"),
        (["--commit", "no-such-rev"], "not-found"),
    ):
        result = cli("rollback", "-g", GOAL, *args)
        assert result.code == 1 and result.err.startswith(f"error[{code}]"), (args, result.err)
    # neither --event nor --commit: the command line alone is malformed (exit 2)
    assert cli("rollback", "-g", GOAL).code == 2
    # a trigger outside the set is a malformed command line: exit 2, listing the triggers
    result = cli("rollback", "-g", GOAL, "--event", claim, "--trigger", "bad_luck")
    assert result.code == 2 and "'regression'" in result.err, result.err
    bad = git_repo / "bad.json"
    bad.write_text("{not json")
    assert cli("rollback", "record", "-g", GOAL, "--packet", str(bad)).code == 1
    assert state_tip(git_repo) == tip


def test_rollback_list_and_show(todo, git_repo, capsys):
    claim = todo.todo_claim(GOAL, "t1", "alice").event_ids[0]
    packet = todo.rollback(GOAL, event_id=claim, reason="oops").record
    cli = Cli(git_repo, capsys)
    listed = cli.json("rollback", "list", "-g", GOAL)
    assert [p["packet_id"] for p in listed] == [packet.packet_id]
    assert cli.json("rollback", "show", "-g", GOAL, "--packet-id", packet.packet_id)["trigger"]["summary"] == "oops"
    assert cli("rollback", "show", "-g", GOAL, "--packet-id", "rb_missing").code == 1


def test_rollback_survives_a_cold_read(todo, git_repo):
    claim = todo.todo_claim(GOAL, "t1", "alice").event_ids[0]
    todo.rollback(GOAL, event_id=claim)
    todo.close()
    for cache in (git_repo / ".git" / "loopx").glob("*.pickle"):
        cache.unlink()
    fresh = loopx_git.open(git_repo)
    assert fresh.todo(GOAL, "t1").claimed_by is None and len(fresh.rollbacks(GOAL)) == 1

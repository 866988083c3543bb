"""Every todo transition rule, and every refusal: the message names field and rule, the ref stays."""

from __future__ import annotations

import pytest

from loopx_git.errors import LoopxError
from tests.conftest import GOAL, NOW


def refused(repo, call, code: str, *fragments: str) -> LoopxError:
    before = repo.tip
    with pytest.raises(LoopxError) as info:
        call()
    assert info.value.code == code, info.value.message
    for fragment in fragments:
        assert fragment in info.value.message
    assert repo.tip == before, "a refused command must not move the state ref"
    return info.value


def add(repo, todo_id: str, **kw):
    return repo.todo_add(GOAL, kw.pop("text", f"do {todo_id}"), todo_id=todo_id, now=NOW, **kw).record


# --- add ----------------------------------------------------------------------------------


def test_add_writes_one_commit_with_event_and_document(repo):
    before = repo.tip
    result = repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", priority="P1", now=NOW)
    assert result.commit != before
    assert repo.git.commit(result.commit).parents == (before,)
    todo = repo.todo(GOAL, "t1")
    assert (todo.status, todo.priority, todo.role, todo.text) == ("open", "P1", "agent", "Write the tokenizer")


def test_add_generates_an_id_when_none_given(repo):
    todo = repo.todo_add(GOAL, "anything", now=NOW).record
    assert todo.todo_id.startswith("todo-")


@pytest.mark.parametrize(
    "kw, field, rule",
    [
        ({"priority": "P9"}, "priority", "'P0'"),
        ({"role": "robot"}, "role", "'user'"),
        ({"task_class": "chore"}, "task_class", "advancement_task"),
        ({"todo_id": "../escape"}, "todo_id", "starting with a letter or digit"),
        ({"text": ""}, "text", "at least 1 character"),
        ({"task_repository": "not a repo"}, "task_repository", "owner/repo"),
        ({"resume_when": "tomorrow"}, "resume_when", "todo_done:<todo_id>"),
    ],
)
def test_add_refuses_bad_fields(repo, kw, field, rule):
    kw.setdefault("todo_id", "t1")
    kw.setdefault("text", "x")
    refused(repo, lambda: repo.todo_add(GOAL, kw.pop("text"), now=NOW, **kw), "invalid-field", f"'{field}'", rule)


def test_add_refuses_duplicate_id(repo):
    add(repo, "t1")
    refused(repo, lambda: add(repo, "t1"), "todo-exists", "todo_id 't1'", "unique")


def test_add_refuses_unknown_goal(repo):
    refused(repo, lambda: repo.todo_add("nope", "x", now=NOW), "not-found", "goal 'nope'")


def test_add_refuses_unregistered_claimant(repo):
    refused(repo, lambda: add(repo, "t1", claimed_by="mallory"), "unknown-agent", "claimed_by 'mallory'", "registered")


def test_add_refuses_dangling_references(repo):
    refused(repo, lambda: add(repo, "t1", resume_when="todo_done:ghost"), "not-found", "resume_when 'ghost'")
    refused(repo, lambda: add(repo, "t1", unblocks_todo_id="ghost"), "not-found", "unblocks_todo_id 'ghost'")


def test_add_with_resume_when_is_deferred_until_it_holds(repo):
    add(repo, "a")
    waiting = add(repo, "b", resume_when="todo_done:a")
    assert waiting.status == "deferred" and waiting.reason == "waiting for todo_done:a"


def test_unqualified_pr_ref_without_repository_is_ambiguous(repo):
    error = refused(repo, lambda: add(repo, "t1", resume_when="pr_merged:#12"), "ambiguous-pr-ref", "task_repository")
    assert "pr_merged:owner/repo#N" in error.message


# --- claim --------------------------------------------------------------------------------


def test_claim_open_todo(repo):
    add(repo, "t1")
    claimed = repo.todo_claim(GOAL, "t1", "alice", now=NOW).record
    assert claimed.claimed_by == "alice"
    event = repo.events(GOAL, kind="todo_claim")[0]
    assert event.lane.lane_id == "core" and event.state_transition.to_state == "claimed"


def test_claim_own_todo_again_changes_nothing(repo):
    add(repo, "t1")
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    before = repo.tip
    result = repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    assert not result.changed and repo.tip == before


def test_claim_held_by_other_is_refused(repo):
    add(repo, "t1")
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    refused(repo, lambda: repo.todo_claim(GOAL, "t1", "bob", now=NOW), "claim-held", "claimed by 'alice'")


def test_claim_by_unregistered_agent_is_refused(repo):
    add(repo, "t1")
    refused(repo, lambda: repo.todo_claim(GOAL, "t1", "mallory", now=NOW), "unknown-agent", "agent_id 'mallory'")


@pytest.mark.parametrize("status", ["blocked", "deferred"])
def test_claim_not_runnable_is_refused(repo, status):
    add(repo, "t1")
    repo.todo_update(GOAL, "t1", status, reason="waiting on vendor", now=NOW)
    refused(
        repo,
        lambda: repo.todo_claim(GOAL, "t1", "alice", now=NOW),
        "not-runnable",
        f"is {status}",
        "claim only an open",
    )


def test_claim_done_or_superseded_is_refused(repo):
    add(repo, "t1")
    add(repo, "t2")
    repo.todo_complete(GOAL, "t1", evidence=["tests/test_a.py"], now=NOW)
    refused(repo, lambda: repo.todo_claim(GOAL, "t1", "alice", now=NOW), "todo-closed", "is done")
    add(repo, "t3")
    repo.todo_supersede(GOAL, "t2", "t3", "merged into t3", now=NOW)
    refused(repo, lambda: repo.todo_claim(GOAL, "t2", "alice", now=NOW), "todo-closed", "superseded by 't3'")


def test_claim_missing_todo_is_refused(repo):
    refused(repo, lambda: repo.todo_claim(GOAL, "ghost", "alice", now=NOW), "not-found", "todo_id 'ghost'")


# --- update -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["blocked", "deferred"])
def test_blocked_and_deferred_need_a_reason(repo, status):
    add(repo, "t1")
    refused(repo, lambda: repo.todo_update(GOAL, "t1", status, now=NOW), "reason-required", "'reason'", status)


def test_update_refuses_done_status_and_unknown_status(repo):
    add(repo, "t1")
    refused(repo, lambda: repo.todo_update(GOAL, "t1", "done", now=NOW), "invalid-field", "'status'", "todo complete")
    refused(repo, lambda: repo.todo_update(GOAL, "t1", "paused", now=NOW), "invalid-field", "'status'")


def test_update_block_then_reopen_and_clear_claim(repo):
    add(repo, "t1")
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    blocked = repo.todo_update(GOAL, "t1", "blocked", reason="CI is down", actor="alice", now=NOW).record
    assert (blocked.status, blocked.reason, blocked.claimed_by) == ("blocked", "CI is down", "alice")
    reopened = repo.todo_update(GOAL, "t1", "open", clear_claim=True, now=NOW).record
    assert (reopened.status, reopened.reason, reopened.claimed_by) == ("open", None, None)


def test_update_by_other_agent_of_claimed_todo_is_refused(repo):
    add(repo, "t1")
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    refused(
        repo,
        lambda: repo.todo_update(GOAL, "t1", "blocked", reason="x", actor="bob", now=NOW),
        "claim-held",
        "claimed by 'alice'",
    )


def test_resume_when_only_for_waiting_status(repo):
    add(repo, "a")
    add(repo, "b")
    refused(
        repo,
        lambda: repo.todo_update(GOAL, "b", "open", resume_when="todo_done:a", now=NOW),
        "invalid-field",
        "'resume_when'",
    )
    refused(
        repo,
        lambda: repo.todo_update(GOAL, "b", "deferred", reason="x", resume_when="todo_done:b", now=NOW),
        "invalid-dependency",
        "wait for itself",
    )


# --- complete -----------------------------------------------------------------------------


def test_complete_needs_evidence(repo):
    add(repo, "t1")
    refused(repo, lambda: repo.todo_complete(GOAL, "t1", now=NOW), "evidence-required", "'evidence'", "--no-follow-up")


def test_complete_without_evidence_needs_no_follow_up_and_reason(repo):
    add(repo, "t1")
    refused(repo, lambda: repo.todo_complete(GOAL, "t1", no_follow_up=True, now=NOW), "reason-required", "'reason'")
    done = repo.todo_complete(GOAL, "t1", no_follow_up=True, reason="obsolete after redesign", now=NOW).record
    assert (done.status, done.reason, done.completed_at) == ("done", "obsolete after redesign", NOW)


def test_complete_records_evidence_and_successors(repo):
    add(repo, "t1")
    add(repo, "t2")
    done = repo.todo_complete(
        GOAL, "t1", evidence=["tests/test_x.py", "org/repo#3"], successor_todo_ids=["t2"], now=NOW
    ).record
    assert done.evidence == ["tests/test_x.py", "org/repo#3"] and done.successor_todo_ids == ["t2"]
    refused(repo, lambda: repo.todo_complete(GOAL, "t1", evidence=["x"], now=NOW), "todo-closed", "done is final")


def test_complete_refuses_unknown_successor_and_other_claimant(repo):
    add(repo, "t1")
    refused(
        repo,
        lambda: repo.todo_complete(GOAL, "t1", evidence=["e"], successor_todo_ids=["ghost"], now=NOW),
        "not-found",
        "successor_todo_ids 'ghost'",
    )
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    refused(repo, lambda: repo.todo_complete(GOAL, "t1", evidence=["e"], actor="bob", now=NOW), "claim-held", "'alice'")


# --- wake-ups -----------------------------------------------------------------------------


def test_todo_done_wakes_deferred_dependent_in_the_same_commit(repo):
    add(repo, "a")
    add(repo, "b", resume_when="todo_done:a")
    refused(repo, lambda: repo.todo_claim(GOAL, "b", "bob", now=NOW), "not-runnable", "deferred")
    result = repo.todo_complete(GOAL, "a", evidence=["tests/test_a.py"], now=NOW)
    assert [e.event_kind for e in result.write.events] == ["todo_complete", "todo_resume"]
    assert repo.todo(GOAL, "b").status == "open"
    assert repo.todo_claim(GOAL, "b", "bob", now=NOW).record.claimed_by == "bob"


def test_completing_a_blocker_reopens_the_todo_it_unblocks(repo):
    add(repo, "b")
    repo.todo_update(GOAL, "b", "blocked", reason="needs the schema", now=NOW)
    add(repo, "a", unblocks_todo_id="b", task_class="blocker")
    repo.todo_complete(GOAL, "a", evidence=["docs/schema.md"], now=NOW)
    assert repo.todo(GOAL, "b").status == "open"


def test_pr_merged_wakes_only_after_a_matching_pr_merge_event(repo):
    add(repo, "r", resume_when="pr_merged:#7", task_repository="org/parser")
    add(repo, "q", resume_when="pr_merged:other/repo#7")
    repo.event_append(GOAL, "pr_merge", pr_ref="org/parser#8", now=NOW)
    assert repo.todo(GOAL, "r").status == "deferred"
    result = repo.event_append(GOAL, "pr_merge", pr_ref="org/parser#7", now=NOW)
    assert [e.todo_id for e in result.write.events[1:]] == ["r"]
    assert repo.todo(GOAL, "r").status == "open"
    assert repo.todo(GOAL, "q").status == "deferred"


def test_pr_merge_event_must_name_its_repository(repo):
    refused(repo, lambda: repo.event_append(GOAL, "pr_merge", pr_ref="#7", now=NOW), "invalid-field", "owner/repo#N")


def test_capacity_available_wakes_waiting_todo(repo):
    add(repo, "c", resume_when="capacity_available:gpu")
    repo.event_append(GOAL, "quota", details={"capacity": "gpu", "available": True}, now=NOW)
    assert repo.todo(GOAL, "c").status == "open"


def test_resume_condition_already_true_at_add_time_is_open(repo):
    add(repo, "a")
    repo.todo_complete(GOAL, "a", evidence=["e"], now=NOW)
    assert add(repo, "b", resume_when="todo_done:a").status == "open"


# --- supersede, suggest, promote ----------------------------------------------------------


def test_supersede_links_both_todos_and_deletes_nothing(repo):
    add(repo, "old")
    add(repo, "new")
    repo.todo_claim(GOAL, "old", "alice", now=NOW)
    repo.todo_supersede(GOAL, "old", "new", "split differently", actor="alice", now=NOW)
    old, new = repo.todo(GOAL, "old"), repo.todo(GOAL, "new")
    assert (old.superseded_by, old.claimed_by, old.reason) == ("new", None, "split differently")
    assert "new" in old.successor_todo_ids and new.supersedes == ["old"]
    assert {t.todo_id for t in repo.todos(GOAL, include_closed=True)} == {"old", "new"}


def test_supersede_refusals(repo):
    add(repo, "a")
    add(repo, "b")
    refused(repo, lambda: repo.todo_supersede(GOAL, "a", "a", "x", now=NOW), "invalid-dependency", "itself")
    refused(repo, lambda: repo.todo_supersede(GOAL, "a", "ghost", "x", now=NOW), "not-found", "by 'ghost'")
    refused(repo, lambda: repo.todo_supersede(GOAL, "a", "b", "", now=NOW), "reason-required", "'reason'")
    add(repo, "c")
    repo.todo_supersede(GOAL, "b", "c", "dup", now=NOW)
    refused(repo, lambda: repo.todo_supersede(GOAL, "a", "b", "x", now=NOW), "todo-closed", "itself superseded")


def test_suggested_todo_is_never_runnable_until_promoted(repo):
    repo.todo_suggest(GOAL, "Fuzz the tokenizer", todo_id="s1", actor="alice", now=NOW)
    assert [s.todo_id for s in repo.suggestions(GOAL)] == ["s1"]
    assert repo.todos(GOAL) == []
    assert all(a.todo_id is None for a in repo.status(GOAL).next_actions)
    refused(repo, lambda: repo.todo_claim(GOAL, "s1", "alice", now=NOW), "not-found", "never runnable until promoted")
    promoted = repo.todo_promote(GOAL, "s1", now=NOW).record
    assert promoted.status == "open" and repo.suggestions(GOAL) == []
    refused(repo, lambda: repo.todo_promote(GOAL, "s1", now=NOW), "already-promoted", "promoted once")
    assert repo.todo_claim(GOAL, "s1", "alice", now=NOW).record.claimed_by == "alice"


def test_live_set_and_closed_counts_follow_the_todos_through_the_cache(repo, git_repo):
    import loopx_git

    for todo_id in ("a", "b", "c", "d"):
        add(repo, todo_id)
    repo.todo_complete(GOAL, "a", evidence=["e"], now=NOW)
    repo.todo_supersede(GOAL, "b", "c", "merged", now=NOW)
    repo.close()
    with loopx_git.open(git_repo) as fresh:  # reads the pickled fold back
        goal = fresh.state().goals[GOAL]
        assert goal.live == {"c", "d"} and goal.closed["done"] == 1 and goal.closed["superseded"] == 1
        counts = fresh.status(GOAL).counts
        assert (counts.open, counts.done, counts.superseded) == (2, 1, 1)
        assert {t.todo_id for t in fresh.todos(GOAL, include_closed=True)} == {"a", "b", "c", "d"}

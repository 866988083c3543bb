"""No agent acts for another (issue 32, item 5): every write that acts on a claim or on another
agent's work is run as the holder (accepted) and as another agent (refused, the ref unmoved).
Which writes those are is not left to memory: every writing command (one that takes ``--redact``)
naming a todo, a handoff or an event is in ``ACTS`` or ``EXEMPT`` here, with the reason, so a new one is met
by this test the day it is added.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import GOAL, NOW, state_tip
from tests.hostile.commands import commands, params

T, OTHER_TODO, HANDOFF = "held", "spare", "h1"


def _prepared(repo, target: str = "bob") -> dict[str, str]:
    repo.handoff_prepare(GOAL, HANDOFF, from_agent_id="alice", to_agent_id=target, todo_ids=[T], stop_condition="s")
    return {}


def _claim_event(repo) -> dict[str, str]:
    [claim] = [e for e in repo.events(GOAL, todo_id=T) if e.event_kind == "todo_claim"]
    return {"event": claim.event_id}


ACTS = {
    # command: (setup, arguments, who holds the work, the refusal code another agent gets)
    ("todo", "claim"): (None, ["-t", T], "alice", "claim-held"),
    ("todo", "release"): (None, ["-t", T], "alice", "claim-held"),
    ("todo", "update"): (None, ["-t", T, "--status", "blocked", "--reason", "r"], "alice", "claim-held"),
    ("todo", "complete"): (None, ["-t", T, "--evidence", "e"], "alice", "claim-held"),
    ("todo", "supersede"): (None, ["-t", T, "--by", OTHER_TODO, "--reason", "r"], "alice", "claim-held"),
    ("refresh-state",): (None, ["-t", T, "--classification", "progress"], "alice", "claim-held"),
    ("handoff", "prepare"): (
        None,
        [
            "--handoff-id",
            HANDOFF,
            "--from-agent-id",
            "alice",
            "--to-agent-id",
            "carol",
            "-t",
            T,
            "--stop-condition",
            "s",
        ],
        "alice",
        "not-holder",
    ),
    ("handoff", "adopt"): (_prepared, ["--handoff-id", HANDOFF], "bob", "not-handoff-target"),
    ("handoff", "cancel"): (_prepared, ["--handoff-id", HANDOFF, "--reason", "r"], "alice", "not-handoff-party"),
    ("rollback",): (_claim_event, ["--event", "{event}", "--reason", "r"], "alice", "claim-held"),
}
"""The writes that act on a claim or on another agent's work (renew joins them with leases): run as
the holder, then as an agent that is neither holder nor party."""

EXEMPT = {
    ("todo", "add"): "adds a todo nobody holds yet (--claimed-by claims it for a registered agent, checked there)",
    ("todo", "suggest"): "a candidate todo: nobody holds it, and it is never runnable until promoted",
    ("todo", "promote"): "turns a candidate into a todo nobody holds yet",
    ("event", "append"): "records a fact about a todo (a note, a validation, a merged pull request); it changes "
    "no claim, and a resume condition it meets wakes the todo for whoever holds it",
}


def _writes_naming_work() -> set[tuple[str, ...]]:
    found = set()
    for path, command in commands():
        flags = {p.flag for p in params(command.func, path)}
        if "--redact" in flags and flags & {"--todo-id", "--handoff-id", "--event"}:
            found.add(path)
    return found


def test_every_write_that_names_a_todo_or_a_handoff_is_ruled_here(surface):
    writes = _writes_naming_work()
    unruled = writes - set(ACTS) - set(EXEMPT)
    assert not unruled, f"say whether these act on another agent's work (ACTS) or not (EXEMPT): {sorted(unruled)}"
    assert not (set(ACTS) | set(EXEMPT)) - writes, "a ruled command no longer writes or names a todo"
    surface(f"{len(writes)} writes name a todo or a handoff: {len(ACTS)} act on held work, {len(EXEMPT)} exempt")


@pytest.fixture
def held(repo):
    """t ``held`` claimed by alice, a spare todo, and carol: an agent that is neither side."""
    repo.agent_register(GOAL, "carol", now=NOW)
    repo.todo_add(GOAL, "held work", todo_id=T, now=NOW)
    repo.todo_add(GOAL, "its replacement", todo_id=OTHER_TODO, now=NOW)
    repo.todo_claim(GOAL, T, "alice", now=NOW)
    return repo


@pytest.mark.parametrize("path", sorted(ACTS), ids=" ".join)
def test_a_write_on_held_work_is_the_holders_and_refused_to_another_agent(held, cli, path):
    setup, args, holder, code = ACTS[path]
    names = setup(held) if setup is not None else {}
    args = [a.format(**names) for a in args]
    others = [
        a for a in ("carol", "bob", "alice") if a != holder and not (path == ("handoff", "adopt") and a == "alice")
    ]
    for other in others[:1] + (["bob"] if path[0] != "handoff" and holder != "bob" else []):
        tip = state_tip(cli.path)
        refused = cli(*path, "-g", GOAL, *args, "-a", other)
        assert refused.code == 1 and f"error[{code}]" in refused.err, (path, other, refused.err)
        assert state_tip(cli.path) == tip, f"{' '.join(path)} as {other}: refused, yet the ref moved"
    accepted = cli(*path, "-g", GOAL, *args, "-a", holder)
    assert accepted.code == 0, (path, holder, accepted.err)


def test_a_person_prepares_a_handoff_only_by_saying_so_and_the_event_records_it(held, cli):
    """With this clone's default agent set to bob, preparing alice's handoff needs --as-operator;
    the event says an operator prepared it."""
    cli("agent", "register", "-g", GOAL, "-a", "bob", "--default")  # bob is this clone's agent now
    args = ["handoff", "prepare", "-g", GOAL, "--handoff-id", HANDOFF, "--from-agent-id", "alice", "-t", T]
    args += ["--to-agent-id", "bob", "--stop-condition", "s"]
    tip = state_tip(cli.path)
    as_bob = cli(*args)
    assert as_bob.code == 1 and "error[not-holder]" in as_bob.err and "--as-operator" in as_bob.err
    assert state_tip(cli.path) == tip
    both = cli(*args, "--as-operator", "-a", "bob")
    assert both.code == 2 and state_tip(cli.path) == tip
    written = cli.json(*args, "--as-operator")
    [event] = [e for e in cli.json("events", "-g", GOAL, "--kind", "handoff_prepare")]
    assert written["record"]["from_agent_id"] == "alice" and event["details"] == {"prepared_by": "operator"}
    # then bob, the target, adopts it: the claim moves, as a handoff moves it
    assert cli("handoff", "adopt", "-g", GOAL, "--handoff-id", HANDOFF).code == 0
    assert json.loads(cli("todo", "show", "-g", GOAL, "-t", T, fmt="json").out)["claimed_by"] == "bob"


def test_an_agents_process_cannot_say_it_is_a_person(held, cli, monkeypatch):
    """``--as-operator`` is a person's word: a process that acts as an agent (``LOOPX_AGENT_ID``) is
    refused it, so an agent cannot hand itself another's claim by claiming to be the operator."""
    monkeypatch.setenv("LOOPX_AGENT_ID", "bob")
    tip = state_tip(cli.path)
    args = ["handoff", "prepare", "-g", GOAL, "--handoff-id", HANDOFF, "--from-agent-id", "alice", "-t", T]
    result = cli(*args, "--to-agent-id", "bob", "--stop-condition", "s", "--as-operator")
    assert result.code == 1 and "error[not-holder]" in result.err and "LOOPX_AGENT_ID" in result.err
    assert state_tip(cli.path) == tip


def test_another_agents_claimed_todo_is_no_replacement_to_name(held, cli):
    """Superseding a todo by one another agent holds writes on that todo (what it replaces)."""
    cli("todo", "add", "-g", GOAL, "--text", "old", "-t", "old")
    tip = state_tip(cli.path)
    result = cli("todo", "supersede", "-g", GOAL, "-t", "old", "--by", T, "--reason", "r", "-a", "bob")
    assert result.code == 1 and "error[claim-held]" in result.err and state_tip(cli.path) == tip
    assert cli("todo", "supersede", "-g", GOAL, "-t", "old", "--by", T, "--reason", "r", "-a", "alice").code == 0

"""Rollback packets that compensate nothing on the branch: a commit of the project, planned as a gated
``git_revert`` with a todo to carry it out, and a packet written elsewhere, recorded as it is."""

from __future__ import annotations

from loopx_git.domain.rollback import build_packet
from loopx_git.domain.write import EventMaker, Write, build, check_actor, given
from loopx_git.errors import RuleError, ValidationError
from loopx_git.model.ids import new_id
from loopx_git.model.rollback import RollbackPacket, RollbackPlan
from loopx_git.model.state import State, require_goal


def rollback_commit(
    state: State, *, goal_id: str, commit_ref: str, reason: str | None, trigger: str, actor: str | None, now: str
) -> Write:
    """A commit of the project (not the state branch): a packet whose plan is a protected
    ``git_revert`` and a validation, plus a todo to carry the revert out. Nothing is reverted here."""
    gs = require_goal(state, goal_id)
    given(reason=reason)
    check_actor(gs, actor)
    title = f"Revert {commit_ref[:12]} (git revert) and open a pull request"
    packet_id = new_id("rb")
    packet = build_packet(
        goal_id,
        packet_id,
        now,
        trigger=trigger,
        reason=reason or f"roll back commit {commit_ref[:12]}",
        targets=[],
        commit_refs=[commit_ref],
        actor=actor,
        compensate=False,
        add_todos=[{"role": "agent", "task_class": "advancement_task", "title": title}],
    )
    from loopx_git.domain.todo import add_todo

    maker = EventMaker(gs, now)
    plan_event = maker.make(
        RollbackPlan,
        goal_id=goal_id,
        agent_id=actor,
        packet=packet,
        summary=f"rollback {packet_id}: {packet.trigger.summary}"[:1000],
    )
    added = add_todo(state, goal_id=goal_id, text=title, actor=actor, now=now).events[0]
    todo = added.model_copy(update={"lamport": plan_event.lamport + 1})  # after the packet, in the same write
    return Write(
        "rollback", f"{packet_id}: revert {commit_ref[:12]} (gated)", goal_id, actor, [plan_event, todo], result=packet
    )


def record(state: State, *, goal_id: str, packet: dict, actor: str | None, now: str) -> Write:
    """A packet authored elsewhere, recorded as it is: no step of it runs here."""
    gs = require_goal(state, goal_id)
    check_actor(gs, actor)
    recorded = build(RollbackPacket, packet, what="rollback packet")
    if recorded.goal_id != goal_id:
        raise ValidationError(
            f"field 'goal_id': the packet is for goal '{recorded.goal_id}', not '{goal_id}'", code="invalid-field"
        )
    if recorded.packet_id in gs.rollbacks:
        raise RuleError(
            f"field 'packet_id': packet '{recorded.packet_id}' is already recorded; rule: packets are "
            "immutable, write a new one",
            code="packet-exists",
        )
    event = EventMaker(gs, now).make(
        RollbackPlan,
        goal_id=goal_id,
        agent_id=actor,
        packet=recorded,
        summary=f"rollback {recorded.packet_id} recorded: {recorded.trigger.summary}"[:1000],
    )
    return Write("rollback record", recorded.packet_id, goal_id, actor, [event], result=recorded)

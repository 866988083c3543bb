"""Rollback as compensation: a rollback_packet_v0 plus, for its state_compensation step, events
that restore the affected entities to their values before the target. History stays: the target
events remain, and each compensating event names the event it compensates.

An event's field changes (before/after) are what make this exact: compensating sets each field the
target changed back to its ``before``. A rollback of a rollback does the same to the compensating
events, which restores the compensated state again.
"""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.todo_rules import not_claimed_by_other
from loopx_git.domain.write import EventMaker, Write, build, check_actor, given, one_of
from loopx_git.errors import RuleError
from loopx_git.model.event_head import EventBase, FieldChange
from loopx_git.model.goal import Goal
from loopx_git.model.ids import new_id
from loopx_git.model.rollback import GoalCompensate, RollbackPacket, RollbackPlan, TodoCompensate, TriggerKind
from loopx_git.model.state import GoalState, State, require_goal
from loopx_git.model.todo import TodoItem

_CREATED = (
    "rollback restores entities an event changed, not ones it created",
    "supersede the todo (`loopx todo supersede`) or pause the goal instead",
)
_IRREVERSIBLE = {
    "gate_decide": (
        "a gate's decision is final (one decision per gate); rule: decisions are answered, not undone",
        "open a new gate for the same todos (`loopx gate open ... --blocks T`) to hold them again; to put "
        "back what the approval woke, roll back its todo_resume events one by one (`loopx rollback --event`)",
    ),
    "gate_open": (
        "a gate is closed by its decision, not removed; rule: decisions are answered, not undone",
        "decide it (`loopx gate decide --decision reject`, or `defer`) to record that it no longer applies",
    ),
    "handoff_adopt": (
        "an adopted handoff is final; rule: claims move on by a new handoff, not by undoing one",
        "hand the todos back with a new handoff from the target (`loopx handoff prepare --from-agent-id B "
        "--to-agent-id A`), or release the claims (`loopx todo update`)",
    ),
    "handoff_prepare": (
        "a prepared handoff is ended by cancelling it; rule: claims move on by a new handoff, not by undoing one",
        "cancel it (`loopx handoff cancel`)",
    ),
    **{
        kind: (
            "the explore graph is append-only: every change is a new revision of a node; rule: a revision is "
            "answered by a newer one, never undone",
            "record a new revision (`loopx explore node update`, e.g. --status dead_end with a reason), or a "
            "fresh observation (`loopx explore observe`)",
        )
        for kind in (
            "explore_node_add",
            "explore_node_update",
            "explore_edge_add",
            "explore_finding_add",
            "explore_observe",
        )
    },
}
"""Kinds a rollback does not compensate, each with what to do instead."""

REVERSIBLE = frozenset(
    {
        "todo_claim",
        "todo_update",
        "todo_resume",
        "todo_complete",
        "todo_supersede",
        "todo_compensate",
        "goal_update",
        "goal_compensate",
    }
)
"""Transitions of an existing entity. Creating one (todo_add, goal_create, agent_register) is not
undone by compensation: supersede the todo, or pause the goal, instead."""


def entity_of(event: EventBase) -> tuple[str, str]:
    kind = event.event_kind
    return ("goal", event.goal_id) if kind.startswith("goal_") else ("todo", event.todo_id or "")


def later_changes(targets: Sequence[EventBase], events: Sequence[EventBase]) -> list[EventBase]:
    """Events after the first target (fold order) that change one of the targets' entities."""
    if not targets:
        return []
    ids = {t.event_id for t in targets}
    entities = {entity_of(t) for t in targets}
    first = min(events.index(t) for t in targets)
    return [
        e
        for e in events[first + 1 :]
        if e.event_id not in ids
        and e.changes
        and e.event_kind in REVERSIBLE | {"todo_add"}
        and entity_of(e) in entities
    ]


def _restore(target: EventBase, current: dict) -> list[FieldChange]:
    """The field changes that put back what ``target`` changed (fields already back are skipped)."""
    return [
        FieldChange(field=c.field, before=current.get(c.field), after=c.before)
        for c in target.changes
        if current.get(c.field) != c.before
    ]


def _compensations(
    gs: GoalState, targets: Sequence[EventBase], maker: EventMaker, packet_id: str, actor: str | None, now: str
) -> list[EventBase]:
    out: list[EventBase] = []
    todos: dict[str, TodoItem] = {}
    goal: Goal | None = gs.goal
    for target in reversed(targets):  # undo the last change first
        kind, entity_id = entity_of(target)
        if kind == "todo":
            current = todos.get(entity_id) or gs.todos.get(entity_id)
            if current is None:
                raise RuleError(f"todo '{entity_id}' of event {target.event_id} no longer exists", code="not-found")
            restore = _restore(target, current.model_dump(mode="json"))
            if not restore:
                continue
            todos[entity_id] = build(
                TodoItem,
                {**current.model_dump(mode="json"), **{c.field: c.after for c in restore}, "updated_at": now},
                what="restored todo",
            )
            restore.append(FieldChange(field="updated_at", before=current.updated_at, after=now))
            out.append(
                maker.make(
                    TodoCompensate,
                    goal_id=gs.goal_id,
                    todo_id=entity_id,
                    agent_id=actor,
                    compensates=target.event_id,
                    packet_id=packet_id,
                    changes=restore,
                    summary=f"{entity_id}: compensates {target.event_kind} {target.event_id}",
                )
            )
        else:
            assert goal is not None
            restore = _restore(target, goal.model_dump(mode="json"))
            if not restore:
                continue
            goal = build(
                Goal,
                {**goal.model_dump(mode="json"), **{c.field: c.after for c in restore}, "updated_at": now},
                what="restored goal",
            )
            restore.append(FieldChange(field="updated_at", before=gs.goal.updated_at if gs.goal else None, after=now))
            out.append(
                maker.make(
                    GoalCompensate,
                    goal_id=gs.goal_id,
                    agent_id=actor,
                    compensates=target.event_id,
                    packet_id=packet_id,
                    changes=restore,
                    summary=f"goal compensates {target.event_kind} {target.event_id}",
                )
            )
    return out


def build_packet(
    goal_id: str,
    packet_id: str,
    now: str,
    *,
    trigger: str,
    reason: str,
    targets: Sequence[EventBase],
    commit_refs: list[str],
    actor: str | None,
    compensate: bool,
    add_todos: list[dict],
) -> RollbackPacket:
    todo_ids = sorted({t.todo_id for t in targets if t.todo_id})
    plan = []
    if compensate:
        plan.append(
            {
                "step_id": "compensate_state",
                "kind": "state_compensation",
                "action": "write compensating events that restore the affected entities to their state before the target",
                "requires_gate": False,
                "destructive": False,
                "automatable_by_agent": True,
            }
        )
    else:
        plan.append(
            {
                "step_id": "revert_commit",
                "kind": "git_revert",
                "action": f"revert {', '.join(commit_refs)} in a new commit and open a pull request",
                "requires_gate": True,
                "destructive": False,
                "automatable_by_agent": True,
            }
        )
    plan.append(
        {
            "step_id": "verify_state",
            "kind": "validation",
            "action": "run loopx verify and loopx check",
            "requires_gate": False,
            "destructive": False,
            "automatable_by_agent": True,
        }
    )
    leak = trigger == TriggerKind.public_boundary_leak.value
    return build(
        RollbackPacket,
        {
            "packet_id": packet_id,
            "goal_id": goal_id,
            "created_at": now,
            "trigger": {
                "kind": trigger,
                "summary": reason,
                "todo_ids": todo_ids,
                "source_event_ids": [t.event_id for t in targets],
            },
            "scope": {"repository_refs": {"commit_refs": commit_refs}, "todo_ids": todo_ids},
            "decision": {
                "owner": actor or "user",
                "required": not compensate,
                "reason": reason,
                "default_safe_action": "apply_state_compensation" if compensate else "pause_and_monitor",
            },
            "plan": plan,
            "todo_compensation": {"add_todos": add_todos},
            "validation": {
                "commands": ["loopx verify", "loopx check"],
                "public_boundary_scan_required": leak,
                "success_criteria": [
                    "loopx verify reports ok",
                    "the affected entities are back to their state before the target",
                ],
            },
        },
        what="rollback packet",
    )


def rollback(
    state: State,
    *,
    goal_id: str,
    targets: Sequence[EventBase],
    later: Sequence[EventBase],
    reason: str | None,
    trigger: str,
    force_later_changes: bool,
    commit_refs: Sequence[str] = (),
    actor: str | None,
    now: str,
) -> Write:
    """The packet and its compensating events, as one write. ``targets`` are the events to undo
    (in fold order); ``later`` the events since that changed the same entities."""
    gs = require_goal(state, goal_id)
    given(reason=reason)
    check_actor(gs, actor)
    one_of("trigger", trigger, TriggerKind)
    irreversible = [t for t in targets if t.event_kind not in REVERSIBLE]
    if irreversible:
        first = irreversible[0]
        why, hint = _IRREVERSIBLE.get(first.event_kind, _CREATED)
        raise RuleError(
            f"event {first.event_id} ({first.event_kind}) cannot be compensated: {why}",
            code="not-reversible",
            hint=hint,
        )
    for target in targets:  # undoing a transition of a todo another agent holds is acting for that agent
        held = getattr(target, "todo_id", None)
        todo = gs.todos.get(held) if held is not None else None
        if todo is not None:
            not_claimed_by_other(todo, actor, "roll back a transition of")
    if later and not force_later_changes:
        listed = ", ".join(f"{e.event_id} ({e.event_kind})" for e in later[:10])
        raise RuleError(
            f"the entities changed since the target: {listed}; rule: a rollback restores the state before "
            "the target only when nothing changed it since",
            code="later-changes",
            hint="pass --force-later-changes to overwrite those changes too",
        )
    packet_id = new_id("rb")
    maker = EventMaker(gs, now)  # the packet is stamped first: it precedes its compensating events in fold order
    packet = build_packet(
        goal_id,
        packet_id,
        now,
        trigger=trigger,
        reason=reason or f"roll back {', '.join(t.event_id for t in targets)}",
        targets=targets,
        commit_refs=list(commit_refs),
        actor=actor,
        compensate=True,
        add_todos=[],
    )
    plan_event = maker.make(
        RollbackPlan,
        goal_id=goal_id,
        agent_id=actor,
        packet=packet,
        summary=f"rollback {packet_id}: {packet.trigger.summary}"[:1000],
    )
    compensating = _compensations(gs, targets, maker, packet_id, actor, now)
    if not compensating:
        raise RuleError(
            "nothing to compensate: the affected fields already hold their values from before the target",
            code="nothing-to-compensate",
        )
    return Write(
        "rollback",
        f"{packet_id}: {len(compensating)} compensating event(s)",
        goal_id,
        actor,
        [plan_event, *compensating],
        result=packet,
    )


def targets_of(events: list, event_id: str) -> list:
    """The event to undo and the events it caused in the same write (a completion's wake-ups, a
    supersede's successor link); for a rollback packet, its compensating events."""
    from loopx_git.errors import NotFoundError

    by_id = {e.event_id: e for e in events}
    if event_id not in by_id:
        raise NotFoundError(f"event_id '{event_id}' is not an event of this goal", code="not-found")
    target = by_id[event_id]
    if target.event_kind == "rollback_plan":
        return [e for e in events if getattr(e, "packet_id", None) == target.packet.packet_id]
    chosen, ids = [], {event_id}
    for event in events[events.index(target) :]:
        cause = event.causality.caused_by if event.causality else None
        if event.event_id in ids or cause in ids:
            ids.add(event.event_id)
            if event.changes:
                chosen.append(event)
    return chosen

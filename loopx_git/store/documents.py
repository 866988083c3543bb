"""Documents are derived: every YAML file on the branch is a rendering of the folded state."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from loopx_git.model.event import EventHead, LedgerEvent, RollbackPlan
from loopx_git.model.record import Record
from loopx_git.model.state import GoalState, State
from loopx_git.store import layout
from loopx_git.store.yaml_doc import render

Entity = tuple[str, str, str]  # (kind, goal_id, id)


def touched(events: Iterable[EventHead]) -> set[Entity]:
    """The entities whose documents a set of events changes (the kinds whose payload it reads are
    entity kinds, which every read parses whole: the casts say so)."""
    out: set[Entity] = set()
    for event in events:
        kind = event.event_kind
        if kind == "goal_create":
            out |= {("root", "", ""), ("goal", event.goal_id, event.goal_id)}
        elif kind == "goal_update":
            out.add(("goal", event.goal_id, event.goal_id))
        elif kind == "agent_register":
            out.add(("agent", event.goal_id, event.agent_id or ""))
        elif kind in ("todo_suggest", "todo_promote"):
            out.add(("suggested", event.goal_id, event.todo_id or ""))
            if kind == "todo_promote":
                out.add(("todo", event.goal_id, event.todo_id or ""))
        elif kind.startswith("todo_"):
            out.add(("todo", event.goal_id, event.todo_id or ""))
        elif kind == "goal_compensate":
            out.add(("goal", event.goal_id, event.goal_id))
        elif kind.startswith("ledger_"):
            out.add(("ledger", event.goal_id, cast(LedgerEvent, event).entry_id))
        elif kind == "rollback_plan":
            out.add(("rollback", event.goal_id, cast(RollbackPlan, event).packet.packet_id))
    return out


def _dump(record: Record) -> dict[str, Any]:
    return record.model_dump(mode="json")


def root_document(state: State) -> dict[str, object]:
    goals = sorted(g for g, s in state.goals.items() if s.goal is not None)
    return {"layout_version": layout.LAYOUT_VERSION, "goals": goals}


def render_entity(state: State, entity: Entity) -> tuple[str, bytes] | None:
    kind, goal_id, entity_id = entity
    if kind == "root":
        return layout.ROOT_DOCUMENT, render(root_document(state))
    goal_state: GoalState | None = state.goals.get(goal_id)
    if goal_state is None:
        return None
    if kind == "goal" and goal_state.goal is not None:
        return layout.goal_document(goal_id), render(_dump(goal_state.goal))
    if kind == "agent" and entity_id in goal_state.agents:
        return layout.agent_document(goal_id, entity_id), render(_dump(goal_state.agents[entity_id]))
    if kind == "todo" and entity_id in goal_state.todos:
        return layout.todo_document(goal_id, entity_id), render(_dump(goal_state.todos[entity_id]))
    if kind == "suggested" and entity_id in goal_state.suggested:
        return layout.suggested_document(goal_id, entity_id), render(_dump(goal_state.suggested[entity_id]))
    if kind == "ledger" and entity_id in goal_state.ledger:
        return layout.ledger_document(goal_id, entity_id), render(_dump(goal_state.ledger[entity_id]))
    if kind == "rollback" and entity_id in goal_state.rollbacks:
        return layout.rollback_document(goal_id, entity_id), render(_dump(goal_state.rollbacks[entity_id]))
    return None


def render_touched(state: State, entities: Iterable[Entity]) -> dict[str, bytes]:
    out = {}
    for entity in entities:
        rendered = render_entity(state, entity)
        if rendered is not None:
            out[rendered[0]] = rendered[1]
    return out


def all_entities(state: State) -> Iterable[Entity]:
    yield ("root", "", "")
    for goal_id, goal_state in state.goals.items():
        yield ("goal", goal_id, goal_id)
        yield from (("agent", goal_id, a) for a in goal_state.agents)
        yield from (("todo", goal_id, t) for t in goal_state.todos)
        yield from (("suggested", goal_id, t) for t in goal_state.suggested)
        yield from (("rollback", goal_id, r) for r in goal_state.rollbacks)
        yield from (("ledger", goal_id, e) for e in goal_state.ledger)


def render_all(state: State) -> dict[str, bytes]:
    """Every document the state implies; ``verify`` compares the branch against this."""
    return render_touched(state, all_entities(state))

"""Documents are derived: every YAML file on the branch is a rendering of the folded state."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from loopx_git.model.event import (
    EventHead,
    ExploreEvent,
    GateEvent,
    HandoffEntityEvent,
    LedgerEvent,
    RewardAdd,
    RollbackPlan,
)
from loopx_git.model.record import STORED, Record
from loopx_git.model.state import GoalState, State
from loopx_git.store import layout
from loopx_git.store.yaml_doc import render

if TYPE_CHECKING:
    from loopx_git.store.git import GitRepo

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
        elif kind.startswith("gate_"):
            out.add(("gate", event.goal_id, cast(GateEvent, event).gate_id))
        elif kind.startswith("handoff_"):
            out.add(("handoff", event.goal_id, cast(HandoffEntityEvent, event).handoff_id))
        elif kind == "reward_add":
            out.add(("reward", event.goal_id, cast(RewardAdd, event).reward.reward_id))
        elif kind.startswith("explore_"):
            out.add(("explore", event.goal_id, cast(ExploreEvent, event).node_id))
    return out


def _dump(record: Record) -> dict[str, Any]:
    return record.model_dump(mode="json", context=STORED)  # the stored form: derived fields left out


def root_document(state: State, layout_version: int | None = None) -> dict[str, object]:
    """loopx.yaml: the goals, and the layout the branch's records are in (``layout_version``: what
    new writes use unless given; ``branch_layout`` says what a given tree must say)."""
    goals = sorted(g for g, s in state.goals.items() if s.goal is not None)
    return {"layout_version": layout.WRITE_LAYOUT if layout_version is None else layout_version, "goals": goals}


def render_entity(state: State, entity: Entity, layout_version: int | None = None) -> tuple[str, bytes] | None:
    kind, goal_id, entity_id = entity
    if kind == "root":
        return layout.ROOT_DOCUMENT, render(root_document(state, layout_version))
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
    if kind == "gate" and entity_id in goal_state.gates:
        return layout.gate_document(goal_id, entity_id), render(_dump(goal_state.gates[entity_id]))
    if kind == "handoff" and entity_id in goal_state.handoffs:
        return layout.handoff_document(goal_id, entity_id), render(_dump(goal_state.handoffs[entity_id]))
    if kind == "reward" and entity_id in goal_state.rewards:
        return layout.reward_document(goal_id, entity_id), render(_dump(goal_state.rewards[entity_id]))
    if kind == "explore" and entity_id in goal_state.explore:
        return layout.explore_document(goal_id, entity_id), render(_dump(goal_state.explore[entity_id]))
    return None


def render_touched(state: State, entities: Iterable[Entity], layout_version: int | None = None) -> dict[str, bytes]:
    out = {}
    for entity in entities:
        rendered = render_entity(state, entity, layout_version)
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
        yield from (("gate", goal_id, g) for g in goal_state.gates)
        yield from (("reward", goal_id, r) for r in goal_state.rewards)
        yield from (("handoff", goal_id, h) for h in goal_state.handoffs)
        yield from (("explore", goal_id, n) for n in goal_state.explore)


def render_all(state: State, layout_version: int | None = None) -> dict[str, bytes]:
    """Every document the state implies; ``verify`` compares the branch against this (with the
    ``layout_version`` of ``branch_layout``)."""
    return render_touched(state, all_entities(state), layout_version)


def branch_layout(git: GitRepo, tree: str, event_paths: Iterable[str] | None = None) -> int:
    """The ``layout_version`` loopx.yaml at ``tree`` must say: 1 where it says 1 and every event
    sits at its layout-1 path (a branch no loopx since layout 2 has written to), else
    ``LAYOUT_VERSION``. ``event_paths``: the tree's record paths when the caller has them; else the
    tree is walked, and only when loopx.yaml says 1."""
    if _declared(git, tree) != 1:
        return layout.LAYOUT_VERSION
    return layout.LAYOUT_VERSION if unannounced_event(git, tree, event_paths) else 1


def unannounced_event(git: GitRepo, tree: str, event_paths: Iterable[str] | None = None) -> str | None:
    """The first event at a layout-2 path in a tree whose loopx.yaml says layout 1 (which this
    loopx never writes: the commit that adds the first one says 2), or None."""
    if _declared(git, tree) != 1:
        return None
    if event_paths is None:
        event_paths = (p for p, _ in git.walk_files(tree, "goals"))
    return next((p for p in event_paths if layout.event_layout(p) == 2), None)


def _declared(git: GitRepo, tree: str) -> int | None:
    oid = git.tree_entry(tree, layout.ROOT_DOCUMENT)
    return None if oid is None else layout.declared_layout(git.read_blob(oid))


def layout_upgrade(git: GitRepo, base_tree: str | None, added: Iterable[str]) -> dict[str, bytes]:
    """loopx.yaml saying ``LAYOUT_VERSION`` when records at layout-2 paths join a tree whose
    loopx.yaml says 1 (the first write of this loopx on an old branch, or a merge bringing one's
    records into it); else nothing. The rest of the document stays as it was."""
    if base_tree is None or not any(layout.event_layout(p) == 2 for p in added):
        return {}
    oid = git.tree_entry(base_tree, layout.ROOT_DOCUMENT)
    if oid is None:
        return {}
    data = git.read_blob(oid)
    if layout.declared_layout(data) != 1:  # says 2 already, or drifted: verify names that, not this
        return {}
    return {layout.ROOT_DOCUMENT: layout.with_layout(data, layout.LAYOUT_VERSION)}

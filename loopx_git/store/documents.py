"""Documents are derived: every YAML file on the branch is a rendering of the folded state."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from loopx_git.model.event_head import EventHead
from loopx_git.model.explore import ExploreEvent
from loopx_git.model.gate import GateEvent
from loopx_git.model.handoff import HandoffEntityEvent
from loopx_git.model.ledger import LedgerEvent
from loopx_git.model.record import STORED, Record
from loopx_git.model.reward import RewardAdd
from loopx_git.model.rollback import RollbackPlan
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
    """(path, bytes) of one entity's document in layout ``layout_version`` (``WRITE_LAYOUT`` unless
    given), or None when the state holds no such entity."""
    kind, goal_id, entity_id = entity
    if kind == "root":
        return layout.ROOT_DOCUMENT, render(root_document(state, layout_version))
    goal_state: GoalState | None = state.goals.get(goal_id)
    if goal_state is None:
        return None
    if kind == "goal":
        return None if goal_state.goal is None else (layout.goal_document(goal_id), render(_dump(goal_state.goal)))
    folder = layout.DOCUMENT_FOLDERS.get(kind)
    if folder is None:
        return None
    table = getattr(goal_state, folder)  # a goal's tables are named as the folders of their documents
    if entity_id not in table:
        return None
    return layout.entity_document(kind, goal_id, entity_id, layout_version), render(_dump(table[entity_id]))


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
        for kind, folder in layout.DOCUMENT_FOLDERS.items():  # a goal's tables are named as their folders
            yield from ((kind, goal_id, entity_id) for entity_id in getattr(goal_state, folder))


def render_all(state: State, layout_version: int | None = None) -> dict[str, bytes]:
    """Every document the state implies; ``verify`` compares the branch against this (with the
    ``layout_version`` of ``branch_layout``)."""
    return render_touched(state, all_entities(state), layout_version)


def branch_layout(git: GitRepo, tree: str, event_paths: Iterable[str] | None = None) -> int:
    """The layout the documents at ``tree`` must be in, and what its loopx.yaml must say: what it
    says, 1 to 3; except that a branch saying 1 with an event at a layout-2 path must say 2 (no
    loopx writes that: verify reports it, and its documents stay in one folder per kind);
    ``LAYOUT_VERSION`` when it says nothing loopx wrote. ``event_paths``:
    the tree's record paths when the caller has them; else the tree is walked, and only when
    loopx.yaml says 1."""
    declared = _declared(git, tree)
    if declared not in layout.LAYOUTS:
        return layout.LAYOUT_VERSION
    if declared == 1 and unannounced_event(git, tree, event_paths):
        return 2
    return declared


def unannounced_event(git: GitRepo, tree: str, event_paths: Iterable[str] | None = None) -> str | None:
    """The first event at a layout-2 path in a tree whose loopx.yaml says layout 1 (which no loopx
    writes: the commit that adds the first one says 2 or later), or None."""
    if _declared(git, tree) != 1:
        return None
    if event_paths is None:
        event_paths = (p for p, _ in git.walk_files(tree, "goals"))
    return next((p for p in event_paths if layout.event_layout(p) == 2), None)


def _declared(git: GitRepo, tree: str) -> int | None:
    oid = git.tree_entry(tree, layout.ROOT_DOCUMENT)
    return None if oid is None else layout.declared_layout(git.read_blob(oid))


@dataclass
class Upgrade:
    """What a commit adds to bring the tree it writes on up to ``WRITE_LAYOUT``: loopx.yaml saying
    so (``files``), and documents moved to their new paths (``blobs``: new path -> the blob as it
    was; ``removed``: the old paths)."""

    files: dict[str, bytes] = field(default_factory=dict)
    blobs: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)


def layout_upgrade(git: GitRepo, base_tree: str | None, added: Iterable[str], removed: Iterable[str] = ()) -> Upgrade:
    """What a commit of ``added`` paths (and ``removed`` ones) on ``base_tree`` needs besides, to
    leave the tree in the layout this loopx writes. On a tree saying layout 1 or 2: every document
    moves, as it is, to its layout-3 path, and loopx.yaml says 3 (when the commit does not render
    it anew). A document the commit writes or removes itself is left to it. (A build of an older
    layout, ``WRITE_LAYOUT`` 2: loopx.yaml says 2 once a layout-2 event joins a tree saying 1.)
    Nothing on a tree saying the layout already, or something loopx never wrote: verify names that."""
    upgrade = Upgrade()
    if base_tree is None:
        return upgrade
    declared, target = _declared(git, base_tree), layout.WRITE_LAYOUT
    if declared not in layout.LAYOUTS or declared >= target:
        return upgrade
    added = set(added)
    if target < layout.BUCKETED_DOCUMENTS and not any(layout.event_layout(p) == 2 for p in added):
        return upgrade  # a layout-1 build stays 1 until a layout-2 record lands
    if layout.ROOT_DOCUMENT not in added:
        data = git.read_blob(cast(str, git.tree_entry(base_tree, layout.ROOT_DOCUMENT)))
        upgrade.files[layout.ROOT_DOCUMENT] = layout.with_layout(data, target)
    if target >= layout.BUCKETED_DOCUMENTS:
        removing = set(removed)
        for old, new, oid in _document_moves(git, base_tree, target):
            if old in removing or old in added:  # the commit's own business: never moved over it
                continue
            upgrade.removed.append(old)
            if new not in added:
                upgrade.blobs[new] = oid
    return upgrade


def document_files(git: GitRepo, tree: str) -> Iterable[tuple[str, str]]:
    """(path, blob id) of every file in the entity document folders of ``tree``, of either shape
    (and any stray among them). Only those folders are walked, never the events."""
    for goal_id in git.list_dir(tree, "goals"):
        for folder in layout.DOCUMENT_FOLDERS.values():
            yield from git.walk_files(tree, f"goals/{goal_id}/{folder}")


def _document_moves(git: GitRepo, tree: str, version: int) -> Iterable[tuple[str, str, str]]:
    """(old path, path in ``version``, blob id) of every entity document of ``tree`` not where
    ``version`` puts it."""
    for path, oid in document_files(git, tree):
        entity = layout.document_entity(path)
        if entity is None:  # a stray: verify reports it, repair removes it
            continue
        new = layout.entity_document(*entity, version)
        if new != path:
            yield path, new, oid

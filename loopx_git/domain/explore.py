"""The explore graph's writes (seed 002): add and update nodes, add edges and findings, and record a
typed research observation on a node. Each is one event — a new revision of one node — and every
refusal names the field and the rule and writes nothing.

``observe`` checks an envelope in three steps: its shape (``model/research.py``, no graph needed);
whether it is an exact replay of an observation the node already has (then nothing is written, even
if the graph has changed since); and what needs the graph — the node and the candidates' targets
exist in the goal, the candidates' evidence is attributable to both nodes, an experiment's input
observations are its two current inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, many, one_of
from loopx_git.errors import NotFoundError, RuleError, ValidationError
from loopx_git.model.explore import (
    EdgeType,
    ExploreEdge,
    ExploreEdgeAdd,
    ExploreFinding,
    ExploreFindingAdd,
    ExploreNode,
    ExploreNodeAdd,
    ExploreNodeUpdate,
    FindingState,
    NodeKind,
    NodeStatus,
    closes_only,
)
from loopx_git.model.state import GoalState, State, listed, require_goal

NODE_KEYS = ("node_id", "schema_version")
FOLDED = ("revision", "updated_at", "current_observation")
"""What the fold of a node's events sets itself: never carried as a field change (two clones'
revisions of one node would otherwise look like edits of the same field)."""


def require_node(gs: GoalState, node_id: str, *, field: str = "node_id") -> ExploreNode:
    node = gs.explore.get(node_id)
    if node is None:
        raise NotFoundError(
            f"field '{field}': {node_id!r} is no explore node of goal '{gs.goal_id}' (nodes: {listed(gs.explore)}); "
            "rule: a node named by a command exists in the same goal",
            code="unknown-node",
            hint=f"`loopx explore node list --goal-id {gs.goal_id}` lists them",
        )
    return node


def _blocked_reason(status: str | None, reason: str | None) -> None:
    if status == NodeStatus.blocked.value and not reason:
        raise ValidationError(
            "field 'reason': missing for status blocked; rule: a blocked node says why (--reason)", code="invalid-field"
        )


def _evidence(ids: Sequence[str], field: str = "evidence_ids") -> list[str]:
    many(**{field: ids})
    if len(set(ids)) != len(ids):
        raise ValidationError(
            f"field '{field}': an id is given twice; rule: each evidence id once (evidence is a set)",
            code="invalid-field",
        )
    return list(ids)


def add_node(
    state: State,
    *,
    goal_id: str,
    node_id: str,
    kind: str,
    title: str,
    parent_id: str | None = None,
    evidence_ids: Sequence[str] = (),
    status: str | None = None,
    reason: str | None = None,
    actor: str | None = None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    given(node_id=node_id, parent_id=parent_id, reason=reason)
    check_actor(gs, actor)
    one_of("kind", kind, NodeKind)
    if status is not None:
        one_of("status", status, NodeStatus)
    _blocked_reason(status, reason)
    if node_id in gs.explore:
        raise RuleError(
            f"field 'node_id': {node_id!r} is already an explore node of goal '{goal_id}'; rule: node ids are "
            "unique within a goal (change one with `loopx explore node update`)",
            code="node-exists",
        )
    if parent_id is not None:
        require_node(gs, parent_id, field="parent_id")
    node = build(
        ExploreNode,
        {
            "node_id": node_id,
            "kind": kind,
            "title": title,
            "parent_id": parent_id,
            "status": status or NodeStatus.open.value,
            "reason": reason,
            "evidence_ids": _evidence(evidence_ids),
            "created_by": actor,
            "created_at": now,
            "updated_at": now,
        },
        what="explore node",
    )
    event = EventMaker(gs, now).make(
        ExploreNodeAdd,
        goal_id=goal_id,
        node_id=node_id,
        agent_id=actor,
        summary=f"explore {kind} {node_id}: {title}"[:1000],
        changes=changes(None, node, skip=NODE_KEYS),
    )
    return Write("explore node add", f"{kind} {node_id}", goal_id, actor, [event], result=node)


def update_node(
    state: State,
    *,
    goal_id: str,
    node_id: str,
    status: str | None = None,
    reason: str | None = None,
    evidence_ids: Sequence[str] = (),
    title: str | None = None,
    actor: str | None = None,
    now: str,
) -> Write:
    """A new revision: a status (with its reason), more evidence, a new title. Anything but closing the
    node makes its current observation stale until a fresh one is recorded."""
    gs = require_goal(state, goal_id)
    given(reason=reason, title=title)
    check_actor(gs, actor)
    node = require_node(gs, node_id)
    if status is not None:
        one_of("status", status, NodeStatus)
    elif reason is not None:
        raise ValidationError(
            "field 'reason': given without --status; rule: a reason says why the status changes", code="invalid-field"
        )
    _blocked_reason(status, reason)
    added = [e for e in _evidence(evidence_ids) if e not in node.evidence_ids]
    data = node.model_dump(mode="json")
    data |= {k: v for k, v in (("status", status), ("title", title)) if v is not None}
    if status is not None:
        data["reason"] = reason  # a status change says why, or clears the old reason
    data["evidence_ids"] = node.evidence_ids + added
    updated = build(ExploreNode, data, what="explore node")
    diff = changes(node, updated, skip=NODE_KEYS + FOLDED)
    if not diff:
        return Write("explore node update", f"{node_id} (no change)", goal_id, actor, result=node)
    stale = not closes_only({c.field: c.after for c in diff}, updated.status)
    updated = updated.model_copy(  # as the fold will have it
        update={
            "revision": node.revision + 1,
            "updated_at": now,
            "current_observation": None if stale else node.current_observation,
        }
    )
    event = EventMaker(gs, now).make(
        ExploreNodeUpdate,
        goal_id=goal_id,
        node_id=node_id,
        agent_id=actor,
        summary=f"explore node {node_id} updated: {', '.join(c.field for c in diff)}",
        state_transition={"from_state": node.status, "to_state": updated.status} if status is not None else None,
        changes=diff,
    )
    return Write("explore node update", node_id, goal_id, actor, [event], result=updated)


def add_edge(
    state: State,
    *,
    goal_id: str,
    from_node_id: str,
    to_node_id: str,
    edge_type: str,
    actor: str | None = None,
    now: str,
) -> Write:
    gs = require_goal(state, goal_id)
    check_actor(gs, actor)
    one_of("edge_type", edge_type, EdgeType)
    source = require_node(gs, from_node_id, field="from_node_id")
    require_node(gs, to_node_id, field="to_node_id")
    if from_node_id == to_node_id:
        raise ValidationError(
            f"field 'to_node_id': {to_node_id!r} is the edge's own start; rule: an edge joins two distinct nodes",
            code="invalid-field",
        )
    if any(e.to_node_id == to_node_id and e.edge_type == edge_type for e in source.edges):
        raise RuleError(
            f"field 'to_node_id': {from_node_id} already has a {edge_type} edge to {to_node_id}; rule: an edge is "
            "added once",
            code="edge-exists",
        )
    if (
        edge_type == EdgeType.depends_on.value
        and source.kind == NodeKind.experiment.value
        and len(source.depends_on()) >= 2
    ):
        raise RuleError(
            f"field 'edge_type': experiment {from_node_id} already depends on {' and '.join(source.depends_on())}; "
            "rule: a binary experiment has exactly two outgoing depends_on edges",
            code="experiment-not-binary",
        )
    edge = build(ExploreEdge, {"to_node_id": to_node_id, "edge_type": edge_type, "created_at": now}, what="edge")
    event = EventMaker(gs, now).make(
        ExploreEdgeAdd,
        goal_id=goal_id,
        node_id=from_node_id,
        agent_id=actor,
        summary=f"explore edge {from_node_id} {edge_type} {to_node_id}",
        edge=edge,
    )
    return Write("explore edge add", f"{from_node_id} {edge_type} {to_node_id}", goal_id, actor, [event], result=edge)


def add_finding(
    state: State,
    *,
    goal_id: str,
    node_id: str,
    finding_id: str,
    finding_state: str,
    evidence_ids: Sequence[str],
    actor: str | None = None,
    now: str,
) -> Write:
    """A finding on a node, or a new state of one it has (tentative, then confirmed or refuted)."""
    gs = require_goal(state, goal_id)
    given(finding_id=finding_id)
    check_actor(gs, actor)
    node = require_node(gs, node_id)
    one_of("state", finding_state, FindingState)
    ids = _evidence(evidence_ids)
    if not ids:
        raise ValidationError(
            "field 'evidence_ids': empty; rule: a finding names its evidence (--evidence-id)", code="invalid-field"
        )
    finding = build(
        ExploreFinding,
        {"finding_id": finding_id, "state": finding_state, "evidence_ids": ids, "recorded_at": now},
        what="finding",
    )
    known = next((f for f in node.findings if f.finding_id == finding_id), None)
    if known is not None and (known.state, known.evidence_ids) == (finding.state, finding.evidence_ids):
        return Write("explore finding add", f"{finding_id} (no change)", goal_id, actor, result=known)
    event = EventMaker(gs, now).make(
        ExploreFindingAdd,
        goal_id=goal_id,
        node_id=node_id,
        agent_id=actor,
        summary=f"explore finding {finding_id} on {node_id}: {finding_state}",
        finding=finding,
    )
    return Write("explore finding add", f"{finding_id} on {node_id}", goal_id, actor, [event], result=finding)

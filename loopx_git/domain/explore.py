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

import json
from collections.abc import Sequence
from typing import Any, NoReturn

import pydantic

from loopx_git.domain.write import EventMaker, Write, build, changes, check_actor, given, many, one_of
from loopx_git.errors import NotFoundError, RuleError, ValidationError
from loopx_git.model.capability import JOINT_PROBE
from loopx_git.model.composition import attributed
from loopx_git.model.explore import (
    EdgeType,
    ExploreEdge,
    ExploreEdgeAdd,
    ExploreFinding,
    ExploreFindingAdd,
    ExploreNode,
    ExploreNodeAdd,
    ExploreNodeUpdate,
    ExploreObserve,
    FindingState,
    NodeKind,
    NodeStatus,
    closes_only,
)
from loopx_git.model.goal import explore_policy
from loopx_git.model.ids import ID_PATTERN
from loopx_git.model.progress import COVERAGE_CLASSES
from loopx_git.model.record import WRITE_CONTEXT, first_error
from loopx_git.model.research import (
    OBSERVATION_SCHEMA,
    ObservationFacts,
    ObserveReceipt,
    ResearchObservation,
    observation_fingerprint,
)
from loopx_git.model.research_gate import LiveGap, invalidation, live_gaps, retirement_contract, waiting
from loopx_git.model.state import GoalState, State, listed, require_goal
from loopx_git.model.todo import TodoItem

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


# --- research observations ----------------------------------------------------------------------


def parse_observation(data: bytes | str | dict[str, Any]) -> ResearchObservation:
    """The envelope, validated as typed_research_observation_v0, or a refusal naming the field.
    Strictly: JSON types as they are (no "yes" for true), a key given twice refused (readers that keep
    the first and the last would disagree), and every schema_version given (a version is a claim)."""
    raw = json.dumps(data) if isinstance(data, dict) else data
    try:
        parsed = json.loads(raw, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        raise ValidationError(
            f"observation field {exc.args[0]!r}: given twice; rule: each key once (readers disagree on which wins)",
            code="invalid-observation",
        ) from None
    except (ValueError, UnicodeDecodeError):
        parsed = None  # pydantic says what is wrong with the JSON, below
    if isinstance(parsed, dict):
        _versions_given(parsed)
    try:
        return ResearchObservation.model_validate_json(raw, strict=True, context=WRITE_CONTEXT)
    except pydantic.ValidationError as exc:
        raise ValidationError(_envelope_error(exc), code="invalid-observation") from exc


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Duplicate(_shown(key))
        found[key] = value
    return found


def _versions_given(envelope: dict[str, Any]) -> None:
    for where, part in (
        ("", envelope),
        ("progress.", envelope.get("progress")),
        ("closure_basis.", envelope.get("closure_basis")),
    ):
        if isinstance(part, dict) and "schema_version" not in part:
            raise ValidationError(
                f"observation field '{where}schema_version': missing; rule: an envelope and each typed part "
                "name their schema version (unsupported versions are refused, so none is assumed)",
                code="invalid-observation",
            )


def _shown(key: str) -> str:
    """A key from the input, safe to print: control characters escaped, at most 64 characters."""
    from loopx_git.model.canonical import visible

    text = visible(key)
    return text if len(text) <= 64 else text[:61] + "..."


def _envelope_error(exc: pydantic.ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    where = _shown(".".join(str(p) for p in first["loc"] if not str(p).startswith("function-")) or "observation")
    kind = first["type"]
    if kind == "extra_forbidden":
        return (
            f"observation field '{where}': unknown; rule: {OBSERVATION_SCHEMA} takes only its own fields "
            "(research-only unknown fields are rejected)"
        )
    if kind == "literal_error" and where.endswith("schema_version"):
        return (
            f"observation field '{where}': unsupported version {first['input']!r}; rule: this loopx reads "
            f"{first['ctx']['expected']}"
        )
    if kind == "json_invalid":
        return f"observation: not JSON ({first['msg']}); rule: the envelope is one JSON object"
    if kind == "missing":
        return f"observation field '{where}': missing; rule: {OBSERVATION_SCHEMA} requires it"
    message = f"observation field {first_error(exc, 'observation')}"
    if "rule:" in message:  # a rule of the envelope's own validators
        return message
    if (first.get("ctx") or {}).get("pattern") == ID_PATTERN:
        return f"{message}; rule: node and evidence identities are opaque tokens, never paths or text"
    if kind in ("too_long", "too_short"):
        return f"{message}; rule: at most 12 evidence ids and 12 constraints, and no empty evidence"
    return f"{message}; rule: the field as {OBSERVATION_SCHEMA} defines it (`loopx schema {OBSERVATION_SCHEMA}`)"


def observe(
    state: State, *, goal_id: str, observation: ResearchObservation, agent_id: str | None = None, now: str
) -> Write:
    gs = require_goal(state, goal_id)
    check_actor(gs, agent_id)
    node = require_node(gs, observation.explore_node_id, field="explore_node_id")
    fingerprint = observation_fingerprint(observation)
    replay = next((o for o in node.observations if o.fingerprint == fingerprint), None)
    if replay is not None:  # exactly this envelope again: what it recorded stands, whatever changed since
        receipt = ObserveReceipt(
            goal_id=goal_id, node_id=node.node_id, fingerprint=fingerprint, revision=replay.revision, replayed=True
        )
        return Write("explore observe", f"{node.node_id} (replay)", goal_id, agent_id, result=receipt)
    if observation.execution_lineage is not None:
        _check_execution(gs, node, observation, agent_id)
    _check_candidates(gs, observation)
    _check_inputs(gs, node, observation)
    event = EventMaker(gs, now).make(
        ExploreObserve,
        goal_id=goal_id,
        node_id=node.node_id,
        agent_id=agent_id,
        summary=f"research observation on {node.node_id}: {observation.progress.result_class} ({fingerprint})",
        observation=observation,
        fingerprint=fingerprint,
    )
    receipt = ObserveReceipt(
        goal_id=goal_id, node_id=node.node_id, fingerprint=fingerprint, revision=node.revision + 1, written=True
    )
    return Write("explore observe", f"{node.node_id} {fingerprint}", goal_id, agent_id, [event], result=receipt)


def _check_candidates(gs: GoalState, observation: ResearchObservation) -> None:
    source = observation.explore_node_id
    own = attributed(gs, source) | set(observation.progress.evidence_ids)
    for n, candidate in enumerate(observation.composition_candidates):
        where = f"composition_candidates.{n}"
        require_node(gs, candidate.target_node_id, field=f"{where}.target_node_id")
        theirs = attributed(gs, candidate.target_node_id)
        ids = set(candidate.evidence_ids)
        unattributed = sorted(ids - own - theirs)
        if unattributed or not ids & own or not ids & theirs:
            missing = (
                f"{', '.join(unattributed)} attributable to neither node"
                if unattributed
                else f"none attributable to {source if not ids & own else candidate.target_node_id}"
            )
            raise RuleError(
                f"observation field '{where}.evidence_ids': {missing}; rule: a candidate's evidence is "
                f"attributable to both nodes ({source} through this observation or its node evidence, "
                f"{candidate.target_node_id} through its node evidence or a research observation)",
                code="candidate-evidence",
            )


def _check_inputs(gs: GoalState, node: ExploreNode, observation: ResearchObservation) -> None:
    depends = node.depends_on()
    if not observation.input_observations:
        if node.kind == NodeKind.experiment.value and len(depends) == 2:
            raise RuleError(
                f"observation field 'input_observations': missing on binary experiment {node.node_id} (it "
                f"depends on {' and '.join(depends)}); rule: a joint experiment's observation carries the exact "
                "current observations of its two inputs (take them from the gap's card in `loopx explore summary`)",
                code="missing-input-observations",
            )
        return
    if node.kind != NodeKind.experiment.value or len(depends) != 2:
        raise RuleError(
            f"observation field 'input_observations': {node.node_id} is a {node.kind} with "
            f"{len(depends)} depends_on edge(s); rule: input observations belong to a binary experiment "
            "(an experiment node with exactly two outgoing depends_on edges)",
            code="not-a-binary-experiment",
        )
    given_inputs = {i.node_id: i.fingerprint for i in observation.input_observations}
    current = {d: gs.explore[d].current_observation if d in gs.explore else None for d in depends}
    if given_inputs != current:
        raise RuleError(
            f"observation field 'input_observations': {json.dumps(given_inputs, sort_keys=True)} is not the "
            f"current input observations {json.dumps(current, sort_keys=True)}; rule: an experiment carries "
            "the exact current observations of its two inputs (take them from the gap's card in "
            "`loopx explore summary`)",
            code="stale-input-observations",
        )


# --- execution lineage: the live research gate's attribution check ---------------------------------


def _refuse(what: str, rule: str, code: str, hint: str | None = None) -> NoReturn:
    raise RuleError(f"observation field 'execution_lineage{what}; rule: {rule}", code=code, hint=hint)


def _check_execution(gs: GoalState, node: ExploreNode, observation: ResearchObservation, agent_id: str | None) -> None:
    """A new write under execution lineage (seed 002): by the lineage's own agent, on a binary
    experiment of the lineage's gap, for a successor todo that this agent holds as a runnable
    joint_probe admitted for exactly this obligation and this experiment, whose guard still holds.
    A read, an ACK or a result without evidence attributes nothing."""
    lineage = observation.execution_lineage
    assert lineage is not None
    progress = observation.progress
    if lineage.goal_id != gs.goal_id:
        _refuse(
            ".goal_id': " + repr(lineage.goal_id), f"the lineage names this goal ({gs.goal_id})", "lineage-mismatch"
        )
    if agent_id != lineage.agent_id:
        _refuse(
            f".agent_id': {lineage.agent_id!r}, but the observation is written by {agent_id or 'no agent'}",
            "explore observe --agent-id names the lineage's agent: attribution is by the actor itself",
            "lineage-mismatch",
        )
    depends = node.depends_on()
    if node.kind != NodeKind.experiment.value or len(depends) != 2:
        _refuse(
            f"': {node.node_id} is a {node.kind} with {len(depends)} depends_on edge(s)",
            "execution lineage is recorded on a binary experiment",
            "not-a-binary-experiment",
        )
    live = live_gaps(gs)
    gap = next((g for g in live if g.gap.gap_id == lineage.gap_id), None)
    if gap is None:
        _refuse(
            f".gap_id': {lineage.gap_id} is not a composition gap of this goal", "the gap is declared", "unknown-gap"
        )
    if tuple(sorted(depends)) != gap.gap.inputs:
        _refuse(
            f".gap_id': {node.node_id} depends on {' and '.join(sorted(depends))}, not on the gap's inputs "
            f"{' and '.join(gap.gap.inputs)}",
            "the experiment belongs to the gap its lineage names",
            "lineage-mismatch",
        )
    todo = gs.todos.get(lineage.successor_todo_id)
    guard = todo.capability_guard if todo is not None else None
    why = _no_authority(gs, node.node_id, lineage.replan_obligation_id, agent_id, todo)
    if why is not None:
        _refuse(
            f".successor_todo_id': {why}",
            "only this agent's joint_probe advancement_task admitted for the exact obligation, naming exactly "
            "this experiment in its result refs, supplies execution attribution",
            "no-execution-authority",
        )
    assert todo is not None and guard is not None  # _no_authority said why otherwise
    stale = invalidation(gs, guard, live)
    if stale:
        _refuse(
            f".replan_obligation_id': the duty's guard no longer holds ({'; '.join(stale)})",
            "a write under execution lineage is made while its admitted guard holds; an invalidated duty is retired",
            "stale-capability-duty",
            hint="retirement_contract: " + retirement_contract(gs, guard),
        )
    if gap.state not in ("pending", "scheduled"):
        _refuse(
            f".gap_id': gap {gap.gap.gap_id} is {gap.state} ({gap.detail})",
            "execution attributes a result to a gap still pending",
            "gap-not-pending",
        )
    if progress.result_class == "unchanged" or not progress.evidence_ids:
        _refuse(
            f"': progress is {progress.result_class}" + ("" if progress.evidence_ids else " without evidence"),
            "an execution result carries evidence and is not unchanged (a read or an ACK attributes nothing)",
            "not-an-execution-result",
        )
    _check_resolution(gs, node, observation, todo, gap)


def _no_authority(
    gs: GoalState, node_id: str, obligation: str, agent_id: str | None, todo: TodoItem | None
) -> str | None:
    if todo is None:
        return "no such todo"
    guard = todo.capability_guard
    if todo.superseded_by or todo.status == "done":
        return f"{todo.todo_id} is {'superseded' if todo.superseded_by else 'done'} (archived work attributes nothing)"
    if guard is None or guard.obligation_id != obligation or todo.replan_obligation_id != obligation:
        return f"{todo.todo_id} was not admitted for obligation {obligation}"
    if obligation in gs.retirements:
        return f"its duty {obligation} was retired by run {gs.retirements[obligation].run_id}"
    if guard.agent_id != agent_id or todo.claimed_by not in (None, agent_id):
        return f"{todo.todo_id} is {guard.agent_id}'s" + (f", held by {todo.claimed_by}" if todo.claimed_by else "")
    if todo.task_class != "advancement_task" or todo.action_kind != JOINT_PROBE:
        return f"{todo.todo_id} is a {todo.task_class} with action kind {todo.action_kind or 'none'}"
    if todo.explore_result_node_refs != [node_id]:
        return f"{todo.todo_id}'s result refs are {todo.explore_result_node_refs or 'none'}, not [{node_id}]"
    return None


def _check_resolution(
    gs: GoalState, node: ExploreNode, observation: ResearchObservation, todo: TodoItem, gap: LiveGap
) -> None:
    resolution = observation.composition_resolution
    progress = observation.progress
    disposition = resolution.disposition if resolution is not None else None
    if disposition == "deferred":
        if node.status != "blocked":
            _refuse(
                f"': deferral of {node.node_id}, which is {node.status}",
                "a deferred resolution is recorded on a blocked experiment",
                "deferral-not-held",
            )
        why = waiting(gs, ObservationFacts.of(observation))
        if why is not None:
            _refuse(
                f"': {why}",
                "a deferral holds only while the successor waits (resume_when=todo_done:<blocker>) on a live "
                "blocker todo of the same agent that names it in unblocks_todo_id",
                "deferral-not-held",
            )
        return
    if not gs.is_runnable(todo) or todo.status != "open":
        _refuse(
            f".successor_todo_id': {todo.todo_id} is {todo.status} and not runnable",
            "a result is attributed to a currently runnable successor (a deferral has its own resolution)",
            "no-execution-authority",
        )
    if disposition == "dismissed" and node.status != "dead_end":
        _refuse(
            f"': dismissal of {node.node_id}, which is {node.status}",
            "a dismissed candidate's experiment is dead_end (explore node update --status dead_end)",
            "dismissal-not-dead-end",
        )
    policy = explore_policy(gs.goal)
    if (
        disposition is None
        and progress.result_class in COVERAGE_CLASSES
        and progress.coverage_scope_id != policy.scope_id
    ):
        _refuse(
            f"': progress.coverage_scope_id is {progress.coverage_scope_id!r}",
            f"a terminal result under execution lineage names the goal's configured coverage scope ({policy.scope_id})",
            "scope-mismatch",
        )

"""Research observations recorded on an explore node: the typed_research_observation_v0 envelope
parsed strictly, its candidates and inputs checked against the node, an exact replay written once."""

from __future__ import annotations

import json
from typing import Any

import pydantic

from loopx_git.domain.explore import require_node
from loopx_git.domain.lineage import check_execution
from loopx_git.domain.write import EventMaker, Write, check_actor
from loopx_git.errors import RuleError, ValidationError
from loopx_git.model.composition import attributed
from loopx_git.model.explore import (
    ExploreNode,
    ExploreObserve,
    NodeKind,
)
from loopx_git.model.ids import ID_PATTERN
from loopx_git.model.record import WRITE_CONTEXT, first_error
from loopx_git.model.research import (
    OBSERVATION_SCHEMA,
    ObserveReceipt,
    ResearchObservation,
    observation_fingerprint,
)
from loopx_git.model.state import GoalState, State, require_goal

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
        check_execution(gs, node, observation, agent_id)
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

"""Appending facts to the rollout log: PR merges, validations, handoffs, quota, failures..."""
from __future__ import annotations

from typing import Optional, Sequence

from loopx_git.errors import ValidationError
from loopx_git.model.event import APPENDABLE_KINDS, EVENT_CLASSES, PR_REF_RE
from loopx_git.model.state import State, require_goal
from loopx_git.model.todo import ResumeCondition
from loopx_git.domain.todo import wake_dependents
from loopx_git.domain.write import EventMaker, Write

_CLASS_BY_KIND = {cls.model_fields["event_kind"].default: cls for cls in EVENT_CLASSES}


def append_event(
    state: State, *, goal_id: str, kind: str, agent_id: Optional[str] = None, todo_id: Optional[str] = None,
    run_id: Optional[str] = None, case_id: Optional[str] = None, lane_id: Optional[str] = None,
    summary: Optional[str] = None, pr_ref: Optional[str] = None, commit_ref: Optional[str] = None,
    revert_of: Optional[str] = None, to_agent_id: Optional[str] = None, caused_by: Optional[str] = None,
    source_event_id: Optional[str] = None, gate_id: Optional[str] = None, decision_id: Optional[str] = None,
    labels: Sequence[str] = (), artifact_refs: Sequence[str] = (), details: Optional[dict] = None,
    now: str,
) -> Write:  # fmt: skip
    if kind not in APPENDABLE_KINDS:
        hint = "entity events are written by their own commands (loopx todo / goal / agent / refresh-state)"
        raise ValidationError(f"field 'kind': {kind!r} cannot be appended; rule: one of {', '.join(APPENDABLE_KINDS)}",
                              code="invalid-field", hint=hint)
    gs = require_goal(state, goal_id)
    code_refs = {k: v for k, v in {"pr_ref": pr_ref, "commit_ref": commit_ref, "revert_of": revert_of}.items() if v}
    causality = {k: v for k, v in {"caused_by": caused_by, "source_event_id": source_event_id, "gate_id": gate_id,
                                   "decision_id": decision_id}.items() if v}  # fmt: skip
    maker = EventMaker(gs, now)
    event = maker.make(
        _CLASS_BY_KIND[kind], goal_id=goal_id, agent_id=agent_id, todo_id=todo_id, run_id=run_id, case_id=case_id,
        lane={"lane_id": lane_id} if lane_id else None, summary=summary, code_refs=code_refs or None,
        handoff={"to_agent_id": to_agent_id} if to_agent_id else None, causality=causality or None,
        labels=list(labels), artifact_refs=list(artifact_refs), details=details or {},
    )  # fmt: skip
    woken = []
    fact = _fact(event)
    if fact is not None and not gs.condition_holds(fact):
        woken = wake_dependents(gs, maker, event, fact)
    label = summary or (pr_ref if kind == "pr_merge" else "") or ""
    tail = f", woke {len(woken)}" if woken else ""
    return Write(f"event {kind}", f"{label}{tail}".strip(", "), goal_id, agent_id, [event, *woken], result=event)


def _fact(event) -> Optional[ResumeCondition]:
    """What a fact event makes true, in the terms todos wait for."""
    if event.event_kind == "pr_merge":
        match = PR_REF_RE.match(event.code_refs.pr_ref)
        return ResumeCondition("pr_merged", repository=match.group("repo"), pr_number=int(match.group("number")))
    if event.event_kind == "quota" and isinstance(event.details.get("capacity"), str) and event.details.get("available", True):
        return ResumeCondition("capacity_available", capacity=event.details["capacity"])
    return None

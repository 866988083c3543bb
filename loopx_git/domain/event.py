"""Appending facts to the rollout log: PR merges, validations, handoffs, quota, failures..."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from loopx_git.domain.todo_rules import require_todo, wake_dependents
from loopx_git.domain.write import EventMaker, Write, check_actor, given, many
from loopx_git.errors import ValidationError
from loopx_git.model import github
from loopx_git.model.canonical import printable
from loopx_git.model.event import APPENDABLE_KINDS, EVENT_CLASSES
from loopx_git.model.github import PR_REF_RE
from loopx_git.model.state import State, require_agent, require_event, require_goal, require_run
from loopx_git.model.todo import ResumeCondition

_CLASS_BY_KIND = {cls.model_fields["event_kind"].default: cls for cls in EVENT_CLASSES}

DETAIL_INT_BITS = 64
DETAIL_RULE = (
    "details are KEY=VALUE with KEY a lower-case slug; VALUE an integer that fits in 64 bits "
    "(-2^63 .. 2^63-1), true, false or text"
)
_INT_TEXT = re.compile(r"-?[0-9]+")  # ASCII digits only: str.isdigit also takes '²' and other digits int() refuses


def parse_details(pairs: Iterable[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as given on a command line: digits become an integer, true/false a
    boolean, anything else stays text. A refusal names the pair and the rule."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValidationError(
                f"field 'detail': {pair!r} is not KEY=VALUE; rule: {DETAIL_RULE}", code="invalid-field"
            )
        if key in out:
            raise ValidationError(
                f"field 'detail': key {key!r} is given twice; rule: one value per key", code="invalid-field"
            )
        number = value[1:] if value.startswith("-") else value
        if number.isdigit() and not number.isascii():  # '²', '٣': digits to str.isdigit, not to a reader of JSON
            raise ValidationError(
                f"field 'detail': the value of {key!r} ({value!r}) is written with digits other than "
                f"0-9; rule: {DETAIL_RULE}, integers in ASCII digits",
                code="invalid-field",
            )
        if _INT_TEXT.fullmatch(value):
            digits = len(value.lstrip("-"))
            if digits > 19:  # never hand int() a number it may refuse to convert (4300 digits and up)
                raise ValidationError(
                    f"field 'detail': the value of {key!r} is an integer of {digits} digits; rule: {DETAIL_RULE}",
                    code="invalid-field",
                )
            out[key] = int(value)
        else:
            out[key] = {"true": True, "false": False}.get(value, value)
    return out


def check_details(details: dict | None) -> dict:
    """Details as the Python API may pass them: scalars only, integers in 64 bits, finite floats."""
    if details is None:
        return {}
    if not isinstance(details, dict):
        raise ValidationError(
            f"field 'details': {type(details).__name__} is not a mapping; rule: {DETAIL_RULE}", code="invalid-field"
        )
    limit = 1 << (DETAIL_INT_BITS - 1)
    for key, value in details.items():
        where = f"field 'details.{printable(str(key))}'"
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not -limit <= value < limit:
            raise ValidationError(f"{where}: the integer is out of range; rule: {DETAIL_RULE}", code="invalid-field")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValidationError(
                f"{where}: {value!r} is not a finite number; rule: NaN and infinity are not JSON", code="invalid-field"
            )
    return details


def append_event(
    state: State,
    *,
    goal_id: str,
    kind: str,
    agent_id: str | None = None,
    todo_id: str | None = None,
    run_id: str | None = None,
    case_id: str | None = None,
    benchmark_id: str | None = None,
    lane_id: str | None = None,
    summary: str | None = None,
    pr_ref: str | None = None,
    commit_ref: str | None = None,
    revert_of: str | None = None,
    to_agent_id: str | None = None,
    caused_by: str | None = None,
    source_event_id: str | None = None,
    gate_id: str | None = None,
    decision_id: str | None = None,
    labels: Sequence[str] = (),
    artifact_refs: Sequence[str] = (),
    details: dict | None = None,
    now: str,
) -> Write:
    if kind not in APPENDABLE_KINDS:
        hint = "entity events are written by their own commands (loopx todo / goal / agent / refresh-state)"
        raise ValidationError(
            f"field 'kind': {kind!r} cannot be appended; rule: one of {', '.join(APPENDABLE_KINDS)}",
            code="invalid-field",
            hint=hint,
        )
    gs = require_goal(state, goal_id)
    given(
        agent_id=agent_id,
        todo_id=todo_id,
        run_id=run_id,
        case_id=case_id,
        benchmark_id=benchmark_id,
        lane_id=lane_id,
        summary=summary,
        pr_ref=pr_ref,
        commit_ref=commit_ref,
        revert_of=revert_of,
        to_agent_id=to_agent_id,
        caused_by=caused_by,
        source_event_id=source_event_id,
        gate_id=gate_id,
        decision_id=decision_id,
    )
    many(labels=labels, artifact_refs=artifact_refs)
    if isinstance(pr_ref, str):  # a PR URL as pasted is stored as owner/repo#N, which a pr_merged wake-up matches
        try:
            pr_ref = github.pr_ref(pr_ref)
        except ValueError as exc:
            raise ValidationError(f"field 'pr_ref': {exc}", code="invalid-field") from exc
    details = check_details(details)
    check_actor(gs, agent_id)
    if to_agent_id is not None:
        require_agent(gs, to_agent_id, field="to_agent_id", rule="a handoff goes to an agent registered on the goal")
    if todo_id is not None:
        require_todo(gs, todo_id)
    if run_id is not None:
        require_run(gs, run_id)
    for name, cause in (("caused_by", caused_by), ("source_event_id", source_event_id)):
        if cause is not None:
            require_event(gs, cause, field=name)
    code_refs = {k: v for k, v in {"pr_ref": pr_ref, "commit_ref": commit_ref, "revert_of": revert_of}.items() if v}
    causality = {
        k: v
        for k, v in {
            "caused_by": caused_by,
            "source_event_id": source_event_id,
            "gate_id": gate_id,
            "decision_id": decision_id,
        }.items()
        if v
    }
    maker = EventMaker(gs, now)
    event = maker.make(
        _CLASS_BY_KIND[kind],
        goal_id=goal_id,
        agent_id=agent_id,
        todo_id=todo_id,
        run_id=run_id,
        case_id=case_id,
        benchmark_id=benchmark_id,
        lane={"lane_id": lane_id} if lane_id else None,
        summary=summary,
        code_refs=code_refs or None,
        handoff={"to_agent_id": to_agent_id} if to_agent_id else None,
        causality=causality or None,
        labels=list(labels),
        artifact_refs=list(artifact_refs),
        details=details or {},
    )
    woken = []
    fact = _fact(event)
    if fact is not None and not gs.condition_holds(fact):
        woken = wake_dependents(gs, maker, event, fact)
    label = summary or (pr_ref if kind == "pr_merge" else "") or ""
    tail = f", woke {len(woken)}" if woken else ""
    return Write(f"event {kind}", f"{label}{tail}".strip(", "), goal_id, agent_id, [event, *woken], result=event)


def _fact(event) -> ResumeCondition | None:
    """What a fact event makes true, in the terms todos wait for."""
    if event.event_kind == "pr_merge":
        match = PR_REF_RE.fullmatch(event.code_refs.pr_ref)
        assert match is not None  # the event was just built: its PR ref passed this pattern
        return ResumeCondition("pr_merged", repository=match.group("repo"), pr_number=int(match.group("number")))
    if (
        event.event_kind == "quota"
        and isinstance(event.details.get("capacity"), str)
        and event.details.get("available", True)
    ):
        return ResumeCondition("capacity_available", capacity=event.details["capacity"])
    return None

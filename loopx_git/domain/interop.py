"""Rollout-log interop: a goal's events as ``loopx_rollout_event_v0`` JSON Lines, and the lines of
another log (upstream LoopX's ``rollout-event-log.jsonl``, or another goal's export) appended as
history (``loopx events export`` / ``loopx events import``).

An imported line becomes a ``rollout_import`` event: its time and join keys are kept, so every
listing and view finds it, and its own event id and what it carries beyond this log's fields are
kept in its ``origin``. It changes no todo, gate or handoff: a log written elsewhere is evidence of
what happened there, not a command to this goal's state.

Every line is read and checked (and safety-scanned) before anything is written; the writing is then
one commit per chunk of lines. Lines are deduplicated by their event id: one the goal imported
before is skipped (so an import that was interrupted, or a file imported twice, adds each event
once), and so is one imported before with other content (the first import stands; the report
counts it as ``differing``).

The record a line becomes depends on the line and the goal alone, so clones that import the same
line write the same file and meet through a sync without a conflict: its id is ``imp_`` and a hash
of that record (an event id names one event on the whole branch, and the same upstream line in two
goals, or in two versions, is two events). Its Lamport clock is the one the line carries (a loopx
export, whose order stands) or 1 (upstream lines carry none, and sort by their own time).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Final, Literal

from loopx_git.domain.write import Write, build
from loopx_git.errors import ValidationError
from loopx_git.model.event import EVENT_CLASSES, EVENT_KINDS, UPSTREAM_KINDS, RolloutImport
from loopx_git.model.event_head import EVENT_SCHEMA, EventBase
from loopx_git.model.ids import ID_PATTERN, ID_RULE, Id, format_utc
from loopx_git.model.record import Record
from loopx_git.model.state import State, require_goal

IMPORT_SCHEMA: Final = "loopx_events_import_v0"

ID_RE = re.compile(ID_PATTERN)
IMPORT_CHUNK = 500
"""Lines written per commit: a large log lands as a few commits a reviewer can still open."""
MAX_LINE_BYTES = 64 << 10
MAX_LOG_BYTES = 256 << 20

IMPORTABLE_KINDS = UPSTREAM_KINDS | frozenset(EVENT_KINDS)
KIND_RULE = "a kind of upstream LoopX's rollout log or of loopx's own (see `loopx events --help`)"

_JOIN_AND_FACT_KEYS = (
    "agent_id",
    "todo_id",
    "run_id",
    "case_id",
    "benchmark_id",
    "summary",
    "state_transition",
    "causality",
    "code_refs",
    "handoff",
    "labels",
    "artifact_refs",
    "details",
    "boundary",
)
"""Fields a line shares with this log's events: kept as the imported event's own."""
_ORIGIN_KEYS = ("status", "classification", "delivery_outcome", "source_refs", "private_source")
"""Upstream fields this log has no place for: kept in ``origin``."""
_CLOCK = ("lamport",)
"""A loopx export's clock: kept, so that the order of the goal it came from stands."""
MAX_CLOCK = 2**32
"""Far beyond any real goal's clock, far below 2^53: later events of the goal stay exact in JSON."""
_PAYLOAD_KEYS = frozenset(
    name for cls in EVENT_CLASSES for name in cls.model_fields if name not in RolloutImport.model_fields
) | {"changes"}
"""Fields of loopx's own event kinds (a gate id, a reward, a todo's field changes): kept in
``origin.payload``, where they describe what happened without applying it again."""
_LANE_KEYS = {"lane_id", "agent_model", "agent_role"}
_HEAD_KEYS = ("schema_version", "event_id", "goal_id", "event_kind", "recorded_at")
KNOWN_KEYS = frozenset((*_HEAD_KEYS, *_JOIN_AND_FACT_KEYS, *_ORIGIN_KEYS, *_CLOCK, "lane", "origin")) | (_PAYLOAD_KEYS)


class EventsImport(Record):
    """What ``loopx events import`` did (``--format json``)."""

    schema_version: Literal["loopx_events_import_v0"] = IMPORT_SCHEMA
    goal_id: Id
    lines: int
    """Events the file holds (blank lines and repeats of a line not counted)."""
    imported: int
    already_present: int
    """Lines imported before, as they are: skipped."""
    differing: int = 0
    """Lines whose event id was imported before with other content: skipped, the first import stands."""
    commits: list[str]
    """One per chunk that added something, oldest first."""
    redacted_fields: int = 0


@dataclass(frozen=True)
class ImportLine:
    """One line of the log, checked and built: the event it becomes, whoever imports it."""

    number: int
    event: RolloutImport


def _refuse(number: int, field: str, problem: str, rule: str) -> ValidationError:
    return ValidationError(
        f"line {number}: field '{field}': {problem}; rule: {rule}; nothing was written", code="invalid-line"
    )


def _utc(number: int, value: Any) -> str:
    if not isinstance(value, str):
        raise _refuse(number, "recorded_at", "missing or not text", "an RFC 3339 time, e.g. 2026-06-24T01:12:10+08:00")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise _refuse(
            number, "recorded_at", f"{value[:40]!r} is not a time with an offset", "an RFC 3339 time with Z or +HH:MM"
        )
    return format_utc(moment.astimezone(timezone.utc))


def _no_nan(number: int, value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise _refuse(number, where, "NaN or infinity", "numbers in a line are finite (JSON has no NaN)")
    if isinstance(value, dict):
        for key, item in value.items():
            _no_nan(number, item, f"{where}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _no_nan(number, item, f"{where}[{i}]")


def parse_line(number: int, raw: bytes, goal_id: str) -> ImportLine | None:
    """One line of the log as the event it becomes, or None for a blank line. A refusal names the
    line number, the field and the rule."""
    if len(raw) > MAX_LINE_BYTES:
        raise _refuse(number, "(line)", f"{len(raw)} bytes", f"a line is at most {MAX_LINE_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(number, "(line)", "not UTF-8 text", "a rollout log is UTF-8 JSON Lines") from None
    if not text.strip():
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _refuse(
            number, "(line)", f"not JSON ({exc.msg} at column {exc.colno})", "one JSON object per line"
        ) from None
    if not isinstance(data, dict):
        raise _refuse(number, "(line)", f"a JSON {type(data).__name__}, not an object", "one JSON object per line")
    _no_nan(number, data, "line")
    if data.get("schema_version") != EVENT_SCHEMA:
        raise _refuse(
            number, "schema_version", f"{str(data.get('schema_version'))[:40]!r} is not supported", f"{EVENT_SCHEMA}"
        )
    unknown = sorted(k for k in data if k not in KNOWN_KEYS)
    if unknown:
        raise _refuse(
            number, unknown[0], "not a field of a rollout event", f"a {EVENT_SCHEMA} line has only its own fields"
        )
    kind = data.get("event_kind")
    if not isinstance(kind, str) or kind not in IMPORTABLE_KINDS:
        raise _refuse(number, "event_kind", f"{str(kind)[:40]!r} is not a known kind", KIND_RULE)
    lane = data.get("lane")
    if lane is not None and (not isinstance(lane, dict) or set(lane) - _LANE_KEYS):
        raise _refuse(number, "lane", "not a lane", "a lane is {lane_id, agent_model?, agent_role?}")
    line_id = data.get("event_id")
    if not isinstance(line_id, str) or not ID_RE.fullmatch(line_id):
        raise _refuse(number, "event_id", f"{str(line_id)[:40]!r} is not an event id", ID_RULE)
    if kind == "rollout_import":  # a loopx export of an import: its origin stands as it was
        origin = data.get("origin")
    else:
        if "origin" in data:
            raise _refuse(number, "origin", "given on a line of another kind", "only rollout_import lines carry one")
        origin = {
            "event_id": line_id,
            "kind": kind,
            "goal_id": data.get("goal_id"),
            "recorded_at": data.get("recorded_at"),
            "agent_model": (lane or {}).get("agent_model"),
            "agent_role": (lane or {}).get("agent_role"),
            **{k: data[k] for k in _ORIGIN_KEYS if k in data},
            "payload": {k: data[k] for k in sorted(_PAYLOAD_KEYS) if data.get(k) not in (None, [], {})},
        }
    clock = data.get("lamport", 1)
    if isinstance(clock, bool) or not isinstance(clock, int) or not 1 <= clock <= MAX_CLOCK:
        raise _refuse(number, "lamport", f"{str(clock)[:40]!r} is not a clock", f"a whole number from 1 to {MAX_CLOCK}")
    fields = {
        "event_id": "imp_pending",  # the hash of the rest, below
        "goal_id": goal_id,
        "recorded_at": _utc(number, data.get("recorded_at")),
        "lamport": clock,
        "origin": origin,
        **{k: data[k] for k in _JOIN_AND_FACT_KEYS if k in data},
    }
    if lane is not None and lane.get("lane_id") is not None:
        fields["lane"] = {"lane_id": lane["lane_id"]}
    try:
        event = build(RolloutImport, {k: v for k, v in fields.items() if v is not None}, what="event")
    except ValidationError as exc:
        raise ValidationError(f"line {number}: {exc.message}; nothing was written", code="invalid-line") from None
    return ImportLine(number, event.model_copy(update={"event_id": _derived_id(event)}))


def _derived_id(event: RolloutImport) -> str:
    body = json.dumps(event.model_dump(mode="json", exclude={"event_id"}), sort_keys=True, ensure_ascii=False)
    return "imp_" + hashlib.sha256(body.encode()).hexdigest()[:24]


def read_log(lines: Iterable[bytes], goal_id: str) -> list[ImportLine]:
    """Every line checked, in file order; a line repeating an earlier one's event id is dropped when
    it is the same line, and refused when it says something else."""
    out: list[ImportLine] = []
    seen: dict[str, tuple[int, str]] = {}  # the line's own event id -> (line number, the event it became)
    for number, raw in enumerate(lines, start=1):
        parsed = parse_line(number, raw.rstrip(b"\r\n"), goal_id)
        if parsed is None:
            continue
        line_id = parsed.event.origin.event_id
        earlier = seen.get(line_id)
        if earlier is not None:
            if earlier[1] != parsed.event.event_id:
                raise _refuse(
                    number,
                    "event_id",
                    f"{line_id!r} was given on line {earlier[0]} with other content",
                    "an event id names one event",
                )
            continue
        seen[line_id] = (number, parsed.event.event_id)
        out.append(parsed)
    return out


def chunks(lines: Sequence[ImportLine], size: int = IMPORT_CHUNK) -> Iterator[Sequence[ImportLine]]:
    for start in range(0, len(lines), size):
        yield lines[start : start + size]


def import_write(state: State, goal_id: str, lines: Sequence[ImportLine]) -> Write:
    """One chunk as one write: the lines the goal has not imported yet (by their own event id). Its
    result is how many were skipped for differing from what was imported under their id."""
    gs = require_goal(state, goal_id)
    events: list[EventBase] = []
    differing = 0
    for line in lines:
        if line.event.event_id in gs.event_ids:
            continue
        if line.event.origin.event_id in gs.imported:
            differing += 1
            continue
        events.append(line.event)
    span = f"lines {lines[0].number}-{lines[-1].number}" if lines else "no lines"
    return Write("events import", f"{len(events)} event(s) from {span}", goal_id, None, events, result=differing)


def reidentified(lines: Sequence[ImportLine], events: Sequence[EventBase]) -> list[ImportLine]:
    """The lines as the safety gate redacted them (``events``, in the same order), each with the id
    of its redacted record."""
    out = []
    for line, event in zip(lines, events, strict=True):
        assert isinstance(event, RolloutImport)  # the gate rebuilds a record as its own class
        out.append(ImportLine(line.number, event.model_copy(update={"event_id": _derived_id(event)})))
    return out


def checking(goal_id: str, lines: Sequence[ImportLine]) -> Write:
    """The lines as one write, for the safety gate to scan before anything is committed."""
    return Write("events import", "", goal_id, None, [line.event for line in lines])


def export_line(event: EventBase) -> str:
    """An event as one JSON line: the record as stored (sorted keys, absent fields left out)."""
    return json.dumps(event.model_dump(mode="json", exclude_none=True), sort_keys=True, ensure_ascii=False)

"""Record files on the branch <-> models: canonical bytes out, strict validation in."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection

import pydantic

from loopx_git.errors import FormatError, LoopxError, ValidationError
from loopx_git.model.canonical import pretty_json
from loopx_git.model.event import EVENT_ADAPTER, EVENT_KINDS
from loopx_git.model.event_head import EventBase, EventHead
from loopx_git.model.record import STORED, first_error
from loopx_git.model.run import RunRecord
from loopx_git.store import layout

UPGRADE_HINT = "this branch was written by a newer loopx-git; upgrade with `pip install -U loopx-git`"


def holding(field: str, value: str) -> re.Pattern[bytes]:
    """Finds ``"field": "value"`` in a record's stored bytes: a cheap look before parsing, for a read
    that wants few records of many (what it finds is checked again once parsed: a value nested deeper
    matches too). Ids are ASCII and stored unescaped, so a record holding the value is never missed.
    A value that is not UTF-8 text (bytes of another encoding on the command line) names nothing on
    the branch, whose text is UTF-8: it is refused, naming ``field``, not left to fail the encoding."""
    try:
        encoded = value.encode()
    except UnicodeEncodeError:
        from loopx_git.model.canonical import printable

        raise ValidationError(
            f"field '{field}': {printable(value)[:200]!r} is not UTF-8 text; rule: text on the state branch is UTF-8",
            code="invalid-field",
        ) from None
    return re.compile(rb'"%s"\s*:\s*"%s"' % (re.escape(field.encode()), re.escape(encoded)))


def encode(record: pydantic.BaseModel) -> bytes:
    """Sorted keys, 2-space indent, trailing newline; absent optional fields are left out."""
    return pretty_json(record.model_dump(mode="json", exclude_none=True, context=STORED))


def parse_event(data: bytes, path: str) -> EventBase:
    """A whole event, every field validated."""
    try:
        event = EVENT_ADAPTER.validate_json(data)
    except pydantic.ValidationError as exc:
        raise _refusal(exc, path) from exc
    _check_path(event, path)
    return event


def check_unambiguous(data: bytes, path: str) -> None:
    """Refuse a record whose JSON gives one key twice in an object. The record parser keeps the last
    value, other readers (a reviewer's tool, another loopx) may keep the first: one file, two
    records. Numbers the same way: NaN, Infinity and integers past 64 bits, anywhere in the record
    (a field change's before/after, an imported payload), are refused. Run by ``verify`` on every
    record it reads (incoming, pushed, or a whole branch), after the record parsed: the fold, which
    reads only verified branches, pays nothing for it."""

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                raise ValidationError(
                    f"{path}: invalid record: key {key[:100]!r} is given twice in one object; rule: a record's "
                    "JSON gives each key once",
                    code="invalid-record",
                )
            seen.add(key)
        return dict(items)

    def refuse(what: str) -> ValidationError:
        return ValidationError(
            f"{path}: invalid record: {what}; rule: a record's JSON numbers are finite and fit 64 bits "
            "(other readers cannot hold them, and JSON output could not carry them)",
            code="invalid-record",
        )

    def constant(name: str) -> object:
        raise refuse(f"it holds {name}")

    def number(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise refuse(f"the number {text[:40]} is not finite")
        return value

    def integer(text: str) -> int:
        if len(text.lstrip("-")) > 20 or not -(2**63) <= int(text) < 2**64:
            raise refuse(f"the integer {text[:40]}{'...' if len(text) > 40 else ''} does not fit 64 bits")
        return int(text)

    try:
        json.loads(data, object_pairs_hook=pairs, parse_constant=constant, parse_float=number, parse_int=integer)
    except (ValueError, RecursionError):  # the record parser accepted it: nothing else to say of it
        return


def parse_for_fold(data: bytes, path: str, payload_kinds: Collection[str]) -> EventHead:
    """What the fold needs of an event: the whole event for ``payload_kinds``, only the validated
    head for the others (facts whose payload changes no state)."""
    try:
        head = EventHead.model_validate_json(data)
    except pydantic.ValidationError as exc:
        raise _refusal(exc, path) from exc
    if head.event_kind in payload_kinds:
        return parse_event(data, path)
    if head.event_kind not in EVENT_KINDS:
        raise FormatError(
            f"{path}: unknown event kind {head.event_kind!r} (known: {', '.join(EVENT_KINDS)})", hint=UPGRADE_HINT
        )
    _check_path(head, path)
    return head


def _refusal(exc: pydantic.ValidationError, path: str) -> LoopxError:
    errors = exc.errors(include_url=False)
    if any(e["type"] == "union_tag_invalid" for e in errors):
        return FormatError(f"{path}: unknown event kind (known: {', '.join(EVENT_KINDS)})", hint=UPGRADE_HINT)
    if any("schema_version" in e["loc"][:2] for e in errors):
        return FormatError(f"{path}: unsupported schema_version", hint=UPGRADE_HINT)
    return ValidationError(f"{path}: invalid event: {first_error(exc)}", code="invalid-record")


def _check_path(event: EventHead, path: str) -> None:
    """An event sits at the one path its content gives it in the layout of its path's shape: a
    layout-1 path (``.../HH/<id>.json``) or a layout-2 one (``.../HH/<b1>/<b2>/<id>.json``)."""
    version = layout.event_layout(path) or layout.RECORD_LAYOUTS[-1]
    expected = layout.event_path(event.goal_id, event.event_id, event.recorded_at, version)
    if expected != path:
        rule = "the hour shard of recorded_at" + (" and the last two characters of event_id" if version == 2 else "")
        raise ValidationError(
            f"{path}: does not match its event (goal_id, event_id, {rule} put it at {expected} in layout {version})",
            code="invalid-record",
        )


def parse_run(data: bytes, path: str) -> RunRecord:
    try:
        run = RunRecord.model_validate_json(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"{path}: invalid run record: {first_error(exc)}", code="invalid-record") from exc
    if layout.run_path(run.goal_id, run.run_id, run.generated_at) != path:
        raise ValidationError(f"{path}: file name and run record disagree", code="invalid-record")
    return run

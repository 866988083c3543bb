"""What a domain operation returns, and the helpers every operation builds it with."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, TypeVar

import pydantic

from loopx_git.errors import ValidationError
from loopx_git.model.event import EventBase, FieldChange
from loopx_git.model.ids import new_id
from loopx_git.model.record import first_error
from loopx_git.model.run import RunRecord
from loopx_git.model.state import GoalState

M = TypeVar("M", bound=pydantic.BaseModel)


@dataclass
class Write:
    """The events (and run records) of one transaction, and what the caller gets back."""

    verb: str
    summary: str
    goal_id: str
    agent_id: Optional[str] = None
    events: list[EventBase] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    result: Any = None

    @property
    def is_empty(self) -> bool:
        return not self.events and not self.runs


class EventMaker:
    """Stamps events of one write with ids, time and consecutive Lamport clocks."""

    def __init__(self, goal_state: GoalState, now: str):
        self._lamport = goal_state.lamport
        self._now = now

    def make(self, cls: type[M], **fields: Any) -> M:
        self._lamport += 1
        data = {
            "event_id": new_id("evt"),
            "recorded_at": self._now,
            "lamport": self._lamport,
            **{k: v for k, v in fields.items() if v is not None},
        }
        return build(cls, data, what="event")


def build(cls: type[M], data: dict, *, what: str) -> M:
    """Validate ``data`` into ``cls``; a refusal names the field, the problem and the rule."""
    try:
        return cls.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(f"{what} field {first_error(exc, what)}", code="invalid-field") from exc


def changes(before: Optional[pydantic.BaseModel], after: pydantic.BaseModel, *, skip: tuple[str, ...] = ()) -> list[FieldChange]:
    """The field changes that turn ``before`` into ``after``. For a new entity (``before`` None)
    empty fields are left out: folding starts from the model's defaults, and every event is
    parsed again on a cold read."""
    old = before.model_dump(mode="json") if before is not None else {}
    new = after.model_dump(mode="json")
    return [
        FieldChange(field=name, before=old.get(name), after=value)
        for name, value in new.items()
        if name not in skip and (old.get(name) != value if before is not None else value not in (None, []))
    ]

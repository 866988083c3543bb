"""What a domain operation returns, and the helpers every operation builds it with."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

import pydantic

from loopx_git.errors import ValidationError
from loopx_git.model.canonical import undecodable_field
from loopx_git.model.event_head import EventBase, FieldChange
from loopx_git.model.ids import new_id
from loopx_git.model.record import WRITE_CONTEXT, first_error
from loopx_git.model.run import RunRecord
from loopx_git.model.state import GoalState, require_agent

M = TypeVar("M", bound=pydantic.BaseModel)


@dataclass
class Write:
    """The events (and run records) of one transaction, and what the caller gets back."""

    verb: str
    summary: str
    goal_id: str
    agent_id: str | None = None
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
    where = undecodable_field(data)
    if where is not None:
        raise ValidationError(
            f"{what} field '{where or what}': holds bytes that are not UTF-8 text (an argument in "
            "another encoding?); rule: text on the state branch is UTF-8",
            code="invalid-field",
        )
    try:
        return cls.model_validate(data, context=WRITE_CONTEXT)  # today's rules, also where reads stay lenient
    except pydantic.ValidationError as exc:
        raise ValidationError(f"{what} field {first_error(exc, what)}", code="invalid-field") from exc


def changes(
    before: pydantic.BaseModel | None, after: pydantic.BaseModel, *, skip: tuple[str, ...] = ()
) -> list[FieldChange]:
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


def given(**values: str | None) -> None:
    """Refuse an option given as an empty string: leaving it out is how to say "none", and an empty
    id must never silently become a generated one or be dropped."""
    for name, value in values.items():
        if value is not None and value == "":
            raise ValidationError(
                f"field '{name}': is empty; rule: give a value, or leave the option out", code="invalid-field"
            )


def check_actor(gs: GoalState, actor: str | None, *, field: str = "agent_id") -> str | None:
    """The acting agent, when one is named, must be registered on the goal (a person acts with none)."""
    if actor is not None:
        given(**{field: actor})
        require_agent(gs, actor, field=field)
    return actor


def one_of(field: str, value: str, choices: type[Enum]) -> None:
    """Refuse a value outside a fixed set (the API takes plain strings; the CLI's choices stop it first)."""
    allowed = [c.value for c in choices]
    if value not in allowed:
        raise ValidationError(f"field '{field}': {value!r} is not one of {', '.join(allowed)}", code="invalid-field")


def many(**values: Any) -> None:
    """Refuse one string where a list of values is expected (it would become a list of its characters)."""
    for name, value in values.items():
        if isinstance(value, (str, bytes)):
            raise ValidationError(
                f"field '{name}': one string where a list belongs; rule: give a list of values", code="invalid-field"
            )

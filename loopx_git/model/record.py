"""The base every record model shares: strict (unknown fields rejected) and immutable."""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any, TypeVar, Union

import pydantic
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, StringConstraints

from loopx_git.model.ids import PATTERN_RULES

JsonScalar = Union[str, int, float, bool, None]  # noqa: UP007 - a runtime alias; `|` cannot join None first
JsonValue = Annotated[
    None | StrictStr | StrictBool | StrictInt | StrictFloat | list[StrictStr],  # noqa: RUF036 - None is tried first
    Field(union_mode="left_to_right"),
]
"""What a field change may carry: a scalar or a list of strings (ids, evidence refs)."""

Token = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
"""A lower-case slug used for open vocabularies (classification, action kind, label)."""

Line = Annotated[str, StringConstraints(min_length=1, max_length=1000)]
"""One human-readable line: summaries, reasons, evidence refs."""

Row = tuple[Any, ...]
"""A record's field values in declaration order (``Record.to_row``): each model has its own field types."""


WRITE_CONTEXT = {"loopx_write": True}
"""The validation context of a record being written (``domain.write.build``). Some rules were
tightened after records were written under the looser ones: a write meets the new rule, a read
still accepts what an older version wrote, so no branch becomes unreadable."""


def writing(info: Any) -> bool:
    context = getattr(info, "context", None)
    return bool(context and context.get("loopx_write"))


def exact(pattern: re.Pattern[str], value: str, *, lenient: bool = False) -> re.Match[str] | None:
    """``pattern`` matched against all of ``value``. In Python's ``re``, ``$`` also matches before a
    final newline, so older versions let one through (``'owner/repo\\n'``); ``lenient`` (reading
    records they wrote) still takes it, a write never does."""
    found = pattern.fullmatch(value)
    if found is None and lenient and value.endswith("\n"):
        found = pattern.fullmatch(value[:-1])
    return found


def control_free(value: str) -> bool:
    """No control characters (newline, tab, NUL, DEL...): refs and paths are one plain line."""
    return not any(ord(c) < 32 or ord(c) == 127 for c in value)


class Record(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, use_enum_values=True, validate_default=True, defer_build=True
    )

    def to_row(self) -> Row:
        """The field values in declaration order: a compact, marshal-able form for caches."""
        values = self.__dict__
        return tuple(values[name] for name in _field_names(type(self)))

    @classmethod
    def from_row(cls: type[_R], row: Row) -> _R:
        """Rebuild a record from ``to_row`` without validating it again. Only for rows this
        process or the cache made from valid records; sets what pydantic's own unpickling sets."""
        names = _field_names(cls)
        record = cls.__new__(cls)
        set_attr = object.__setattr__
        set_attr(record, "__dict__", dict(zip(names, row)))
        # one set shared by every rebuilt record: frozen records never change it, and pydantic
        # copies it before model_copy adds to it
        set_attr(record, "__pydantic_fields_set__", _all_fields_set(cls))
        set_attr(record, "__pydantic_extra__", None)
        set_attr(record, "__pydantic_private__", None)
        return record


_R = TypeVar("_R", bound=Record)


@cache
def _field_names(cls: type[Record]) -> tuple[str, ...]:
    return tuple(cls.model_fields)


@cache
def _all_fields_set(cls: type[Record]) -> set[str]:
    return set(cls.model_fields)


def first_error(exc: pydantic.ValidationError, default: str = "record") -> str:
    """pydantic's first error as "'field.path': problem" (validator wrappers left out of the path)."""
    first = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in first["loc"] if not str(p).startswith("function-")) or default
    rule = PATTERN_RULES.get((first.get("ctx") or {}).get("pattern", ""))
    message = f"{first['input']!r} is not {rule}" if rule else first["msg"].removeprefix("Value error, ")
    return f"'{where}': {message}"


STORED: dict[str, Any] = {"loopx_stored": True}
"""The serialization context of the form written to the branch (a record file, a derived document):
a record's serializer leaves out there what is only ever shown (derived fields such as
``delivery_flags``)."""


def stored(info: Any) -> bool:
    """Whether a serializer's ``info`` is of the stored form (``STORED`` given as its context)."""
    context = getattr(info, "context", None)
    return isinstance(context, dict) and bool(context.get("loopx_stored"))


def without_none(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """``data`` with the named keys left out where they are None: a field added to an output later
    leaves the output as it was until it has something to say."""
    for name in names:
        if data.get(name, "") is None:
            data.pop(name)
    return data

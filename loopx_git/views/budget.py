"""The size a projection may print: every list it shows is cut to a count first, and then, when long
texts (a todo's text and an event's summary may each be 1000 characters) still make the whole too
large, rows are left out until it fits — always counted in the list's ``<list>_omitted`` field,
never dropped silently.

A projection is what an agent reads every turn: at 10k todos and 100k events it stays under 16 KiB
of JSON as ``--format json`` prints it (indented, every non-ASCII character escaped: its longest
form), whatever the texts."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from loopx_git.model.record import Record

BUDGET = 16 * 1024 - 64
"""Bytes of printed JSON, with a margin for the line end."""

R = TypeVar("R", bound=Record)


def printed_size(data: Any) -> int:
    return len(json.dumps(data, indent=2, ensure_ascii=True))


def _cuttable(data: Any, out: list[tuple[dict[str, Any], str]]) -> list[tuple[dict[str, Any], str]]:
    """Every non-empty (mapping, key) list with a ``<key>_omitted`` count beside it whose rows hold no
    such list themselves: the innermost first, so an index across goals shortens each goal's todos
    before it leaves out a goal."""
    if isinstance(data, dict):
        for key, value in data.items():
            counted = isinstance(value, list) and isinstance(data.get(f"{key}_omitted"), int)
            if counted and value and not _cuttable(value, []):
                out.append((data, key))
            _cuttable(value, out)
    elif isinstance(data, list):
        for item in data:
            _cuttable(item, out)
    return out


def fit(record: R, budget: int = BUDGET) -> R:
    """``record`` as it is when it prints within ``budget``; else with the last rows of its longest
    counted lists left out (the lists are best or newest first) until it does. A few rounds: each
    cuts the longest list by what the overshoot needs, at most half of it."""
    data = record.model_dump(mode="json")
    size = printed_size(data)
    if size <= budget:
        return record
    while size > budget:
        lists = _cuttable(data, [])
        if not lists:
            break
        sizes = [(printed_size(found[0][found[1]]), found) for found in lists]
        largest, (container, key) = max(sizes, key=lambda sized: sized[0])
        rows = container[key]
        per_row = max(1, largest // len(rows))
        # enough rows for the overshoot, at most half the list a round: long lists share the cut
        cut = min(-(-(size - budget) // per_row), max(1, len(rows) // 2))
        del rows[len(rows) - cut :]
        container[f"{key}_omitted"] += cut
        size = printed_size(data)
    return type(record).model_validate(data)

"""A mapping of records that is cheap to load from the fold cache.

Unpickling thousands of pydantic models costs a Python call per model; a cached fold with 10k
todos spent most of a ``status`` in it. ``RecordTable`` pickles its records as plain field
tuples, each marshalled on its own, and decodes and builds a record only when it is read: loading
a cached fold costs little per record, and a view pays only for the records it looks at.
"""
from __future__ import annotations

import marshal
from collections.abc import Iterator, MutableMapping
from typing import Generic, Optional, TypeVar

from loopx_git.model.record import Record

R = TypeVar("R", bound=Record)


class RecordTable(MutableMapping[str, R], Generic[R]):
    def __init__(self, model: type[R]):
        self._model = model
        self._records: dict[str, R] = {}
        self._rows: dict[str, bytes] = {}  # marshalled rows; never a key that _records holds
        self._blob: Optional[bytes] = None

    def _loaded_rows(self) -> dict[str, bytes]:
        if self._blob is not None:
            self._rows, self._blob = marshal.loads(self._blob), None
        return self._rows

    def __getitem__(self, key: str) -> R:
        found = self._records.get(key)
        if found is None:
            row = self._loaded_rows().pop(key)  # KeyError when absent, as a dict would
            found = self._records[key] = self._model.from_row(marshal.loads(row))
        return found

    def get(self, key: str, default: Optional[R] = None) -> Optional[R]:
        # without the KeyError round trip of Mapping.get: new ids are looked up on every add
        return self[key] if key in self else default

    def __setitem__(self, key: str, value: R) -> None:
        self._loaded_rows().pop(key, None)
        self._records[key] = value

    def __delitem__(self, key: str) -> None:
        if self._records.pop(key, None) is None:
            del self._loaded_rows()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._records or key in self._loaded_rows()

    def __iter__(self) -> Iterator[str]:
        yield from list(self._records)
        yield from list(self._loaded_rows())

    def __len__(self) -> int:
        return len(self._records) + len(self._loaded_rows())

    def copy(self) -> "RecordTable[R]":
        twin = RecordTable(self._model)
        twin._records = dict(self._records)
        twin._rows = dict(self._loaded_rows())
        return twin

    def __getstate__(self) -> tuple:
        rows = dict(self._loaded_rows())
        rows.update((key, marshal.dumps(record.to_row())) for key, record in self._records.items())
        return (self._model, marshal.dumps(rows))

    def __setstate__(self, state: tuple) -> None:
        self._model, self._blob = state
        self._records, self._rows = {}, {}

"""A mapping of records that is cheap to load from the fold cache.

Unpickling thousands of pydantic models costs a Python call per model; a cached fold with 10k
todos spent most of a ``status`` in it. ``RecordTable`` pickles its records as plain field
tuples, each marshalled on its own, and decodes and builds a record only when it is read: loading
a cached fold costs little per record, and a view pays only for the records it looks at.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Iterator, MutableMapping
from typing import Generic, TypeVar, overload

from loopx_git.model.record import Record

R = TypeVar("R", bound=Record)
_T = TypeVar("_T")


class RecordTable(MutableMapping[str, R], Generic[R]):
    def __init__(self, model: type[R]):
        self._model = model
        self._records: dict[str, R] = {}
        self._rows: dict[str, bytes] = {}  # marshalled rows; never a key that _records holds
        self._blob: bytes | None = None

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

    @overload
    def get(self, key: str) -> R | None: ...
    @overload
    def get(self, key: str, default: R | _T) -> R | _T: ...
    def get(self, key: str, default: object = None) -> object:
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

    def copy(self) -> RecordTable[R]:
        twin = RecordTable(self._model)
        twin._records = dict(self._records)
        twin._rows = dict(self._loaded_rows())
        return twin

    def __getstate__(self) -> tuple[type[R], bytes]:
        rows = dict(self._loaded_rows())
        rows.update((key, marshal.dumps(record.to_row())) for key, record in self._records.items())
        return (self._model, marshal.dumps(rows))

    def __setstate__(self, state: tuple[type[R], bytes]) -> None:
        self._model, self._blob = state
        self._records, self._rows = {}, {}


class _Layer:
    """An immutable, shareable slice of an IdSet: a frozenset, or the joined text it is split from
    when first asked (so loading a cached fold never splits what no one looks at)."""

    __slots__ = ("_blob", "_ids")

    def __init__(self, ids: frozenset[str] | None = None, blob: str | None = None):
        self._ids, self._blob = ids, blob

    @property
    def ids(self) -> frozenset[str]:
        if self._ids is None:
            self._ids = frozenset(self._blob.split("\n")) if self._blob else frozenset()
            self._blob = None
        return self._ids

    def text(self) -> str:
        if self._ids is None:
            return self._blob or ""  # not split yet: the text as it came (a layer made of nothing has none)
        return "\n".join(self._ids)


class IdSet:
    """A set of ids (events, runs) that is cheap to copy and to load from the fold cache. A copy
    shares the immutable layers and adds to a set of its own, so a write's copy of the state does
    not copy every id of the goal; it pickles as one newline-joined string (ids never hold a
    newline) that is split only when first asked."""

    __slots__ = ("_layers", "_own")
    MAX_LAYERS = 8

    def __init__(self, ids: Iterable[str] = ()):
        self._layers: tuple[_Layer, ...] = ()
        self._own: set[str] = set(ids)

    def add(self, item: str) -> None:
        self._own.add(item)  # no lookup: a write after loading the cache never splits what it does not read

    def __contains__(self, item: object) -> bool:
        return item in self._own or any(item in layer.ids for layer in self._layers)

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for part in [layer.ids for layer in self._layers] + [self._own]:
            yield from (item for item in part if item not in seen)
            seen.update(part)

    def __len__(self) -> int:
        if not self._layers:
            return len(self._own)
        return len(self._own.union(*(layer.ids for layer in self._layers)))  # layers may overlap: count once

    def copy(self) -> IdSet:
        if self._own:  # freeze what this one added: from now on both share it
            self._layers, self._own = self._layers + (_Layer(frozenset(self._own)),), set()
        if len(self._layers) > self.MAX_LAYERS:
            # the newer layers become one; the first (what was loaded or folded before the writes: by far
            # the largest) stays as it is, so a merge costs what was added since, not every id of the goal
            base, *newer = self._layers
            self._layers = (base, _Layer(frozenset[str]().union(*(layer.ids for layer in newer))))
        twin = IdSet()
        twin._layers = self._layers
        return twin

    def __getstate__(self) -> tuple[str]:
        # a repeated id (added twice) is kept twice in the text: harmless, and no layer is split to save it
        parts = [layer.text() for layer in self._layers] + ["\n".join(self._own)]
        return ("\n".join(part for part in parts if part),)  # a tuple: an empty (false) state skips __setstate__

    def __setstate__(self, state: tuple[str]) -> None:
        self._layers, self._own = (_Layer(blob=state[0]),), set()

"""Containers of the folded state that are cheap to load from the fold cache and cheap to copy.

Unpickling thousands of pydantic models costs a Python call per model; a cached fold with 10k
todos spent most of a ``status`` in it. ``RecordTable`` pickles its records as plain field
tuples, each marshalled on its own, and decodes and builds a record only when it is read: loading
a cached fold costs little per record, and a view pays only for the records it looks at.

Every write copies the state of its goal (the cached one may be shared with callers). Copies of a
``CowDict`` (and of ``RecordTable``, ``CowSet`` and ``IdSet``) share what they held and keep only
their own changes, so a write costs what it changes, not what the goal holds: at 100k todos a
plain copy of the todo table alone was 5 ms of each write, and freeing the old copy 3.5 ms more.
"""

from __future__ import annotations

import marshal
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, MutableSet
from typing import Any, TypeVar, cast, overload

from loopx_git.model.record import Record

R = TypeVar("R", bound=Record)
_V = TypeVar("_V")
_T = TypeVar("_T")
_C = TypeVar("_C", bound="CowDict[Any]")


class _Shared:
    """The dict copies of one ``CowDict`` share. Never changed once shared, but for a value replaced
    by an equal one (a row decoded into its record); made from a marshalled blob when first asked."""

    __slots__ = ("_blob", "_items")

    def __init__(self, items: dict[str, Any] | None = None, blob: bytes | None = None):
        self._items, self._blob = items, blob

    @property
    def items(self) -> dict[str, Any]:
        if self._items is None:
            self._items = marshal.loads(self._blob) if self._blob is not None else {}
            self._blob = None
        return self._items


class CowDict(MutableMapping[str, _V]):
    """A dict that is cheap to copy: copies share one dict they never change, and each keeps its
    own changes to it (values set, keys deleted). A write copies the state of a goal with 100k
    todos; copying what the writes since the last merge changed costs that, not 100k entries. The
    changes are merged into a new shared dict at a copy once they pass ``MERGE_AT``: a full copy
    every few hundred writes, not every write. Pickles as a plain dict of what it holds."""

    __slots__ = ("_gone", "_over", "_own", "_shared")
    MERGE_AT = 256

    def __init__(self, items: Mapping[str, _V] | Iterable[tuple[str, _V]] = ()):
        self._shared = _Shared({})
        self._own: dict[str, _V] = dict(items)
        self._gone: set[str] = set()  # keys of the shared dict deleted here (never one _own holds)
        self._over = 0  # keys of _own the shared dict holds too (what len() must not count twice)

    def _from_shared(self, key: str) -> _V:
        return cast(_V, self._shared.items[key])

    def __getitem__(self, key: str) -> _V:
        own = self._own
        if key in own:
            return own[key]
        if key in self._gone:
            raise KeyError(key)
        return self._from_shared(key)  # KeyError when absent, as a dict would

    @overload
    def get(self, key: str) -> _V | None: ...
    @overload
    def get(self, key: str, default: _V | _T) -> _V | _T: ...
    def get(self, key: str, default: object = None) -> object:
        # without the KeyError round trip of Mapping.get: new ids are looked up on every add
        return self[key] if key in self else default

    def __setitem__(self, key: str, value: _V) -> None:
        own = self._own
        if key not in own:
            if key in self._gone:
                self._gone.discard(key)
                self._over += 1
            elif key in self._shared.items:
                self._over += 1
        own[key] = value

    def __delitem__(self, key: str) -> None:
        shared = self._shared.items
        if key in self._own:
            del self._own[key]
            if key in shared:
                self._over -= 1
                self._gone.add(key)
        elif key in shared and key not in self._gone:
            self._gone.add(key)
        else:
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in self._own or (key not in self._gone and key in self._shared.items)

    def __iter__(self) -> Iterator[str]:
        own, gone = self._own, self._gone
        yield from list(own)
        yield from [key for key in self._shared.items if key not in own and key not in gone]

    def __len__(self) -> int:
        return len(self._own) + len(self._shared.items) - len(self._gone) - self._over

    def copy(self: _C) -> _C:
        if len(self._own) + len(self._gone) > self.MERGE_AT:
            self._merge()
        twin = type(self).__new__(type(self))
        twin._shared, twin._own, twin._gone, twin._over = self._shared, dict(self._own), set(self._gone), self._over
        return twin

    def _merge(self) -> None:
        """A new shared dict holding what this one holds; the old one stays as the other copies see it."""
        shared = self._shared.items
        if shared:
            merged = dict(shared)
            for key in self._gone:
                del merged[key]
            merged.update(self._own)
        else:  # nothing shared yet (a fold from scratch): its own dict becomes the shared one
            merged = self._own
        self._shared, self._own, self._gone, self._over = _Shared(merged), {}, set(), 0

    def _held(self) -> Iterator[tuple[str, object]]:
        """(key, value as stored) of every key, without building what the shared dict holds as rows."""
        own, gone = self._own, self._gone
        yield from own.items()
        yield from ((k, v) for k, v in self._shared.items.items() if k not in own and k not in gone)

    def __getstate__(self) -> tuple[dict[str, Any]]:
        return (dict(self._held()),)  # a tuple: an empty (false) state skips __setstate__

    def __setstate__(self, state: tuple[dict[str, Any]]) -> None:
        self._shared, self._own, self._gone, self._over = _Shared(state[0]), {}, set(), 0


class RecordTable(CowDict[R]):
    """A ``CowDict`` of records that pickles them as rows and builds a record only when it is read."""

    __slots__ = ("_model",)

    def __init__(self, model: type[R]):
        super().__init__()
        self._model = model

    def _from_shared(self, key: str) -> R:
        items = self._shared.items
        found = items[key]
        if isinstance(found, bytes):  # every copy sharing the row gets the record built once
            found = items[key] = self._model.from_row(marshal.loads(found))
        return cast(R, found)

    def copy(self) -> RecordTable[R]:
        twin = super().copy()
        twin._model = self._model
        return twin

    def __getstate__(self) -> tuple[type[R], bytes]:  # type: ignore[override]
        rows = {k: v if isinstance(v, bytes) else marshal.dumps(v.to_row()) for k, v in self._held()}  # type: ignore[attr-defined]
        return (self._model, marshal.dumps(rows))

    def __setstate__(self, state: tuple[type[R], bytes]) -> None:  # type: ignore[override]
        self._model = state[0]
        self._shared, self._own, self._gone, self._over = _Shared(blob=state[1]), {}, set(), 0


class CowSet(MutableSet[str]):
    """A set of ids that is cheap to copy, as ``CowDict`` is (its keys)."""

    __slots__ = ("_keys",)

    def __init__(self, items: Iterable[str] = ()):
        self._keys: CowDict[None] = CowDict((item, None) for item in items)

    def add(self, item: str) -> None:
        self._keys[item] = None

    def discard(self, item: str) -> None:
        if item in self._keys:
            del self._keys[item]

    def __contains__(self, item: object) -> bool:
        return item in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def copy(self) -> CowSet:
        twin = CowSet()
        twin._keys = self._keys.copy()
        return twin

    def __getstate__(self) -> tuple[list[str]]:
        return (list(self._keys),)

    def __setstate__(self, state: tuple[list[str]]) -> None:
        self._keys = CowDict()
        self._keys.__setstate__((dict.fromkeys(state[0]),))


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

"""RecordTable: a dict of records that pickles as rows and builds records on demand."""

from __future__ import annotations

import pickle

import pytest

from loopx_git.model.table import RecordTable
from loopx_git.model.todo import TodoItem

NOW = "2026-03-01T10:00:00Z"


def todo(i: int, **kw) -> TodoItem:
    return TodoItem(todo_id=f"t{i}", text=f"todo {i}", updated_at=NOW, evidence=[f"e{i}"], **kw)


def test_row_round_trip_is_the_same_record():
    original = todo(1, status="blocked", reason="why", priority="P0")
    rebuilt = TodoItem.from_row(original.to_row())
    assert rebuilt == original and rebuilt.model_dump_json() == original.model_dump_json()
    assert rebuilt.model_copy(update={"status": "open"}).status == "open"


def test_table_behaves_like_a_dict_across_pickling():
    table = RecordTable(TodoItem)
    for i in range(5):
        table[f"t{i}"] = todo(i)
    loaded = pickle.loads(pickle.dumps(table))
    assert len(loaded) == 5 and "t3" in loaded and "t9" not in loaded
    assert loaded["t3"] == todo(3) and sorted(loaded) == [f"t{i}" for i in range(5)]
    loaded["t3"] = todo(3, status="done")
    del loaded["t4"]
    assert loaded["t3"].status == "done" and len(loaded) == 4
    with pytest.raises(KeyError):
        loaded["t4"]
    assert dict(pickle.loads(pickle.dumps(loaded))) == dict(loaded)


def test_copy_is_independent():
    table = RecordTable(TodoItem)
    table["t1"] = todo(1)
    twin = pickle.loads(pickle.dumps(table)).copy()
    twin["t2"] = todo(2)
    assert "t2" not in table and len(twin) == 2


def test_rebuilt_records_do_not_share_changes_through_model_copy():
    first, second = TodoItem.from_row(todo(1).to_row()), TodoItem.from_row(todo(2).to_row())
    changed = first.model_copy(update={"status": "done"})
    assert changed.status == "done" and first.status == "open" and second.status == "open"
    assert second.model_fields_set == set(TodoItem.model_fields)


def test_id_set_pickles_as_one_string_and_loads_lazily():
    from loopx_git.model.table import IdSet

    ids = IdSet(f"evt_{n}" for n in range(1000))
    ids.add("evt_last")
    copy = pickle.loads(pickle.dumps(ids, protocol=pickle.HIGHEST_PROTOCOL))
    assert copy._layers[0]._ids is None  # nothing split until the first question
    assert "evt_7" in copy and "evt_last" in copy and "evt_nope" not in copy and len(copy) == 1001
    twin = copy.copy()
    twin.add("evt_new")
    twin.add("evt_7")  # already there: counted once
    assert "evt_new" not in copy and "evt_new" in twin and len(twin) == 1002
    copy.add("evt_other")
    assert "evt_other" not in twin
    for n in range(20):  # copies of copies: layers stay few, nothing is lost
        twin = twin.copy()
        twin.add(f"more_{n}")
    assert len(twin._layers) <= IdSet.MAX_LAYERS + 1 and len(twin) == 1022 and set(twin) >= {"evt_1", "more_19"}
    again = pickle.loads(pickle.dumps(twin))
    assert sorted(again) == sorted(twin)
    empty = pickle.loads(pickle.dumps(IdSet()))
    assert len(empty) == 0 and "x" not in empty


def test_merging_an_id_sets_layers_keeps_the_first_one_as_it_is():
    """A write's copy merges the layers it and the copies before it added, never the goal's whole
    history: the first layer (the ids loaded from the cache, a million of them on a long history)
    is shared as it is, and a merge costs what the writes since added."""
    from loopx_git.model.table import IdSet

    loaded = pickle.loads(pickle.dumps(IdSet(f"evt_{n}" for n in range(1000))))
    base = loaded._layers[0]
    ids = loaded
    for n in range(3 * IdSet.MAX_LAYERS):
        ids = ids.copy()
        ids.add(f"new_{n}")
    assert ids._layers[0] is base and base._ids is None  # never split: no question asked of it
    assert len(ids._layers) <= IdSet.MAX_LAYERS + 1
    assert len(ids) == 1000 + 3 * IdSet.MAX_LAYERS and "evt_999" in ids and "new_0" in ids


def _ops():
    from hypothesis import strategies as st

    key = st.sampled_from([f"k{n}" for n in range(12)])
    return st.lists(
        st.one_of(
            st.tuples(st.just("set"), key, st.integers(0, 9)),
            st.tuples(st.just("del"), key, st.just(0)),
            st.tuples(st.just("copy"), st.just(""), st.just(0)),
            st.tuples(st.just("pickle"), st.just(""), st.just(0)),
            st.tuples(st.just("switch"), st.just(""), st.just(0)),
        ),
        max_size=80,
    )


def test_copies_of_a_cow_dict_behave_as_independent_dicts():
    """Random sets, deletes, copies (each side changed after) and pickle round trips, against plain
    dicts; a low ``MERGE_AT`` makes the merges happen too."""
    from hypothesis import given, settings

    from loopx_git.model.table import CowDict

    @settings(max_examples=300, deadline=None)
    @given(_ops())
    def check(ops):
        tables = [(CowDict(), {})]
        current = 0
        for op, key, value in ops:
            cow, plain = tables[current]
            if op == "set":
                cow[key] = value
                plain[key] = value
            elif op == "del":
                assert (key in cow) == (key in plain)
                if key in plain:
                    del cow[key], plain[key]
                else:
                    with pytest.raises(KeyError):
                        del cow[key]
            elif op == "copy":
                tables.append((cow.copy(), dict(plain)))
            elif op == "pickle":
                tables[current] = (pickle.loads(pickle.dumps(cow)), plain)
            else:
                current = (current + 1) % len(tables)
            for c, p in tables:  # every copy still holds exactly what it should
                assert len(c) == len(p) and dict(c.items()) == p and sorted(c) == sorted(p)
                assert all(c.get(k) == p.get(k) for k in (f"k{n}" for n in range(12)))

    original = CowDict.MERGE_AT
    CowDict.MERGE_AT = 3
    try:
        check()
    finally:
        CowDict.MERGE_AT = original


def test_a_copy_shares_what_it_did_not_change_and_merges_rarely():
    """A write's copy costs what the writes since the last merge changed: the shared dict is the
    same object across copies until the changes pass ``MERGE_AT``, and a merge never changes what
    an earlier copy sees."""
    from loopx_git.model.table import CowDict

    table = RecordTable(TodoItem)
    for i in range(1000):
        table[f"t{i}"] = todo(i)
    table = pickle.loads(pickle.dumps(table))  # as loaded from the fold cache: rows, nothing built
    shared = table._shared
    first = table
    for n in range(CowDict.MERGE_AT + 1):
        table = table.copy()
        table[f"t{n}"] = todo(n, status="done")
    assert table._shared is shared  # nothing copied
    assert all(isinstance(row, bytes) for row in shared.items.values())  # no record built
    table = table.copy()
    assert table._shared is not shared and len(table._own) == 0  # merged once
    assert len(table) == len(first) == 1000 and table["t0"].status == "done" and first["t0"].status == "open"
    del table["t999"]
    assert "t999" in first and "t999" not in table and len(table) == 999


def test_a_cow_set_copy_is_independent_and_pickles():
    from loopx_git.model.table import CowSet

    live = CowSet(f"t{i}" for i in range(10))
    twin = pickle.loads(pickle.dumps(live)).copy()
    twin.discard("t1")
    twin.add("t99")
    live.add("t50")
    assert "t1" in live and "t99" not in live and "t50" not in twin
    assert sorted(twin) == sorted({f"t{i}" for i in range(10)} - {"t1"} | {"t99"}) and len(live) == 11
    assert pickle.loads(pickle.dumps(twin)) == twin and (live & {"t1", "nope"}) == {"t1"}

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

"""The fold dispatches through one table (``model/state.FOLD``), built from each family's ``FOLDS``:
every kind that changes a document is folded by exactly one family, and every other kind is a fact."""

from __future__ import annotations

from collections import Counter

from loopx_git.model import explore, gate, goal, handoff, ledger, reward, rollback, todo
from loopx_git.model.event import ENTITY_KINDS, EVENT_KINDS
from loopx_git.model.fold import FOLD

FAMILIES = (goal, todo, rollback, ledger, gate, handoff, reward, explore)


def test_each_kind_is_folded_by_one_family_at_most():
    counted = Counter(kind for family in FAMILIES for kind in family.FOLDS)
    assert [kind for kind, n in counted.items() if n > 1] == []
    assert set(counted) <= set(EVENT_KINDS), set(counted) - set(EVENT_KINDS)


def test_the_kinds_a_family_folds_are_the_kinds_that_change_a_document():
    assert set(FOLD) == ENTITY_KINDS


def test_each_kind_goes_to_its_familys_step():
    for family in FAMILIES:
        assert all(FOLD[kind] is family.apply for kind in family.FOLDS), family.__name__

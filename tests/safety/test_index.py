"""The one-pass keyword index: it finds exactly what searching for each keyword finds, rules run
only on the lines their keywords are on, and non-ASCII text keeps every position."""

from __future__ import annotations

import random

from loopx_git.safety.index import KeywordIndex, lowered, windows
from loopx_git.safety.rule import BLOCK, Rule
from loopx_git.safety.rules import RULES
from loopx_git.safety.scan import scan
from tests.safety.parts import cat, rand


def _naive(index: KeywordIndex, low: str) -> dict[int, list[int]]:
    found: dict[int, set[int]] = {}
    for i, rule in enumerate(index.rules):
        for k in rule.keywords:
            at = low.find(k)
            while at >= 0:
                found.setdefault(i, set()).add(at)
                at = low.find(k, at + 1)
    return {i: sorted(p) for i, p in found.items()}


def test_hits_equal_a_search_for_every_keyword_separately_overlaps_included():
    index = KeywordIndex(RULES)
    rng = random.Random(4)
    pieces = [*index.keywords, " ", "\n", "x", "ab", "é", "日本", "İ"]
    for _ in range(30):
        text = "".join(rng.choice(pieces) for _ in range(400))
        low = lowered(text)
        assert index.hits(low) == _naive(index, low)
    # a keyword that starts inside a longer one is found too, and a prefix of a longer one
    rules = (
        Rule("a", BLOCK, "", ("api-key",), "x"),
        Rule("b", BLOCK, "", ("key-id",), "x"),
        Rule("c", BLOCK, "", ("api", "id"), "x"),
    )
    assert KeywordIndex(rules).hits("my api-key-id") == {0: [3], 1: [7], 2: [3, 11]}


def test_lowered_keeps_every_position_even_for_the_one_character_that_grows():
    text = "İSTANBUL token=see-the-vault café"
    low = lowered(text)
    assert len(low) == len(text) and low.index("token") == text.index("token")
    assert "İ".lower() != "i" and len("İ".lower()) == 2  # why lowered() exists


def test_a_rule_runs_on_its_keywords_lines_and_span_only():
    text = "one\ntwo key here\nthree\nfour key\nfive"
    assert list(windows(text, [8, 28], 0)) == [(4, 16), (23, 31)]
    assert list(windows(text, [8], 7)) == [(4, 23)]  # the span reaches into the next line
    assert list(windows(text, [8, 10], 0)) == [(4, 16)]  # one window per line


def test_rules_keyed_on_common_words_still_work_in_non_ascii_text():
    password = cat("Zq8", rand(random.Random(2), 14), "!x")
    text = f"# Grüße — 日本語 — İstanbul\npassword = '{password}'\n"
    assert [f.rule for f in scan(text)] == ["generic-secret"]
    value = text[scan(text)[0].start : scan(text)[0].end]
    assert value == password


def test_a_look_alike_match_hides_nothing_after_it():
    """A match a rule's check refuses (a word that merely holds a keyword) must not move the search
    past the real value later on the line."""
    password = cat("Tr0", "ub4dor&3x")
    key = rand(random.Random(8), 36)
    for text in (
        f'{{"user": "spwilson", "password": "{password}"}}',
        f'{{"kind": "token", "api_key": "{key}"}}',
    ):
        assert [f.rule for f in scan(text) if f.blocks] == ["generic-secret"], text

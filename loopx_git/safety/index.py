"""Where each rule may match in a text, found in one pass however many rules there are.

Every keyword of every rule goes into one Aho-Corasick automaton (``pyahocorasick``), which reads
the text once and reports every place any keyword starts, overlapping ones too, at a cost per
character that does not grow with the number of keywords (the standard library's ``re``, given the
keywords as one alternation, paid about 40 ns a character; the automaton about a third of that). A
rule's regex then runs only over the lines holding its keywords (plus its ``span`` for multi-line
formats), or, for an anchored rule, only at the keyword positions — so a large file costs about
what the same bytes split into many small files cost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from loopx_git.safety.rule import Rule

if TYPE_CHECKING:
    import re

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def lowered(text: str) -> str:
    """``text`` in lower case, position for position. ``str.lower`` is that except for ``İ``
    (U+0130), the one character it turns into two; a keyword holds no ``i̇``, so ``İ`` may as well
    become a plain ``i`` first. (Should a Unicode version add another such character, only ASCII
    is lowered: slower, and all that keywords need.)"""
    if "\u0130" in text:
        text = text.replace("\u0130", "i")
    low = text.lower()
    return low if len(low) == len(text) else text.translate(_ASCII_LOWER)


class KeywordIndex:
    """The keywords of ``rules``, searched together."""

    def __init__(self, rules: Sequence[Rule]):
        self.rules = tuple(rules)
        owners: dict[str, set[int]] = {}
        for i, rule in enumerate(self.rules):
            for k in rule.keywords:
                owners.setdefault(k, set()).add(i)
        self.keywords = tuple(sorted(owners))
        self._owners = {k: tuple(sorted(rules)) for k, rules in owners.items()}
        self.unkeyed = tuple(i for i, rule in enumerate(self.rules) if not rule.keywords)
        """Rules with no keyword (a team's rule may have none): they run over the whole text."""

    @cached_property
    def _automaton(self):
        import ahocorasick  # a C extension: imported when a text is first searched

        automaton = ahocorasick.Automaton()
        for k, rules in self._owners.items():
            automaton.add_word(k, (len(k) - 1, rules))
        automaton.make_automaton()
        return automaton

    def hits(self, low: str) -> dict[int, list[int]]:
        """Rule index -> the sorted positions in ``low`` where one of its keywords starts."""
        if not self.keywords:
            return {}
        by_owners: dict[tuple[int, ...], list[int]] = {}
        for end, (back, rules) in self._automaton.iter(low):
            by_owners.setdefault(rules, []).append(end - back)
        found: dict[int, list[int]] = {}
        for rules, positions in by_owners.items():
            for i in rules:
                found.setdefault(i, []).extend(positions)
        # positions come by where keywords end: a rule with several keywords gets them out of order
        return {i: sorted(set(positions)) for i, positions in found.items()}


def windows(text: str, positions: Sequence[int], span: int) -> Iterator[tuple[int, int]]:
    """Merged ``[start, end)`` windows: each whole line holding a position, ``span`` further."""
    size = len(text)
    start = end = -1
    for p in positions:
        if p < end:
            continue
        line_start = text.rfind("\n", 0, p) + 1
        line_end = text.find("\n", p)
        line_end = size if line_end < 0 else line_end
        stop = min(size, line_end + span)
        if line_start <= end:  # touches the window before: grow it
            end = stop
            continue
        if end > start:
            yield start, end
        start, end = line_start, stop
    if end > start:
        yield start, end


def matches(
    rule: Rule, text: str, positions: Sequence[int] | None, keep: Callable[[re.Match], bool]
) -> Iterator[re.Match]:
    """``rule``'s matches in ``text`` that ``keep`` accepts, near ``positions`` (None: anywhere),
    in order, not overlapping. A match ``keep`` refuses (a look-alike) hides nothing: the search
    goes on from the character after its start, so a real value inside or after it is still found."""
    pattern = rule.pattern
    if positions is None or not rule.anchored:
        spans = [(0, len(text))] if positions is None else windows(text, positions, rule.span)
        for start, end in spans:
            at = start
            while at < end:
                m = pattern.search(text, at, end)
                if m is None:
                    break
                if keep(m):
                    yield m
                    at = max(m.end(), m.start() + 1)
                else:
                    at = m.start() + 1
        return
    done = tried = 0  # matched up to `done`; every start before `tried` was already tried
    hopeless = rule.hopeless
    for p in positions:
        if hopeless is not None and hopeless(text, p):
            tried = max(tried, p + 1)
            continue
        first = max(done, tried)
        starts = range(max(p - rule.back, first, 0), p + 1) if rule.start is None else rule.start(text, p)
        for q in starts:
            if q < first:
                continue
            m = pattern.match(text, q)
            if m is not None and keep(m):
                yield m
                done = m.end()
                break
        tried = max(tried, p + 1)

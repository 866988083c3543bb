"""Where each rule may match in a text, found in one pass however many rules there are.

Every keyword of every rule is compiled into one regex, shaped as a trie (``gh(?:o_|p_|…)``) so that
each position of the text costs about one test, not one test per keyword. A hit reports the
longest keyword starting there (and so its prefixes); a keyword that starts inside a hit is looked
for at its offset, so every position where some keyword starts is found, overlapping ones too. A rule's
regex then runs only over the lines holding its keywords (plus its ``span`` for multi-line
formats), or, for an anchored rule, only at the keyword positions — so a large file costs about
what the same bytes split into many small files cost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

from loopx_git.safety.rule import Rule

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


def trie_pattern(words: Sequence[str]) -> str:
    """One regex source matching any of ``words``, longest first, as a trie of alternations."""
    root: dict = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        branches = [re.escape(ch) + build(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        # a word ends here and longer ones go on: the rest is optional (greedy: the longest wins)
        return f"(?:{body})?" if "" in node else body

    return build(root)


_Inside = tuple[tuple[tuple[int, tuple[int, ...]], ...], tuple[tuple[int, str], ...]]
"""(offset, rules) of keywords inside a keyword, and (offset, keyword) of those running past it."""


class KeywordIndex:
    """The keywords of ``rules``, searched together."""

    def __init__(self, rules: Sequence[Rule]):
        self.rules = tuple(rules)
        self.keywords = tuple(sorted({k for rule in self.rules for k in rule.keywords}))
        owners: dict[str, list[int]] = {k: [] for k in self.keywords}
        for i, rule in enumerate(self.rules):
            for k in rule.keywords:
                owners[k].append(i)
        # a hit reports the longest keyword starting at a place; the shorter ones there are its prefixes
        self._rules_at: dict[str, tuple[int, ...]] = {
            k: tuple(sorted({i for n in range(1, len(k) + 1) for i in owners.get(k[:n], ())})) for k in self.keywords
        }
        self.unkeyed = tuple(i for i, rule in enumerate(self.rules) if not rule.keywords)
        """Rules with no keyword (a team's rule may have none): they run over the whole text."""

    @cached_property
    def _pattern(self) -> re.Pattern:
        return re.compile(trie_pattern(self.keywords))

    @cached_property
    def _inside(self) -> dict[str, _Inside]:
        """Keyword -> the other keywords that start inside it, which the search (going on after a
        hit) does not report itself: (offset, their rules) for those that end inside it — wherever
        it occurs they do too — and (offset, keyword) for those that run on past its end, which are
        looked for in the text."""
        by_prefix: dict[str, list[str]] = {}
        for k in self.keywords:
            for n in range(1, len(k) + 1):
                by_prefix.setdefault(k[:n], []).append(k)
        words = set(self.keywords)
        out: dict[str, _Inside] = {}
        for k in self.keywords:
            within: dict[int, set[int]] = {}
            beyond: set[tuple[int, str]] = set()
            for i in range(1, len(k)):
                rest = k[i:]
                beyond.update((i, other) for other in by_prefix.get(rest, ()) if other != rest)
                for n in range(1, len(rest) + 1):
                    if rest[:n] in words:
                        within.setdefault(i, set()).update(self._rules_at[rest[:n]])
            if within or beyond:
                out[k] = (tuple((i, tuple(sorted(r))) for i, r in sorted(within.items())), tuple(sorted(beyond)))
        return out

    def hits(self, low: str) -> dict[int, list[int]]:
        """Rule index -> the sorted positions in ``low`` where one of its keywords starts."""
        if not self.keywords:
            return {}
        by_word: dict[str, list[int]] = {}
        for m in self._pattern.finditer(low):
            by_word.setdefault(m.group(), []).append(m.start())
        found: dict[int, list[int]] = {}
        rules_at = self._rules_at
        inside = self._inside
        shifted = False
        for word, positions in by_word.items():
            for i in rules_at[word]:
                found.setdefault(i, []).extend(positions)
            if word not in inside:
                continue
            shifted = True
            within, beyond = inside[word]
            for offset, rules in within:
                for i in rules:
                    found.setdefault(i, []).extend(p + offset for p in positions)
            for offset, other in beyond:
                for p in positions:
                    if low.startswith(other, p + offset):
                        for i in rules_at[other]:
                            found.setdefault(i, []).append(p + offset)
        if len(by_word) > 1 or shifted:  # positions of several keywords interleave
            found = {i: sorted(set(positions)) for i, positions in found.items()}
        return found


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
    for p in positions:
        first = max(rule.start(text, p) if rule.start else p - rule.back, done, tried, 0)
        for q in range(first, p + 1):
            m = pattern.match(text, q)
            if m is not None and keep(m):
                yield m
                done = m.end()
                break
        tried = max(tried, p + 1)

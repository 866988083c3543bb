"""Where a token may stand (issue 32): a vendor prefix is found whatever comes before it, and no
rule is hidden by a word character (``x_``) in front, in any of the formats a secret is written in.

The tokens are the planted corpus's own (``tests/safety/corpus.py``): for every rule, each value a
shape makes whose finding starts with one of the rule's keywords. The rules come from the table
(``Rule.prefixed``), so a new rule is covered the day it is added, and a new rule with a vendor
prefix must say whether that prefix is an anchor (``prefixed``) or can end a word.
"""

from __future__ import annotations

import json
import random
import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_git.safety.rules import BY_ID, FAMILIES, RULES
from loopx_git.safety.scan import redact, scan
from tests.safety.corpus import SHAPES
from tests.safety.parts import cat


def _tokens() -> dict[str, list[str]]:
    """Rule id -> the planted tokens that start with one of its keywords (written whole)."""
    rng = random.Random(7)
    out: dict[str, list[str]] = {}
    for rule, shapes in SHAPES.items():
        for shape in shapes:
            value = shape(rng)
            for finding in scan(value):
                token = value[finding.start : finding.end]
                if finding.rule == rule and not finding.pieces and _prefix(rule, token):
                    out.setdefault(rule, []).append(token)
    return out


def _prefix(rule: str, token: str) -> str | None:
    found = [k for k in BY_ID[rule].keywords if token.lower().startswith(k)]
    return max(found, key=len) if found else None


TOKENS = _tokens()
PREFIXED = sorted(rule.id for rule in RULES if rule.prefixed)
PATHS = {rule.id for rule in FAMILIES["personal"]}
"""Paths and addresses, not tokens: ``/home/`` inside a longer path is no home folder."""
KEYED = sorted(set(TOKENS) - PATHS)
"""Every rule whose planted tokens start with one of its keywords, prefixed or not."""

WORD_TAILS = {
    "google-oauth-refresh-token": "`1//0` can follow the digits of a number or a path's slashes",
    "supabase-secret-key": "its prefix is the tail of a snake_case name, and its body may be one",  # publicsafe: allow[generic-secret]
    "flyio-token": "`fm2_`, `fo1_` occur inside base64 file names and CSRF tokens (test_catalog_cloud)",
    "openshift-token": "`sha256~` names a token resource after a percent-encoded space (look-alike)",
    "planetscale-token": "`pscale_` ends `upscale_`",
    "netlify-token": "`nfo_` ends `info_` (test_catalog_vendors)",
    "stackhawk-api-key": "`hawk.` ends `mohawk.`",
    "stripe-key": "`sk_live_` ends `task_live_` (test_catalog_cloud)",
    "gitlab-token": "`gl…-` after a name (`xglpat-`) is another word; `acme-glpat-` an instance prefix",
    "mailgun-api-key": "`key-` ends `cache-key-` (an md5 after it is a cache key)",
}
"""Rules whose keywords look like vendor prefixes (four characters or more, one of them a
separator) but can end an ordinary word: they keep a boundary against letters and digits."""


def _strong(keyword: str) -> bool:
    return len(keyword) >= 4 and not keyword.isalnum()


def test_the_rule_table_says_of_every_vendor_prefix_whether_it_is_an_anchor(surface):
    for rule in KEYED:
        strong = all(_strong(_prefix(rule, token) or "") for token in TOKENS[rule])
        if strong and not BY_ID[rule].prefixed:
            assert rule in WORD_TAILS, f"{rule}: a vendor prefix; mark the rule prefixed=True or say why not here"
    assert not set(WORD_TAILS) & set(PREFIXED)
    missing = [rule for rule in PREFIXED if rule not in TOKENS]
    assert not missing, f"prefixed rules with no planted token starting with a keyword: {missing}"
    surface(f"{len(PREFIXED)} prefixed rules, {len(KEYED) - len(PREFIXED)} more with a keyword prefix")


AFTER = ["", " ", "\t", "\n", '"', "'", "`", ",", ";", ")", "]", "}", ">", "&", "|", "#"]
"""What may end a token: a fixed-length token followed by one more of its own characters is
another value (the catalogue's tests keep that), so the character after is one no token holds."""

PUNCTUATION = ["_", " ", "\t", "\n", '"', "'", "`", "=", ":", ",", ";", "(", "[", "{", "<", ">", "@"]
"""What a token of any keyed rule may follow: anything but a letter or a digit (``x_`` included)."""


def _folded(value: str) -> str:
    return "note: >-\n  " + value + "\nn: 1\n"


def _folded_cut(value: str, cut: int) -> str:
    return "note: >-\n  " + value[:cut] + "\n  " + value[cut:] + "\nn: 1\n"


FORMATS = {
    "json": lambda v: json.dumps({"note": v, "n": 1}, indent=2) + "\n",
    "yaml plain": lambda v: "note: " + v + "\n",
    "yaml folded": _folded,
    "yaml literal": lambda v: "note: |\n  " + v + "\nn: 1\n",
    ".env": lambda v: "APP_MODE=production\nNOTE=" + v + "\n",
    "shell": lambda v: "export NOTE=" + shlex.quote(v) + "\n",
    "markdown": lambda v: "# Notes\n\nUse `" + v + "` for now.\n",
    "file name": lambda v: "notes/" + v + ".txt",
    "commit message": lambda v: "chore: rotate " + v + "\n\nThe old one was " + v + ".\n",
}


def _found(rule: str, text: str) -> bool:
    return any(f.rule == rule and f.blocks for f in scan(text, path=None, inline=False))


def _sample(fmt: str, before: str, token: str, after: str) -> str:
    if fmt == "file name":  # a path holds no separator or line break of its own
        before, after = before.replace("/", "_").replace("\n", "_"), after.replace("\n", "")
    return FORMATS[fmt](before + token + after)


@settings(max_examples=1500)
@given(
    rule=st.sampled_from(PREFIXED),
    pick=st.integers(min_value=0),
    before=st.characters(exclude_categories=("Cs",)),
    after=st.sampled_from(AFTER),
    fmt=st.sampled_from(sorted(FORMATS)),
)
def test_a_prefixed_token_is_found_after_any_character_in_any_format(rule, pick, before, after, fmt):
    token = TOKENS[rule][pick % len(TOKENS[rule])]
    text = _sample(fmt, before, token, after)
    assert _found(rule, text), (rule, before, after, fmt, text[:120])


@settings(max_examples=1500)
@given(
    rule=st.sampled_from(KEYED),
    pick=st.integers(min_value=0),
    before=st.sampled_from(PUNCTUATION),
    word=st.sampled_from(["", "x", "key", "9", "A"]),
    after=st.sampled_from(AFTER),
    fmt=st.sampled_from(sorted(FORMATS)),
)
def test_a_word_character_before_a_keyed_token_hides_nothing(rule, pick, before, word, after, fmt):
    """``x_ghp_…``, ``a_xoxb-…``, ``x_glpat-…``: a name glued on with ``_`` (or any sign) is no
    boundary the token hides behind."""
    token = TOKENS[rule][pick % len(TOKENS[rule])]
    text = _sample(fmt, word + before, token, after)
    assert _found(rule, text), (rule, word + before, after, fmt, text[:120])


@pytest.mark.parametrize("rule", PREFIXED)
def test_a_prefixed_token_cut_over_a_folded_scalar_is_found_and_redacted_whole(rule):
    """Issue 32, item 2: ``token: >-`` then the two halves on two lines (YAML reads them with a
    space between; whoever wrote them meant the token)."""
    for token in TOKENS[rule]:
        for cut in (len(token) // 2, len(_prefix(rule, token) or "") + 1, len(token) - 3):
            text = _folded_cut(token, cut)
            assert _found(rule, text), (rule, cut, text)
            out, _ = redact(text)
            assert token[:cut] not in out and token[cut:] not in out, out


def test_the_reported_shapes_are_found():
    """The issue's own cases, verbatim in shape."""
    body = "iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZoL8g"
    github = cat("gh", "p_", body)
    slack = cat("xo", "xb-", "4132338520-4132338520-", "aB3dE5fG7hJ9kL1mN3pQ5rS7")
    gitlab = cat("gl", "pat-", "22ZR88kQ3vT7mNbX1pLwC")
    for text in (f"x_{github}", f"9{github}", f"A{github}", f"a_{slack}", f"x_{gitlab}", f"key_{github}.txt"):
        assert [f for f in scan(text) if f.blocks], text
    assert [f for f in scan(_folded_cut(github, 20)) if f.blocks]


@pytest.mark.parametrize(
    "shape",
    [
        "token: >2-\n  {a}\n  {b}\n",  # an explicit indentation indicator
        "token: |+\n  {a}\n  {b}\n",
        "items:\n  - >-\n    {a}\n    {b}\n  - next\n",  # a sequence item
        "TOKEN={a}\u200b{b}\n",  # a zero-width space inside it
        "TOKEN={a}\u00ad{b}\n",  # a soft hyphen
        "TOKEN={a}\u2060{b}\n",  # a word joiner
    ],
    ids=["explicit-indent", "keep-chomping", "sequence-item", "zero-width-space", "soft-hyphen", "word-joiner"],
)
def test_a_token_cut_or_padded_with_what_prints_as_nothing_is_found_and_redacted(shape):
    token = TOKENS["github-token"][0]
    text = shape.format(a=token[:20], b=token[20:])
    assert _found("github-token", text), text
    out, _ = redact(text)
    assert token[:20] not in out and token[20:] not in out, out

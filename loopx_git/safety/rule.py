"""What a rule is: a keyword prefilter, a regex whose group ``s`` is the secret part (the only
part a finding fingerprints and ``redact`` replaces), a severity and an optional check on each
match; and the checks rules share (placeholders, entropy). The rules themselves are in
``safety/catalog/``, one module per family, put together in ``safety/rules.py``.

Standard library only: this module is on the hook path, where every millisecond of import is paid
on every commit. (Its records are ``NamedTuple``s, as are the scan's: ``dataclasses`` imports
``inspect`` and writes each class's methods with ``exec``, ~15 ms of CPU per hook process.)
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

BLOCK, WARN = "block", "warn"


class lazy_pattern:
    """``re.compile(source, flags)`` compiled on first use: a module of rules imports on the hook
    path of every commit, where compiling dozens of helper patterns up front is paid each time."""

    def __init__(self, source: Any, flags: int = 0):  # str or bytes, as re.compile takes
        self._args = (source, flags)

    def __getattr__(self, name: str) -> Any:
        pattern = re.compile(*self._args)
        for method in ("search", "match", "fullmatch", "finditer", "findall", "sub", "split"):
            setattr(self, method, getattr(pattern, method))  # later calls skip this lookup
        return getattr(pattern, name)


# CI runners whose home folder is public knowledge, not a person's (extendable in config).
DEFAULT_CI_HOME_USERS = frozenset(
    {"runner", "runneradmin", "circleci", "travis", "vsts", "gitlab-runner", "buildkite-agent"}
)

_PLACEHOLDER_WORDS = (
    "example",
    "changeme",
    "change_me",
    "placeholder",
    "redacted",
    "dummy",
    "your_",
    "your-",
    "<",
    "${",
    "{{",
    "xxxx",
    "****",
    "...",
)
_PLACEHOLDER_RE = lazy_pattern(r"\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|x+|\*+|\.+|0+", re.I)
_FORMAT_FIELD = lazy_pattern(r"\{[A-Za-z_][A-Za-z0-9_.]*(?:![rsa])?(?::[^{}]*)?\}")
"""A format-string field (``{token}``, ``{cfg.key!r}``): a template a value is filled into."""


def is_placeholder(value: str) -> bool:
    """``${VAR}``, ``$VAR``, ``<token>``, ``{{x}}``, ``{token}``, ``changeme``, ``xxxx…``,
    ``…EXAMPLE…``: a stand-in for a secret, not one. Also an earlier redaction, so redaction is a
    fixed point."""
    low = value.lower()
    return (
        any(word in low for word in _PLACEHOLDER_WORDS)
        or bool(_PLACEHOLDER_RE.fullmatch(value))
        or ("{" in value and _is_template(value))
    )


_SECRET_RUN = lazy_pattern(r"[A-Za-z0-9+/=_-]{4,}")


def _is_template(value: str) -> bool:
    """``{user}:{password}``, ``https://{token}@host``: format fields, and around them nothing
    secret-shaped. (``Xk29{aQ}7vLm3z`` holds braces but is not a template.)"""
    rest = _FORMAT_FIELD.sub("", value)
    return rest != value and _SECRET_RUN.search(rest) is None


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str, minimum: float = 3.0) -> bool:
    """A real credential has mixed characters; ``aaaaaaaa``, ``12345678`` and words do not."""
    if value.isdigit() or len(set(value)) < 5:
        return False
    return entropy(value) >= minimum


class Rule(NamedTuple):
    """One format. ``keywords`` are lower-case literals: a match must start on a line holding one of
    them (and may run on ``span`` characters past that line's end, for multi-line formats); usually
    the keyword is the format's fixed prefix. ``source`` is the regex, with the secret part as group
    ``s``. ``reference`` says where the format is documented (the vendor's page, or "—" for the
    formats that are defined by context rather than by a vendor)."""

    id: str
    severity: str
    description: str
    keywords: tuple[str, ...]
    source: str
    """The regex; compiled on first use, so a commit that triggers no rule compiles none."""
    fingerprint_only: bool = False
    """Only an exact fingerprint in ``.publicsafe-allow`` may allowlist it: no inline comment,
    no disabled rule, no severity override, no allowed path."""
    accept: Callable[[re.Match, Context], bool] | None = None
    """Extra check on a match; False means a look-alike, not a finding."""
    anchored: bool = False
    """Match only at the places a keyword occurs, instead of over its lines: for rules whose
    keywords are common words (``token``, ``@``). A match starts at most ``back`` characters
    before its keyword (or where ``start`` says)."""
    back: int = 0
    start: Callable[[str, int], tuple[int, ...]] | None = None
    """The only places, in order, where a match holding the keyword at ``p`` can start (``p``
    among them when it can start there): fewer tries than every place ``back`` allows."""
    span: int = 0
    """How far past the end of its keyword's line a match may run: 0 for a one-line format."""
    reference: str = ""
    """Where the format is documented: a vendor's page (a URL), or a short note."""
    hopeless: Callable[[str, int], bool] | None = None
    """For an anchored rule: a test, far cheaper than the regex, that no match holds the keyword at
    ``p`` (the name an assignment needs runs on with no end in sight): the place is skipped."""
    prefixed: bool = False
    """The secret starts with a vendor prefix that no word or encoding ends in (``ghp_``, ``xoxb-``,
    ``sk-ant-``): the prefix is the anchor, so the rule matches after any character at all
    (``x_ghp_…``, ``9ghp_…``), as gitleaks anchors such prefixes. A rule whose prefix can be the
    end of a word (``nfo_`` of ``info_``, ``sk_live_`` of ``task_live_``, ``gl…-`` after a name)
    is not prefixed: it matches after anything but a letter or a digit (``x_`` included)."""

    @property
    def pattern(self) -> re.Pattern:
        compiled = _COMPILED.get(self.source)
        if compiled is None:
            compiled = _COMPILED[self.source] = re.compile(self.source)
        return compiled


_COMPILED: dict[str, re.Pattern] = {}
"""Each rule's regex by its source, compiled on first use (a commit that triggers no rule compiles none)."""


class Context(NamedTuple):
    ci_home_users: frozenset = DEFAULT_CI_HOME_USERS


def secret(m: re.Match) -> str:
    return m.group("s")


def not_placeholder(m: re.Match, ctx: Context) -> bool:
    return not is_placeholder(secret(m))


def random_enough(minimum: float) -> Callable[[re.Match, Context], bool]:
    def check(m: re.Match, ctx: Context) -> bool:
        value = secret(m)
        return not is_placeholder(value) and looks_random(value, minimum)

    return check


# A key's value, up to a quote, space or separator.
VALUE = r"""[^\s"'`,;()\[\]{}<>\\]"""
# An optional quote around keys and values, also JSON-escaped (`\"`) or shell-escaped (`'\''`).
Q = r"""(?:'\\''|\\?["'`])?"""

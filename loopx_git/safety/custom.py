"""A team's own rules: ``[[tool.loopx.safety.rules]]`` in ``pyproject.toml``, ``[[rules]]`` in
``.loopx-safety.toml``, and the ``[[rules]]`` of a gitleaks configuration named by
``gitleaks_config``. Each becomes a ``Rule`` of family ``custom`` whose ``reference`` is the file it
came from; the policy scans them after the built-in table.

Gitleaks writes its regexes for Go's RE2 (``re2.py`` reads them). What Python's ``re`` spells differently is translated
(a flag group such as ``(?i)`` in mid-pattern, ``(?<name>…)``, ``\\z``, ``\\x{…}``, ``\\Q…\\E``,
POSIX classes like ``[[:alpha:]]``); what it lacks (``\\p{…}``, the ungreedy flag ``U``) is refused
with the rule and the field named, as is a regex that does not compile.

Standard library only: this module is on the hook path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from loopx_git.errors import ValidationError
from loopx_git.safety.re2 import GroupProblem, RegexProblem, compile_regex
from loopx_git.safety.rule import BLOCK, WARN, Rule, entropy

TEAM_FILE = ".loopx-safety.toml"
FAMILY = "custom"

_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_RULE_KEYS = ("id", "regex", "keywords", "severity", "description", "secret_group", "entropy")
_GITLEAKS_KNOWN = ("id", "regex", "keywords", "secretGroup", "description", "entropy", "path", "tags")
_GITLEAKS_ALLOWLISTS = ("allowlist", "allowlists")


@dataclass(frozen=True)
class Accept:
    """The check a team rule puts on a match: a secret part that is not empty and, with
    ``entropy``, random enough. A value object (not a closure), so that the same rule loaded twice
    is equal and the scanner's index of it is reused."""

    minimum_entropy: float | None = None

    def __call__(self, m: re.Match, ctx: Any) -> bool:
        value = m.group("s")
        if not value:
            return False
        return self.minimum_entropy is None or entropy(value) >= self.minimum_entropy


# --- rule tables -------------------------------------------------------------------------------


def _refuse(where: str, problem: str, rule: str) -> ValidationError:
    return ValidationError(f"{where}: {problem} ({rule})", code="invalid-config")


def team_rules(tables: Any, *, where: str, source: str, taken: set[str]) -> tuple[Rule, ...]:
    """``[[rules]]`` tables (``where`` names them in errors: ``[[tool.loopx.safety.rules]]``) as
    rules; ``taken`` holds the ids in use, built-in ones included, and gains these."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise _refuse(where, "must be an array of tables", "each rule is one [[rules]] table")
    rules = []
    for number, table in enumerate(tables, 1):
        rule_id = table.get("id")
        at = f"{where} #{number}" + (f" (id {rule_id!r})" if isinstance(rule_id, str) else "")
        for key in table:
            if key not in _RULE_KEYS:
                raise _refuse(f"{at} {key}", "unknown key", f"known keys: {', '.join(_RULE_KEYS)}")
        rule_id = _rule_id(at, rule_id, taken)
        at = f"{where} id {rule_id!r}"
        regex = table.get("regex")
        if not isinstance(regex, str) or not regex:
            raise _refuse(f"{at} regex", "must be a non-empty string", "the pattern a secret matches")
        severity = table.get("severity", BLOCK)
        if severity not in (BLOCK, WARN):
            raise _refuse(f"{at} severity", f"{severity!r} is not 'block' or 'warn'", "block fails the commit")
        description = table.get("description", rule_id)
        if not isinstance(description, str):
            raise _refuse(f"{at} description", "must be a string", "a few words on what the rule finds")
        group = table.get("secret_group")
        if group is not None and (isinstance(group, bool) or not isinstance(group, (int, str)) or group == ""):
            raise _refuse(f"{at} secret_group", "must be a group number or name", "0 is the whole match")
        if isinstance(group, int) and group < 0:
            raise _refuse(f"{at} secret_group", f"{group} is negative", "0 is the whole match, 1 the first group")
        rules.append(
            _rule(
                at,
                rule_id,
                regex,
                group,
                keywords=_keywords(f"{at} keywords", table.get("keywords", [])),
                severity=severity,
                description=description,
                minimum=_entropy(f"{at} entropy", table.get("entropy")),
                source=source,
            )
        )
        taken.add(rule_id)
    return tuple(rules)


def _rule_id(at: str, rule_id: Any, taken: set[str]) -> str:
    if not isinstance(rule_id, str) or not _ID.fullmatch(rule_id):
        raise _refuse(
            f"{at} id", f"{rule_id!r} is not a rule id", "lower-case letters, digits and '-', at most 64 characters"
        )
    if rule_id in taken:
        raise _refuse(
            f"{at} id",
            f"{rule_id!r} is already a rule id",
            "a team rule may not shadow a built-in rule or another team rule (`loopx safety rules` lists them)",
        )
    return rule_id


def _keywords(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _refuse(where, "must be a list of strings", "literals a line must hold for the regex to run there")
    if any(not v for v in value):
        raise _refuse(where, "holds an empty keyword", "leave keywords out to run the regex on every text")
    return tuple(dict.fromkeys(v.lower() for v in value))


def _entropy(where: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 8:
        raise _refuse(where, f"{value!r} is not a number from 0 to 8", "minimum Shannon entropy, bits per character")
    return float(value)


def _rule(
    at: str,
    rule_id: str,
    regex: str,
    group: int | str | None,
    *,
    keywords: tuple[str, ...],
    severity: str,
    description: str,
    minimum: float | None,
    source: str,
) -> Rule:
    try:
        compiled = compile_regex(regex, group)
    except RegexProblem as exc:
        field = "secret_group" if isinstance(exc, GroupProblem) else "regex"
        raise _refuse(f"{at} {field}", str(exc), "a regex in RE2 or Python syntax with the secret as a group") from None
    return Rule(
        rule_id,
        severity,
        description,
        keywords,
        compiled,
        accept=Accept(minimum),
        reference=source,
    )


# --- gitleaks ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gitleaks:
    rules: tuple[Rule, ...]
    notes: tuple[str, ...]
    """What was left out or not applied, one sentence each."""


def gitleaks_rules(text: str, *, source: str, taken: set[str]) -> Gitleaks:
    """The ``[[rules]]`` of a gitleaks configuration (``source`` is its path) as rules: ``id``,
    ``regex``, ``keywords``, ``secretGroup``, ``description`` and ``entropy`` are read; a rule
    with a ``path`` is left out (loopx's rules apply to every file) and so is one whose id is a
    built-in rule's, each with a note. Ids are lower-cased, other characters than letters, digits
    and ``-`` become ``-``."""
    data = toml(text, source)
    notes = []
    if "extend" in data:
        notes.append(f"{source}: [extend] is not followed; loopx's own rules stand in for gitleaks' defaults")
    if any(key in data for key in _GITLEAKS_ALLOWLISTS):
        notes.append(f"{source}: the global [allowlist] is not applied; allowlist in .publicsafe-allow instead")
    tables = data.get("rules", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise _refuse(f"{source} rules", "must be an array of tables", "gitleaks' [[rules]]")
    rules = []
    for number, table in enumerate(tables, 1):
        raw_id = table.get("id")
        if not isinstance(raw_id, str) or not raw_id.strip():
            raise _refuse(
                f"{source} [[rules]] #{number} id", "is missing or not a string", "every gitleaks rule has an id"
            )
        rule_id = re.sub(r"[^a-z0-9-]+", "-", raw_id.lower()).strip("-")[:64] or "rule"
        at = f"{source} rule {raw_id!r}"
        if "path" in table:
            why = "matches file names only" if "regex" not in table else "applies to the files its path matches only"
            notes.append(f"{at} skipped: it {why}, and loopx's rules apply to every file")
            continue
        if rule_id in taken:
            notes.append(f"{at} skipped: {rule_id!r} is already a rule id (a built-in or an earlier rule)")
            continue
        if any(key in table for key in _GITLEAKS_ALLOWLISTS):
            notes.append(f"{at}: its allowlist is not applied; allowlist in .publicsafe-allow instead")
        regex = table.get("regex")
        if not isinstance(regex, str) or not regex:
            raise _refuse(f"{at} regex", "must be a non-empty string", "gitleaks' regex of the rule")
        group = table.get("secretGroup")
        if group is not None and (isinstance(group, bool) or not isinstance(group, int) or group < 0):
            raise _refuse(f"{at} secretGroup", f"{group!r} is not a group number", "0 is the whole match")
        description = table.get("description", raw_id)
        if not isinstance(description, str):
            raise _refuse(f"{at} description", "must be a string", "gitleaks' description of the rule")
        try:
            compiled = compile_regex(regex, group or None)
        except RegexProblem as exc:
            field = "secretGroup" if isinstance(exc, GroupProblem) else "regex"
            raise _refuse(
                f"{at} {field}", str(exc), "rules are compiled with Python's re after RE2 translation"
            ) from None
        rules.append(
            Rule(
                rule_id,
                BLOCK,
                description,
                _keywords(f"{at} keywords", table.get("keywords", [])),
                compiled,
                accept=Accept(_entropy(f"{at} entropy", table.get("entropy"))),
                reference=source,
            )
        )
        taken.add(rule_id)
    return Gitleaks(tuple(rules), tuple(notes))


def toml(text: str, name: str) -> dict:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _refuse(name, f"not valid TOML ({exc})", "the file must parse before its rules are read") from exc
    except RecursionError:
        raise _refuse(name, "nested too deeply to parse", "the file must parse before its rules are read") from None


def config_path(where: str, value: Any) -> str:
    """``gitleaks_config``: a path inside the repository, ``/``-separated."""
    if not isinstance(value, str) or not value.strip():
        raise _refuse(where, "must be a path", "a gitleaks configuration inside the repository, like .gitleaks.toml")
    path = value.strip().removeprefix("./")
    parts = path.split("/")
    if path.startswith("/") or "\\" in path or ":" in parts[0] or ".." in parts or "" in parts:
        raise _refuse(
            where,
            f"{value!r} is not a relative path inside the repository",
            "policy files are read from the repository",
        )
    return path

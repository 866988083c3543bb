"""What a repository may relax: ``[tool.loopx.safety]`` in its ``pyproject.toml`` and the
committed ``.publicsafe-allow`` file; and what it may add: a team's own rules (``rules`` in that
table, ``.loopx-safety.toml``, a gitleaks configuration named by ``gitleaks_config``; see
``safety/custom.py``). All are parsed from text here; callers read the files.

``.publicsafe-allow`` holds one ``<rule-id> <fingerprint> [path-glob] # reason`` per line —
fingerprints only, so the file is safe to commit.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from loopx_git.errors import ValidationError
from loopx_git.safety.rules import (
    BLOCK,
    BY_ID,
    DEFAULT_CI_HOME_USERS,
    KNOWN_RULE_IDS,
    STRUCTURAL_RULE_IDS,
    WARN,
    Context,
)

ALLOW_FILE = ".publicsafe-allow"
DEFAULT_MAX_FIELD_BYTES = 4096
_FINGERPRINT = re.compile(r"^[0-9a-f]{16}$")
_CONFIG_KEYS = (
    "disabled_rules",
    "severity",
    "allowed_paths",
    "ci_home_users",
    "max_field_bytes",
    "local_state",
    "rules",
    "gitleaks_config",
)
TEAM_FILE = ".loopx-safety.toml"
_TEAM_KEYS = ("rules", "gitleaks_config")

Reader = Callable[[str], "str | None"]
"""The text of a file of the repository by its ``/``-separated path, or None when it is absent."""


class AllowEntry(NamedTuple):
    rule: str
    fingerprint: str
    path_glob: str | None = None


class Policy(NamedTuple):
    disabled: frozenset = frozenset()
    severity: Mapping[str, str] = MappingProxyType({})
    allowed_paths: tuple = ()
    ci_home_users: frozenset = DEFAULT_CI_HOME_USERS
    max_field_bytes: int = DEFAULT_MAX_FIELD_BYTES
    local_state: tuple = ()
    allow: tuple = ()
    extra_rules: tuple = ()
    """A team's own rules (``Rule`` objects), scanned after the built-in table."""
    notes: tuple = ()
    """What the team's configuration asked for that loopx leaves out (a gitleaks rule limited to
    some paths), one sentence each: ``loopx check`` and ``loopx safety rules`` print them."""

    @property
    def context(self) -> Context:
        return Context(ci_home_users=self.ci_home_users)

    def allowed_by_fingerprint(self, rule: str, fingerprint: str, path: str | None) -> bool:
        from loopx_git.safety.boundary import glob_match

        return any(
            entry.rule == rule
            and entry.fingerprint == fingerprint
            and (entry.path_glob is None or (path is not None and glob_match(entry.path_glob, path)))
            for entry in self.allow
        )

    def path_allowed(self, path: str | None) -> bool:
        from loopx_git.safety.boundary import glob_match

        return path is not None and any(glob_match(g, path) for g in self.allowed_paths)


DEFAULT_POLICY = Policy()


def _refuse(where: str, problem: str, rule: str) -> ValidationError:
    return ValidationError(f"{where}: {problem} ({rule})", code="invalid-config")


def parse_allow_file(text: str, name: str = ALLOW_FILE, *, team_ids: frozenset = frozenset()) -> tuple[AllowEntry, ...]:
    """``team_ids``: the ids of the team's own rules, which may be allowlisted too."""
    entries = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        where = f"{name}:{number}"
        if len(parts) not in (2, 3):
            raise _refuse(
                where,
                f"expected '<rule-id> <fingerprint> [path-glob]', got {len(parts)} fields",
                "one entry per line; a reason goes after '#'",
            )
        if parts[0] not in KNOWN_RULE_IDS and parts[0] not in team_ids:
            raise _refuse(where, f"unknown rule id {parts[0]!r}", "rule ids are listed by `loopx safety rules`")
        if parts[0] in STRUCTURAL_RULE_IDS:  # an entry that would silently do nothing
            raise _refuse(
                where,
                f"{parts[0]} is a structural rule of records and cannot be allowlisted",
                "fix the value instead: the refusal's hint says how",
            )
        if not _FINGERPRINT.match(parts[1]):  # not echoed: it may be the very secret pasted by mistake
            raise _refuse(
                where,
                "the second field is not a 16-hex fingerprint",
                "the allow file holds fingerprints from findings, never the value itself",
            )
        entries.append(AllowEntry(parts[0], parts[1], parts[2] if len(parts) == 3 else None))
    return tuple(entries)


def _strings(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _refuse(where, "must be a list of strings", "[tool.loopx.safety] in pyproject.toml")
    return tuple(value)


def _rule_ids(where: str, ids: tuple[str, ...], team_ids: frozenset = frozenset()) -> tuple[str, ...]:
    for rule_id in ids:
        if rule_id in team_ids:
            continue
        if rule_id not in BY_ID:
            raise _refuse(where, f"unknown rule id {rule_id!r}", "rule ids are listed by `loopx safety rules`")
        if BY_ID[rule_id].fingerprint_only:
            raise _refuse(
                where,
                f"rule {rule_id!r} cannot be disabled or downgraded",
                "private keys, GitHub tokens and vendor keys are allowlisted only by fingerprint in .publicsafe-allow",
            )
    return ids


def parse_config(
    table: dict,
    allow: tuple[AllowEntry, ...] = (),
    *,
    allow_text: str | None = None,
    team_text: str | None = None,
    read: Reader | None = None,
) -> Policy:
    """Build a policy from the ``[tool.loopx.safety]`` table; every key is checked. ``allow_text``
    (``.publicsafe-allow``) is parsed here once the team's rule ids are known; ``team_text`` is
    ``.loopx-safety.toml``; ``read`` reads the gitleaks configuration that either one names."""
    prefix = "[tool.loopx.safety]"
    for key in table:
        if key not in _CONFIG_KEYS:
            raise _refuse(f"{prefix} {key}", "unknown key", f"known keys: {', '.join(_CONFIG_KEYS)}")
    extra, notes = _team_rules(table, team_text, read)
    team_ids = frozenset(rule.id for rule in extra)
    if allow_text:
        allow = parse_allow_file(allow_text, team_ids=team_ids)
    disabled = _rule_ids(
        f"{prefix} disabled_rules", _strings(f"{prefix} disabled_rules", table.get("disabled_rules", [])), team_ids
    )
    severity = table.get("severity", {})
    if not isinstance(severity, dict) or any(v not in (BLOCK, WARN) for v in severity.values()):
        raise _refuse(f"{prefix} severity", "must map rule ids to 'block' or 'warn'", "severity overrides")
    _rule_ids(f"{prefix} severity", tuple(k for k, v in severity.items() if v == WARN), team_ids)
    _rule_ids(f"{prefix} severity", tuple(severity), team_ids)
    max_bytes = table.get("max_field_bytes", DEFAULT_MAX_FIELD_BYTES)
    if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or not 256 <= max_bytes <= 1 << 20:
        raise _refuse(f"{prefix} max_field_bytes", f"{max_bytes!r} is out of range", "an integer from 256 to 1048576")
    return Policy(
        disabled=frozenset(disabled),
        severity=dict(severity),
        allowed_paths=_strings(f"{prefix} allowed_paths", table.get("allowed_paths", [])),
        ci_home_users=DEFAULT_CI_HOME_USERS
        | frozenset(_strings(f"{prefix} ci_home_users", table.get("ci_home_users", []))),
        max_field_bytes=max_bytes,
        local_state=_strings(f"{prefix} local_state", table.get("local_state", [])),
        allow=allow,
        extra_rules=extra,
        notes=notes,
    )


def _team_rules(table: dict, team_text: str | None, read: Reader | None) -> tuple[tuple, tuple]:
    """The team's rules, in order: pyproject's, ``.loopx-safety.toml``'s, then the gitleaks
    configuration's; and the notes on what was left out. No rule may take a built-in's id."""
    team: dict = {}
    if team_text is not None:
        from loopx_git.safety.custom import toml

        team = toml(team_text, TEAM_FILE)
        for key in team:
            if key not in _TEAM_KEYS:
                raise _refuse(f"{TEAM_FILE} {key}", "unknown key", f"known keys: {', '.join(_TEAM_KEYS)}")
    if not any(key in source for source in (table, team) for key in _TEAM_KEYS):
        return (), ()
    from loopx_git.safety import custom

    taken = set(KNOWN_RULE_IDS)
    rules = list(
        custom.team_rules(
            table.get("rules", []), where="[[tool.loopx.safety.rules]]", source="pyproject.toml", taken=taken
        )
    )
    rules += custom.team_rules(team.get("rules", []), where=f"{TEAM_FILE} [[rules]]", source=TEAM_FILE, taken=taken)
    if "gitleaks_config" in table and "gitleaks_config" in team:
        raise _refuse(
            f"{TEAM_FILE} gitleaks_config",
            "is set in [tool.loopx.safety] too",
            "name the gitleaks configuration in one place",
        )
    notes: tuple = ()
    if "gitleaks_config" in table or "gitleaks_config" in team:
        where = "[tool.loopx.safety] gitleaks_config" if "gitleaks_config" in table else f"{TEAM_FILE} gitleaks_config"
        path = custom.config_path(where, table.get("gitleaks_config", team.get("gitleaks_config")))
        text = read(path) if read is not None else None
        if text is None:
            raise _refuse(where, f"{path!r} is not a file in the repository", "a path from the repository's root")
        found = custom.gitleaks_rules(text, source=path, taken=taken)
        rules += found.rules
        notes = found.notes
    return tuple(rules), notes


def load(pyproject_text: str | None, allow_text: str | None, read: Reader | None = None) -> Policy:
    """The policy of a repository from the text of its two files (either may be absent), and
    ``read`` for the others (``.loopx-safety.toml``, a gitleaks configuration); without it there
    are none."""
    table: dict = {}
    if pyproject_text:
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # Python 3.10
            import tomli as tomllib
        try:
            data = tomllib.loads(pyproject_text)
        except tomllib.TOMLDecodeError as exc:
            raise _refuse(
                "pyproject.toml",
                f"not valid TOML ({exc})",
                "the file must parse before its [tool.loopx.safety] is read",
            ) from exc
        except RecursionError:
            raise _refuse(
                "pyproject.toml",
                "nested too deeply to parse",
                "the file must parse before its [tool.loopx.safety] is read",
            ) from None
        table = data.get("tool", {}).get("loopx", {}).get("safety", {})
        if not isinstance(table, dict):
            raise _refuse("[tool.loopx.safety]", "must be a table", "TOML table")
    team_text = read(TEAM_FILE) if read is not None else None
    return parse_config(table, allow_text=allow_text, team_text=team_text, read=read)


def load_from(workdir) -> Policy:
    """The policy of the work tree at ``workdir`` (a bare repository, None, gets the defaults)."""
    if workdir is None:
        return DEFAULT_POLICY
    from pathlib import Path

    def read(name: str) -> str | None:
        path = Path(workdir) / name
        if not path.is_file() or not path.resolve().is_relative_to(Path(workdir).resolve()):
            return None  # absent, or a link out of the work tree: only the repository's own files count
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise _refuse(name, f"is not UTF-8 text (byte {exc.start})", "policy files are UTF-8") from exc

    return load(read("pyproject.toml"), read(ALLOW_FILE), read)

"""Structural rules for records bound for the state branch, on top of the text rules: no key that
carries raw material, no field larger than the cap, refs relative and inside the repository, and
boundary flags that only ever say "not recorded".

Records arrive as plain JSON values (what the store writes), so this stays free of pydantic.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from loopx_git.safety.policy import DEFAULT_POLICY, Policy
from loopx_git.safety.rules import BLOCK
from loopx_git.safety.scan import Finding, fingerprint, marker, redacted, scan

_RAW_KEYS = frozenset(
    {
        "transcript",
        "session_transcript",
        "stdout",
        "stderr",
        "prompt",
        "prompts",
        "messages",
        "trajectory",
        "log",
        "logs",
    }
)
_RAW_SUFFIXES = ("_transcript", "_stdout", "_stderr", "_prompt", "_log")
_CREDENTIAL_KEYS = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "api_key",
        "apikey",
        "client_secret",
        "private_key",
        "cookie",
        "cookies",
        "authorization",
        "credentials",
        "credential",
        "token",
    }
)
_CREDENTIAL_SUFFIXES = ("_token", "_password", "_secret", "_api_key", "_private_key")
_PATH = re.compile(r"^[\w.-]+(?:/[\w.-]+)*$")
_DIGEST = re.compile(r"^(?:(?:sha1|sha256|sha512|blake2b|md5)[:-])?[0-9a-fA-F]{32,128}$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)
_FILE_URL = re.compile(r"^(?:[a-z][a-z0-9.-]*\+)?file(?::|%3a)|^[a-z][a-z0-9+.-]*://file/", re.I)
_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")


@dataclass(frozen=True)
class FieldFinding:
    """A finding in one field of a record: ``field`` is its dotted path (``details.stdout``)."""

    field: str
    rule: str
    severity: str
    fingerprint: str
    text: Finding | None = None

    @property
    def blocks(self) -> bool:
        return self.severity == BLOCK

    def describe(self) -> str:
        return f"field '{self.field}': {self.rule} ({self.severity}) fp={self.fingerprint}"

    def to_json(self) -> dict:
        return {"field": self.field, "rule": self.rule, "severity": self.severity, "fingerprint": self.fingerprint}


def is_credential_key(key: str) -> bool:
    low = key.lower()
    return low in _CREDENTIAL_KEYS or low.endswith(_CREDENTIAL_SUFFIXES)


def is_raw_key(key: str) -> bool:
    """A key for raw material or a credential (``transcript``, ``raw_*``, ``stdout``, ``*_token``)."""
    low = key.lower()
    return low in _RAW_KEYS or low.startswith("raw_") or low.endswith(_RAW_SUFFIXES) or is_credential_key(low)


def is_ref_key(key: str) -> bool:
    return key.endswith(("_ref", "_refs")) or key == "evidence"


def allowed_under_raw_key(key: str, value: str) -> bool:
    """What a raw-material key may hold: a digest, or for raw material (not a credential) a
    relative path to where the material is kept (``logs/run-12.txt``)."""
    if _DIGEST.fullmatch(value):
        return True
    return not is_credential_key(key) and bool(_PATH.fullmatch(value)) and "/" in value and ref_problem(value) is None


def ref_problem(value: str) -> str | None:
    """Why ``value`` is not a safe ref, or None. URLs pass (the text rules check credentials in them),
    except file URLs, however spelled (``file:``, ``git+file:``, ``vscode://file/``, ``file%3A``): an
    absolute path on one machine, spelled another way. Blanks around a value hide nothing."""
    value = value.strip()
    if _FILE_URL.match(value):
        return "is a file URL, an absolute path on this machine; refs are relative to the repository"
    if _URL.match(value):
        return None
    if value.startswith(("/", "~")) or _WINDOWS_ABSOLUTE.match(value):
        return "is an absolute path; refs are relative to the repository"
    if ".." in re.split(r"[\\/]", value):
        return "climbs out with '..'; refs stay inside the repository"
    return None


class _Checker:
    def __init__(self, policy: Policy, redact: bool):
        self.policy = policy
        self.redact = redact
        self.findings: list[FieldFinding] = []
        self.values: list[tuple[str, FieldFinding]] = []

    def _add(self, field: str, rule: str, value: str, text: Finding | None = None) -> None:
        finding = FieldFinding(
            field,
            rule,
            BLOCK if text is None else text.severity,
            text.fingerprint if text else fingerprint(value),
            text,
        )
        self.findings.append(finding)
        if text is None:
            self.values.append((value, finding))
        else:  # a value written in pieces is masked piece by piece, wherever each is printed
            self.values.extend((value[s:e], finding) for s, e in text.spans)

    def value(self, field: str, key: str, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self.value(f"{field}.{k}" if field else k, k, v) for k, v in value.items()}
        if isinstance(value, list):
            if key == "changes":  # an entity field change is named by the field it changes
                return [self.change(field, item) for item in value]
            return [self.value(f"{field}[{i}]", key, item) for i, item in enumerate(value)]
        if not isinstance(value, str):
            return value
        return self.text(field, key, value)

    def change(self, field: str, item: Any) -> Any:
        if not isinstance(item, dict) or "field" not in item:
            return self.value(field, "changes", item)
        name = str(item["field"])
        return {k: (self.value(name, name, v) if k in ("before", "after") else v) for k, v in item.items()}

    def text(self, field: str, key: str, value: str) -> str:
        if key and is_raw_key(key) and not allowed_under_raw_key(key, value):
            self._add(field, "raw-material-key", value)
            return marker("raw-material-key")
        if len(value.encode("utf-8", "surrogatepass")) > self.policy.max_field_bytes:
            self._add(field, "field-too-large", value)
            return marker("field-too-large")
        if is_ref_key(key) and ref_problem(value):
            self._add(field, "unsafe-ref", value)
            return marker("unsafe-ref")
        found = scan(value, self.policy, inline=False)
        for finding in found:
            self._add(field, finding.rule, value, finding)
        return redacted(value, [f for f in found if f.blocks]) if self.redact else value


def check(record: dict, policy: Policy = DEFAULT_POLICY, *, redact: bool = False) -> tuple[dict, list[FieldFinding]]:
    """Findings in one record (a JSON object), and the record with blocking values redacted
    (only meaningful with ``redact=True``). ``boundary`` flags that claim raw material was
    recorded are refused: the state branch never holds it."""
    checker = _Checker(policy, redact)
    out = checker.value("", "", record)
    for flag, recorded in (record.get("boundary") or {}).items():
        if recorded is True:
            checker.findings.append(FieldFinding(f"boundary.{flag}", "boundary-claim", BLOCK, fingerprint(flag)))
    checker.findings.sort(key=lambda f: (f.field == "summary", f.field))  # a summary repeats a field: name the field
    return out, checker.findings


def flagged_values(record: dict, policy: Policy = DEFAULT_POLICY) -> list[tuple[str, FieldFinding]]:
    """Each value a finding in ``record`` flags (the whole field for a structural rule, the secret
    part for a text rule), with its finding: what a review masks wherever it would print it.
    The values are the secrets themselves — for masking only, never for output."""
    checker = _Checker(policy, False)
    checker.value("", "", record)
    return checker.values


UNREDACTABLE = frozenset({"unsafe-ref", "boundary-claim"})
"""Rules ``--redact`` cannot satisfy: a marker is not a ref inside the repository, and a flag is
not a value. A write with such a finding is refused even when redacting."""

STRUCTURAL_RULES = {
    "raw-material-key": "a key for raw material (transcript, raw_*, stdout, stderr, prompt, messages, logs) holds a "
    "digest or a relative path; a credential-named key (password, api_key, *_token...) only a digest",
    "field-too-large": "one field holds at most max_field_bytes (4 KiB unless configured), so raw logs stay out",
    "unsafe-ref": "refs are relative to the repository, with no '..'",
    "boundary-claim": "boundary flags say raw material was not recorded; the state branch never holds it",
}

STRUCTURAL_FIXES = {
    "raw-material-key": "keep raw material off the state branch: put a digest (sha256:<hex>) under that key, or for raw "
    "material that is not a credential a path relative to the repository where it is kept "
    "(logs/run-12.txt); or rerun with --redact to write [REDACTED:raw-material-key] there",
    "field-too-large": "shorten the value to at most {max_field_bytes} bytes (keep long material in a file and record "
    "its path; max_field_bytes in [tool.loopx.safety] sets the cap), or rerun with --redact",
    "unsafe-ref": "give a path relative to the repository root without '..' (for example docs/notes.md), or a URL; "
    "--redact cannot turn it into a valid ref",
    "boundary-claim": "leave the boundary flag out (or false): the state branch never records raw material, so no "
    "flag may claim it does; --redact cannot change a flag",
}
"""What fixes a structural finding (allowlisting a fingerprint does not: these rules are not
allowlistable)."""

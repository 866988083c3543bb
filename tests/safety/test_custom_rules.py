"""A team's own rules: ``[[tool.loopx.safety.rules]]``, ``.loopx-safety.toml`` and the ``[[rules]]`` of
a gitleaks configuration become rules of the policy, scanned after the built-in table; RE2 syntax
Python lacks is translated; bad config is refused naming the rule, the field and the problem."""

from __future__ import annotations

import json
import random
import re

import pytest

from loopx_git.errors import ValidationError
from loopx_git.safety import listing
from loopx_git.safety.policy import TEAM_FILE, load, parse_allow_file
from loopx_git.safety.re2 import RegexProblem, compile_regex, translate
from loopx_git.safety.scan import fingerprint, redact, scan
from tests.safety.parts import cat, rand

RNG = random.Random(20)
ACME = cat("acme", "_live_", rand(RNG, 24))
ACME_HEX = cat("ak", rand(RNG, 30, "0123456789abcdef"))

PYPROJECT = """\
[tool.loopx.safety]
[[tool.loopx.safety.rules]]
id = "acme-live-key"
description = "Acme live API key"
regex = 'acme_live_[A-Za-z0-9]{24}'
keywords = ["ACME_LIVE_"]
"""

GITLEAKS = """\
title = "our gitleaks rules"
[extend]
useDefault = true

[[rules]]
id = "acme-internal-key"
description = "Acme internal service key"
regex = '''(?i)acme[_-]?key\\s*[:=]\\s*['"]?(ak[0-9a-f]{30})'''
secretGroup = 1
keywords = ["acme"]
entropy = 2.5

[[rules]]
id = "pkcs12-file"
description = "PKCS#12 file"
path = '''(?i)\\.p12$'''

[[rules]]
id = "jwt"
regex = '''ey[a-zA-Z0-9]{17,}'''
"""


def policy_of(pyproject: str | None = None, allow: str | None = None, others: dict | None = None):
    """The policy of a repository holding these files (``others``: path -> text)."""
    return load(pyproject, allow, (others or {}).get)


def refusal(pyproject: str | None = None, others: dict | None = None) -> str:
    with pytest.raises(ValidationError) as caught:
        policy_of(pyproject, others=others)
    assert caught.value.code == "invalid-config"
    return caught.value.message


# --- rules from pyproject.toml and .loopx-safety.toml --------------------------------------------


def test_a_pyproject_rule_finds_its_format_and_redacts_it():
    policy = policy_of(PYPROJECT)
    (rule,) = policy.extra_rules
    assert (rule.id, rule.severity, rule.keywords, rule.reference) == (
        "acme-live-key",
        "block",
        ("acme_live_",),  # keywords are lower-cased
        "pyproject.toml",
    )
    text = f'ACME = "{ACME}"\n'
    (finding,) = scan(text, policy)
    assert (finding.rule, finding.line, finding.column, finding.fingerprint) == (
        "acme-live-key",
        1,
        9,
        fingerprint(ACME),
    )
    assert scan(text) == []  # not a built-in format
    redacted, _ = redact(text, policy)
    assert redacted == 'ACME = "[REDACTED:acme-live-key]"\n' and scan(redacted, policy) == []


def test_the_team_file_holds_rules_too_and_its_secret_group_is_what_is_fingerprinted():
    team = """\
[[rules]]
id = "acme-env-key"
regex = 'ACME_KEY=(?P<value>[A-Za-z0-9_]{20,})'
secret_group = "value"
severity = "warn"
keywords = ["acme_key="]
"""
    policy = policy_of(others={TEAM_FILE: team})
    (finding,) = scan(f"ACME_KEY={ACME}\n", policy)
    assert (finding.rule, finding.severity, finding.column) == ("acme-env-key", "warn", 10)
    assert finding.fingerprint == fingerprint(ACME)
    assert policy.extra_rules[0].reference == TEAM_FILE


def test_a_rule_without_keywords_runs_on_every_text():
    team = "[[rules]]\nid = 'ticket-secret'\nregex = 'TKT-[0-9]{8}-[A-Z]{4}'\n"
    policy = policy_of(others={TEAM_FILE: team})
    assert policy.extra_rules[0].keywords == ()
    assert [f.rule for f in scan("see TKT-20240115-QXRM here", policy)] == ["ticket-secret"]


def test_team_rules_may_be_allowlisted_disabled_and_downgraded_like_built_in_ones():
    fp = fingerprint(ACME)
    text = f"key {ACME}\n"
    allowed = policy_of(PYPROJECT, f"acme-live-key {fp}  # the demo account\n")
    assert scan(text, allowed) == []
    disabled = policy_of(PYPROJECT.replace("]\n", ']\ndisabled_rules = ["acme-live-key"]\n', 1))
    assert scan(text, disabled) == []
    assert scan(f"key {ACME}  # publicsafe: allow[acme-live-key]\n", policy_of(PYPROJECT)) == []


def test_the_allow_file_refuses_an_unknown_id_but_knows_the_teams():
    with pytest.raises(ValidationError, match="unknown rule id 'acme-live-key'"):
        parse_allow_file(f"acme-live-key {fingerprint(ACME)}\n")
    assert parse_allow_file(f"acme-live-key {fingerprint(ACME)}\n", team_ids=frozenset({"acme-live-key"}))


def test_entropy_keeps_low_entropy_look_alikes_out():
    team = "[[rules]]\nid = 'acme-hex'\nregex = 'ak[0-9a-f]{30}'\nkeywords = ['ak']\nentropy = 3.0\n"
    policy = policy_of(others={TEAM_FILE: team})
    assert [f.rule for f in scan(f"x {ACME_HEX}", policy)] == ["acme-hex"]
    assert scan("x ak" + "0" * 30, policy) == []


def test_the_same_rules_loaded_twice_are_equal():
    # the scanner keeps its keyword index per rule set: a new load of the same config reuses it
    assert policy_of(PYPROJECT).extra_rules == policy_of(PYPROJECT).extra_rules


# --- gitleaks ------------------------------------------------------------------------------------


def test_a_gitleaks_configurations_rules_are_read_and_what_is_left_out_is_said():
    policy = policy_of(
        '[tool.loopx.safety]\ngitleaks_config = "security/.gitleaks.toml"\n',
        others={"security/.gitleaks.toml": GITLEAKS},
    )
    (rule,) = policy.extra_rules
    assert (rule.id, rule.description, rule.reference) == (
        "acme-internal-key",
        "Acme internal service key",
        "security/.gitleaks.toml",
    )
    text = f"ACME-KEY: '{ACME_HEX}'\n"
    (finding,) = scan(text, policy)
    assert finding.rule == "acme-internal-key" and finding.fingerprint == fingerprint(ACME_HEX)  # secretGroup 1
    notes = "\n".join(policy.notes)
    assert "[extend] is not followed" in notes
    assert "'pkcs12-file' skipped: it matches file names only" in notes
    assert "'jwt' skipped: 'jwt' is already a rule id" in notes


def test_the_team_file_may_name_the_gitleaks_configuration():
    policy = policy_of(others={TEAM_FILE: 'gitleaks_config = ".gitleaks.toml"\n', ".gitleaks.toml": GITLEAKS})
    assert [r.id for r in policy.extra_rules] == ["acme-internal-key"]


@pytest.mark.parametrize(
    "re2, python",
    [
        (r"(?i)abc", r"(?i)(?P<s>abc)"),
        (r"key(?i)abc", r"(?P<s>key(?i:abc))"),
        (r"a(?i)b|c", r"(?P<s>a(?i:b)|(?i:c))"),  # the flag holds to the end of the group, past '|'
        (r"(?:x(?i)y|z)w", r"(?P<s>(?:x(?i:y)|(?i:z))w)"),
        (r"(?<name>ab)(c)", r"(?P<s>ab)(c)"),
        (r"foo\z", r"(?P<s>foo\Z)"),
        (r"[[:alpha:]_][[:digit:]]+", r"(?P<s>[A-Za-z_][0-9]+)"),
        (r"\Qa.b\E", r"(?P<s>a\.b)"),
        (r"\x{263a}", r"(?P<s>\U0000263a)"),
        (r"[]a]", r"(?P<s>[\]a])"),
        (r"(?s)x.y(?-s)z", r"(?s)(?P<s>x.y(?-s:z))"),
        (r"k=([a-z]+)", r"k=(?P<s>[a-z]+)"),
    ],
)
def test_re2_syntax_is_translated(re2, python):
    assert translate(re2) == python
    re.compile(python)


def test_the_secret_group_is_chosen_by_number_or_name():
    assert translate(r"(a)(b)", 2) == r"(a)(?P<s>b)"
    assert translate(r"(a)(b)", 0) == r"(?P<s>(a)(b))"
    assert translate(r"(?P<s>a)(b)") == r"(?P<s>a)(b)"
    assert translate(r"(?P<s>a)(b)", 2) == r"(a)(?P<s>b)"  # another group named s gives the name up
    assert translate(r"(?<user>u)(?<key>k)", "key") == r"(?P<user>u)(?P<s>k)"


@pytest.mark.parametrize(
    "regex, group, problem",
    [
        (r"\pL+", None, r"\p (a Unicode character class) has no equivalent"),
        (r"(?U)a+", None, "the flag U (ungreedy)"),
        (r"(abc", None, "a '(' is never closed"),
        (r"abc)", None, "the ')' at position 3 closes no group"),
        (r"[abc", None, "a character class '[' is never closed"),
        ("abc\\", None, "it ends with a lone backslash"),
        (r"(a)", 2, "the regex has 1 capturing group(s), so it has no group 2"),
        (r"a{3,1}", None, "it does not compile in Python's re"),
        ("(" * 101 + ")" * 101, None, "groups nest more than 100 deep"),
    ],
)
def test_a_regex_python_cannot_use_is_a_problem_named(regex, group, problem):
    with pytest.raises(RegexProblem) as caught:
        compile_regex(regex, group)
    assert problem in str(caught.value)


# --- bad config ----------------------------------------------------------------------------------


def rules_table(**fields: object) -> str:
    """One [[tool.loopx.safety.rules]] table: a good rule with ``fields`` changed (None: left out)."""
    body = {"id": "acme-live-key", "regex": "acme_live_[A-Za-z0-9]{24}", **fields}
    lines = [
        f"{key} = '{value}'" if isinstance(value, str) else f"{key} = {json.dumps(value)}"
        for key, value in body.items()
        if value is not None
    ]
    return "[[tool.loopx.safety.rules]]\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "pyproject, fragments",
    [
        (
            rules_table(regex="(acme"),
            ["[[tool.loopx.safety.rules]] id 'acme-live-key' regex:", "a '(' is never closed"],
        ),
        (rules_table(regex="a{3,1}"), ["id 'acme-live-key' regex:", "does not compile"]),
        (rules_table() + rules_table(), ["id 'acme-live-key'", "id: 'acme-live-key' is already a rule id"]),
        (rules_table(id="github-token"), ["id: 'github-token' is already a rule id", "may not shadow a built-in"]),
        (rules_table(id="local-state"), ["id: 'local-state' is already a rule id"]),
        (rules_table(id="Acme Key"), ["id: 'Acme Key' is not a rule id"]),
        (rules_table(severity="fatal"), ["id 'acme-live-key' severity:", "'fatal' is not 'block' or 'warn'"]),
        (rules_table(keywords=[""]), ["id 'acme-live-key' keywords:", "empty keyword"]),
        (rules_table(keywords="acme"), ["id 'acme-live-key' keywords:", "must be a list of strings"]),
        (rules_table(regex=None), ["id 'acme-live-key' regex:", "must be a non-empty string"]),
        (rules_table(secret_group=3), ["id 'acme-live-key' secret_group:", "no group 3"]),
        (rules_table(entropy=9), ["id 'acme-live-key' entropy:", "from 0 to 8"]),
        (rules_table(pattern="x"), ["pattern: unknown key"]),
        ("[tool.loopx.safety]\nrules = 'x'\n", ["[[tool.loopx.safety.rules]]: must be an array of tables"]),
        ('[tool.loopx.safety]\ngitleaks_config = "missing.toml"\n', ["gitleaks_config: 'missing.toml' is not a file"]),
        ('[tool.loopx.safety]\ngitleaks_config = "../elsewhere.toml"\n', ["not a relative path inside the repository"]),
        (
            '[tool.loopx.safety]\ngitleaks_config = "/etc/gitleaks.toml"\n',
            ["not a relative path inside the repository"],
        ),
    ],
)
def test_bad_pyproject_rules_are_refused_naming_the_rule_and_the_field(pyproject, fragments):
    message = refusal(pyproject)
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize(
    "gitleaks, fragments",
    [
        ("[[rules]]\nid = 'letters'\nregex = '''\\pL{20}'''\n", ["rule 'letters' regex:", "Unicode character class"]),
        ("[[rules]]\nid = 'lazy'\nregex = '''(?U)a+'''\n", ["rule 'lazy' regex:", "ungreedy"]),
        ("[[rules]]\nid = 'two'\nregex = '''(a)'''\nsecretGroup = 2\n", ["rule 'two' secretGroup:", "no group 2"]),
        ("[[rules]]\nregex = 'a'\n", ["[[rules]] #1 id: is missing"]),
        ("[[rules]]\nid = 'x'\n", ["rule 'x' regex: must be a non-empty string"]),
        ("rules = 1\n", ["rules: must be an array of tables"]),
        ("[[rules]\n", [".gitleaks.toml: not valid TOML"]),
    ],
)
def test_a_bad_gitleaks_configuration_is_refused_naming_the_rule_and_the_field(gitleaks, fragments):
    message = refusal('[tool.loopx.safety]\ngitleaks_config = ".gitleaks.toml"\n', others={".gitleaks.toml": gitleaks})
    for fragment in fragments:
        assert fragment in message, message


def test_a_bad_team_file_is_refused():
    assert ".loopx-safety.toml severity: unknown key" in refusal(others={TEAM_FILE: "severity = {}\n"})
    assert ".loopx-safety.toml: not valid TOML" in refusal(others={TEAM_FILE: "[[rules]\n"})
    both = refusal(
        '[tool.loopx.safety]\ngitleaks_config = ".gitleaks.toml"\n',
        others={TEAM_FILE: 'gitleaks_config = ".gitleaks.toml"\n', ".gitleaks.toml": ""},
    )
    assert "gitleaks_config: is set in [tool.loopx.safety] too" in both
    clash = refusal(PYPROJECT, others={TEAM_FILE: "[[rules]]\nid = 'acme-live-key'\nregex = 'x'\n"})
    assert ".loopx-safety.toml [[rules]] #1 (id 'acme-live-key') id: 'acme-live-key' is already a rule id" in clash


# --- the listing ---------------------------------------------------------------------------------


def test_the_listing_has_every_rule_and_the_teams_with_their_source():
    from loopx_git.safety.records import STRUCTURAL_RULES
    from loopx_git.safety.rules import RULES

    rows = listing.rows(policy_of(PYPROJECT))
    assert [r["rule"] for r in rows] == [
        *(r.id for r in RULES),
        "acme-live-key",
        "local-state",
        *STRUCTURAL_RULES,
    ]
    team = next(r for r in rows if r["rule"] == "acme-live-key")
    assert team == {
        "rule": "acme-live-key",
        "severity": "block",
        "family": "custom",
        "description": "Acme live API key",
        "reference": "pyproject.toml",
        "allowlist": "fingerprint, inline, config",
    }
    assert all(r["family"] and r["reference"] and r["description"] for r in rows)


def test_the_safety_doc_holds_the_table_the_rules_render():
    """docs/safety.md's table is generated: `python -m loopx_git.safety.listing --write docs/safety.md`."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "safety.md").read_text(encoding="utf-8")
    assert listing.current(doc) == listing.markdown(), (
        "the rules table in docs/safety.md is out of date: python -m loopx_git.safety.listing --write docs/safety.md"
    )
    assert listing.main(["--check", str(Path(__file__).resolve().parents[2] / "docs" / "safety.md")]) == 0

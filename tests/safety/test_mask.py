"""safety/mask.py: what a review prints never carries a flagged value; and the allow file refuses
entries that could never take effect (structural rules)."""

from __future__ import annotations

import json

import pytest

from loopx_git.errors import ValidationError
from loopx_git.safety.mask import Masker, masked, shown
from loopx_git.safety.policy import load, parse_allow_file
from loopx_git.safety.records import flagged_values
from loopx_git.safety.scan import fingerprint

TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
EMAIL = "ops" + "@" + "acme-corp.io"


def test_text_rule_values_are_masked_with_their_fingerprint_whatever_the_severity():
    text = f"use {TOKEN} and mail {EMAIL}"
    assert (
        masked(text)
        == f"use [REDACTED:github-token] fp={fingerprint(TOKEN)} and mail [REDACTED:email-address] fp={fingerprint(EMAIL)}"
    )
    assert masked(masked(text)) == masked(text)  # a fixed point
    assert masked("write the tokenizer") == "write the tokenizer"


def test_masking_keeps_json_valid():
    doc = json.dumps({"subject": f"x {TOKEN}", "path": "/home/alice/run.sh"})
    assert json.loads(masked(doc))["subject"] == f"x {shown('github-token', fingerprint(TOKEN))}"


def test_structural_values_are_learned_from_records_and_masked_where_shown():
    masker = Masker()
    record = {"evidence": ["/etc/passwd"], "details": {"stdout": "the whole raw run output"}, "text": f"a {TOKEN}"}
    findings, own = masker.learn(record)
    assert {f.rule for f in findings} == {"unsafe-ref", "raw-material-key", "github-token"}
    assert (
        masker.mask("evidence: /etc/passwd", own) == f"evidence: [REDACTED:unsafe-ref] fp={fingerprint('/etc/passwd')}"
    )
    # long values are masked in every string from now on (a commit subject repeating them)
    assert (
        masker.mask("log: the whole raw run output")
        == f"log: {shown('raw-material-key', fingerprint('the whole raw run output'))}"
    )


def test_a_short_structural_value_is_masked_only_in_its_own_row():
    masker = Masker()
    _, own = masker.learn({"evidence": [".."]})
    assert masker.mask("evidence: ..", own) == f"evidence: {shown('unsafe-ref', fingerprint('..'))}"
    assert masker.mask("the old plan...") == "the old plan..."


def test_flagged_values_are_the_secret_part_only():
    values = flagged_values({"summary": f"deploy with {TOKEN} now"})
    assert [(v, f.rule, f.field) for v, f in values] == [(TOKEN, "github-token", "summary")]


def test_an_allowlisted_value_is_not_flagged_so_not_masked():
    policy = load(None, f"github-token {fingerprint(TOKEN)}  # revoked\n")
    assert Masker(policy).mask(f"x {TOKEN}") == f"x {TOKEN}"


@pytest.mark.parametrize("rule", ["raw-material-key", "field-too-large", "unsafe-ref", "boundary-claim"])
def test_the_allow_file_refuses_a_structural_rule_it_could_never_apply(rule):
    with pytest.raises(ValidationError) as err:
        parse_allow_file(f"{rule} {fingerprint('/etc/passwd')}\n")
    assert err.value.message.startswith(f".publicsafe-allow:1: {rule} is a structural rule of records")
    assert err.value.code == "invalid-config"


def test_the_allow_file_still_takes_local_state_and_text_rules():
    entries = parse_allow_file(f"local-state {fingerprint('.loopx/x')}\ngithub-token {fingerprint(TOKEN)} docs/**\n")
    assert [e.rule for e in entries] == ["local-state", "github-token"]

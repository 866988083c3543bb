"""Structural rules for records, and the local-state boundary with its .gitignore block."""

from __future__ import annotations

import pytest

from loopx_git.safety import policy as policies
from loopx_git.safety.boundary import (
    BLOCK_BEGIN,
    BLOCK_END,
    DEFAULT_PATTERNS,
    Boundary,
    has_ignore_block,
    matches,
    with_ignore_block,
)
from loopx_git.safety.records import check, is_raw_key

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize("key", ["transcript", "raw_output", "stdout", "stderr", "prompt", "messages", "build_log"])
def test_raw_material_keys_hold_only_digests_or_relative_refs(key):
    _, found = check({"details": {key: "the whole conversation went like this"}})
    assert [(f.field, f.rule) for f in found] == [(f"details.{key}", "raw-material-key")]
    assert check({"details": {key: DIGEST}})[1] == []
    assert check({"details": {key: "logs/run-12.txt"}})[1] == []
    assert [f.rule for f in check({"details": {key: "/var/log/run.txt"}})[1]] == ["raw-material-key"]


@pytest.mark.parametrize("key", ["password", "api_key", "github_token", "session_token", "client_secret", "cookie"])
def test_credential_keys_hold_only_digests(key):
    for value in ("S3cret.Pass", "vault/prod/db", "hunter2"):
        assert [(f.field, f.rule) for f in check({"details": {key: value}})[1]] == [
            (f"details.{key}", "raw-material-key")
        ]
    assert check({"details": {key: DIGEST}})[1] == []


def test_flags_and_counts_under_raw_keys_are_fine():
    assert not is_raw_key("max_tokens") and not is_raw_key("token_count")
    assert check({"details": {"raw_lines": 120, "stdout": None}, "boundary": {"raw_logs_recorded": False}})[1] == []


def test_one_field_is_capped_and_the_cap_is_configurable():
    big = "x" * 5000
    assert [f.rule for f in check({"summary": big})[1]] == ["field-too-large"]
    roomy = policies.parse_config({"max_field_bytes": 8192})
    assert check({"summary": big}, roomy)[1] == []


@pytest.mark.parametrize(
    "ref, problem",
    [
        ("/etc/passwd", True),
        ("~/notes.md", True),
        ("C:\\x\\y", True),
        ("../outside.txt", True),
        ("docs/../../x", True),
        ("docs/guide.md", False),
        ("https://example.com/run/12", False),
        ("org/repo#12", False),
    ],
)
def test_refs_are_relative_without_dotdot(ref, problem):
    found = check({"artifact_refs": [ref], "code_refs": {"commit_ref": ref}})[1]
    assert bool(found) == problem
    if problem:
        assert {f.field for f in found} == {"artifact_refs[0]", "code_refs.commit_ref"}


def test_field_changes_are_named_by_the_field_they_change():
    record = {"changes": [{"field": "text", "before": None, "after": "see /home/alice/notes"}]}
    clean, found = check(record, redact=True)
    assert [(f.field, f.rule) for f in found] == [("text", "home-path")]
    assert clean["changes"][0]["after"] == "see [REDACTED:home-path]/notes"


def test_boundary_flags_may_not_claim_raw_material():
    found = check({"boundary": {"credential_values_recorded": True, "raw_logs_recorded": False}})[1]
    assert [(f.field, f.rule) for f in found] == [("boundary.credential_values_recorded", "boundary-claim")]


# --- the local-state boundary -------------------------------------------------------------


@pytest.mark.parametrize(
    "path, pattern",
    [
        (".loopx/state.json", ".loopx/"),
        ("sub/.loopx/x", ".loopx/"),
        (".local/cache/a", ".local/"),
        (".codex/goals/g1.md", ".codex/goals/"),
        ("raw.log", "raw*.log"),
        ("logs/raw-run-1.jsonl", "raw*.jsonl"),
        ("chat.transcript.txt", "*.transcript*"),
        ("notes/session.transcript", "*.transcript*"),
    ],
)
def test_local_state_paths_are_caught(path, pattern):
    assert Boundary().violates(path) == pattern


@pytest.mark.parametrize(
    "path",
    [
        ".loopx",
        "docs/loopx.md",
        ".codex/config.toml",
        "sub/.codex/goals/x",
        "rawdata.csv",
        "draw.log",
        "src/local/x.py",
    ],
)
def test_ordinary_paths_pass(path):
    assert Boundary().violates(path) is None


def test_extra_patterns_from_config():
    assert Boundary(["secrets.local/", "/private/*.md"]).violates("a/secrets.local/k") == "secrets.local/"
    assert matches("/private/*.md", "private/x.md") and not matches("/private/*.md", "docs/private/x.md")


def test_ignore_block_is_appended_once_and_keeps_the_users_lines():
    user = "node_modules/\n# mine\n*.pyc"
    once = with_ignore_block(user, DEFAULT_PATTERNS)
    assert once.startswith("node_modules/\n# mine\n*.pyc\n\n" + BLOCK_BEGIN)
    assert with_ignore_block(once, DEFAULT_PATTERNS) == once
    assert has_ignore_block(once, DEFAULT_PATTERNS)


def test_ignore_block_is_updated_where_it_stands():
    text = with_ignore_block("a\n", DEFAULT_PATTERNS) + "b\n"
    updated = with_ignore_block(text, DEFAULT_PATTERNS + ("extra/",))
    lines = updated.splitlines()
    assert lines[0] == "a" and lines[-1] == "b" and "extra/" in lines
    assert lines.count(BLOCK_BEGIN) == 1 and lines.count(BLOCK_END) == 1
    assert not has_ignore_block(text, DEFAULT_PATTERNS + ("extra/",))


def test_the_compiled_boundary_agrees_with_each_pattern():
    boundary = Boundary(["secrets.local/", "/private/*.md", "**/cache/*.bin"])
    paths = [
        ".loopx/x",
        "a/.loopx/b",
        ".loopx",
        "x/.local",
        "x/.local/y",
        ".codex/goals/a",
        "a/.codex/goals/b",
        "raw.log",
        "d/raw1.log",
        "draw.log",
        "raw.jsonl",
        "x.transcript",
        "x.transcript.txt",
        "a/b.transcript/c",
        "private/x.md",
        "a/private/x.md",
        "secrets.local/k",
        "a/secrets.local/k",
        "secrets.local",
        "cache/a.bin",
        "x/y/cache/a.bin",
        "x/cache/a.txt",
        "src/app.py",
    ]
    for path in paths:
        assert boundary.violates(path) == next((p for p in boundary.patterns if matches(p, path)), None), path

"""The safety rules on text: recall on the planted corpus, no false positives on look-alikes,
redaction as a fixed point, fingerprints instead of values, and every way of allowlisting."""

from __future__ import annotations

import json
import re

import pytest

from loopx_git.errors import ValidationError
from loopx_git.safety import policy as policies
from loopx_git.safety.rules import BY_ID, RULES
from loopx_git.safety.scan import fingerprint, redact, scan
from tests.safety.corpus import BENIGN, FORMATS, SHAPES, benign, embed, measure, planted


def _gh(seed: str = "x") -> str:
    """A GitHub-token-shaped fake, assembled so this file holds no token-shaped literal."""
    return "gh" + "p_" + ("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5" + seed)[:36]


def test_corpus_covers_every_rule_with_three_shapes_in_five_formats():
    assert set(SHAPES) == set(BY_ID)
    assert all(len(shapes) >= 3 for shapes in SHAPES.values())
    assert FORMATS == ("json", "yaml", "python", "shell", "markdown", ".env", "url", "header")


def test_block_rules_have_full_recall_and_look_alikes_pass():
    recall, false_positives = measure()
    missed = {rule: f"{hit}/{total}" for rule, (hit, total) in recall.items() if hit != total}
    assert missed == {}
    assert false_positives == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_recall_does_not_depend_on_the_random_values(seed):
    recall, _ = measure(seed)
    assert all(hit == total for hit, total in recall.values())


def test_redaction_is_a_fixed_point_and_keeps_json_valid():
    for sample in planted():
        out, replaced = redact(sample.text)
        assert not [f for f in scan(out) if f.blocks], (sample.rule, sample.fmt)
        assert redact(out)[0] == out
        for finding in replaced:
            assert sample.text[finding.start : finding.end] not in out
        if sample.fmt in ("json", "json-escaped"):
            json.loads(out)


def test_redact_replaces_only_the_secret_part():
    cases = {
        # base64 of a deploy user and a generated password, assembled
        "Authorization: Basic "
        + "ZGVwbG95Olpx"
        + "OHhXM3ZON2tUMnBM": "Authorization: Basic [REDACTED:authorization-header]",
        "https://deploy:"
        + "Zq8xW3vN7kT2pL"
        + "@host.example.net/x": "https://deploy:[REDACTED:url-credentials]@host.example.net/x",
        "/home/alice/projects/app/main.py": "[REDACTED:home-path]/projects/app/main.py",
        '{"p": "C:\\\\Users\\\\erin\\\\x"}': '{"p": "[REDACTED:windows-user-path]\\\\x"}',
        f"token: {_gh()} done": "token: [REDACTED:github-token] done",
    }
    for text, expected in cases.items():
        assert redact(text)[0] == expected


def test_a_finding_has_place_and_fingerprint_never_the_value():
    token = _gh()
    text = f"line one\n  value = '{token}'\n"
    [finding] = scan(text, path="cfg.py")
    assert (finding.rule, finding.severity, finding.line, finding.column) == ("github-token", "block", 2, 12)
    assert re.fullmatch(r"[0-9a-f]{16}", finding.fingerprint) and finding.fingerprint == fingerprint(token)
    assert finding.format() == f"cfg.py:2:12: github-token (block) fp={finding.fingerprint}"
    assert token not in json.dumps(finding.to_json())


def test_warn_rules_do_not_block_and_redact_leaves_them():
    text = "ping 10.1.2.3 and mail ops@acme-corp.io"
    assert {(f.rule, f.severity) for f in scan(text)} == {("private-ip", "warn"), ("email-address", "warn")}
    assert redact(text)[0] == text


def test_escaped_private_key_in_json_is_found():
    text = json.dumps({"k": embed_key()})
    assert "\\n" in text and [f.rule for f in scan(text)] == ["private-key"]


def embed_key() -> str:
    label = "OPENSSH " + "PRIVATE KEY"  # assembled: no key-shaped block in this file
    return f"-----BEGIN {label}-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtz\n-----END {label}-----"


# --- allowlisting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "comment",
    ["# publicsafe: allow", "# publicsafe: allow[home-path]", "# pragma: allowlist secret", "// gitleaks:allow"],
)
def test_inline_comments_allow_ordinary_rules(comment):
    assert scan(f"path = '/home/alice/x'  {comment}") == []


def test_inline_allow_for_other_rules_does_not_allow_this_one():
    assert [f.rule for f in scan("path = '/home/alice/x'  # publicsafe: allow[email-address]")] == ["home-path"]


def test_fingerprint_only_rules_ignore_inline_comments():
    assert [f.rule for f in scan(f"t = '{_gh()}'  # publicsafe: allow")] == ["github-token"]
    assert [f.rule for f in scan(f"t = '{_gh()}'  # pragma: allowlist secret")] == ["github-token"]


def test_allow_file_allows_by_fingerprint_and_path_glob():
    token = _gh()
    fp = fingerprint(token)
    allow = policies.load(None, f"github-token {fp} docs/** # the revoked token shown in the guide\n")
    assert scan(token, allow, path="docs/guide.md") == []
    assert [f.rule for f in scan(token, allow, path="src/app.py")] == ["github-token"]
    everywhere = policies.load(None, f"github-token {fp}\n")
    assert scan(token, everywhere, path="src/app.py") == []
    assert [f.rule for f in scan(_gh("other"), everywhere)] == ["github-token"]


@pytest.mark.parametrize(
    "line, problem",
    [
        ("github-token", "expected '<rule-id> <fingerprint> [path-glob]'"),
        ("no-such-rule 0123456789abcdef", "unknown rule id 'no-such-rule'"),
        ("github-token notafingerprint", "the second field is not a 16-hex fingerprint"),
    ],
)
def test_allow_file_errors_name_the_line_and_the_rule(line, problem):
    with pytest.raises(ValidationError) as err:
        policies.load(None, f"# header\n{line}\n")
    assert err.value.message.startswith(".publicsafe-allow:2: ") and problem in err.value.message
    assert "notafingerprint" not in err.value.message  # a pasted secret is never echoed back


def test_pyproject_config_disables_overrides_and_allows_paths():
    config = """
[tool.loopx.safety]
disabled_rules = ["email-address"]
severity = { "home-path" = "warn" }
allowed_paths = ["tests/fixtures/**"]
ci_home_users = ["buildbot"]
max_field_bytes = 1024
local_state = ["secrets.local/"]
"""
    policy = policies.load(config, None)
    assert scan("ops@acme-corp.io", policy) == []
    assert [(f.rule, f.severity) for f in scan("/home/alice/x", policy)] == [("home-path", "warn")]
    assert scan("/home/buildbot/work", policy) == []
    assert scan("/home/alice/x", policy, path="tests/fixtures/a.json") == []
    assert [f.rule for f in scan(_gh(), policy, path="tests/fixtures/a.json")] == ["github-token"]
    assert policy.max_field_bytes == 1024 and policy.local_state == ("secrets.local/",)


@pytest.mark.parametrize(
    "config, problem",
    [
        ('disabled_rules = ["github-token"]', "cannot be disabled or downgraded"),
        ('severity = { "openai-api-key" = "warn" }', "cannot be disabled or downgraded"),
        ('severity = { "home-path" = "maybe" }', "must map rule ids to 'block' or 'warn'"),
        ('disabled_rules = ["nope"]', "unknown rule id 'nope'"),
        ("colour = true", "unknown key"),
        ("max_field_bytes = 3", "out of range"),
    ],
)
def test_pyproject_config_errors_name_the_key_and_the_rule(config, problem):
    with pytest.raises(ValidationError) as err:
        policies.load(f"[tool.loopx.safety]\n{config}\n", None)
    assert err.value.message.startswith("[tool.loopx.safety]") and problem in err.value.message


def test_every_rule_has_a_prefilter_keyword_that_its_corpus_contains():
    for rule in RULES:
        assert rule.keywords and all(k == k.lower() for k in rule.keywords), rule.id
    for sample in planted():
        if sample.fmt in FORMATS and sample.fmt != "url":  # encoded ones hold it only once decoded
            assert any(k in sample.text.lower() for k in BY_ID[sample.rule].keywords), sample.rule


def test_benign_list_holds_the_look_alikes_named_in_the_issue():
    for value in (
        "${VAR}",
        "$VAR",
        "<token>",
        "{{x}}",
        "changeme",
        "example",
        "xxxx",
        "max_tokens: 4096",
        "/tmp/x",
        "~/work",
        "https://example.com/home/index.html",
        "git@github.com:org/repo.git",
        "/home/runner",
        "10.2.0.1.5",
    ):
        pattern = re.escape(value).replace("VAR", "[A-Z_]+").replace("x\\}\\}", ".+\\}\\}").replace("token", "[a-z]+")
        assert any(re.search(pattern, b) for b in BENIGN), value
    assert len(benign()) == len(BENIGN) * len(FORMATS)
    assert embed("a", "shell") == "export NOTE='a'\n"


def test_the_safety_doc_lists_every_rule():
    from pathlib import Path

    from loopx_git.safety.records import STRUCTURAL_RULES

    doc = (Path(__file__).resolve().parents[2] / "docs" / "safety.md").read_text()
    for rule_id in [*BY_ID, *STRUCTURAL_RULES]:
        assert f"| `{rule_id}` |" in doc, rule_id


def test_this_repository_passes_its_own_check():
    """Dogfood: no secret-shaped literal and no personal path in loopx-git's own tracked files
    (planted test values are assembled at run time or allowlisted by fingerprint)."""
    from pathlib import Path

    from loopx_git.hooks.connection import check
    from loopx_git.store.git import GitRepo

    report = check(GitRepo.discover(Path(__file__).resolve().parents[2]))
    assert [f.format() for f in report.blocking] == []

"""Edge cases of the code-hosting and registry rules that the planted corpus does not reach:
checksums (a valid one rescues a token the entropy check turns away, a broken one does not),
the boundaries of each shape, and the look-alikes that share a prefix or a key name.

Every token here is assembled at run time: this file holds no secret-shaped literal."""

from __future__ import annotations

import base64
import binascii
import random
import string

import pytest

from loopx_git.safety.catalog.hosting import atlassian_crc_ok, base62_crc32_ok, gitlab_routable_crc_ok
from loopx_git.safety.scan import redact, scan
from tests.safety.parts import ALNUM, URLSAFE, cat, rand
from tests.safety.shapes.hosting import HEX, mixed, routable, stateless_ghs, with_crc_hex

BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
BASE36 = string.digits + string.ascii_lowercase


def encode(n: int, alphabet: str, width: int) -> str:
    out = ""
    while n:
        n, d = divmod(n, len(alphabet))
        out = alphabet[d] + out
    return out.rjust(width, alphabet[0])


def base62_token(prefix: str, body: str) -> str:
    """GitHub's and npm's layout, computed here independently of the module under test."""
    return prefix + body + encode(binascii.crc32(body.encode()), BASE62, 6)


def rules(text: str) -> list[str]:
    return [f.rule for f in scan(text)]


# --- checksums ------------------------------------------------------------------------------


def test_base62_crc32_matches_the_documented_layout():
    rng = random.Random(5)
    token = base62_token("gh" + "p_", rand(rng, 30))
    assert base62_crc32_ok(token)
    assert not base62_crc32_ok(token[:-1] + ("0" if token[-1] != "0" else "1"))
    assert not base62_crc32_ok(token[:10])


@pytest.mark.parametrize(
    "prefix, rule", [("gh" + "p_", "github-token"), ("gh" + "u_", "github-token"), ("np" + "m_", "npm-token")]
)
def test_a_valid_checksum_rescues_a_low_entropy_token_and_a_broken_one_does_not(prefix, rule):
    token = base62_token(prefix, "ab" * 15)  # 30 characters of two letters: not random-looking
    assert rules(f"TOKEN_VALUE {token}") == [rule]
    broken = token[:-6] + "000000"
    assert rules(f"TOKEN_VALUE {broken}") == []


def test_a_random_token_with_a_broken_checksum_is_still_reported():
    rng = random.Random(6)
    token = cat("gh", "p_", rand(rng, 36))
    assert not base62_crc32_ok(token)  # random: its tail is no CRC (for this seed)
    assert rules(token) == ["github-token"]


def test_gitlab_routable_crc_and_length_holder():
    rng = random.Random(7)
    token = routable(rng, "gl" + "pat")
    while "-" not in token[6:]:  # a payload holding `-` as well
        token = routable(rng, "gl" + "pat")
    assert gitlab_routable_crc_ok(token)
    assert not gitlab_routable_crc_ok(token[:-1] + ("a" if token[-1] != "a" else "b"))
    head, _, tail = token.rpartition(".")
    wrong_length = f"{head}.{encode(len(head), BASE36, 2)}{tail[2:]}"
    assert not gitlab_routable_crc_ok(wrong_length)


def test_a_gitlab_routable_token_is_found_and_redacted_whole():
    rng = random.Random(8)
    token = routable(rng, "gl" + "rtr")
    text = f'token = "{token}"\n'
    [finding] = scan(text)
    assert finding.rule == "gitlab-token" and text[finding.start : finding.end] == token
    assert redact(text)[0] == 'token = "[REDACTED:gitlab-token]"\n'


def test_a_low_entropy_gitlab_routable_token_counts_by_its_crc():
    payload = "a" * 37 + "b"
    head = cat("gl", "pat-", payload, ".01.", encode(len(payload), BASE36, 2))
    token = head + encode(binascii.crc32(head.encode()), BASE36, 7)
    assert rules(f"x {token} y") == ["gitlab-token"]
    assert rules(f"x {token[:-7]}0000000 y") == []


def test_atlassian_crc_tail():
    rng = random.Random(9)
    token = with_crc_hex(cat("AT", "BB", rand(rng, 24)))
    while token[-8:].isdigit():  # the lower-case check below needs a letter in the tail
        token = with_crc_hex(cat("AT", "BB", rand(rng, 24)))
    assert atlassian_crc_ok(token)
    assert not atlassian_crc_ok(token[:-1] + ("0" if token[-1] != "0" else "1"))
    assert not atlassian_crc_ok(token[:-8] + token[-8:].lower())


def test_bitbucket_app_password_needs_a_checksum_or_a_generated_look():
    checked = with_crc_hex(cat("AT", "BB", "abcdefgh" * 3))  # letters only, saved by its CRC
    assert rules(f"pw {checked}") == ["bitbucket-app-password"]
    assert rules(f"pw {checked[:-8]}ABCDEF12") == []
    for name in ("BaseWeapon", "BaseCharacterMovementComponent2", "BattleHUDWidgetControllerBase"):
        assert rules(cat("class AT", "B", name, " : public AActor")) == []


# --- GitHub ---------------------------------------------------------------------------------


def test_stateless_installation_token_is_found_whole():
    rng = random.Random(10)
    token = stateless_ghs(rng)
    text = f"GITHUB_TOKEN={token}\n"
    [finding] = scan(text)
    assert finding.rule == "github-token" and text[finding.start : finding.end] == token
    assert redact(text)[0] == "GITHUB_TOKEN=[REDACTED:github-token]\n"


def test_github_token_boundaries():
    rng = random.Random(11)
    body = rand(rng, 36)
    # the prefix is the anchor (issue 32): a letter, a digit or `x_` before it hides nothing
    for before in ("x", "9", "A", "x_", "key_"):
        assert rules(cat(before, "gh", "p_", body)) == ["github-token"], before
    assert rules(cat("gh", "p_", body, "_suffix")) == []  # an identifier, not a token
    assert rules(cat("gh", "p_", body[:30])) == []  # too short
    assert rules(cat("(gh", "p_", body, ")")) == ["github-token"]


def test_fine_grained_pat_has_its_documented_shape():
    rng = random.Random(12)
    good = cat("github", "_pat_", rand(rng, 22), "_", rand(rng, 59))
    assert rules(good) == ["github-fine-grained-pat"]
    assert rules(cat("github", "_pat_", "token_for_the_deploy_pipeline_of_the_docs_site")) == []


@pytest.mark.parametrize(
    "text",
    [
        "GITHUB_TOKEN={hex}",
        "GH_TOKEN: '{hex}'",
        'g = Github("{hex}")',
        "git clone https://{hex}@github.com/org/repo.git",
        "https://{hex}:x-oauth-basic@github.com/org/repo.git",
    ],
)
def test_legacy_hex_token_in_a_github_context(text):
    value = rand(random.Random(13), 40, HEX)
    assert "github-legacy-token" in rules(text.format(hex=value))


@pytest.mark.parametrize(
    "text",
    [
        "GITHUB_SHA={hex}",
        "https://github.com/org/repo/commit/{hex}",
        "github_commit_sha: {hex}",
    ],
)
def test_a_hex_id_in_a_github_context_is_not_a_token(text):
    assert rules(text.format(hex=rand(random.Random(14), 40, HEX))) == []


def test_the_legacy_rule_takes_40_hex_digits_only():
    rng = random.Random(15)
    assert "github-legacy-token" not in rules("GITHUB_TOKEN=" + rand(rng, 39, HEX) + "z")
    assert "github-legacy-token" not in rules("GITHUB_TOKEN=" + rand(rng, 41, HEX))


# --- GitLab ---------------------------------------------------------------------------------


def test_gitlab_prefixes_and_instance_prefix():
    rng = random.Random(15)
    for kind in (
        "glpat",
        "gldt",
        "glrt",
        "glrtr",
        "glptt",
        "glcbt",
        "glagent",
        "gloas",
        "glimt",
        "glft",
        "glsoat",
        "glffct",
    ):
        token = cat(kind, "-", rand(rng, 20, URLSAFE))
        assert rules(f"v {token}") == ["gitlab-token"], kind
    assert rules(cat("acme-gl", "pat-", rand(rng, 20, URLSAFE))) == ["gitlab-token"]
    assert rules(cat("xgl", "pat-", rand(rng, 20, URLSAFE))) == []
    assert rules(cat("GR", "1348941", "1" * 20)) == []


def test_gitlab_legacy_token_needs_a_gitlab_credential_name():
    rng = random.Random(16)
    value = "aB3" + rand(rng, 17, ALNUM)
    assert rules(f"GITLAB_PAT={value}") == ["gitlab-legacy-token"]
    assert rules("GITLAB_PROJECT_PATH=platform-team-deploys") == []


# --- Atlassian, Docker, JFrog, npm ----------------------------------------------------------


def test_data_center_pat_decodes_to_an_id_and_random_bytes():
    rng = random.Random(17)
    raw = rand(rng, 12, string.digits).encode() + b":" + bytes(rng.randrange(256) for _ in range(20))
    token = base64.b64encode(raw).decode()
    assert rules(f"JIRA_PAT={token}") == ["atlassian-pat"]
    assert rules(cat("use BB", "DC-", token, " in CI")) == ["atlassian-pat"]
    assert rules("confluence_space_key: ENGINEERINGDOCUMENTATION") == []


def test_docker_config_auth_is_base64_of_user_and_password():
    rng = random.Random(18)
    good = base64.b64encode(cat("ci:", rand(rng, 20)).encode()).decode()
    assert rules(f'{{"auths": {{"registry.example.com": {{"auth": "{good}"}}}}}}') == ["docker-config-auth"]
    no_colon = base64.b64encode(rand(rng, 20).encode()).decode()
    assert rules(f'"auth": "{no_colon}"') == []
    assert rules('"oauth": "' + good + '"') == []


def test_jfrog_reference_token_structure():
    rng = random.Random(19)
    token = base64.b64encode(cat("ref", "tkn:01:", rand(rng, 10, string.digits), ":", rand(rng, 27)).encode()).decode()
    assert rules(token) == ["jfrog-reference-token"]
    assert rules(cat("cmVmdGtu", "...")) == []


def test_npm_token_is_exactly_36_characters_and_lifecycle_variables_pass():
    rng = random.Random(20)
    assert rules(cat("np", "m_", rand(rng, 36))) == ["npm-token"]
    assert rules(cat("np", "m_", rand(rng, 37))) == []
    assert rules("npm_config_registry=https://registry.npmjs.org/ npm_package_version=1.2.3") == []


def test_npmrc_auth_but_not_attributes():
    rng = random.Random(21)
    value = base64.b64encode(cat("alice:", rand(rng, 14)).encode()).decode()
    assert rules(f"//registry.npmjs.org/:_auth={value}") == ["npmrc-auth"]
    assert rules(f"this._auth = {value};") == []


# --- registries and developer tools without a checksum ------------------------------------


def test_npmrc_auth_takes_base64_of_a_password_without_digits():
    value = base64.b64encode(b"Correct-Horse-Staple").decode()
    assert any(c.isupper() for c in value) and any(c.islower() for c in value)
    assert rules(f"//npm.pkg.example.com/:_password={value}") == ["npmrc-auth"]


def test_cratesio_token_is_exactly_32_generated_characters():
    rng = random.Random(8)
    body = mixed(rng, 32)
    assert rules(cat("CARGO_REGISTRY_TOKEN=ci", "o", body)) == ["cratesio-api-token"]
    assert "cratesio-api-token" not in rules(cat("ci", "o", body, "Z"))
    assert "cratesio-api-token" not in rules(cat("x", "ci", "o", body))
    # a camelCase identifier of the same length has no digit; words around the trigram are words
    assert "cratesio-api-token" not in rules(cat("ci", "oServiceConfigurationProviders"))
    assert rules("the precious, delicious ciphers of San Francisco") == []


def test_sonarqube_prefixes_and_the_public_badge_token():
    rng = random.Random(9)
    for kind in ("u", "p", "a"):
        assert rules(cat("token: sq", kind, "_", rand(rng, 40, HEX))) == ["sonarqube-token"]
    badge = cat("https://sonar.example.net/api/project_badges/measure?token=sq", "b_", rand(rng, 40, HEX))
    assert "sonarqube-token" not in rules(badge)


@pytest.mark.parametrize(
    "template",
    [
        "-Dsonar.login={}",
        "sonar.login', '{}",
        '$sonarLogin .= "{}"',
        "SONAR_TOKEN={}",
        "sonarcloud token = '{}'",
        "sonar.auth.token: {}",
    ],
)
def test_a_legacy_sonar_token_needs_the_scanner_setting(template):
    value = rand(random.Random(10), 40, HEX)
    assert rules(template.format(value)) == ["sonarqube-legacy-token"]


def test_a_hex_id_near_sonar_is_no_token():
    sha = rand(random.Random(11), 40, HEX)
    assert rules(f"sonarqube-reporter-1.2.4.tgz#{sha}") == []
    assert rules(f"https://github.com/SonarSource/sonarqube-scan-action/commit/{sha}") == []


def test_jenkins_tokens_new_and_legacy_and_the_crumb():
    rng = random.Random(12)
    new, legacy, other = cat("11", rand(rng, 32, HEX)), rand(rng, 32, HEX), cat("7f", rand(rng, 32, HEX))
    assert rules(f"JENKINS_API_TOKEN={new}") == ["jenkins-api-token"]
    assert rules(f"jenkins_password: '{legacy}'") == ["jenkins-api-token"]
    assert rules(f"-H 'Jenkins-Crumb:{legacy}'") == ["jenkins-api-token"]
    # 34 hex digits that do not start with the version `11` are no API token
    assert "jenkins-api-token" not in rules(f"JENKINS_API_TOKEN={other}")
    assert "jenkins-api-token" not in rules(f"jenkins_user = admin  # build {legacy}")


def test_jfrog_identity_token_needs_the_name_and_a_generated_mix():
    rng = random.Random(13)
    token = mixed(rng, 64)
    assert rules(f'"artifactory", "{token}"') == ["jfrog-identity-token"]
    assert "jfrog-identity-token" not in rules(f"identity {token}")
    assert rules(f"artifactory_sha256: {rand(rng, 64, HEX)}") == []


def test_php_string_append_counts_as_an_assignment():
    value = mixed(random.Random(14), 24)
    assert rules(f'$confluenceToken .= "{value}";') == ["atlassian-pat"]


def test_postman_sourcegraph_stackhawk_shapes():
    rng = random.Random(15)
    assert rules(cat("key PM", "AK-", rand(rng, 24, HEX), "-", rand(rng, 34, HEX))) == ["postman-api-key"]
    assert rules(cat("key PM", "AK-", rand(rng, 24, HEX), "-", rand(rng, 33, HEX))) == []
    instance = cat("sg", "p_", rand(rng, 16, HEX), "_", rand(rng, 40, HEX))
    assert rules(f"SRC_ACCESS_TOKEN={instance}") == ["sourcegraph-access-token"]
    hawk = cat("ha", "wk.", mixed(rng, 20), ".", mixed(rng, 20))
    assert rules(f"HAWK_API_KEY={hawk}") == ["stackhawk-api-key"]
    assert rules("see stackhawk.yml and hawk.config.json") == []

"""Edge cases of the cloud and payment rules: every random token of a format is found, a longer
or shorter one is not cut to fit, context-only formats need their context, and values the vendor
publishes for everyone are not findings while an edited copy of one is.

Every token here is assembled at run time (tests/safety/parts.py), so this file holds none.
"""

from __future__ import annotations

import json
import random
import string
import time

import pytest

from loopx_git.safety.catalog import cloud, payment
from loopx_git.safety.catalog.cloud import published, typed_run
from loopx_git.safety.scan import redact, scan
from tests.safety.parts import ALNUM, B64, URLSAFE, cat, rand
from tests.safety.shapes import cloud as cloud_shapes
from tests.safety.shapes import payment as payment_shapes
from tests.safety.shapes.cloud import _fly_macaroon, _mixed, _openshift, _storage_key

HEX = "0123456789abcdef"
OURS = {rule.id for rule in (*cloud.RULES, *payment.RULES)}
SHAPES = {**cloud_shapes.SHAPES, **payment_shapes.SHAPES}


def rules_in(text: str) -> set[str]:
    return {f.rule for f in scan(text)}


def r(seed: int = 1) -> random.Random:
    return random.Random(seed)


def test_every_rule_of_the_families_has_shapes():
    assert set(SHAPES) == OURS


@pytest.mark.parametrize("rule", sorted(OURS))
def test_random_tokens_of_every_format_are_found(rule):
    # many draws: an entropy or character-class threshold that turns away a real token shows here
    for seed in range(40):
        rng = random.Random(seed)
        for shape in SHAPES[rule]:
            text = shape(rng)
            assert rule in rules_in(text), (seed, text)


@pytest.mark.parametrize("rule", sorted(OURS))
def test_redacted_shapes_leave_no_finding(rule):
    for shape in SHAPES[rule]:
        out, replaced = redact(shape(r(3)))
        assert replaced and not [f for f in scan(out) if f.blocks], out


# --- boundaries: a token one character too long or too short is not cut to fit -------------


def _too_long_or_short():
    g = r(5)
    up = string.ascii_uppercase + "234567"
    return [
        ("aws-access-key-id", cat("AK", "IA", rand(g, 17, up))),
        ("aws-access-key-id", cat("AK", "IA", rand(g, 15, up))),
        ("aws-access-key-id", cat("x", "AK", "IA", rand(g, 16, up))),
        ("aws-secret-access-key", cat("aws_secret_access_key = ", rand(g, 41, B64))),
        ("aws-secret-access-key", cat("aws_secret_access_key = ", rand(g, 39, B64))),
        ("google-api-key", cat("AI", "za", rand(g, 36, URLSAFE))),
        ("google-oauth-client-secret", cat("GOC", "SPX-", rand(g, 29, URLSAFE))),
        ("azure-storage-key", cat("AZURE_STORAGE_KEY=", rand(g, 87, B64), "==")),
        ("azure-client-secret", cat(rand(g, 4), "1Q", "~", rand(g, 34))),
        ("digitalocean-token", cat("do", "p_v1_", rand(g, 65, HEX))),
        ("digitalocean-token", cat("do", "p_v1_", rand(g, 63, HEX))),
        ("heroku-api-token", cat("HR", "KU-AA", rand(g, 59, URLSAFE))),
        ("databricks-token", cat("da", "pi", rand(g, 33, HEX))),
        ("cloudflare-global-api-key", cat("CLOUDFLARE_API_KEY=", rand(g, 38, HEX))),
        ("cloudflare-api-token", cat("CF_API_TOKEN=", rand(g, 41, URLSAFE))),
        ("vercel-legacy-token", cat("VERCEL_TOKEN=", rand(g, 25))),
        ("dynatrace-token", cat("dt", "0c01.", rand(g, 23), ".", rand(g, 64))),
        ("square-oauth-secret", cat("sq0", "csp-", rand(g, 44, URLSAFE))),
        ("square-access-token", cat("EA", "AA", rand(g, 61, URLSAFE))),
        ("stripe-key", cat("task", "_live_", rand(g, 24))),
        ("alibaba-access-key-id", cat("LT", "AI", rand(g, 21))),
        ("flyio-token", cat("fo", "1_", rand(g, 44, URLSAFE))),
        ("flyio-token", cat("fo", "1_", rand(g, 42, URLSAFE))),
        ("pulumi-access-token", cat("pu", "l-", rand(g, 41, HEX))),
        ("openshift-token", cat("sha", "256~", rand(g, 44, URLSAFE))),
        ("amazon-mws-auth-token", cat("amzn", ".mws.", rand(g, 8, HEX), "-", rand(g, 4, HEX), "-", rand(g, 4, HEX))),
        ("google-oauth-legacy-client-secret", cat("client_secret=", _mixed(g, 25, URLSAFE))),
        ("google-oauth-legacy-client-secret", cat("client_secret=", _mixed(g, 23, URLSAFE))),
        ("softlayer-api-key", cat("SOFTLAYER_API_KEY=", rand(g, 65, HEX))),
        ("ibm-cloud-api-key", cat("IBMCLOUD_API_KEY=", rand(g, 45, URLSAFE))),
    ]


@pytest.mark.parametrize("rule, text", _too_long_or_short())
def test_a_token_of_the_wrong_length_is_not_cut_to_fit(rule, text):
    assert rule not in rules_in(text)


# --- context: formats without a prefix need the name that says whose they are --------------


def test_aws_secret_follows_a_key_id_on_its_line_or_the_next_only():
    key_id, secret = cat("AK", "IA", rand(r(), 16, string.ascii_uppercase + "234567")), rand(r(2), 40, B64)
    assert "aws-secret-access-key" in rules_in(f"{key_id},{secret}")
    assert "aws-secret-access-key" in rules_in(f"{key_id}\nSecret: {secret}")
    assert "aws-secret-access-key" in rules_in(json.dumps({"note": f"{key_id}\nSecret: {secret}"}))
    assert "aws-secret-access-key" not in rules_in(f"{key_id}\n\nlater, unrelated: {secret}")
    sha1 = rand(r(3), 40, HEX)
    assert rules_in(f"{key_id} {sha1}") == {"aws-access-key-id"}


def test_aws_session_token_needs_its_name_or_the_sts_header():
    blob = rand(r(), 360, B64)
    assert "aws-session-token" not in rules_in(f"data {blob}")
    assert "aws-session-token" in rules_in(f"aws_session_token={blob}")
    assert "aws-session-token" in rules_in(cat("data IQoJb3Jp", "Z2luX2Vj", blob))


def test_service_account_key_id_needs_the_service_account_type():
    key_id = rand(r(), 40, HEX)
    first = {"type": "service_account", "project_id": "p", "private_key_id": key_id}
    last = {"project_id": "p", "private_key_id": key_id, "client_id": "1", "type": "service_account"}
    other = {"type": "authorized_user", "private_key_id": key_id}
    assert "gcp-service-account" in rules_in(json.dumps(first, indent=2))
    assert "gcp-service-account" in rules_in(json.dumps(last))
    assert "gcp-service-account" in rules_in(json.dumps({"note": json.dumps(first)}))  # escaped quotes
    assert "gcp-service-account" not in rules_in(json.dumps(other))


def test_sas_signature_needs_a_version_or_an_expiry():
    sig = cat(rand(r(), 40), "%3D")
    assert "azure-sas-token" not in rules_in(f"https://h.example/p?sp=r&sig={sig}")
    assert "azure-sas-token" in rules_in(f"https://h.example/p?sp=r&sv=2022-11-02&sig={sig}")
    # Service Bus writes the expiry after the signature
    token = f"SharedAccessSignature sr=sb%3A%2F%2Fns&sig={sig}&se=1900000000&skn=send"
    assert "azure-sas-token" in rules_in(token)


def test_heroku_uuid_needs_a_heroku_key_name():
    uid = cat(rand(r(), 8, HEX), "-", rand(r(), 4, HEX), "-4", rand(r(), 3, HEX), "-a", rand(r(), 3, HEX), "-")
    uid += rand(r(), 12, HEX)
    assert "heroku-api-key" not in rules_in(f"HEROKU_APP_ID={uid}")
    assert "heroku-api-key" in rules_in(f"HEROKU_API_KEY={uid}")
    assert "heroku-api-key" in rules_in(f"machine api.heroku.com login ops password {uid}")


def test_legacy_vault_token_needs_a_vault_or_token_name():
    value = cat("s", ".", rand(r(), 20), "7", rand(r(), 3))
    letters = cat("s", ".", rand(r(), 24, string.ascii_letters))
    assert "vault-legacy-token" not in rules_in(f"note: {value}")
    assert "vault-legacy-token" in rules_in(f"VAULT_TOKEN={value}")
    assert "vault-legacy-token" in rules_in(f"vault login -address=https://v.example {value}")
    assert "vault-legacy-token" in rules_in(f"VAULT_TOKEN={letters}")
    # after a bare `token`, only a value that also mixes in digits
    assert "vault-legacy-token" in rules_in(f"token: {value}")
    assert "vault-legacy-token" not in rules_in(f"token: {letters}")


def test_scannable_cloudflare_token_must_have_its_full_shape():
    body = rand(r(), 40)
    assert "cloudflare-api-token" in rules_in(cat("cf", "ut_", body, rand(r(), 8, HEX)))
    assert "cloudflare-api-token" not in rules_in(cat("cf", "ut_", body))
    # 40 characters after a Cloudflare name, but a scannable prefix without its checksum
    assert "cloudflare-api-token" not in rules_in(cat("CLOUDFLARE_API_TOKEN=cf", "ut_", body[:35]))


def test_google_legacy_client_secret_needs_the_name_and_a_generated_mix():
    value = _mixed(r(), 24, URLSAFE)
    assert "google-oauth-legacy-client-secret" in rules_in(f"'clientSecret' : '{value}'")
    assert "google-oauth-legacy-client-secret" not in rules_in(f"'clientId' : '{value}'")
    # a 24-character passphrase in one case and digits is no generated secret
    assert "google-oauth-legacy-client-secret" not in rules_in("client_secret = 'my_client_secret_v2_2024'")


def test_google_legacy_client_secret_is_not_the_first_half_of_a_split_value():
    # 24 characters that a split literal or a continued line goes on after belong to a longer value
    head, tail = cat("p8", "e-", _mixed(r(), 20)), _mixed(r(2), 12)
    assert "google-oauth-legacy-client-secret" not in rules_in(f'x = "client_secret={head}" + "{tail}"')
    assert "google-oauth-legacy-client-secret" not in rules_in(f'echo "client_secret={head}\\\n{tail}"')
    assert "adobe-client-secret" in rules_in(f'x = "client_secret={head}" + "{tail}"')


def test_azure_connection_strings_over_lines_and_app_configuration():
    key = _storage_key(r())
    assert "azure-connection-string" in rules_in(
        cat("DefaultEndpointsProtocol=http;AccountName=a;\n  Account", "Key=", key, ";\nBlobEndpoint=x;")
    )
    assert "azure-connection-string" in rules_in(
        json.dumps({"c": cat("DefaultEndpointsProtocol=http;AccountName=a;\nAccount", "Key=", key, ";")})
    )
    secret = cat(rand(r(), 43, B64), "=")
    app_config = cat("Endpoint=https://a.azconfig.io;Id=ab12-l0-s0:", rand(r(2), 20), ";Sec", "ret=", secret)
    [finding] = scan(app_config)
    assert finding.rule == "azure-connection-string" and app_config[finding.start : finding.end] == secret
    assert scan("Endpoint=https://contoso.azconfig.io;Id=xxx;Secret=xxx") == []


def test_a_logic_apps_signature_is_redacted_whole():
    sig = cat(rand(r(), 20, URLSAFE), "-", rand(r(2), 10, URLSAFE), "_", rand(r(3), 11, URLSAFE))
    url = cat(
        "https://prod-1.westus.logic.azure.com:443/workflows/",
        rand(r(), 32, HEX),
        "/triggers/manual/paths/invoke?api-version=2016-06-01&sv=1.0&si",
        "g=",
        sig,
    )
    out, [finding] = redact(url)
    assert finding.rule == "azure-sas-token" and out.endswith("sig=[REDACTED:azure-sas-token]")


def test_a_fly_macaroon_bundle_is_one_secret():
    bundle = cat(_fly_macaroon(r(), "fm1r_"), ",", _fly_macaroon(r(2), "fm1a_", 60))
    text = f'FLY_API_TOKEN="FlyV1 {bundle}"'
    [finding] = scan(text)
    assert finding.rule == "flyio-token" and text[finding.start : finding.end] == bundle
    # the prefix inside another token (a CDN file name) or a CSRF token is none
    assert "flyio-token" not in rules_in(cat("NfNf", "m2_", rand(r(), 150, B64)))
    assert "flyio-token" not in rules_in(cat('value="7SWa-Fo', "1_", rand(r(), 43, URLSAFE), '"'))


def test_an_openshift_token_resource_name_is_a_hash_not_a_token():
    token = _openshift(r())
    assert "openshift-token" in rules_in(f"oc login --token={token}")
    assert "openshift-token" not in rules_in(f"kind: OAuthAccessToken\nmetadata:\n  name: {token}")
    assert "openshift-token" not in rules_in(f'{{"metadata": {{"name": "{token}"}}}}')


def test_ibm_and_softlayer_keys_need_their_names():
    key, hex_key = rand(r(), 44, URLSAFE), rand(r(), 64, HEX)
    assert "ibm-cloud-api-key" in rules_in(f"ibmcloud login -r us-south --apikey {key}")
    assert "ibm-cloud-api-key" not in rules_in(f"checksum {key}")
    assert "softlayer-api-key" in rules_in(f"[softlayer]\nusername = ops\nendpoint_url = x\napi_key = {hex_key}")
    assert "softlayer-api-key" not in rules_in(f"[other]\napi_key = {hex_key}")
    # a repeated pattern is a placeholder, however many distinct characters it has
    assert "softlayer-api-key" not in rules_in("SOFTLAYER_API_KEY=" + "abcd1234" * 8)


def test_a_token_after_an_escaped_line_break_is_found():
    key_id = cat("LT", "AI", rand(r(), 20))
    assert "alibaba-access-key-id" in rules_in(json.dumps({"note": f"id:\n{key_id}"}))
    assert "alibaba-access-key-id" not in rules_in(f"xn{key_id}")


# --- values the vendor publishes ------------------------------------------------------------


def _azurite() -> str:
    return cat("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/", "K1SZFPTOtr/KBHBeksoGMGw==")


@pytest.mark.parametrize(
    "rule, value, context",
    [
        ("azure-storage-key", _azurite(), "AccountKey={}"),
        ("stripe-key", cat("s", "k_test_4eC39HqLyjWDarjtT1zdp7dc"), "key {}"),
        (
            "dynatrace-token",
            cat(
                "dt",
                "0s01.ST2EY72KQINMH574WMNVI7YN.",
                "G3DFPBEJYMODIDAEX454M7YWBUVEFOWKPRVMWFASS64NFH52PX6BNDVFFM572RZM",
            ),
            "token {}",
        ),
        ("supabase-secret-key", cat("sb", "_secret_N7UND0UgjKTVK-", "Uodkm0Hg_xSvEMPvz"), "key {}"),
    ],
)
def test_published_values_are_not_findings_but_an_edited_copy_is(rule, value, context):
    assert published(value)
    assert scan(context.format(value)) == []
    edited = value[:-6] + ("Q" if value[-6] != "Q" else "R") + value[-5:]
    assert not published(edited)
    assert rule in rules_in(context.format(edited))


def test_typed_runs_are_not_random():
    assert typed_run("xx" + "abcdef" + "yy") and typed_run("9876543") and typed_run("QRSTUV")
    assert not typed_run("abcdeXghij") and not typed_run(rand(r(), 40, ALNUM).replace("a", "!"))


# --- cost: the regexes stay linear on input built to make them backtrack ---------------------


def _adversarial() -> list[str]:
    n = 40_000
    return [
        "aws_secret " * (n // 11),
        cat("AK", "IA", "QWERTYUIOPASDFGH ") * (n // 21),
        "sv=2020-01-01" + "&a=b" * (n // 4),
        "sp=r&" * (n // 5),
        "DefaultEndpointsProtocol=https;" + "x;" * (n // 2),
        "Q~" * (n // 2),
        ('"private_key_id": "' + "a" * 40 + '", ') * (n // 62),
        "machine api.heroku.com " + "x" * n,
        "heroku_key_token_key_" * (n // 21),
        "vault login" + " --x=y" * (n // 6),
        "cf_token_key_" * (n // 13),
        "session_token=" * (n // 14),
        "IQoJb3JpZ2luX2Vj" * (n // 16),
        "paypal_secret_" * (n // 14),
        "Endpoint=x;" + "a;\n" * (n // 3),
        "client_secret" * (n // 13),
        "[softlayer]" + "api_key " * (n // 8),
        "ibmcloud login " + "--x " * (n // 4),
        cat("fm", "2_") + "A" * 200 + cat(",fm", "2_", "A" * 30) * (n // 35),
    ]


def test_rules_stay_fast_on_input_built_to_make_them_backtrack():
    for text in _adversarial():
        for rule in (*cloud.RULES, *payment.RULES):
            started = time.perf_counter()
            list(rule.pattern.finditer(text))
            assert time.perf_counter() - started < 1.0, (rule.id, text[:40])

"""Format details of the vendor rules added for the second held-out measurement that the corpus
does not pin: exact lengths (a longer token is not cut), prefixes that also start ordinary words,
the vendor name a prefix-less key needs nearby, public keys of the same vendors, and documented
examples that are nobody's secret. Every token-shaped value is assembled at run time (the
repository scans itself)."""

from __future__ import annotations

import random
import string
import uuid

import pytest

from loopx_git.safety.catalog.cloud import repeated_block
from loopx_git.safety.scan import redact, scan
from tests.safety.parts import ALNUM, URLSAFE, cat, rand

HEX = "0123456789abcdef"
BASE32 = string.ascii_lowercase + "234567"
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def rules(text: str) -> list[str]:
    return [f.rule for f in scan(text)]


def mixed(r: random.Random, n: int, alphabet: str = ALNUM) -> str:
    chars = [r.choice(string.ascii_uppercase), r.choice(string.ascii_lowercase), r.choice(string.digits)]
    chars += [r.choice(alphabet) for _ in range(n - 3)]
    r.shuffle(chars)
    return "".join(chars)


def a_uuid(r: random.Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


@pytest.fixture
def r() -> random.Random:
    return random.Random(2024)


# --- exact lengths: one character more or less is another string --------------------------------


@pytest.mark.parametrize(
    ("rule", "make"),
    [
        ("readme-api-key", lambda r, n: cat("rd", "me_", rand(r, n, string.ascii_lowercase + string.digits))),
        ("google-express-mode-api-key", lambda r, n: cat("AQ", ".Ab8R", mixed(r, n - 24, URLSAFE))),
        ("prefect-api-key", lambda r, n: cat("pn", "u_", mixed(r, n - 34))),
        ("kolide-api-key", lambda r, n: cat("k2", "sk_v1_", mixed(r, n - 46))),
        ("intra42-client-secret", lambda r, n: cat("s-s4", "t2ud-", rand(r, n - 6, HEX))),
        ("netlify-token", lambda r, n: cat("nf", "p_", mixed(r, n - 34))),
    ],
)
def test_the_documented_length_is_found_and_a_longer_or_shorter_run_is_not(r, rule, make):
    # every maker above gives the documented length at n = 70
    assert rule in rules(cat("KEY=", make(r, 70)))
    assert rule not in rules(cat("KEY=", make(r, 71)))
    assert rule not in rules(cat("KEY=", make(r, 69)))


def test_circleci_tokens_have_a_base58_id_and_a_hex_tail(r):
    assert rules(cat("CIRCLE_TOKEN=CCIP", "AT_", rand(r, 22, BASE58), "_", rand(r, 40, HEX))) == ["circleci-token"]
    # `0` is no base58 digit, and the tail is hex: not CircleCI's shape
    assert "circleci-token" not in rules(cat("CCIP", "AT_0", rand(r, 21, BASE58), "_", rand(r, 40, HEX)))
    assert "circleci-token" not in rules(cat("CCIP", "AT_", rand(r, 22, BASE58), "_", rand(r, 40, "ghijkxyz")))


# --- prefixes that also start ordinary words ----------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "head", "body"),
    [
        ("netlify-token", "i", lambda r: cat("nf", "o_", mixed(r, 36))),  # `nfo_` inside `info_`
        ("elevenlabs-api-key", "ta", lambda r: cat("s", "k_", rand(r, 48, HEX))),  # `sk_` inside `task_`
        ("elevenlabs-api-key", "di", lambda r: cat("s", "k_", rand(r, 48, HEX))),
        ("composio-api-key", "pe", lambda r: cat("a", "k_", mixed(r, 20))),  # `ak_` inside `peak_`
        ("clickup-personal-token", "s", lambda r: cat("p", "k_20481632_", "7Q", rand(r, 30, string.ascii_uppercase))),
        ("azure-devops-legacy-pat", "torn", lambda r: cat("ado_pat = 7", rand(r, 51, BASE32))),
    ],
)
def test_a_prefix_inside_a_longer_word_is_no_token(r, rule, head, body):
    token = body(r)
    assert rule in rules(cat("x = ", token)), "the same value on its own is found"
    assert rule not in rules(cat("x = ", head, token))


def test_typeform_tokens_mix_cases_and_digits_unlike_tensorflow_probability_names(r):
    assert rules(cat("TYPEFORM_TOKEN=tf", "p_", mixed(r, 44), "_", mixed(r, 14))) == ["typeform-api-token"]
    assert rules(cat("tf", "p_posterior_samples_for_the_second_stage_of_layer42 = 1")) == []


def test_composio_keys_need_a_random_mix_not_a_snake_case_name(r):
    assert rules(cat("COMPOSIO_API_KEY=a", "k_", mixed(r, 20))) == ["composio-api-key"]
    assert rules(cat("a", "k_dynamic_font_size_px = 12")) == []
    # one character short is not Composio's format
    assert "composio-api-key" not in rules(cat("COMPOSIO_API_KEY=a", "k_", mixed(r, 19)))


# --- prefix-less keys need their vendor's name nearby -------------------------------------------


def test_launchdarkly_keys_are_found_near_the_vendor_name_only(r):
    key = cat("sd", "k-", a_uuid(r))
    assert rules(cat("LAUNCHDARKLY_SDK_KEY=", key)) == ["launchdarkly-key"]
    assert rules(cat("import ldclient\nldclient.set_config(Config('", key, "'))")) == ["launchdarkly-key"]
    assert "launchdarkly-key" not in rules(cat("request_id: ", key))
    # mobile keys ship in apps: public by design
    assert rules(cat("LAUNCHDARKLY_MOBILE_KEY=mob-", a_uuid(r))) == []


def test_gocardless_live_tokens_are_found_near_the_vendor_name_only(r):
    value = cat("li", "ve_", mixed(r, 40, URLSAFE))
    assert rules(cat("GOCARDLESS_ACCESS_TOKEN=", value)) == ["gocardless-api-token"]
    assert rules(cat("gocardless:\n  access_token: ", value)) == ["gocardless-api-token"]
    assert "gocardless-api-token" not in rules(cat("token: ", value))


def test_asana_tokens_are_found_near_the_vendor_name_only(r):
    pat = cat("1/", rand(r, 16, string.digits), ":", rand(r, 32, HEX))
    assert rules(cat("ASANA_PAT=", pat)) == ["asana-token"]
    assert rules(cat("asana token = 0/", rand(r, 32, HEX))) == ["asana-token"]
    assert "asana-token" not in rules(cat("ratio: ", pat))
    assert rules("https://app.asana.com/0/1201234567890123/1201234567890124/f") == []


def test_algolia_admin_keys_are_found_but_not_the_public_search_key(r):
    key = rand(r, 32, HEX)
    assert rules(cat("ALGOLIA_ADMIN_KEY=", key)) == ["algolia-admin-key"]
    for name in ("ALGOLIA_SEARCH_KEY", "algoliaSearchOnlyKey", "NEXT_PUBLIC_ALGOLIA_API_KEY", "algolia_client_key"):
        assert "algolia-admin-key" not in rules(cat(name, "=", key)), name


def test_azure_devops_legacy_tokens_need_an_azure_devops_name(r):
    value = cat("7", rand(r, 51, BASE32))
    for name in ("AZURE_DEVOPS_EXT_PAT", "ado_pat", "VSTS_TOKEN", "AZDO_PERSONAL_ACCESS_TOKEN"):
        assert rules(cat(name, "=", value)) == ["azure-devops-legacy-pat"], name
    assert "azure-devops-legacy-pat" not in rules(cat("shadow_token=", value))


def test_azure_openai_keys_under_its_name_or_in_the_client_constructor(r):
    key = rand(r, 32, HEX)
    assert rules(cat("azure_openai_key=", key)) == ["azure-openai-api-key"]
    assert rules(cat("client = AzureOpenAI(\n  azure_endpoint=ep,\n  api_key='", key, "',\n)")) == [
        "azure-openai-api-key"
    ]
    assert rules(cat("azure_storage_container=", key)) == []


def test_datadog_keys_up_to_four_lines_under_a_datadog_section(r):
    key = rand(r, 32, HEX)
    assert rules(cat("datadog:\n  site: datadoghq.eu\n  apiKey: ", key)) == ["datadog-api-key"]
    assert rules(cat("datadog:\n  a: 1\n  b: 2\n  c: 3\n  apiKey: ", key)) == ["datadog-api-key"]
    far = cat("datadog:\n", "".join(f"  k{i}: {i}\n" for i in range(5)), "  apiKey: ", key)
    assert "datadog-api-key" not in rules(far)


# --- session tokens, temporary tokens -----------------------------------------------------------


def test_slack_client_session_tokens_and_cookies(r):
    digits = string.digits
    xoxc = cat("xo", "xc-", rand(r, 10, digits), "-", rand(r, 13, digits), "-", rand(r, 13, digits), "-")
    assert rules(cat("SLACK_TOKEN=", xoxc, rand(r, 64, HEX))) == ["slack-token"]
    cookie = cat("xo", "xd-", rand(r, 60, ALNUM), "%2F", rand(r, 60, ALNUM), "%3D%3D")
    assert rules(cat("d=", cookie, "; Path=/")) == ["slack-session-cookie"]
    text = cat("cookie = '", cookie, "'")
    assert scan(redact(text)[0]) == []


def test_mapbox_temporary_tokens_are_blocked_like_secret_ones_and_public_ones_are_not(r):
    payload = cat("eyJ1IjoiYWNtZSIsImEiOiJ", rand(r, 24, ALNUM))
    assert rules(cat("MAPBOX_TOKEN=t", "k.", payload, ".", rand(r, 22, URLSAFE))) == ["mapbox-secret-token"]
    assert "mapbox-secret-token" not in rules(cat("MAPBOX_TOKEN=p", "k.", payload, ".", rand(r, 22, URLSAFE)))


# --- documented examples are nobody's secret ----------------------------------------------------


def test_documented_examples_are_not_findings():
    # Kolide's changelog example, RFC 4122's example UUID, AWS's example secret with its tail rewritten
    assert "kolide-api-key" not in rules(cat("KOLIDE_TOKEN=k2", "sk_v1_", "A2UYhW7OPt2jKKLqmFcaGNK7"))
    assert "snyk-api-token" not in rules(cat("SNYK_TOKEN=123e4567-e89b-12d3-", "a456-426614174000"))
    for tail in ("ESAMPLEKEY", "ESATESTKEY", "ESAFAKEKEY"):
        text = cat("aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCY", tail)
        assert "aws-secret-access-key" not in rules(text), tail


def test_a_block_typed_three_times_is_a_placeholder_but_a_run_of_one_character_is_format():
    assert repeated_block("a1b2c3d4e5f6" * 3 + "a1b2")
    assert repeated_block(cat("xy", "asdf" * 3, "Q"))
    assert not repeated_block("A" * 12)  # the fixed runs some formats carry (Dropbox's AAAAAAAAAA)
    assert not repeated_block(rand(random.Random(5), 64, HEX))
    assert "circleci-legacy-token" not in rules(cat("Circle-Token: ", "0f1e2d3c4b5a" * 3, "0f1e"))
    assert "circleci-legacy-token" in rules(cat("Circle-Token: ", rand(random.Random(6), 40, HEX)))


def test_tailscale_keys_and_the_documentation_sample(r):
    key = cat("ts", "key-auth-k", mixed(r, 11), "CNTRL-", mixed(r, 33))
    assert rules(cat("TS_AUTHKEY=", key)) == ["tailscale-key"]
    assert rules(cat("ts", "key-api-abcDEF1CNTRL-091234567890ABCDEF")) == []
    assert rules(cat("ts", "key-bogus-k", mixed(r, 11), "CNTRL-", mixed(r, 33))) == []


@pytest.mark.parametrize(
    "line",
    [
        "layer = tfp_layers_DenseVariational_v2_kernel_posterior_fn(x)",
        "d = tfp_distributions_MultivariateNormalTriL_2d_scale_fn",
        "x = nfc_adapter_enable_foreground_dispatch_1",
        "name = pscale_pw_connection_string_for_primary_db",
    ],
)
def test_an_identifier_that_starts_with_a_vendor_prefix_is_not_a_token(line):
    """TensorFlow Probability's `tfp_`, Android's `nfc_`: names built from words, not random bodies."""
    assert [f.rule for f in scan(line) if f.blocks] == []

"""Format details of the SaaS and chat rules that the corpus does not pin: Grafana's checksum,
the boundaries of prefix-less shapes, the vendor ids that are not secrets, and the Sentry DSN
decision. Every token-shaped value is assembled at run time (the repository scans itself)."""

from __future__ import annotations

import random
import time
import zlib

import pytest

from loopx_git.safety.catalog import saas
from loopx_git.safety.catalog.saas import grafana_checksum_ok
from loopx_git.safety.scan import redact, scan
from tests.safety.parts import B64, URLSAFE, cat, rand
from tests.safety.shapes.saas import (
    HEX,
    _discord_bot,
    _facebook_token,
    _grafana_sa,
    _mailgun_private,
    _mapbox_secret,
    _mixed,
    _okta,
    _teams_webhook,
    _telegram,
    _uuid,
)


def rules(text: str) -> list[str]:
    return [f.rule for f in scan(text)]


@pytest.fixture
def r() -> random.Random:
    return random.Random(12)


# --- Grafana's CRC32 ------------------------------------------------------------------------


def test_grafana_checksum_is_the_crc32_of_the_token_head(r):
    head = cat("gl", "sa_", rand(r, 32))
    crc = zlib.crc32(head.encode()).to_bytes(4, "little").hex()
    assert grafana_checksum_ok(cat(head, "_", crc))
    wrong = format((int(crc, 16) + 1) % 2**32, "08x")
    assert not grafana_checksum_ok(cat(head, "_", wrong))


def test_grafana_checksum_rescues_a_token_the_entropy_check_drops():
    head = cat("gl", "sa_", "ab" * 16)  # two distinct letters: not random-looking
    crc = zlib.crc32(head.encode()).to_bytes(4, "little").hex()
    assert rules(cat("token: ", head, "_", crc)) == ["grafana-service-account-token"]
    assert rules(cat("token: ", head, "_", "0badc0de")) == []


def test_a_random_grafana_token_with_a_broken_checksum_is_still_found(r):
    token = _grafana_sa(r, valid=False)
    assert not grafana_checksum_ok(token)
    assert rules(cat("GRAFANA_TOKEN=", token)) == ["grafana-service-account-token"]


# --- Slack ----------------------------------------------------------------------------------


def test_slack_tokens_of_every_kind_are_found(r):
    digits = "0123456789"
    for token in (
        cat("xo", "xb-", rand(r, 12, digits), "-", rand(r, 24)),  # legacy bot: one id
        cat("xo", "xo-", rand(r, 6, digits), "-", rand(r, 6, digits), "-", rand(r, 6, digits), "-", rand(r, 18, HEX)),
        cat("xo", "xr-", rand(r, 12, digits), "-", rand(r, 30)),
    ):
        assert rules(cat("token: ", token)) == ["slack-token"], token


@pytest.mark.parametrize(
    "text",
    [
        cat("xo", "xp-1234-1234-1234-", "4ddbc191d40ee098cbaae6f3523ada2d"),  # ids written as 1234
        cat("xo", "xe.xoxp-1-", "RandomStringHereForTheDocs"),  # a word for the tail
        cat("xo", "xb-", "12345-abcd234"),  # too short
        cat("xo", "xp-572370529330-573807301142-572331691188-", "#" * 20),  # masked tail
    ],
)
def test_slack_documentation_shapes_are_not_tokens(text):
    assert rules(text) == []


# --- Discord and Telegram -------------------------------------------------------------------


def test_discord_bot_token_needs_a_line_that_names_it(r):
    token = _discord_bot(r)
    assert rules(cat("bot.run('", token, "')")) == ["discord-bot-token"]
    assert rules(cat("values:\n  - ", token, "\n")) == []  # a bare shape with nothing saying what it is


def test_discord_token_inside_a_longer_dotted_string_is_not_cut_out(r):
    token = _discord_bot(r)
    assert "discord-bot-token" not in rules(cat("token = x.", token))
    assert "discord-bot-token" not in rules(cat("token = ", token, rand(r, 3, URLSAFE)))


def test_discord_webhook_redaction_keeps_the_url_and_the_id(r):
    token = rand(r, 68, URLSAFE)
    text = cat("url: https://discord.com/api/", "webhooks/123456789012345678/", token)
    out, found = redact(text)
    assert [f.rule for f in found] == ["discord-webhook"]
    assert out == "url: https://discord.com/api/webhooks/123456789012345678/[REDACTED:discord-webhook]"


def test_telegram_token_is_found_in_the_bot_url_and_not_when_longer(r):
    token = _telegram(r)
    assert rules(cat("https://api.telegram.org/bot", token, "/getMe")) == ["telegram-bot-token"]
    assert rules(cat("id ", token, "x")) == []
    assert rules(cat("id 1", token)) == []  # 11 digits: not a bot id


# --- Twilio, Mailgun, Datadog: ids and hashes that are not secrets --------------------------


def test_twilio_account_sid_is_an_id_and_only_the_token_after_it_is_a_secret(r):
    sid, token = cat("A", "C", rand(r, 32, HEX)), rand(r, 32, HEX)
    assert rules(cat("TWILIO_ACCOUNT_SID=", sid)) == []
    text = cat('client = Client("', sid, '", "', token, '")')
    [finding] = scan(text)
    assert (finding.rule, text[finding.start : finding.end]) == ("twilio-auth-token", token)


def test_mailgun_public_key_and_hex_in_paths_are_not_private_keys(r):
    assert rules(cat("pub", "key-", rand(r, 32, HEX))) == []
    assert rules(cat("s3://cache/key-", rand(r, 32, HEX))) == []
    assert rules(cat("cache-key-", rand(r, 32, HEX))) == []


def test_mailgun_new_key_needs_a_mailgun_setting_or_the_api_user(r):
    key = _mailgun_private(r)
    assert rules(cat("MAILGUN_SIGNING_KEY=", key)) == ["mailgun-private-key"]
    assert rules(cat("curl --user 'api:", key, "'")) == ["mailgun-private-key"]
    assert rules(cat("build ", key)) == []


@pytest.mark.parametrize(
    "name, n, found",
    [
        ("DD_API_KEY", 32, ["datadog-api-key"]),
        ("DD_APP_KEY", 40, ["datadog-app-key"]),
        ("DD_GIT_COMMIT_SHA", 40, []),
        ("datadog_trace_id", 32, []),
        ("DD_API_KEY_SECRET_ARN", 32, []),
    ],
)
def test_datadog_hex_counts_only_as_a_key_setting(r, name, n, found):
    assert rules(cat(name, "=", rand(r, n, HEX))) == found


def test_redaction_of_a_context_rule_keeps_the_setting_name(r):
    out, _ = redact(cat("DD_API_KEY=", rand(r, 32, HEX), "\n"))
    assert out == "DD_API_KEY=[REDACTED:datadog-api-key]\n"


# --- Sentry DSNs and other public values ----------------------------------------------------


def test_a_sentry_dsn_key_is_public_but_a_legacy_dsn_secret_is_not(r):
    public = rand(r, 32, HEX)
    modern = cat("dsn: https://", public, "@o450412.ingest.sentry.io/5212345")
    assert not [f for f in scan(modern) if f.rule in {rule.id for rule in saas.RULES}]
    legacy = cat("dsn: https://", public, ":", rand(r, 32, HEX), "@sentry.example.net/3")
    assert rules(legacy) == ["url-credentials"]


def test_new_relic_license_placeholder_with_upper_case_padding_is_not_a_key(r):
    assert rules(cat("license_key: ", rand(r, 32, HEX), "FFFF", "NR", "AL")) == []
    assert rules(cat("license_key: ", rand(r, 36, HEX), "NR", "AL")) == ["newrelic-license-key"]


def test_a_40_hex_license_key_counts_only_near_new_relic(r):
    key = rand(r, 40, HEX)
    template = "# Required license key associated with your New Relic account.\nlicense_key: "
    assert rules(template + key) == ["newrelic-legacy-license-key"]
    assert rules(cat("NEW_RELIC_LICENSE_KEY=", key)) == ["newrelic-legacy-license-key"]
    assert rules(cat("license_key: ", key)) == []  # a 40-hex value alone is a commit id as well
    far = "# New Relic\n" + "setting: x\n" * 6 + "license_key: " + key
    assert rules(far) == []


# --- Microsoft Teams, Facebook, Okta --------------------------------------------------------


def test_a_teams_webhook_is_redacted_from_the_ids_to_the_v2_signature(r):
    url = _teams_webhook(r, v2=True)
    out, [finding] = redact(cat("TEAMS=", url, "\n"))
    assert finding.rule == "msteams-webhook"
    assert out == "TEAMS=https://acme.webhook.office.com/webhookb2/[REDACTED:msteams-webhook]\n"


def test_a_teams_webhook_of_any_connector_but_not_a_documentation_one(r):
    ids = cat(_uuid(r), "@", _uuid(r))
    jenkins = cat("https://outlook.office.com/webhook/", ids, "/JenkinsCI/", rand(r, 32, HEX), "/", _uuid(r))
    assert rules(jenkins) == ["msteams-webhook"]
    zeros = cat("https://outlook.office.com/webhook/", ids, "/Incoming", "Webhook/", "0" * 32, "/", _uuid(r))
    assert rules(zeros) == []


def test_facebook_page_token_but_not_square_or_a_hex_checksum(r):
    assert rules(cat("token ", _facebook_token(r))) == ["facebook-access-token"]
    square = cat("EA", "AA", _mixed(r, 60, URLSAFE))
    assert rules(cat("SQUARE_ACCESS_TOKEN=", square)) == ["square-access-token"]
    assert rules(cat("sum ", "EA", "AC", rand(r, 120, HEX).upper())) == []


@pytest.mark.parametrize(
    "template",
    ['facebook_app_secret = "{}"', "fbApiKey: '{}'", "config.facebook.key = '{}'", "FB_CLIENT_TOKEN={}"],
)
def test_facebook_app_secret_needs_a_facebook_credential_name(r, template):
    secret = rand(r, 32, HEX)
    assert rules(template.format(secret)) == ["facebook-app-secret"]
    assert "facebook-app-secret" not in rules(f"FACEBOOK_APP_ID_HASH={secret}")


def test_okta_token_after_the_name_on_the_next_line_or_the_ssws_scheme(r):
    token = _okta(r)
    assert rules(cat('variable "corp_okta_api_token" {\n  default = "', token, '"\n}')) == ["okta-api-token"]
    assert rules(cat("Authorization: SSWS ", token)) == ["okta-api-token"]
    assert rules(cat("okta settings\n\ncache: ", token)) == []  # a blank line ends the context
    assert rules(cat("okta: ", token, "--")) == []  # longer than 42: not an Okta token


# --- EasyPost, Mapbox, Dropbox, Twilio --------------------------------------------------------


def test_easypost_key_but_not_inside_a_base64_blob(r):
    key = cat("EZ", "AK", rand(r, 54))
    assert rules(cat("key=", key, "&q=1")) == ["easypost-api-key"]
    assert rules(cat(rand(r, 20, B64), "+", key, "/", rand(r, 12, B64))) == []


def test_mapbox_secret_token_but_not_a_public_one(r):
    secret = _mapbox_secret(r)
    assert rules(cat("MAPBOX_TOKEN=", secret)) == ["mapbox-secret-token"]
    assert rules(cat("MAPBOX_TOKEN=p", secret[1:])) == []


def test_dropbox_app_key_is_the_public_client_id_but_the_app_secret_is_not(r):
    value = _mixed(r, 15)
    assert "dropbox-token" not in rules(cat("DROPBOX_APP_KEY=", value))
    assert rules(cat("DROPBOX_APP_SECRET=", value)) == ["dropbox-token"]
    assert rules(cat("dropbox_key: s", "l.B", rand(r, 136, URLSAFE))) == ["dropbox-token"]


def test_twilio_secret_as_the_default_of_an_env_lookup(r):
    secret = _mixed(r, 32)
    text = cat("'API_KEY' => env('TWILIO_API_KEY', '", secret, "'),")
    [finding] = scan(text)
    assert (finding.rule, text[finding.start : finding.end]) == ("twilio-auth-token", secret)


def test_hubspot_token_but_not_inside_a_gitlab_token(r):
    uid = _uuid(r)
    assert rules(cat("token: pa", "t-na1-", uid)) == ["hubspot-token"]
    assert "hubspot-token" not in rules(cat("gl", "pat-na1-", uid))
    assert rules(cat("hubspotToken = '", uid.upper(), "'")) == ["hubspot-token"]


# --- the table itself -----------------------------------------------------------------------


def test_every_saas_rule_names_where_its_format_is_documented():
    for rule in saas.RULES:
        assert rule.reference.startswith("https://"), rule.id
        assert rule.keywords and all(k == k.lower() for k in rule.keywords), rule.id


@pytest.mark.parametrize(
    "hostile",
    [
        "xox" + "b-" + "1-" * 20_000,
        "twilio" + "_token" * 5_000 + "=",
        "mailgun" + "." * 20_000,
        "DD_API_KEY" + "=" * 20_000,
        "sntr" + "ys_eyJ" + "A" * 30_000,
        "glsa_" + "a" * 30_000,
        "M" + "a" * 30_000 + "." * 10,
    ],
)
def test_rules_stay_linear_on_hostile_lines(hostile):
    started = time.perf_counter()
    for rule in saas.RULES:
        list(rule.pattern.finditer(hostile))
    assert time.perf_counter() - started < 1.0

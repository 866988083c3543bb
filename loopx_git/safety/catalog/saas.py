"""SaaS and chat services: Slack, Discord, Telegram, Twilio, SendGrid, Mailgun, Mailchimp, Notion, Linear,
Figma, Sentry, Shopify, New Relic, 1Password, Grafana, Datadog, Microsoft Teams, Facebook, Okta,
EasyPost, Mapbox, Adobe, Airtable, Dropbox, HubSpot, LinkedIn, Segment, Twitter, Onfido, ReadMe,
Typeform, ClickUp, Contentful, Duffel, Brevo, Kolide, Frame.io, 42, LaunchDarkly, Asana and Algolia.

Formats with a vendor prefix match anywhere on a line that holds the prefix; the prefix-less ones
(Datadog's hex keys, Twilio's auth token, Mailgun's new keys, Algolia's, Asana's) match only as the
value of a setting named after the vendor, or close after the vendor's name. Sentry DSNs have no
rule: their key is public by design (it only lets a client submit events, and ships inside every
browser bundle that reports to Sentry); a legacy DSN that still carries a secret
(``https://public:secret@…``) is found by ``url-credentials``.
1Password Connect tokens are JSON Web Tokens, found by ``jwt``.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib

from loopx_git.safety.catalog.cloud import last_part, token
from loopx_git.safety.rule import (
    BLOCK,
    Context,
    Q,
    Rule,
    is_placeholder,
    lazy_pattern,
    looks_random,
    random_enough,
    secret,
)

# The separator between a setting's name and its value: `=`, `:`, `:=` (`::=`, `:::=` of make),
# `=>`, `.=` (PHP), `?=`/`+=` (make, shell), with an optional quote on either side (see Q).
_SET = Q + r"\s*(?:[.?+]?=|:{1,3}=|=>|:)\s*" + Q
# … or the `,` between a name and a default: `env('TWILIO_API_KEY', '…')`, `("key", "value")`
_SET_OR_ARG = Q + r"\s*(?:[.?+]?=|:{1,3}=|=>|:|,)\s*" + Q
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def _b64decode(text: str) -> bytes:
    """``text`` as base64 (standard or URL-safe, padding optional); b"" when it is not."""
    text = text.rstrip("=")
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return b""


# --- Slack ---------------------------------------------------------------------------------------


def _slack_token(m: re.Match, ctx: Context) -> bool:
    """Slack tokens are dash-separated: numeric team/user ids (5+ digits, or a one-digit version)
    and a random tail. Documentation writes the ids as `1234` and the tail as a word
    (`xoxe.xoxp-1-SlackAppConfigurationAccessTokenHere`): neither is a token."""
    value = secret(m)
    body = value.split("-", 1)[1]
    parts = body.split("-")
    numbers = [p for p in parts if p.isdigit()]
    if len(body) < 20 or any(1 < len(p) < 5 for p in numbers):
        return False
    if not any(len(p) >= 5 for p in numbers) and not any(c.isdigit() for c in parts[-1]):
        return False
    # the ids are low-entropy digits, so the bar is lower than for a token that is random throughout
    return not is_placeholder(value) and looks_random(body, 2.5)


# --- Discord -------------------------------------------------------------------------------------

# A bot token is only recognisable by its shape, so it is looked for on lines that name what it is.
_DISCORD_CONTEXT = ("discord", "token", "bot", ".run(", "login(", "authorization")

# --- Datadog -------------------------------------------------------------------------------------

# Datadog keys are bare hex: they count only as the value of a setting named for them
# (`DD_API_KEY`, `DATADOG_APP_KEY`, `datadog.apiKey`, the `DD-API-KEY` header), never a hash nearby.
_DATADOG_CONTEXT = ("datadog", "dd_api", "dd_app", "dd-api", "dd-app")
_DATADOG_NAME = (
    r"(?i)(?<![A-Za-z0-9])(?:datadog[_.-]?(?:api|app(?:lication)?)?[_.-]?key|dd[_-](?:api|app(?:lication)?)[_-]?key"
    # … or a bare `apiKey:` / `api_key:` up to four lines under a `datadog:` section (Helm values,
    # the Agent's datadog.yaml, whose comment above `api_key:` names "The Datadog API key"), the
    # lines maybe joined by `\n` escapes inside a string
    r"|datadog(?:[^\n]{0,200}?\n){0,4}?[^\n]{0,200}?(?:(?<![A-Za-z0-9_])|(?<=\\n))(?:api|app(?:lication)?)[_-]?key)"
)

# --- Grafana -------------------------------------------------------------------------------------


def grafana_checksum_ok(token: str) -> bool:
    """A service account token ends in the CRC32 (IEEE, little-endian hex) of what precedes its
    last underscore, as Grafana's satokengen writes it."""
    head, _, tail = token.rpartition("_")
    return zlib.crc32(head.encode()).to_bytes(4, "little").hex() == tail.lower()


def _grafana_service_account(m: re.Match, ctx: Context) -> bool:
    # the checksum only rescues a token the entropy check would drop; a token whose checksum
    # fails is still reported when it looks random (an edited copy is a secret all the same)
    value = secret(m)
    return not is_placeholder(value) and (looks_random(value, 3.0) or grafana_checksum_ok(value))


_POWER_BI_EMBED = lazy_pattern(rb'\{"k":"[0-9a-f]{8}-')


def _grafana_api_key(m: re.Match, ctx: Context) -> bool:
    """A legacy key is base64 of `{"k":"<32 alphanumerics>","n":…,"id":…}`. Power BI's embed links
    (`view?r=eyJrIjoi…`) start the same way but hold `{"k":"<report UUID>","t":…}`: not a secret."""
    if _POWER_BI_EMBED.match(_b64decode(secret(m))):
        return False
    return random_enough(3.0)(m, ctx)


# --- Microsoft Teams -----------------------------------------------------------------------------


def _teams_webhook(m: re.Match, ctx: Context) -> bool:
    """The 32 hex digits after the connector's name are the webhook's secret (the ids around them
    name a team, a tenant and an owner): random, not the `0`s or `x`s of a documentation URL."""
    value = secret(m)
    return not is_placeholder(value) and looks_random(value.split("/")[2], 3.0)


# --- Facebook / Meta -----------------------------------------------------------------------------

# `facebook_app_secret`, `config.facebook.key`, `fbApiKey`, `FB_CLIENT_TOKEN`: a Facebook name with
# a credential word
_FACEBOOK_NAME = r"(?i:(?:facebook|(?<![a-z0-9])fb)[\w .-]{0,30}?(?:secret|key|token)[\w.-]{0,12}(?![\w.-]))"


def _facebook_secret(m: re.Match, ctx: Context) -> bool:
    # an app access token is `<app id>|<app secret>`: the id is public, the part after `|` is not
    value = secret(m)
    return not is_placeholder(value) and looks_random(value.rpartition("|")[2], 3.0)


# --- Dropbox -------------------------------------------------------------------------------------

_DROPBOX_SECRET_NAME = lazy_pattern(r"(?i)secret|token|pass")
_DROPBOX_TOKEN = token(3.5)
_DROPBOX_APP_SECRET = token(3.0, kinds=2)


def _dropbox(m: re.Match, ctx: Context) -> bool:
    """A 15-character value is an app key or an app secret: only the secret's name makes it one
    (the app key is the client id of the OAuth flow, in every authorize URL)."""
    value = secret(m)
    if len(value) != 15:
        return _DROPBOX_TOKEN(m, ctx)
    name = m.group(0)[: m.start("s") - m.start()]
    return bool(_DROPBOX_SECRET_NAME.search(name)) and _DROPBOX_APP_SECRET(m, ctx)


# --- prefix-less keys found by their vendor's name nearby -----------------------------------------


def _near(names: str, value: str) -> str:
    """``value`` at most 60 characters after one of ``names`` (an alternation, matched in any case),
    on the same line or the next: `ASANA_TOKEN=…`, `"launchdarkly": {"sdkKey": "…"}`, a client's
    constructor after its import."""
    return r"(?i:" + names + r")(?:[^\n]|\n(?!\n)){0,60}?(?<![A-Za-z0-9_/-])(?P<s>" + value + r")"


def _asana(m: re.Match, ctx: Context) -> bool:
    """`0/<32 hex>` or `1/<user id>:<secret>`: the secret is what follows `:` (or `/`)."""
    value = secret(m)
    cut = value.rfind(":") if ":" in value else value.find("/")
    return token(3.0, skip=cut + 1)(m, ctx)


# --- Algolia --------------------------------------------------------------------------------------

# The search-only key ships in every search box (a DocSearch config, `NEXT_PUBLIC_…`): public by design
_ALGOLIA_PUBLIC_NAME = lazy_pattern(r"(?i)search|public|client")
_ALGOLIA_KEY = token(3.0)


def _algolia(m: re.Match, ctx: Context) -> bool:
    text = m.string
    name = text[text.rfind("\n", 0, m.start()) + 1 : m.start("s")]
    return not _ALGOLIA_PUBLIC_NAME.search(name) and _ALGOLIA_KEY(m, ctx)


RULES: tuple[Rule, ...] = (
    # --- Slack ---
    Rule(
        "slack-token",
        BLOCK,
        "Slack token (bot, user, workspace, legacy, refresh, configuration, app-level, client session xoxc)",
        ("xox", "xapp-"),
        (
            # xoxc- is the session token of Slack's own clients: ids and 64 hex, as the bot and
            # user tokens are shaped
            r"(?P<s>(?:xoxe\.)?xox[abposrec]-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"
            r"|xapp-\d-[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)(?![A-Za-z0-9-])"
        ),
        fingerprint_only=True,
        accept=_slack_token,
        reference="https://api.slack.com/authentication/token-types (xoxc-: as in betterleaks and Kingfisher "
        "slack session token rules)",
        prefixed=True,
    ),
    Rule(
        "slack-session-cookie",
        BLOCK,
        "Slack session cookie (the `d` cookie, xoxd-)",
        ("xoxd-",),
        # base64, usually percent-encoded as the browser stores it (`%2F`, `%3D`)
        (r"(?P<s>xoxd-[A-Za-z0-9%/+_-]{100,600}={0,2})(?![A-Za-z0-9%/+=_-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=5, kinds=2),
        reference="https://slack.engineering/catching-compromised-cookies/ (shape as in betterleaks slack-"
        "session-cookie and Kingfisher kingfisher.slack.5)",
        prefixed=True,
    ),
    Rule(
        "slack-webhook",
        BLOCK,
        "Slack incoming or workflow webhook URL",
        ("hooks.slack.com",),
        (r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,})"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://api.slack.com/messaging/webhooks",
    ),
    # --- Discord ---
    Rule(
        "discord-bot-token",
        BLOCK,
        "Discord bot token (base64 user id . timestamp . HMAC)",
        _DISCORD_CONTEXT,
        (
            # the first part is the bot's user id (17 to 19 digits) in base64: 23 to 26 characters
            r"(?<![A-Za-z0-9_.-])(?P<s>[MNO][A-Za-z0-9_-]{22,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})"
            r"(?![A-Za-z0-9_-])"
        ),
        accept=random_enough(3.0),
        reference=(
            "https://discord.com/developers/docs/reference#authentication"
            " (shape: detect-secrets DiscordBotTokenDetector)"
        ),
    ),
    Rule(
        "discord-webhook",
        BLOCK,
        "Discord webhook URL",
        ("discord",),
        (
            r"(?i:discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/)\d{17,20}/"
            r"(?P<s>[A-Za-z0-9_-]{60,80})(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://discord.com/developers/docs/resources/webhook (shape: trufflehog discordwebhook)",
    ),
    # --- Telegram ---
    Rule(
        "telegram-bot-token",
        BLOCK,
        "Telegram bot token",
        (":aa",),
        (r"(?:(?<=bot)|(?<![A-Za-z0-9_]))(?P<s>\d{8,10}:AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://core.telegram.org/bots/api#authorizing-your-bot",
    ),
    # --- Twilio (the account SID `AC…` names an account and is not a secret) ---
    Rule(
        "twilio-api-key",
        BLOCK,
        "Twilio API key SID (SK + 32 hex)",
        ("sk",),
        (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>SK[0-9a-fA-F]{32})(?![A-Za-z0-9_])"),
        accept=random_enough(3.0),
        reference="https://www.twilio.com/docs/iam/api-keys (shape: gitleaks twilio-api-key)",
    ),
    Rule(
        "twilio-auth-token",
        BLOCK,
        "Twilio auth token or API key secret, in a Twilio setting or after an AC/SK id",
        ("twilio", "client("),
        (
            r"(?:(?i:twilio)[A-Za-z0-9_.-]{0,30}?(?i:auth|token|secret|key|pass)[A-Za-z0-9_.-]{0,20}"
            + _SET_OR_ARG
            + r"|(?<![A-Za-z0-9_])(?:AC|SK)[0-9a-f]{32}"
            + Q
            + r"\s*[,:]\s*"
            + Q
            + r")(?P<s>[A-Za-z0-9]{32})(?![A-Za-z0-9_])"
        ),
        accept=random_enough(3.0),
        reference="https://www.twilio.com/docs/usage/requests-to-twilio",
    ),
    # --- SendGrid ---
    Rule(
        "sendgrid-key",
        BLOCK,
        "SendGrid API key",
        ("sg.",),
        (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://www.twilio.com/docs/sendgrid/ui/account-and-settings/api-keys",
    ),
    # --- Mailgun (`pubkey-…` is the public validation key, not a secret) ---
    Rule(
        "mailgun-api-key",
        BLOCK,
        "Mailgun legacy private API key (key- + 32 hex)",
        ("key-",),
        (r"(?:(?<![A-Za-z0-9./-])|(?<=\\[nrt]))(?P<s>key-[0-9a-fA-F]{32})(?![A-Za-z0-9_-])"),
        accept=random_enough(3.0),
        reference=(
            "https://documentation.mailgun.com/docs/mailgun/api-reference/authentication"
            " (shape: gitleaks mailgun-private-api-token)"
        ),
    ),
    Rule(
        "mailgun-private-key",
        BLOCK,
        "Mailgun private API key or webhook signing key (32-8-8 hex) in a Mailgun setting or as the `api` password",
        ("mailgun", "api"),
        (
            r"(?:(?i:mailgun)[A-Za-z0-9_.-]{0,40}"
            + _SET
            + r"(?:api:)?|\(\s*"
            + Q
            + r"api"
            + Q
            + r"\s*,\s*"
            + Q
            + r"|(?<![A-Za-z0-9_])api:)"
            r"(?P<s>[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8})(?![A-Za-z0-9_-])"
        ),
        accept=random_enough(3.0),
        reference=(
            "https://documentation.mailgun.com/docs/mailgun/api-reference/authentication"
            " (shape: gitleaks mailgun-signing-key)"
        ),
    ),
    # --- Mailchimp ---
    Rule(
        "mailchimp-api-key",
        BLOCK,
        "Mailchimp API key (32 hex + -us<datacenter>)",
        ("-us",),
        (r"(?<![A-Za-z0-9_])(?P<s>[0-9a-f]{32}-us\d{1,2})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://mailchimp.com/developer/marketing/guides/quick-start/",
    ),
    # --- Notion ---
    Rule(
        "notion-token",
        BLOCK,
        "Notion internal integration token (ntn_, legacy secret_)",
        ("ntn_", "secret_"),
        (r"(?P<s>ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.5),
        reference="https://developers.notion.com/docs/authorization (ntn_ shape: gitleaks notion-api-token)",
        prefixed=True,
    ),
    # --- Linear ---
    Rule(
        "linear-api-key",
        BLOCK,
        "Linear personal API key or OAuth access token",
        ("lin_api_", "lin_oauth_"),
        (r"(?P<s>lin_api_[A-Za-z0-9]{40}|lin_oauth_[0-9a-f]{64})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://linear.app/developers/graphql#authentication (shape: gitleaks linear-api-key)",
        prefixed=True,
    ),
    # --- Figma ---
    Rule(
        "figma-token",
        BLOCK,
        "Figma personal access token (figd_) or OAuth token (figu_)",
        ("figd_", "figu_"),
        (r"(?P<s>fig[du]_[A-Za-z0-9_-]{38,128})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://developers.figma.com/docs/rest-api/personal-access-tokens/",
        prefixed=True,
    ),
    # --- Sentry (DSNs are public by design: no rule, see the module docstring) ---
    Rule(
        "sentry-org-token",
        BLOCK,
        "Sentry organization auth token (sntrys_ + base64 JSON + _ + secret)",
        ("sntrys_",),
        (
            r"(?P<s>sntrys_eyJ[A-Za-z0-9+/]{20,1000}={0,2}_[A-Za-z0-9+/]{43})"
            r"(?![A-Za-z0-9+/=_-])"
        ),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://docs.sentry.io/account/auth-tokens/",
        prefixed=True,
    ),
    Rule(
        "sentry-user-token",
        BLOCK,
        "Sentry user auth token (sntryu_ + 64 hex)",
        ("sntryu_",),
        (r"(?P<s>sntryu_[0-9a-f]{64})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://docs.sentry.io/account/auth-tokens/",
        prefixed=True,
    ),
    # --- Shopify ---
    Rule(
        "shopify-token",
        BLOCK,
        "Shopify access token, custom/private app token or shared secret",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        (r"(?P<s>shp(?:at|ca|pa|ss)_[0-9a-fA-F]{32})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference=(
            "https://shopify.dev/docs/apps/build/authentication-authorization/access-tokens (shape: gitleaks shopify-*)"
        ),
        prefixed=True,
    ),
    # --- New Relic ---
    Rule(
        "newrelic-user-key",
        BLOCK,
        "New Relic user (NRAK-) or admin (NRAA-) API key",
        ("nrak-", "nraa-"),
        (r"(?P<s>NRA[AK]-[A-Za-z0-9]{27})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/",
        prefixed=True,
    ),
    Rule(
        "newrelic-insights-key",
        BLOCK,
        "New Relic Insights insert (NRII-) or query (NRIQ-) key",
        ("nrii-", "nriq-"),
        (r"(?P<s>NRI[IQ]-[A-Za-z0-9_-]{32})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference=(
            "https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/ (shape: gitleaks new-relic-insert-key)"
        ),
        prefixed=True,
    ),
    Rule(
        "newrelic-browser-key",
        BLOCK,
        "New Relic browser ingest key (NRJS- + 19 hex)",
        ("nrjs-",),
        (r"(?P<s>NRJS-[0-9a-f]{19})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://docs.newrelic.com/docs/browser/browser-monitoring/configuration/browser-license-key-app-id/",
        prefixed=True,
    ),
    Rule(
        "newrelic-license-key",
        BLOCK,
        "New Relic ingest license key (40 characters ending NRAL)",
        ("nral",),
        (r"(?<![A-Za-z0-9_])(?P<s>[a-z0-9]{6}[0-9a-f]{30}NRAL)(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/#license-key",
    ),
    Rule(
        "newrelic-legacy-license-key",
        BLOCK,
        "New Relic license key of the 40-hex format, as the license_key of a New Relic setting or newrelic.yml",
        # one keyword for every spelling (`New Relic`, `newrelic`, `NEW_RELIC`): fewer to look for
        ("relic",),
        (
            # 40 hex digits are a commit id anywhere else: the agent's config names New Relic within
            # a few lines of its license_key (the comment above it in the generated newrelic.yml)
            r"(?i:new[ _.-]?relic)(?:[^\n]{0,200}?\n){0,4}?[^\n]{0,200}?(?i:license[_.-]?key)"
            + _SET
            + r"(?P<s>[0-9a-f]{40})(?![0-9a-zA-Z])"
        ),
        accept=random_enough(3.0),
        span=1000,
        reference="https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/#license-key "
        "(shape as in Nosey Parker np.newrelic.2)",
    ),
    Rule(
        "newrelic-rest-api-key",
        BLOCK,
        "New Relic REST API key (NRRA- + 42 hex)",
        ("nrra-",),
        (r"(?P<s>NRRA-[0-9a-f]{42})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=token(3.0, skip=5),
        reference="https://docs.newrelic.com/docs/apis/intro-apis/new-relic-api-keys/#rest-api-key",
        prefixed=True,
    ),
    Rule(
        "newrelic-pixie-key",
        BLOCK,
        "New Relic Pixie API key (px-api-) or deploy key (px-dep-)",
        ("px-api-", "px-dep-"),
        (r"(?P<s>px-(?:api|dep)-" + _UUID + r")(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(3.0, skip=7),
        reference="https://docs.px.dev/reference/admin/api-keys/; https://docs.px.dev/reference/admin/deploy-keys/",
        prefixed=True,
    ),
    # --- 1Password ---
    Rule(
        "1password-service-account-token",
        BLOCK,
        "1Password service account token (ops_ + base64 JSON)",
        ("ops_eyj",),
        (r"(?P<s>ops_eyJ[A-Za-z0-9+/_-]{250,4000}={0,3})(?![A-Za-z0-9+/=_-])"),
        fingerprint_only=True,
        accept=random_enough(3.5),
        reference="https://developer.1password.com/docs/service-accounts/security/",
        prefixed=True,
    ),
    Rule(
        "1password-secret-key",
        BLOCK,
        "1Password account Secret Key (A3-…)",
        ("a3-",),
        (
            r"(?:(?<![A-Za-z0-9-])|(?<=\\[nrt]))(?P<s>A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})"
            r"-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference="https://1passwordstatic.com/files/security/1password-white-paper.pdf (Secret Key)",
    ),
    # --- Grafana ---
    Rule(
        "grafana-cloud-token",
        BLOCK,
        "Grafana Cloud access policy token (glc_ + base64 JSON)",
        ("glc_",),
        (r"(?P<s>glc_[A-Za-z0-9+/]{32,400}={0,3})(?![A-Za-z0-9+/=_-])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
        reference=(
            "https://grafana.com/docs/grafana-cloud/security-and-account-management/"
            "authentication-and-permissions/access-policies/"
        ),
        prefixed=True,
    ),
    Rule(
        "grafana-service-account-token",
        BLOCK,
        "Grafana service account token (glsa_ + 32 + _ + CRC32)",
        ("glsa_",),
        (r"(?P<s>glsa_[A-Za-z0-9]{32}_[0-9a-fA-F]{8})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_grafana_service_account,
        reference=(
            "https://grafana.com/docs/grafana/latest/administration/service-accounts/"
            " (checksum: grafana pkg/components/satokengen)"
        ),
        prefixed=True,
    ),
    Rule(
        "grafana-api-key",
        BLOCK,
        'Grafana legacy API key (base64 of {"k":…})',
        ("eyjrijoi",),
        (r"(?:(?<![A-Za-z0-9+/-])|(?<=\\[nrt]))(?P<s>eyJrIjoi[A-Za-z0-9+/]{60,400}={0,3})(?![A-Za-z0-9+/=_-])"),
        fingerprint_only=True,
        accept=_grafana_api_key,
        reference="https://grafana.com/docs/grafana/latest/developers/http_api/auth/ (shape: gitleaks grafana-api-key)",
    ),
    # --- Datadog: bare hex keys, so only as the value of a Datadog setting ---
    Rule(
        "datadog-api-key",
        BLOCK,
        "Datadog API key (32 hex) in a datadog / DD_API_KEY setting",
        _DATADOG_CONTEXT,
        (_DATADOG_NAME + _SET + r"(?P<s>[0-9a-f]{32})(?![0-9a-z_])"),
        accept=random_enough(3.0),
        span=1000,
        reference="https://docs.datadoghq.com/account_management/api-app-keys/",
    ),
    Rule(
        "datadog-app-key",
        BLOCK,
        "Datadog application key (40 hex) in a datadog / DD_APP_KEY setting",
        _DATADOG_CONTEXT,
        (_DATADOG_NAME + _SET + r"(?P<s>[0-9a-f]{40})(?![0-9a-z_])"),
        accept=random_enough(3.0),
        span=1000,
        reference="https://docs.datadoghq.com/account_management/api-app-keys/",
    ),
    # --- Microsoft Teams / Office 365 connectors ---
    Rule(
        "msteams-webhook",
        BLOCK,
        "Microsoft Teams / Office 365 connector webhook URL (webhookb2, the V2 form, outlook.office.com/webhook)",
        ("webhook.office.com", "office.com/webhook", "office365.com/webhook"),
        (
            # <group>@<tenant>/<connector: IncomingWebhook, JenkinsCI, …>/<32 hex>/<owner>[/V2<signature>]
            r"(?i:(?:(?<![a-z0-9-])[a-z0-9-]{1,63}\.webhook\.office\.com/webhookb2"
            r"|outlook\.office(?:365)?\.com/webhook)/)"
            r"(?P<s>" + _UUID + "@" + _UUID + r"/[A-Za-z0-9]{1,40}/[0-9a-fA-F]{32}/" + _UUID + r""
            r"(?:/V2[A-Za-z0-9_-]{20,80})?)(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=_teams_webhook,
        reference=(
            "https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/"
            "add-incoming-webhook"
        ),
    ),
    # --- Facebook / Meta ---
    Rule(
        "facebook-access-token",
        BLOCK,
        "Facebook / Meta Graph API user, page or app-scoped access token (EAA…)",
        ("eaa",),
        # Square's `EAAA` + 60 is shorter; a hex checksum that starts `EAA` is one case
        (r"(?:(?<![A-Za-z0-9-])|(?<=\\[nrt]))(?P<s>EAA[A-Za-z0-9]{80,500})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(4.0, skip=3, kinds=3),
        reference=(
            "https://developers.facebook.com/docs/facebook-login/guides/access-tokens/"
            " (shape as in gitleaks facebook-page-access-token)"
        ),
    ),
    Rule(
        "facebook-app-secret",
        BLOCK,
        "Facebook app secret or client token (32 hex), or an app access token (<app id>|<secret>), under a Facebook name",
        ("facebook", "fb_", "fb-", "fb.", "fbapp", "fbapi", "fbsecret", "fbclient", "fbkey", "fbtoken"),
        (_FACEBOOK_NAME + _SET + r"(?P<s>\d{15,16}\|[A-Za-z0-9_-]{27,40}|[0-9a-f]{32})(?![A-Za-z0-9_-])"),
        accept=_facebook_secret,
        reference=(
            "https://developers.facebook.com/docs/facebook-login/guides/access-tokens/#apptokens"
            " (shape as in gitleaks facebook-secret and facebook-access-token)"
        ),
    ),
    # --- Okta ---
    Rule(
        "okta-api-token",
        BLOCK,
        "Okta API token (00 + 40) after an Okta name or the SSWS scheme",
        ("okta", "ssws"),
        (
            # within 60 characters of the name, on its line or the next (`variable "okta_token" {` +
            # newline + `default = "…"`)
            r"(?i:okta|(?<![a-z0-9])ssws)(?:[^\n]|\n(?!\n)){0,60}?"
            r"(?<![A-Za-z0-9_-])(?P<s>00[A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])"
        ),
        accept=token(3.5, skip=2, kinds=2),
        span=80,
        reference="https://developer.okta.com/docs/guides/create-an-api-token/main/ (shape as in Nosey Parker np.okta.1)",
    ),
    # --- EasyPost ---
    Rule(
        "easypost-api-key",
        BLOCK,
        "EasyPost production (EZAK) or test (EZTK) API key",
        ("ezak", "eztk"),
        # not inside a base64 blob (`…+EZAK…/…`)
        (r"(?:(?<![A-Za-z0-9+/-])|(?<=\\[nrt]))(?P<s>EZ[AT]K[A-Za-z0-9]{54})(?![A-Za-z0-9+/=_-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=4, kinds=2),
        reference="https://docs.easypost.com/docs/authentication (shape as in gitleaks easypost-api-token)",
    ),
    # --- Mapbox (`pk.` tokens are public by design) ---
    Rule(
        "mapbox-secret-token",
        BLOCK,
        "Mapbox secret (sk.) or temporary (tk.) access token",
        # a temporary token lives up to an hour but carries its secret token's scopes, and a commit
        # is usually made (often pushed) within that hour
        ("sk.eyj", "tk.eyj"),
        (r"(?P<s>[st]k\.eyJ[A-Za-z0-9_-]{20,400}\.[A-Za-z0-9_-]{20,40})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=3),
        reference="https://docs.mapbox.com/api/accounts/tokens/#token-format",
        prefixed=True,
    ),
    # --- Adobe ---
    Rule(
        "adobe-client-secret",
        BLOCK,
        "Adobe Developer Console client secret (p8e-)",
        ("p8e-",),
        (r"(?P<s>p8e-[A-Za-z0-9_-]{32})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=4, kinds=2),
        reference=(
            "https://developer.adobe.com/developer-console/docs/guides/authentication/ServerToServerAuthentication/"
            " (shape as in gitleaks adobe-client-secret)"
        ),
        prefixed=True,
    ),
    # --- Airtable ---
    Rule(
        "airtable-token",
        BLOCK,
        "Airtable personal access token (pat… . 64 hex) or legacy API key, under an Airtable name",
        ("airtable",),
        (
            r"(?i:airtable[\w.-]{0,30}?(?:key|token|pat|secret|pass)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + r"(?P<s>pat[A-Za-z0-9]{14}\.[0-9a-f]{64}|[A-Za-z0-9]{17})(?![A-Za-z0-9_.-])"
        ),
        accept=token(3.3, kinds=2),
        reference=(
            "https://airtable.com/developers/web/guides/personal-access-tokens"
            " (shape as in gitleaks airtable-personnal-access-token and airtable-api-key)"
        ),
    ),
    # --- Dropbox ---
    Rule(
        "dropbox-token",
        BLOCK,
        "Dropbox short-lived (sl.) or long-lived access token, or app secret, under a Dropbox name",
        ("dropbox",),
        (
            r"(?i:dropbox[\w.-]{0,30}?(?:key|token|secret|pass)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + r"(?P<s>sl\.[A-Za-z0-9_.-]{120,2000}|[A-Za-z0-9]{11}AAAAAAAAAA[A-Za-z0-9_=-]{43}|[A-Za-z0-9]{15})"
            r"(?![A-Za-z0-9_=.-])"
        ),
        accept=_dropbox,
        reference=(
            "https://developers.dropbox.com/oauth-guide"
            " (shapes as in gitleaks dropbox-short-lived-api-token, -long-lived-api-token, -api-token)"
        ),
    ),
    # --- HubSpot ---
    Rule(
        "hubspot-token",
        BLOCK,
        "HubSpot private app access token (pat-na1-…), or a legacy API key (a UUID) under a HubSpot name",
        ("pat-na", "pat-eu", "pat-ap", "hubspot"),
        (
            r"(?:(?i:hubspot[\w.-]{0,30}?(?:key|token|secret|pass)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + r"|(?=pat-(?:na|eu|ap)\d))"
            r"(?P<s>pat-(?:na|eu|ap)\d{1,2}-" + _UUID + r"|" + _UUID + r")(?![A-Za-z0-9_-])"
        ),
        accept=token(3.0, kinds=2),
        prefixed=True,
        reference=(
            "https://developers.hubspot.com/docs/api/private-apps"
            " (shapes as in gitleaks hubspot-api-key and trufflehog hubspot_apikey v2)"
        ),
    ),
    # --- LinkedIn ---
    Rule(
        "linkedin-client-secret",
        BLOCK,
        "LinkedIn client secret (16 characters) under a LinkedIn secret name",
        ("linkedin",),
        (r"(?i:linkedin[\w.-]{0,30}?secret[\w.-]{0,12}(?![\w.-]))" + _SET + r"(?P<s>[A-Za-z0-9]{16})(?![A-Za-z0-9_-])"),
        accept=token(3.3, kinds=2),
        reference=(
            "https://learn.microsoft.com/en-us/linkedin/shared/authentication/client-credentials-flow"
            " (shape as in gitleaks linkedin-client-secret)"
        ),
    ),
    # --- Segment ---
    Rule(
        "segment-public-api-token",
        BLOCK,
        "Segment Public API token (sgp_ + 64)",
        ("sgp_",),
        (r"(?P<s>sgp_[A-Za-z0-9]{64})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=token(3.5, skip=4, kinds=2),
        reference="https://docs.segmentapis.com/tag/Getting-Started (shape as in gitleaks segment-public-api-token)",
        prefixed=True,
    ),
    # --- Twitter / X ---
    Rule(
        "twitter-api-secret",
        BLOCK,
        "Twitter / X API key, secret, access token or bearer token under a Twitter name",
        ("twitter",),
        (
            r"(?i:twitter[\w.-]{0,30}?(?:key|secret|token|bearer)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + r"(?P<s>[A-Za-z0-9%-]{20,120})(?![A-Za-z0-9%_-])"
        ),
        accept=token(3.5, kinds=2),
        reference=(
            "https://developer.x.com/en/docs/authentication/oauth-1-0a/api-key-and-secret"
            " (shapes as in gitleaks twitter-api-key, -api-secret, -access-token, -bearer-token)"
        ),
    ),
    # --- Onfido ---
    Rule(
        "onfido-api-token",
        BLOCK,
        "Onfido live or sandbox API token (api_live[_<region>].<id>.<secret>)",
        ("api_live", "api_sandbox"),
        (
            r"(?P<s>api_(?:live|sandbox)(?:_[a-z]{2})?\.[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{32})"
            r"(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=last_part(".", 3.5, kinds=2),
        reference="https://documentation.onfido.com/api/latest/#api-tokens (shape as in trufflehog onfido and "
        "semgrep detected-onfido-live-api-token)",
        prefixed=True,
    ),
    # --- ReadMe ---
    Rule(
        "readme-api-key",
        BLOCK,
        "ReadMe API key (rdme_ + 70)",
        ("rdme_",),
        (r"(?P<s>rdme_[a-z0-9]{70})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=token(3.0, skip=5, kinds=2),
        reference="https://docs.readme.com/main/reference/intro/authentication (shape as in gitleaks readme-api-"
        "token and trufflehog readme)",
        prefixed=True,
    ),
    # --- Typeform ---
    Rule(
        "typeform-api-token",
        BLOCK,
        "Typeform personal access token (tfp_)",
        ("tfp_",),
        # `tfp_` also starts TensorFlow Probability names: a token mixes cases and digits, a name does not
        (r"(?P<s>tfp_[A-Za-z0-9_-]{40,59})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=4, kinds=3),
        reference="https://www.typeform.com/developers/get-started/personal-access-token/ (length as in "
        "trufflehog typeform v2, 40 to 59; gitleaks typeform-api-token: 59)",
        prefixed=True,
    ),
    # --- ClickUp ---
    Rule(
        "clickup-personal-token",
        BLOCK,
        "ClickUp personal API token (pk_<user id>_<32>)",
        ("pk_",),
        (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>pk_[0-9]{6,10}_[0-9A-Z]{32})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=last_part("_", 3.3, kinds=2),
        # `pk_` starts many names (primary keys, Stripe's publishable keys): tried only where it starts
        anchored=True,
        reference="https://developer.clickup.com/docs/authentication#personal-token (shape as in trufflehog "
        "clickuppersonaltoken)",
    ),
    # --- Contentful ---
    Rule(
        "contentful-pat",
        BLOCK,
        "Contentful Content Management API personal access token (CFPAT-)",
        ("cfpat-",),
        (r"(?P<s>CFPAT-[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=6, kinds=2),
        reference="https://www.contentful.com/developers/docs/references/authentication/ (shape as in trufflehog "
        "contentfulpersonalaccesstoken: 49 characters)",
        prefixed=True,
    ),
    # --- Duffel ---
    Rule(
        "duffel-api-token",
        BLOCK,
        "Duffel test or live API token (duffel_test_, duffel_live_)",
        ("duffel_test_", "duffel_live_"),
        (r"(?P<s>duffel_(?:test|live)_[A-Za-z0-9_-]{43})(?![A-Za-z0-9_=-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=12, kinds=2),
        reference="https://duffel.com/docs/api/overview/making-requests/authentication (shape as in gitleaks "
        "duffel-api-token: 43, within trufflehog duffel's 40 to 60)",
        prefixed=True,
    ),
    # --- Brevo (Sendinblue) ---
    Rule(
        "brevo-api-key",
        BLOCK,
        "Brevo (Sendinblue) API key (xkeysib-)",
        ("xkeysib-",),
        (r"(?P<s>xkeysib-[0-9a-f]{64}-[A-Za-z0-9]{16})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(3.0, skip=8),
        reference="https://developers.brevo.com/docs/getting-started (shape as in gitleaks sendinblue-api-token "
        "and trufflehog sendinbluev2)",
        prefixed=True,
    ),
    # --- Kolide ---
    Rule(
        "kolide-api-key",
        BLOCK,
        "Kolide API key (k2sk_v1_)",
        ("k2sk_v",),
        (r"(?P<s>k2sk_v[0-9]_[A-Za-z0-9]{24})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=token(3.3, skip=8, kinds=2),
        reference="https://www.kolide.com/blog/new-api-actions-assign-device-issue-live-query (the token format and "
        "its example; shape as in semgrep detected-kolide-api-key)",
        prefixed=True,
    ),
    # --- Frame.io ---
    Rule(
        "frameio-api-token",
        BLOCK,
        "Frame.io developer token (fio-u-)",
        ("fio-u-",),
        (r"(?P<s>fio-u-[A-Za-z0-9_-]{64})(?![A-Za-z0-9_=-])"),
        fingerprint_only=True,
        accept=token(3.5, skip=6, kinds=2),
        reference="https://developer.frame.io/docs/getting-started/authentication (shape as in gitleaks frameio-"
        "api-token and trufflehog frameio)",
        prefixed=True,
    ),
    # --- 42 (intra.42.fr) ---
    Rule(
        "intra42-client-secret",
        BLOCK,
        "42 school Intra API client secret (s-s4t2ud-, s-s4t2af-)",
        ("s-s4t2ud-", "s-s4t2af-"),
        (r"(?P<s>s-s4t2(?:ud|af)-[0-9a-f]{64})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=token(3.0, skip=9),
        reference="https://api.intra.42.fr/apidoc/guides/getting_started (shape as in gitleaks intra42-client-secret)",
        prefixed=True,
    ),
    # --- LaunchDarkly (`mob-` keys ship in mobile apps: public by design) ---
    Rule(
        "launchdarkly-key",
        BLOCK,
        "LaunchDarkly server-side SDK key (sdk-) or API access token (api-) near a LaunchDarkly name",
        ("launchdarkly", "ldclient", "ld_sdk", "ld-sdk", "ld_api", "ld-api"),
        # `api-` and `sdk-` + a UUID name many things: only the vendor's name nearby says whose it is
        _near(r"launchdarkly|ldclient|(?<![a-z0-9])ld[_-](?:sdk|api)", r"(?:api|sdk)-" + _UUID) + r"(?![A-Za-z0-9_-])",
        accept=token(3.0, skip=4),
        span=120,  # the name's line ends within 60 of the value, which runs 40 more
        reference="https://docs.launchdarkly.com/sdk/concepts/client-side-server-side#keys (shape as in trufflehog "
        "launchdarkly; gitleaks launchdarkly-access-token: 40 characters after the name)",
    ),
    # --- Asana ---
    Rule(
        "asana-token",
        BLOCK,
        "Asana personal access token (0/<32 hex>, 1/<id>:<secret> or 2/<id>:<secret>) near an Asana name",
        ("asana",),
        _near(r"asana", r"0/[0-9a-f]{32}|[12]/[0-9]{8,20}:[A-Za-z0-9]{32,64}") + r"(?![A-Za-z0-9])",
        accept=_asana,
        span=140,  # the name's line ends within 60 of the value, which runs up to 80 more
        reference="https://developers.asana.com/docs/personal-access-token (shapes as in trufflehog "
        "asanapersonalaccesstoken and Kingfisher kingfisher.asana.3)",
    ),
    # --- Algolia ---
    Rule(
        "algolia-admin-key",
        BLOCK,
        "Algolia admin or write API key (32 hex) under an Algolia name that is not a search/public key's",
        ("algolia",),
        (
            r"(?i:algolia[\w.-]{0,30}?(?:key|secret|token)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + r"(?P<s>[0-9a-f]{32})(?![A-Za-z0-9_-])"
        ),
        accept=_algolia,
        reference="https://www.algolia.com/doc/guides/security/api-keys/ (shape as in gitleaks algolia-api-key and "
        "trufflehog algoliaadminkey)",
    ),
)

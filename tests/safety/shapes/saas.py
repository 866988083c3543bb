"""Shapes of SaaS and chat services: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
import zlib

from tests.safety.parts import B64, UPPER_DIGITS, URLSAFE, Shape, cat, rand

HEX = "0123456789abcdef"
DIGITS = string.digits


def _hex(r: random.Random, n: int) -> str:
    return rand(r, n, HEX)


def _b64_json(data: dict, *, urlsafe: bool = False, pad: bool = True) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    out = (base64.urlsafe_b64encode if urlsafe else base64.b64encode)(raw).decode()
    return out if pad else out.rstrip("=")


def _discord_bot(r: random.Random) -> str:
    """A bot token as Discord writes it: base64 of the bot's user id, a timestamp, an HMAC."""
    user_id = str(r.randint(10**16, 10**19 - 1))
    first = base64.urlsafe_b64encode(user_id.encode()).decode().rstrip("=")
    return cat(first, ".", rand(r, 6, URLSAFE), ".", rand(r, r.choice((27, 38)), URLSAFE))


def _discord_webhook(r: random.Random, host: str = "discord.com/api/") -> str:
    return cat("https://", host, "webhooks/", str(r.randint(10**17, 10**19 - 1)), "/", rand(r, 68, URLSAFE))


def _telegram(r: random.Random) -> str:
    return cat(str(r.randint(10**9, 8 * 10**9)), ":A", "A", rand(r, 33, URLSAFE))


def _mailgun_private(r: random.Random) -> str:
    return cat(_hex(r, 32), "-", _hex(r, 8), "-", _hex(r, 8))


def _sentry_org(r: random.Random) -> str:
    claims = {
        "iat": r.randint(1_700_000_000, 1_800_000_000) + r.random(),
        "url": "https://sentry.io",
        "region_url": "https://us.sentry.io",
        "org": rand(r, 8, string.ascii_lowercase),
    }
    return cat("sntr", "ys_", _b64_json(claims), "_", rand(r, 43, B64))


def _onepassword_sa(r: random.Random) -> str:
    claims = {
        "signInAddress": "my.1password.com",
        "userAuth": {"method": "SRPg-4096", "alg": "PBES2g-HS256", "iterations": 650000, "salt": rand(r, 22, URLSAFE)},
        "email": rand(r, 13, string.ascii_lowercase) + "@1passwordserviceaccounts.com",
        "srpX": _hex(r, 64),
        "muk": {
            "alg": "A256GCM",
            "ext": True,
            "k": rand(r, 43, URLSAFE),
            "key_ops": ["encrypt", "decrypt"],
            "kty": "oct",
        },
        "secretKey": cat("A3-", rand(r, 6, UPPER_DIGITS), "-", rand(r, 6, UPPER_DIGITS), "-", rand(r, 5, UPPER_DIGITS)),
        "deviceUuid": rand(r, 26, string.ascii_lowercase + DIGITS),
    }
    return cat("op", "s_", _b64_json(claims, pad=False))


def _onepassword_secret_key(r: random.Random, joined: bool = False) -> str:
    middle = rand(r, 11, UPPER_DIGITS) if joined else cat(rand(r, 6, UPPER_DIGITS), "-", rand(r, 5, UPPER_DIGITS))
    tail = "-".join(rand(r, 5, UPPER_DIGITS) for _ in range(3))
    return cat("A", "3-", rand(r, 6, UPPER_DIGITS), "-", middle, "-", tail)


def _grafana_cloud(r: random.Random) -> str:
    claims = {"o": str(r.randint(100000, 999999)), "n": "stack-" + rand(r, 6, DIGITS) + "-hl-write", "k": rand(r, 24)}
    return cat("gl", "c_", _b64_json(claims, pad=r.random() < 0.5))


def _grafana_sa(r: random.Random, *, valid: bool = True) -> str:
    head = cat("gl", "sa_", rand(r, 32))
    tail = zlib.crc32(head.encode()).to_bytes(4, "little").hex() if valid else _hex(r, 8)
    return cat(head, "_", tail)


def _grafana_legacy(r: random.Random) -> str:
    return _b64_json({"k": rand(r, 32), "n": rand(r, 8, string.ascii_lowercase), "id": r.randint(1, 9)})


SHAPES: dict[str, list[Shape]] = {
    "slack-token": [
        lambda r: cat("xo", "xb-", rand(r, 12, DIGITS), "-", rand(r, 13, DIGITS), "-", rand(r, 24)),
        lambda r: cat("xo", "xp-", rand(r, 12, DIGITS), "-", rand(r, 32)),
        lambda r: cat("xa", "pp-1-", rand(r, 11, UPPER_DIGITS), "-", rand(r, 13, DIGITS), "-", rand(r, 40)),
        lambda r: cat('"refresh_token": "xo', "xe-1-", rand(r, 146), '"'),
        lambda r: cat("SLACK_CONFIG_TOKEN=xo", "xe.xoxp-1-", rand(r, 163)),
        lambda r: cat(
            "legacy xo",
            "xs-",
            rand(r, 10, DIGITS),
            "-",
            rand(r, 10, DIGITS),
            "-",
            rand(r, 10, DIGITS),
            "-",
            _hex(r, 10),
        ),
        lambda r: cat(
            "token: xo",
            "xa-2-",
            rand(r, 9, DIGITS),
            "-",
            rand(r, 11, DIGITS),
            "-",
            rand(r, 13, DIGITS),
            "-",
            _hex(r, 18),
        ),
    ],
    "slack-webhook": [
        lambda r: cat(
            "https://hooks.",
            "slack.com/services/T",
            rand(r, 8, UPPER_DIGITS),
            "/B",
            rand(r, 8, UPPER_DIGITS),
            "/",
            rand(r, 24),
        ),
        lambda r: cat(
            "url: https://hooks.",
            "slack.com/workflows/T",
            rand(r, 8, UPPER_DIGITS),
            "/A",
            rand(r, 10, UPPER_DIGITS),
            "/",
            rand(r, 20),
        ),
        lambda r: cat(
            "post to hooks.",
            "slack.com/triggers/T",
            rand(r, 8, UPPER_DIGITS),
            "/",
            rand(r, 12, DIGITS),
            "/",
            rand(r, 32),
        ),
        lambda r: cat(
            "SLACK_WEBHOOK_URL=https://hooks.",
            "slack.com/services/T",
            rand(r, 10, UPPER_DIGITS),
            "/B",
            rand(r, 11, UPPER_DIGITS),
            "/",
            rand(r, 24),
        ),
    ],
    "discord-bot-token": [
        lambda r: cat("DISCORD_TOKEN=", _discord_bot(r)),
        lambda r: cat('client.run("', _discord_bot(r), '")'),
        lambda r: cat('{"token": "', _discord_bot(r), '", "prefix": "!"}'),
        lambda r: cat("Authorization: Bot ", _discord_bot(r)),
    ],
    "discord-webhook": [
        lambda r: _discord_webhook(r),
        lambda r: cat("DISCORD_WEBHOOK_URL=", _discord_webhook(r, "discordapp.com/api/")),
        lambda r: cat("webhook: ", _discord_webhook(r, "ptb.discord.com/api/v10/"), "?wait=true"),
    ],
    "telegram-bot-token": [
        lambda r: cat("TELEGRAM_BOT_TOKEN=", _telegram(r)),
        lambda r: cat("https://api.telegram.org/bot", _telegram(r), "/sendMessage?chat_id=42"),
        lambda r: cat('bot = telebot.TeleBot("', _telegram(r), '")'),
    ],
    "twilio-api-key": [
        lambda r: cat("TWILIO_API_KEY=S", "K", _hex(r, 32)),
        lambda r: cat('"api_key_sid": "S', "K", _hex(r, 32), '"'),
        lambda r: cat("twilio api:core:keys:fetch --sid S", "K", _hex(r, 32)),
    ],
    "twilio-auth-token": [
        lambda r: cat("TWILIO_AUTH_TOKEN=", _hex(r, 32)),
        lambda r: cat('client = Client("A', "C", _hex(r, 32), '", "', _hex(r, 32), '")'),
        lambda r: cat("twilio_api_secret: ", rand(r, 32)),
        lambda r: cat("TwilioAuthToken: '", _hex(r, 32), "'"),
    ],
    "sendgrid-key": [
        lambda r: cat("S", "G.", rand(r, 22, URLSAFE), ".", rand(r, 43, URLSAFE)),
        lambda r: cat("SENDGRID_API_KEY=S", "G.", rand(r, 22, URLSAFE), ".", rand(r, 43, URLSAFE)),
        lambda r: cat("mail via S", "G.", rand(r, 22, URLSAFE), ".", rand(r, 43, URLSAFE), " ok"),
    ],
    "mailgun-api-key": [
        lambda r: cat("MAILGUN_API_KEY=ke", "y-", _hex(r, 32)),
        lambda r: cat('auth=("api", "ke', "y-", _hex(r, 32), '")'),
        lambda r: cat("mailgun key ke", "y-", _hex(r, 32), " rotated"),
    ],
    "mailgun-private-key": [
        lambda r: cat("MAILGUN_API_KEY=", _mailgun_private(r)),
        lambda r: cat('requests.post(url, auth=("api", "', _mailgun_private(r), '"), data=msg)'),
        lambda r: cat("curl -s --user 'api:", _mailgun_private(r), "' https://api.mailgun.net/v3/domains"),
        lambda r: cat("mailgun_webhook_signing_key: ", _mailgun_private(r)),
    ],
    "mailchimp-api-key": [
        lambda r: cat("MAILCHIMP_API_KEY=", _hex(r, 32), "-u", "s", str(r.randint(1, 21))),
        lambda r: cat('client.set_config({"api_key": "', _hex(r, 32), "-u", 's6", "server": "us6"})'),
        lambda r: cat("key ", _hex(r, 32), "-u", "s21 for the newsletter"),
    ],
    "notion-token": [
        lambda r: cat("NOTION_TOKEN=nt", "n_", rand(r, 11, DIGITS), rand(r, 35)),
        lambda r: cat("notion = Client(auth=os.environ.get('X', 'secr", "et_", rand(r, 43), "'))"),
        lambda r: cat("Authorization: Bearer nt", "n_", rand(r, 11, DIGITS), rand(r, 35)),
    ],
    "linear-api-key": [
        lambda r: cat("LINEAR_API_KEY=lin", "_api_", rand(r, 40)),
        lambda r: cat('{"Authorization": "lin', "_api_", rand(r, 40), '"}'),
        lambda r: cat('token = "lin', "_oauth_", _hex(r, 64), '"'),
    ],
    "figma-token": [
        lambda r: cat("FIGMA_TOKEN=fig", "d_", rand(r, 40, URLSAFE)),
        lambda r: cat("curl -H 'X-Figma-Token: fig", "d_", rand(r, 40, URLSAFE), "' https://api.figma.com/v1/me"),
        lambda r: cat('{"access_token": "fig', "u_", rand(r, 44, URLSAFE), '"}'),
    ],
    "sentry-org-token": [
        lambda r: cat("SENTRY_AUTH_TOKEN=", _sentry_org(r)),
        lambda r: cat('  authToken: "', _sentry_org(r), '",'),
        lambda r: cat("sentry-cli --auth-token ", _sentry_org(r), " releases new 1.2.3"),
    ],
    "sentry-user-token": [
        lambda r: cat("SENTRY_AUTH_TOKEN=sntr", "yu_", _hex(r, 64)),
        lambda r: cat("sentry_token := sntr", "yu_", _hex(r, 64)),
        lambda r: cat('[auth]\ntoken = "sntr', "yu_", _hex(r, 64), '"'),
    ],
    "shopify-token": [
        lambda r: cat("SHOPIFY_ACCESS_TOKEN=shp", "at_", _hex(r, 32)),
        lambda r: cat('"X-Shopify-Access-Token": "shp', "ca_", _hex(r, 32), '"'),
        lambda r: cat("shared secret shp", "ss_", _hex(r, 32), " for webhooks"),
        lambda r: cat("password: shp", "pa_", _hex(r, 32)),
    ],
    "newrelic-user-key": [
        lambda r: cat("NEW_RELIC_API_KEY=NR", "AK-", rand(r, 27, UPPER_DIGITS)),
        lambda r: cat("-H 'API-Key: NR", "AK-", rand(r, 27, UPPER_DIGITS), "'"),
        lambda r: cat('newrelic_admin_key = "NR', "AA-", rand(r, 27, UPPER_DIGITS), '"'),
    ],
    "newrelic-insights-key": [
        lambda r: cat("X-Insert-Key: NR", "II-", rand(r, 32, URLSAFE)),
        lambda r: cat("insights_query_key: NR", "IQ-", rand(r, 32, URLSAFE)),
        lambda r: cat('{"insert_key": "NR', "II-", rand(r, 32, URLSAFE), '"}'),
    ],
    "newrelic-browser-key": [
        lambda r: cat('NREUM.info = {licenseKey: "NR', "JS-", _hex(r, 19), '", applicationID: "1234567"}'),
        lambda r: cat("NEW_RELIC_BROWSER_KEY=NR", "JS-", _hex(r, 19)),
        lambda r: cat("browser key NR", "JS-", _hex(r, 19), " for the storefront"),
    ],
    "newrelic-license-key": [
        lambda r: cat("  license_key: ", _hex(r, 36), "NR", "AL"),
        lambda r: cat("NEW_RELIC_LICENSE_KEY=eu01xx", _hex(r, 30), "NR", "AL"),
        lambda r: cat('"licenseKey": "', _hex(r, 36), "NR", 'AL"'),
    ],
    "1password-service-account-token": [
        lambda r: cat("export OP_SERVICE_ACCOUNT_TOKEN=", _onepassword_sa(r)),
        lambda r: cat('    "token": "', _onepassword_sa(r), '",'),
        lambda r: cat("OP_SERVICE_ACCOUNT_TOKEN: ", _onepassword_sa(r)),
    ],
    "1password-secret-key": [
        lambda r: cat("Secret Key: ", _onepassword_secret_key(r)),
        lambda r: cat("OP_SECRET_KEY=", _onepassword_secret_key(r, joined=True)),
        lambda r: cat("op account add --secret-key ", _onepassword_secret_key(r)),
    ],
    "grafana-cloud-token": [
        lambda r: cat("GRAFANA_CLOUD_TOKEN=", _grafana_cloud(r)),
        lambda r: cat("loki_key: ", _grafana_cloud(r)),
        lambda r: cat('  password: "', _grafana_cloud(r), '"'),
    ],
    "grafana-service-account-token": [
        lambda r: cat("GRAFANA_TOKEN=", _grafana_sa(r)),
        lambda r: cat("'Authorization': 'Bearer ", _grafana_sa(r), "'"),
        lambda r: cat("grafana_auth: ", _grafana_sa(r, valid=False)),
    ],
    "grafana-api-key": [
        lambda r: cat("GRAFANA_API_KEY=", _grafana_legacy(r)),
        lambda r: cat('admin_client = GrafanaClient("', _grafana_legacy(r), '", host=grafana_host)'),
        lambda r: cat("grafana key ", _grafana_legacy(r), " for dashboards"),
    ],
    "datadog-api-key": [
        lambda r: cat("DD_API_KEY=", _hex(r, 32)),
        lambda r: cat('datadog_api_key = "', _hex(r, 32), '"'),
        lambda r: cat("helm install dd datadog/datadog --set datadog.apiKey=", _hex(r, 32)),
        lambda r: cat("curl -H 'DD-API-KEY: ", _hex(r, 32), "' https://api.datadoghq.com/api/v1/validate"),
    ],
    "datadog-app-key": [
        lambda r: cat("DD_APP_KEY=", _hex(r, 40)),
        lambda r: cat('"datadog_application_key": "', _hex(r, 40), '"'),
        lambda r: cat("DD_APPLICATION_KEY: ", _hex(r, 40)),
    ],
}


def _fixed_hex(label: str, n: int) -> str:
    """A hex string that looks random but is the same on every run (a look-alike must be stable)."""
    return hashlib.sha256(label.encode()).hexdigest()[:n]


_POWER_BI = base64.b64encode(
    json.dumps(
        {"k": str(uuid.UUID(int=0x1234)), "t": str(uuid.UUID(int=0x5678)), "c": 3}, separators=(",", ":")
    ).encode()
).decode()

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = [
    # ids that name an account or an object, not secrets
    cat("TWILIO_ACCOUNT_SID=A", "C", _fixed_hex("account", 32)),
    cat("MessageSid: S", "M", _fixed_hex("message", 32)),
    cat("DISCORD_CLIENT_ID=", "1139483829462417428"),
    "join us at https://discord.gg/AbCd1234",
    "TELEGRAM_CHAT_ID=-1001234567890",
    "channel C0123ABCD, user U0456EFGH, team T0789IJKL",
    cat("NOTION_DATABASE_ID=", _fixed_hex("notion-db", 32)),
    cat("https://www.notion.so/acme/Roadmap-", _fixed_hex("notion-page", 32)),
    "LINEAR_TEAM_ID=9cfb482a-81e3-4154-b5b9-2c805e70a02d",
    "https://www.figma.com/design/AbCdEf1234567890/Checkout?node-id=12-34",
    "SHOPIFY_STORE=acme-dev.myshopify.com",
    "NEW_RELIC_ACCOUNT_ID=1234567",
    "NEW_RELIC_APP_NAME=checkout-api",
    "MAILCHIMP_SERVER_PREFIX=us21",
    cat("MAILCHIMP_AUDIENCE_ID=", _fixed_hex("audience", 10)),
    "DD_SITE=datadoghq.eu",
    "DD_RUM_APPLICATION_ID=5f2b1c3e-8d4a-4e2f-9b1a-7c6d5e4f3a2b",
    cat("DD_GIT_COMMIT_SHA=", _fixed_hex("commit", 40)),
    "OP_REF=op://Private/GitHub/credential",
    "SENTRY_ORG=acme",
    # public by design: client tokens, public keys, browser-side DSNs
    cat("MAILGUN_PUBLIC_KEY=pub", "key-", _fixed_hex("validate", 32)),
    cat("https://app.powerbi.com/view?r=", _POWER_BI),
    # documentation placeholders and shapes that are not tokens
    cat("https://hooks.", "slack.com/services/T00000000/B00000000/", "X" * 24),
    cat("xo", "xp-1234-1234-1234-", _fixed_hex("slack-doc", 32)),
    cat("xo", "xe.xoxp-1-SlackAppConfigurationAccessTokenHere"),
    cat("2018-250-xo", "xo-indieweb-1.jpg"),
    cat("https://discord.com/api/", "webhooks/<webhook_id>/<webhook_token>"),
    "the docs write a token as 123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
    '<xsd:element name="AgencyIdentificationCode" type="clm54321:AgencyIdentificationCodeContentType"/>',
    cat("shp", "at_", "x" * 32),
    cat("gl", "sa_", "X" * 32, "_", "AAAAAAAA"),
    "static void GLC_CreateLightmapTextureArray(void);",
    cat("NEW_RELIC_LICENSE_KEY=", _fixed_hex("nr", 32), "FFFF", "NR", "AL"),
    cat("NR", "AK-", "X" * 27),
    cat("A", "3-XXXXXX-XXXXXX-XXXXX-XXXXX-XXXXX-XXXXX"),
    cat("OP_SERVICE_ACCOUNT_TOKEN=op", "s_eyJzaWduSW5B..[Redacted]"),
    cat("lin", "_api_", "x" * 40),
    # truncated values and code that only names a token
    cat("the bot token starts xo", "xb-1234567890-…"),
    "def notify(slack_token: str, webhook_url: str | None = None) -> None:",
    "discord_token: Optional[str] = None",
    "twilio_auth_token: SecretStr",
    "dd_api_key = os.environ['DD_API_KEY']",
    "mailgun_api_key = settings.MAILGUN_API_KEY",
]

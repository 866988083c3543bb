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


def _uuid(r: random.Random) -> str:
    return "-".join(_hex(r, n) for n in (8, 4, 4, 4, 12))


def _mixed(r: random.Random, n: int, alphabet: str = string.ascii_letters + DIGITS) -> str:
    """``n`` characters of ``alphabet`` holding upper case, lower case and a digit."""
    chars = [r.choice(string.ascii_uppercase), r.choice(string.ascii_lowercase), r.choice(DIGITS)]
    chars += [r.choice(alphabet) for _ in range(n - 3)]
    r.shuffle(chars)
    return "".join(chars)


def _teams_webhook(r: random.Random, host: str = "acme.webhook.office.com/webhookb2", v2: bool = False) -> str:
    """``https://<host>/<group>@<tenant>/IncomingWebhook/<32 hex>/<owner>[/V2<signature>]``."""
    tail = cat("/V", "2", rand(r, 44, URLSAFE)) if v2 else ""
    return cat(
        "https://", host, "/", _uuid(r), "@", _uuid(r), "/Incoming", "Webhook/", _hex(r, 32), "/", _uuid(r), tail
    )


def _facebook_token(r: random.Random) -> str:
    return cat("EA", "AB", _mixed(r, 180))


def _mapbox_secret(r: random.Random, kind: str = "s") -> str:
    payload = _b64_json({"u": rand(r, 8, string.ascii_lowercase), "a": rand(r, 25, string.ascii_lowercase + DIGITS)})
    return cat(kind, "k.", payload.rstrip("="), ".", rand(r, 22, URLSAFE))


def _onfido(r: random.Random, kind: str = "live") -> str:
    return cat("api_", kind, ".", _mixed(r, 11, URLSAFE), ".", _mixed(r, 32, URLSAFE))


def _upper_digits(r: random.Random, n: int) -> str:
    return cat(r.choice(string.ascii_uppercase), r.choice(DIGITS), rand(r, n - 2, UPPER_DIGITS))


def _slack_cookie(r: random.Random) -> str:
    """The `d` cookie as a browser stores it: base64, percent-encoded."""
    raw = base64.b64encode(r.randbytes(120)).decode()
    return cat("xo", "xd-", raw.replace("/", "%2F").replace("+", "%2B").replace("=", "%3D"))


def _okta(r: random.Random) -> str:
    return cat("0", "0", _mixed(r, 40, URLSAFE))


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
        lambda r: cat(
            "SLACK_XOXC=xo",
            "xc-",
            rand(r, 10, DIGITS),
            "-",
            rand(r, 13, DIGITS),
            "-",
            rand(r, 13, DIGITS),
            "-",
            _hex(r, 64),
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
        lambda r: cat("'API_KEY' => env('TWILIO_API_KEY', '", _mixed(r, 32), "'),"),
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
        lambda r: cat('$mailgunToken .= "', _mailgun_private(r), '";'),
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
        lambda r: cat("datadog:\n  site: datadoghq.eu\n  clusterName: prod\n  apiKey: ", _hex(r, 32)),
        lambda r: cat(
            "## The Datadog API key used by your Agent to submit metrics and events.\napi_key: ", _hex(r, 32)
        ),
    ],
    "datadog-app-key": [
        lambda r: cat("DD_APP_KEY=", _hex(r, 40)),
        lambda r: cat('"datadog_application_key": "', _hex(r, 40), '"'),
        lambda r: cat("DD_APPLICATION_KEY: ", _hex(r, 40)),
        lambda r: cat("datadog:\n  appKey: ", _hex(r, 40)),
    ],
    "newrelic-legacy-license-key": [
        lambda r: cat("# Required license key associated with your New Relic account.\nlicense_key: ", _hex(r, 40)),
        lambda r: cat("NEW_RELIC_LICENSE_KEY=", _hex(r, 40)),
        lambda r: cat("newrelic:\n  enabled: true\n  license_key: '", _hex(r, 40), "'"),
    ],
    "newrelic-rest-api-key": [
        lambda r: cat('-H "X-Api-Key:NR', "RA-", _hex(r, 42), '"'),
        lambda r: cat("NEW_RELIC_REST_API_KEY=NR", "RA-", _hex(r, 42)),
        lambda r: cat('{"rest_key": "NR', "RA-", _hex(r, 42), '"}'),
    ],
    "newrelic-pixie-key": [
        lambda r: cat("PX_DEPLOY_KEY=px", "-dep-", _uuid(r)),
        lambda r: cat("px auth login --api_key px", "-api-", _uuid(r)),
        lambda r: cat("--set pixie-chart.deployKey=px", "-dep-", _uuid(r)),
    ],
    "msteams-webhook": [
        lambda r: _teams_webhook(r),
        lambda r: cat("TEAMS_WEBHOOK_URL=", _teams_webhook(r, v2=True)),
        lambda r: cat("  webhooks: ", _teams_webhook(r, "outlook.office.com/webhook")),
        lambda r: cat(
            "office365ConnectorSend webhookUrl: 'https://outlook.office.com/webhook/",
            _uuid(r),
            "@",
            _uuid(r),
            "/JenkinsCI/",
            _hex(r, 32),
            "/",
            _uuid(r),
            "'",
        ),
    ],
    "facebook-access-token": [
        lambda r: cat("FACEBOOK_ACCESS_TOKEN=", _facebook_token(r)),
        lambda r: cat("https://graph.facebook.com/me/friends?access_token=", _facebook_token(r)),
        lambda r: cat('{"page_token": "', _facebook_token(r), '"}'),
    ],
    "facebook-app-secret": [
        lambda r: cat('facebook_app_secret = "', _hex(r, 32), '"'),
        lambda r: cat("     fbApiKey:            '", _hex(r, 32), "',"),
        lambda r: cat('{"facebook access_token": "', rand(r, 15, DIGITS), "|", rand(r, 27, URLSAFE), '"}'),
        lambda r: cat("FB_CLIENT_TOKEN: ", _hex(r, 32)),
    ],
    "okta-api-token": [
        lambda r: cat("Authorization: SSWS ", _okta(r)),
        lambda r: cat("OKTA_API_TOKEN=", _okta(r)),
        lambda r: cat('variable "corp_okta_api_token" {\n  default = "', _okta(r), '"\n}'),
        lambda r: cat("okta:\n  client:\n    token: ", _okta(r)),
    ],
    "easypost-api-key": [
        lambda r: cat("EASYPOST_API_KEY=EZ", "AK", rand(r, 54)),
        lambda r: cat("https://api.example.com/ship?t=EZ", "TK", rand(r, 54), "&q=1"),
        lambda r: cat("client = easypost.EasyPostClient('EZ", "AK", rand(r, 54), "')"),
    ],
    "mapbox-secret-token": [
        lambda r: cat("export MAPBOX_SECRET_TOKEN=", _mapbox_secret(r)),
        lambda r: cat("  //mapboxgl.accessToken = '", _mapbox_secret(r), "';"),
        lambda r: cat("MAPBOX_DOWNLOADS_TOKEN: ", _mapbox_secret(r)),
        lambda r: cat('{"temporaryToken": "', _mapbox_secret(r, "t"), '"}'),
    ],
    "adobe-client-secret": [
        lambda r: cat('    "client_secret": "p8', "e-", _mixed(r, 32, URLSAFE), '"'),
        lambda r: cat("ADOBE_CLIENT_SECRET=p8", "e-", _mixed(r, 32)),
        lambda r: cat("-d 'client_secret=p8", "e-", _mixed(r, 32), "&grant_type=client_credentials'"),
    ],
    "airtable-token": [
        lambda r: cat("AIRTABLE_API_KEY=pa", "t", rand(r, 14), ".", _hex(r, 64)),
        lambda r: cat("airtableToken = '", _mixed(r, 17), "'"),
        lambda r: cat('new Airtable({ airtableApiKey: "pa', "t", rand(r, 14), ".", _hex(r, 64), '" })'),
    ],
    "dropbox-token": [
        lambda r: cat("DROPBOX_ACCESS_TOKEN=s", "l.B", rand(r, 136, URLSAFE)),
        lambda r: cat('dropboxToken := "', _mixed(r, 15), '"'),
        lambda r: cat("dropbox_token: ", rand(r, 11), "AAAAA", "AAAAA", rand(r, 43, URLSAFE)),
        lambda r: cat("DROPBOX_APP_SECRET=", _mixed(r, 15)),
    ],
    "hubspot-token": [
        lambda r: cat("HUBSPOT_ACCESS_TOKEN=pa", "t-na1-", _uuid(r)),
        lambda r: cat('hubspotToken = "', _uuid(r).upper(), '"'),
        lambda r: cat("Authorization: Bearer pa", "t-eu1-", _uuid(r)),
    ],
    "linkedin-client-secret": [
        lambda r: cat(
            'LINKEDIN_KEY = "',
            rand(r, 14, string.ascii_lowercase + DIGITS),
            '"\nLINKEDIN_SECRET = "',
            _mixed(r, 16),
            '"',
        ),
        lambda r: cat("spring.security.oauth2.client.registration.linkedin.client-secret=", _mixed(r, 16)),
        lambda r: cat('"linkedinClientSecret": "', _mixed(r, 16), '"'),
    ],
    "segment-public-api-token": [
        lambda r: cat('"token": "sg', "p_", _mixed(r, 64), '"'),
        lambda r: cat("SEGMENT_PUBLIC_API_TOKEN=sg", "p_", _mixed(r, 64)),
        lambda r: cat("Authorization: Bearer sg", "p_", _mixed(r, 64)),
    ],
    "twitter-api-secret": [
        lambda r: cat("TWITTER_API_KEY = '", _mixed(r, 25), "'\nTWITTER_API_SECRET = '", _mixed(r, 50), "'"),
        lambda r: cat("twitter_access_token: ", rand(r, 19, DIGITS), "-", _mixed(r, 40)),
        lambda r: cat(
            'TWITTER_BEARER_TOKEN="', "A" * 22, _mixed(r, 30), "%2B", _mixed(r, 20), "%3D", _mixed(r, 40), '"'
        ),
    ],
    "slack-session-cookie": [
        lambda r: cat("SLACK_D_COOKIE=", _slack_cookie(r)),
        lambda r: cat('curl -b "d=', _slack_cookie(r), '" https://acme.slack.com/api/auth.test'),
        lambda r: cat('{"name": "d", "domain": ".slack.com", "value": "', _slack_cookie(r), '"}'),
    ],
    "onfido-api-token": [
        lambda r: cat("ONFIDO_API_TOKEN=", _onfido(r)),
        lambda r: cat("onfido = Onfido(api_token='", _onfido(r, "live_us"), "', region='us')"),
        lambda r: cat('onfido:\n  api_token: "', _onfido(r, "sandbox"), '"'),
    ],
    "readme-api-key": [
        lambda r: cat("README_API_KEY=rd", "me_", rand(r, 70, string.ascii_lowercase + DIGITS)),
        lambda r: cat("npx rdme openapi --key=rd", "me_", rand(r, 70, string.ascii_lowercase + DIGITS)),
        lambda r: cat('readme:\n  apiKey: "rd', "me_", rand(r, 70, string.ascii_lowercase + DIGITS), '"'),
    ],
    "typeform-api-token": [
        lambda r: cat("TYPEFORM_TOKEN=tf", "p_", _mixed(r, 44), "_", _mixed(r, 14)),
        lambda r: cat('headers = {"Authorization": "Bearer tf', "p_", _mixed(r, 44), "_", _mixed(r, 14), '"}'),
        lambda r: cat("typeform:\n  token: tf", "p_", _mixed(r, 48)),
    ],
    "clickup-personal-token": [
        lambda r: cat("CLICKUP_API_TOKEN=p", "k_", rand(r, 8, DIGITS), "_", _upper_digits(r, 32)),
        lambda r: cat("-H 'Authorization: p", "k_", rand(r, 7, DIGITS), "_", _upper_digits(r, 32), "'"),
        lambda r: cat('{"clickup": {"token": "p', "k_", rand(r, 9, DIGITS), "_", _upper_digits(r, 32), '"}}'),
    ],
    "contentful-pat": [
        lambda r: cat("CONTENTFUL_MANAGEMENT_TOKEN=CF", "PAT-", _mixed(r, 43, URLSAFE)),
        lambda r: cat("contentful space list --management-token CF", "PAT-", _mixed(r, 43, URLSAFE)),
        lambda r: cat("createClient({ accessToken: 'CF", "PAT-", _mixed(r, 43, URLSAFE), "' })"),
    ],
    "duffel-api-token": [
        lambda r: cat("DUFFEL_ACCESS_TOKEN=duffel", "_test_", _mixed(r, 43, URLSAFE)),
        lambda r: cat('Duffel(access_token="duffel', "_live_", _mixed(r, 43, URLSAFE), '")'),
        lambda r: cat("Authorization: Bearer duffel", "_test_", _mixed(r, 43, URLSAFE)),
    ],
    "brevo-api-key": [
        lambda r: cat("BREVO_API_KEY=xkey", "sib-", _hex(r, 64), "-", _mixed(r, 16)),
        lambda r: cat("-H 'api-key: xkey", "sib-", _hex(r, 64), "-", _mixed(r, 16), "'"),
        lambda r: cat('"sendinblue": {"apiKey": "xkey', "sib-", _hex(r, 64), "-", _mixed(r, 16), '"}'),
    ],
    "kolide-api-key": [
        lambda r: cat("KOLIDE_API_TOKEN=k2", "sk_v1_", _mixed(r, 24)),
        lambda r: cat('-H "Authorization: Bearer k2', "sk_v1_", _mixed(r, 24), '"'),
        lambda r: cat("kolide:\n  api_key: k2", "sk_v1_", _mixed(r, 24)),
    ],
    "frameio-api-token": [
        lambda r: cat("FRAMEIO_TOKEN=fio", "-u-", _mixed(r, 64, URLSAFE)),
        lambda r: cat("Authorization: Bearer fio", "-u-", _mixed(r, 64, URLSAFE)),
        lambda r: cat('{"frameio_token": "fio', "-u-", _mixed(r, 64, URLSAFE), '"}'),
    ],
    "intra42-client-secret": [
        lambda r: cat("FT_CLIENT_SECRET=s-s4", "t2ud-", _hex(r, 64)),
        lambda r: cat('"client_secret": "s-s4', "t2af-", _hex(r, 64), '"'),
        lambda r: cat("curl -F client_secret=s-s4", "t2ud-", _hex(r, 64), " https://api.intra.42.fr/oauth/token"),
    ],
    "launchdarkly-key": [
        lambda r: cat("LAUNCHDARKLY_SDK_KEY=sdk", "-", _uuid(r)),
        lambda r: cat("import ldclient\nldclient.set_config(Config('sdk", "-", _uuid(r), "'))"),
        lambda r: cat('{"launchdarkly": {"accessToken": "api', "-", _uuid(r), '"}}'),
    ],
    "asana-token": [
        lambda r: cat("ASANA_ACCESS_TOKEN=1/", rand(r, 16, DIGITS), ":", _hex(r, 32)),
        lambda r: cat("client = asana.Client.access_token('0/", _hex(r, 32), "')"),
        lambda r: cat("asana:\n  personal_access_token: 2/", rand(r, 16, DIGITS), ":", _hex(r, 32)),
    ],
    "algolia-admin-key": [
        lambda r: cat("ALGOLIA_ADMIN_KEY=", _hex(r, 32)),
        lambda r: cat('"algolia_write_api_key": "', _hex(r, 32), '"'),
        lambda r: cat("algoliaApiKey: ", _hex(r, 32)),
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
    # New Relic: the template's placeholder, an ERB lookup, a Pixie key that is no UUID
    "# Required license key associated with your New Relic account.\nlicense_key: xxxxxxxxxxxxxxx",
    "  license_key: '<%= ENV[\"NEW_RELIC_LICENSE_KEY\"] %>'",
    cat(" --set newrelic-pixie.apiKey=px", "-api-a1b2c3d4-e5f6-g7h8-i8j0-k0l3m3n4o0p5 `"),
    # Teams: the documentation's x's, a webhook with no secret part, the connector docs' URL
    "WebhookUrl = https://outlook.office.com/webhook/xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
    cat(
        "https://acme.webhook.office.com/webhookb2/",
        "00000000-0000-0000-0000-000000000000@00000000-0000-0000-0000-000000000000/Incoming",
        "Webhook/00000000000000000000000000000000/00000000-0000-0000-0000-000000000000",
    ),
    "teams://group@tenant/altId/groupOwner?host=example.webhook.office.com",
    # Facebook: ids, hex checksums with the prefix, Square's shorter EAAA token belongs to Square
    "FACEBOOK_APP_ID=1234567890123456",
    cat("checksum: ea", "ac4cf978b6fbd480f1092cab8b233c9b949bcabfc9b598dd79a758f7243c28765ef7639c876fa72940dac68"),
    cat("EA", "AC", _fixed_hex("fb-upper", 120).upper()),
    "fb_app_id: 987654321098765",
    "facebook_app_secret: ${{ secrets.FACEBOOK_APP_SECRET }}",
    # Okta: zeros, a cut-off documentation token, an org URL
    "okta_api_token: 000000000000000000000000000000000000000000aa",
    "Authorization: SSWS 00QCjAl4MlV-WPXM...0HmjFx-vbGua",
    "OKTA_ORG_URL=https://dev-123456.okta.com",
    # EasyPost: the prefix inside a base64 blob
    cat("...6wqX6fNUXA/rYqRvfQ+EZ", "AK", _fixed_hex("ezak", 54), "/3VmWq/edti6..."),
    # Mapbox: public tokens are meant for the browser
    cat("mapboxgl.accessToken = 'p", "k.", _b64_json({"u": "acme", "a": "ckabc123"}).rstrip("="), ".", "x" * 22, "';"),
    # Airtable, Dropbox, HubSpot, LinkedIn, Segment, Twitter: ids and names, not secrets
    cat("AIRTABLE_BASE_ID=app", "a1B2c3D4e5F6g7"),
    "https://www.dropbox.com/oauth2/authorize?client_id=ab3cd5ef7gh9ij1&response_type=code",
    cat("HUBSPOT_PORTAL_ID=", "12345678"),
    cat("gl", "pat-na1-", "00000000-0000-0000-0000-000000000000"),
    cat("LINKEDIN_CLIENT_ID=", "77yg7tx91p4lag"),
    cat("SEGMENT_WRITE_KEY=", "YOUR_WRITE_KEY"),
    "TWITTER_HANDLE=@acme_support",
    "twitter_api_key = os.getenv('TWITTER_API_KEY')",
    # Slack: a cut-off cookie, Datadog: a Helm section that names a Kubernetes secret, RUM's public token
    cat("d=xo", "xd-MxY2Z%2F...; Path=/; Domain=.slack.com"),
    "datadog:\n  apiKeyExistingSecret: datadog-secret\n  appKeyExistingSecret: datadog-secret",
    cat("DD_CLIENT_TOKEN=pub", _fixed_hex("rum-client", 32)),
    cat("Mapbox temporary tokens start with t", "k. and expire within the hour"),
    # Onfido, ReadMe, Kolide, Frame.io, Brevo: placeholders, prose, the vendor's own documented example
    cat("ONFIDO_API_TOKEN=api_", "live.XXXXXXXXXXX.", "X" * 32),
    cat("onfido_token: api_", "sandbox.<token>"),
    cat("README_API_KEY=rd", "me_", "x" * 70),
    cat("the secret token has a bit more structure to it. Ex: k2", "sk_v1_", "A2UYhW7OPt2jKKLqmFcaGNK7"),
    cat("FRAMEIO_TOKEN=fio", "-u-", "0" * 64),
    cat("BREVO_API_KEY=xkey", "sib-", "0" * 64, "-", "X" * 16),
    # Typeform's prefix also starts TensorFlow Probability names
    cat("tf", "p_layer2_dense_variational_output_shape_for_batch3 = tfp.layers.DenseFlipout(16)"),
    cat("tf", "p_distributions_normal_log_prob_with_reparameterization_sample(x)"),
    # ClickUp: `pk_` names a primary key, Stripe's publishable keys are public, a typed-in doc token
    "ALTER TABLE orders ADD CONSTRAINT pk_orders_20240101 PRIMARY KEY (id);",
    cat("STRIPE_PUBLISHABLE_KEY=p", "k_live_", _fixed_hex("stripe-pk", 24)),
    cat("CLICKUP_TOKEN=p", "k_12345678_", "ABCDEFGHIJKLMNOPQRSTUVWXYZ123456"),
    # Contentful, Duffel, 42: prose, placeholders, the public client id beside the secret
    cat("Contentful personal access tokens start with CF", "PAT-"),
    cat("DUFFEL_ACCESS_TOKEN=duffel", "_test_", "your_access_token_here_xxxxxxxxxxxxxxxxxxxxx"),
    cat("FT_CLIENT_ID=u-s4", "t2ud-", _fixed_hex("42-uid", 64)),
    # LaunchDarkly: mobile keys and client-side ids are public, a UUID with `api-` and no vendor name
    cat("LAUNCHDARKLY_MOBILE_KEY=mob-", str(uuid.UUID(int=0x1D2C3B4A5F6E7D8C9B0A1F2E3D4C5B6A))),
    cat("LAUNCHDARKLY_CLIENT_SIDE_ID=", _fixed_hex("ld-client", 24)),
    cat("request_id: api-", str(uuid.UUID(int=0x4E5D6C7B8A9F0E1D2C3B4A5F6E7D8C9B))),
    # Asana: task URLs and workspace ids
    "https://app.asana.com/0/1201234567890123/1201234567890124/f",
    "ASANA_WORKSPACE_GID=1201234567890123",
    # Algolia: the search-only key is public by design (NEXT_PUBLIC_ variables ship to the browser)
    cat("NEXT_PUBLIC_ALGOLIA_API_KEY=", _fixed_hex("algolia-public", 32)),
    "ALGOLIA_APP_ID=BH4D9OD16A",
]

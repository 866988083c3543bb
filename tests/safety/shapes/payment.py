"""Shapes of payment providers: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import random
import string

from tests.safety.parts import B64, URLSAFE, Shape, cat, rand

HEX = "0123456789abcdef"
LOWER_DIGITS = string.ascii_lowercase + string.digits


def _mixed(r: random.Random, n: int) -> str:
    """``n`` base64url characters holding upper case, lower case and a digit."""
    chars = [r.choice(string.ascii_uppercase), r.choice(string.ascii_lowercase), r.choice(string.digits)]
    chars += [r.choice(URLSAFE) for _ in range(n - 3)]
    r.shuffle(chars)
    return "".join(chars)


SHAPES: dict[str, list[Shape]] = {
    "stripe-key": [
        lambda r: cat("s", "k_live_", rand(r, 24)),
        lambda r: cat("STRIPE=r", "k_live_", rand(r, 32)),
        lambda r: cat("test mode s", "k_test_", rand(r, 26)),
        lambda r: cat('stripe.api_key = "s', "k_live_51", rand(r, 97), '"'),
        lambda r: cat("STRIPE_SECRET_KEY=r", "k_test_51", rand(r, 97)),
    ],
    "stripe-webhook-secret": [
        lambda r: cat("STRIPE_WEBHOOK_SECRET=wh", "sec_", rand(r, 32)),
        lambda r: cat("endpoint_secret = 'wh", "sec_", rand(r, 32), "'"),
        lambda r: cat("svix signing secret wh", "sec_", rand(r, 32, B64)),
    ],
    "square-access-token": [
        lambda r: cat("SQUARE_ACCESS_TOKEN=EA", "AA", rand(r, 60, URLSAFE)),
        lambda r: cat("accessToken: 'sq0", "atp-", rand(r, 22, URLSAFE), "'"),
        lambda r: cat(
            "curl -H 'Authorization: Bearer EA", "AA", rand(r, 60, URLSAFE), "' https://connect.squareup.com"
        ),
    ],
    "square-oauth-secret": [
        lambda r: cat("SQUARE_APPLICATION_SECRET=sq0", "csp-", rand(r, 43, URLSAFE)),
        lambda r: cat("client_secret: sq0", "csp-", rand(r, 43, URLSAFE)),
        lambda r: cat('{"oauthSecret": "sq0', "csp-", rand(r, 43, URLSAFE), '"}'),
    ],
    "braintree-access-token": [
        lambda r: cat(
            "BRAINTREE_ACCESS_TOKEN=access_token$pro", "duction$", rand(r, 16, LOWER_DIGITS), "$", rand(r, 32, HEX)
        ),
        lambda r: cat(
            'gateway = braintree.BraintreeGateway(access_token="access_token$sand',
            "box$",
            rand(r, 16, LOWER_DIGITS),
            "$",
            rand(r, 32, HEX),
            '")',
        ),
        lambda r: cat(
            "PAYPAL_ACCESS_TOKEN: access_token$pro", "duction$", rand(r, 16, LOWER_DIGITS), "$", rand(r, 32, HEX)
        ),
    ],
    "paypal-access-token": [
        lambda r: cat("curl -H 'Authorization: Bearer A21", "AA", rand(r, 92, URLSAFE), "' https://api-m.paypal.com"),
        lambda r: cat(
            '{"scope": "openid", "access_token": "A21', "AA", rand(r, 92, URLSAFE), '", "token_type": "Bearer"}'
        ),
        lambda r: cat("PAYPAL_ACCESS_TOKEN=A21", "AA", rand(r, 92, URLSAFE)),
    ],
    "paypal-client-secret": [
        lambda r: cat("PAYPAL_CLIENT_SECRET=E", rand(r, 79, URLSAFE)),
        lambda r: cat("paypal.client.secret: ", rand(r, 80, URLSAFE)),
        lambda r: cat('"paypal_secret": "E', rand(r, 79, URLSAFE), '"'),
    ],
    "gocardless-api-token": [
        lambda r: cat("GOCARDLESS_ACCESS_TOKEN=li", "ve_", _mixed(r, 40)),
        lambda r: cat("client = gocardless_pro.Client(\n    access_token='li", "ve_", _mixed(r, 40), "',\n)"),
        lambda r: cat("gocardless:\n  environment: live\n  access_token: li", "ve_", _mixed(r, 40)),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = [
    # publishable keys and application ids ship in client code
    cat('const stripe = Stripe("p', 'k_live_51HqLyjWDarjtT1zdp7dcTqWx");'),
    cat("Stripe.setPublishableKey('p", "k_test_TYooMQauvdEDq54NiTphI7jx');"),
    cat("square.payments('sq0", "idp-2fQOp6SD7KXTB2iTH50wkw', 'L8XJ3VGQ9FN2P')"),
    # the key Stripe's own documentation shows, placeholders and truncations
    cat("the test key in Stripe's docs, s", "k_test_4eC39HqLyjWDarjtT1zdp7dc, is public"),
    cat("STRIPE_SECRET_KEY=s", "k_live_..."),
    cat("s", "k_test_xxxxxxxxxxxxxxxxxxxxxxxx"),
    cat("STRIPE_WEBHOOK_SECRET=wh", "sec_..."),
    cat("BRAINTREE_ACCESS_TOKEN=access_token$sand", "box$xxxxxxxxxxxxxxxx$xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    "PAYPAL_CLIENT_ID=AZDxjDScFpQtjWTOUtWKbyN_bDt4OgqaF4eYXlewfBP4-8aqX3PiV8e1GWU6liB2CUXlkA59kJXE7M6R",
    "paypal_client_secret = os.environ['PAYPAL_CLIENT_SECRET']",
    "const secret = process.env.PAYPAL_CLIENT_SECRET;",
    # GoCardless: `live_` names without the vendor, the environment switch, a placeholder
    "live_reload_enabled_for_development_builds_only = True",
    "gocardless_environment: live",
    cat("GOCARDLESS_ACCESS_TOKEN=li", "ve_", "x" * 40),
]

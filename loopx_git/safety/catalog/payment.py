"""Payment providers: Stripe, Square, Braintree, PayPal, GoCardless.

Publishable keys (Stripe's ``pk_``, Square's application id ``sq0idp-``, a Braintree tokenization
key) are meant to ship in client code: no rule here matches them.
"""

from __future__ import annotations

import re

from loopx_git.safety.catalog.cloud import starts_after, token
from loopx_git.safety.rule import BLOCK, Context, Q, Rule, secret

# a key's name, then `=`, `:`, `=>`, `:=` (`::=`, `:::=` of make), `.=` (PHP), `?=`/`+=` (make,
# shell) or the `>` of an XML element, each side maybe quoted
_SET = Q + r"[ \t]*(?:=>|:{1,3}=|[.?+]=|=|:|>)[ \t]*" + Q

_SQUARE_LEGACY = token(3.3, skip=7)
# `EAAA` alone is a weak prefix (Facebook tokens start `EAA`): the exact length and a mix of cases
# and digits carry it
_SQUARE = token(3.3, skip=4, kinds=3)


def _square(m: re.Match, ctx: Context) -> bool:
    return (_SQUARE if secret(m).startswith("EAAA") else _SQUARE_LEGACY)(m, ctx)


def _braintree(m: re.Match, ctx: Context) -> bool:
    # the merchant id before the last `$` is no secret; the 32 hex after it are
    return token(2.8, skip=secret(m).rfind("$") + 1)(m, ctx)


RULES: tuple[Rule, ...] = (
    # --- Stripe -----------------------------------------------------------------------------
    Rule(
        "stripe-key",
        BLOCK,
        "Stripe secret or restricted key",
        ("sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"),
        starts_after("A-Za-z0-9") + r"(?P<s>[sr]k_(?:live|test|prod)_[A-Za-z0-9]{20,247})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(3.0, skip=8),
        reference="https://docs.stripe.com/keys",
    ),
    Rule(
        "stripe-webhook-secret",
        BLOCK,
        "Stripe (or Svix) webhook signing secret",
        ("whsec_",),
        r"(?P<s>whsec_[A-Za-z0-9+/]{24,}={0,2})(?![A-Za-z0-9+/=])",
        fingerprint_only=True,
        accept=token(3.3, skip=6),
        reference="https://docs.stripe.com/webhooks#verify-events",
        prefixed=True,
    ),
    # --- Square -----------------------------------------------------------------------------
    Rule(
        "square-access-token",
        BLOCK,
        "Square access token (sq0atp-, or EAAA + 60)",
        ("sq0atp-", "eaaa"),
        starts_after("A-Za-z0-9-") + r"(?P<s>sq0atp-[A-Za-z0-9_-]{22}|EAAA[A-Za-z0-9_-]{60})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=_square,
        reference="https://developer.squareup.com/docs/build-basics/access-tokens",
    ),
    Rule(
        "square-oauth-secret",
        BLOCK,
        "Square OAuth application secret",
        ("sq0csp-",),
        r"(?P<s>sq0csp-[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.3, skip=7),
        reference="https://developer.squareup.com/docs/oauth-api/overview",
        prefixed=True,
    ),
    # --- Braintree / PayPal -----------------------------------------------------------------
    Rule(
        "braintree-access-token",
        BLOCK,
        "Braintree (PayPal) access token",
        ("access_token$production$", "access_token$sandbox$"),
        r"(?P<s>access_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32})(?![0-9A-Za-z])",
        fingerprint_only=True,
        accept=_braintree,
        reference="https://developer.paypal.com/braintree/docs/guides/authorization/overview; "
        "shape as in gitleaks braintree-access-token",
        prefixed=True,
    ),
    Rule(
        "paypal-access-token",
        BLOCK,
        "PayPal REST OAuth access token",
        ("a21aa",),
        starts_after("A-Za-z0-9-") + r"(?P<s>A21AA[A-Za-z0-9_-]{50,120})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=5, kinds=3),
        reference="https://developer.paypal.com/api/rest/authentication/",
    ),
    Rule(
        "paypal-client-secret",
        BLOCK,
        "PayPal REST client secret, after a PayPal name",
        ("paypal",),
        (
            r"(?i:paypal[\w.-]{0,30}?secret[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + starts_after("A-Za-z0-9_-")
            + r"(?P<s>[A-Za-z0-9_-]{40,80})(?![A-Za-z0-9_-])"
        ),
        accept=token(3.5, kinds=3),
        reference="https://developer.paypal.com/api/rest/authentication/; length as in trufflehog paypaloauth",
    ),
    # --- GoCardless -------------------------------------------------------------------------
    Rule(
        "gocardless-api-token",
        BLOCK,
        "GoCardless live access token (live_ + 40) near a GoCardless name",
        ("gocardless",),
        (
            # `live_` alone starts many names: the vendor's name within 80 characters, on the line
            # or the one before (`gocardless:` + newline + `access_token: live_…`)
            r"(?i:gocardless)(?:[^\n]|\n(?!\n)){0,80}?"
            + starts_after("A-Za-z0-9_")
            + r"(?P<s>live_[A-Za-z0-9_=-]{40})(?![A-Za-z0-9_=-])"
        ),
        accept=token(3.5, skip=5, kinds=2),
        span=130,  # the name's line ends within 80 of the value, which runs 45 more
        reference="https://developer.gocardless.com/getting-started/api/making-your-first-request/ (shape as in "
        "gitleaks gocardless-api-token and trufflehog gocardless)",
    ),
)

"""AI model providers.

Most providers put a fixed prefix on their keys (``sk-proj-``, ``gsk_``, ``pplx-``…): those rules
match the prefix and the documented length anywhere. Cohere and Mistral keys have no prefix, so
their rules ask for the vendor's name close before the value (the way the big open-source scanners
do), and for a value that mixes cases and holds a digit the way random keys do and hashes and
camelCase names do not.
"""

from __future__ import annotations

import re

from loopx_git.safety.rule import BLOCK, Context, Q, Rule, is_placeholder, looks_random, secret

_ASCENDING = tuple(
    alphabet[i : i + 6]
    for alphabet in ("0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    for i in range(len(alphabet) - 5)
)
"""Runs like ``123456`` or ``abcdef``: documentation writes ``sk-1234567890abcdef…``; a random key
rarely holds one (32 random hex digits about once in 100,000, 48 base62 characters far less often)."""


def _random_key(value: str, minimum: float = 3.0) -> bool:
    return not is_placeholder(value) and looks_random(value, minimum) and not any(r in value for r in _ASCENDING)


def key(m: re.Match, ctx: Context) -> bool:
    """A prefixed key whose body looks random: not a placeholder, a repeated or a counted-up fake."""
    return _random_key(secret(m))


def _case_mixed(value: str, share: float = 0.2) -> bool:
    """Random letters are about half upper case; an identifier (``hf_requiredCharacteristicTypes``)
    or a hex hash is almost all one case. A random 30-letter value has under 20% of either case
    about once in ten thousand."""
    letters = [c for c in value if c.isalpha()]
    if not letters:
        return False
    upper = sum(c.isupper() for c in letters) / len(letters)
    return share <= upper <= 1 - share


def mixed_key(m: re.Match, ctx: Context) -> bool:
    """A letters-only key behind a short prefix an identifier can carry (``hf_``): it must mix cases."""
    value = secret(m)
    return _random_key(value) and _case_mixed(value)


def alnum_key(m: re.Match, ctx: Context) -> bool:
    """A random alphanumeric key behind a short prefix (``r8_``) or found by its vendor's name:
    mixed case and a digit, which a camelCase name (``r8_registerValueForTheSecondStage``) and a
    hex hash lack. A random 32-character value has no digit about once in three hundred."""
    value = secret(m)
    body = value.split("_", 1)[1] if value.startswith("r8_") else value  # the 8 of the prefix is no digit of the key
    return _random_key(value) and _case_mixed(body) and any(c.isdigit() for c in body)


def _composio(m: re.Match, ctx: Context) -> bool:
    """The 20 or 43 characters after `ak_` / `oak_` / `uak_` hold both cases and a digit, look random
    and hold no counted-up run. (The case share of a camelCase name is too close to a random key's
    over 20 characters to tell them apart; a digit missing turns away about 3% of real keys.)"""
    body = secret(m).partition("_")[2]
    return (
        _random_key(secret(m))
        and all(any(test(c) for c in body) for test in (str.isupper, str.islower, str.isdigit))
        and looks_random(body, 3.3)
    )


# not inside a longer word, but at the start of a line inside a string literal (`…\nsk-…`)
_START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"


def _near(names: str, value: str) -> str:
    """``value`` at most 40 characters after one of ``names`` (an alternation), on the same line
    or the next: ``MISTRAL_API_KEY=…``, ``"cohere_key": "…"``, ``cohere.Client("…")``."""
    return r"(?i:" + names + r")(?:[^\n]|\n(?!\n)){0,40}?(?<![A-Za-z0-9])(?P<s>" + value + r")(?![A-Za-z0-9])"


RULES: tuple[Rule, ...] = (
    # --- OpenAI ---------------------------------------------------------------------------------
    Rule(
        "openai-api-key",
        BLOCK,
        "OpenAI API key (project, service-account, admin and legacy sk- keys)",
        ("sk-",),
        (
            _START + r"(?P<s>sk-(?!ant-)(?:"
            # project, service-account and admin keys; their body holds the T3BlbkFJ marker too
            r"(?:proj|svcacct|service|admin|None)-[A-Za-z0-9_-]{20,}"
            # any key with the marker (base64 of "OpenAI"): legacy keys and named service accounts
            r"|[A-Za-z0-9_-]{1,100}T3BlbkFJ[A-Za-z0-9_-]{20,}"
            # legacy user keys: 48 characters
            r"|[A-Za-z0-9]{48}"
            r"))(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=key,
        reference="gitleaks rule openai-api-key and trufflehog detector openai (OpenAI documents no key format)",
    ),
    # --- Anthropic ------------------------------------------------------------------------------
    Rule(
        "anthropic-api-key",
        BLOCK,
        "Anthropic API, admin or OAuth key (sk-ant-api03-, sk-ant-admin01-, sk-ant-oat01-)",
        ("sk-ant-",),
        # api03 (API), admin01, oat01/ort01 (OAuth access/refresh), sid01 (a console session)
        r"(?P<s>sk-ant-(?:[a-z]{2,6}\d{2}-)?[A-Za-z0-9_-]{32,})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="gitleaks rules anthropic-api-key, anthropic-admin-api-key, anthropic-oauth-token",
        prefixed=True,
    ),
    # --- DeepSeek -------------------------------------------------------------------------------
    Rule(
        "deepseek-api-key",
        BLOCK,
        "DeepSeek API key (sk- and 32 lower-case hex digits)",
        ("sk-",),
        # 32 hex digits after sk- is no OpenAI shape (48 characters, or a named kind); another vendor
        # copying the shape is as secret, so no "deepseek" near the value is asked for
        _START + r"(?P<s>sk-[0-9a-f]{32})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="trufflehog detector deepseek; https://api-docs.deepseek.com/",
    ),
    # --- OpenRouter and LangSmith: more keys agents' code holds ----------------------------------
    Rule(
        "openrouter-api-key",
        BLOCK,
        "OpenRouter API key (sk-or-v1- and 64 hex digits)",
        ("sk-or-v1-",),
        r"(?P<s>sk-or-v1-[0-9a-f]{64})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="trufflehog detector openrouter; https://openrouter.ai/docs/api-reference/authentication",
        prefixed=True,
    ),
    Rule(
        "langsmith-api-key",
        BLOCK,
        "LangSmith API key (lsv2_pt_ or lsv2_sk_, 32 and 10 characters)",
        ("lsv2_pt_", "lsv2_sk_"),
        r"(?P<s>lsv2_(?:pt|sk)_[a-z0-9]{32}_[a-z0-9]{10})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="gitleaks rule langsmith-api-key; https://docs.smith.langchain.com/administration/how_to_guides/organization_management/create_account_api_key",
        prefixed=True,
    ),
    # --- Groq -----------------------------------------------------------------------------------
    Rule(
        "groq-api-key",
        BLOCK,
        "Groq API key (gsk_ and 52 characters)",
        ("gsk_",),
        r"(?P<s>gsk_[A-Za-z0-9]{48,52})(?![A-Za-z0-9_])",
        fingerprint_only=True,
        accept=key,
        reference="trufflehog detector groq (52 characters; gitleaks groq-api-key says 48)",
        prefixed=True,
    ),
    # --- Perplexity -----------------------------------------------------------------------------
    Rule(
        "perplexity-api-key",
        BLOCK,
        "Perplexity API key (pplx- and 48 characters)",
        ("pplx-",),
        r"(?P<s>pplx-[A-Za-z0-9]{40,64})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="trufflehog detector perplexity; https://docs.perplexity.ai/guides/getting-started",
        prefixed=True,
    ),
    # --- xAI ------------------------------------------------------------------------------------
    Rule(
        "xai-api-key",
        BLOCK,
        "xAI (Grok) API key (xai- and 80 characters)",
        ("xai-",),
        r"(?P<s>xai-[A-Za-z0-9_]{70,90})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="trufflehog detector xai; https://docs.x.ai/docs/overview",
        prefixed=True,
    ),
    # --- Together AI ----------------------------------------------------------------------------
    Rule(
        "together-api-key",
        BLOCK,
        "Together AI API key (tgp_v1_ and 43 characters)",
        ("tgp_v1_",),
        r"(?P<s>tgp_v1_[A-Za-z0-9_-]{40,48})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="trufflehog detector togetherai; https://docs.together.ai/reference/authentication-1",
        prefixed=True,
    ),
    Rule(
        "together-legacy-api-key",
        BLOCK,
        "Together AI legacy API key (64 hex digits after TOGETHER_API_KEY or Together(api_key=)",
        ("together",),
        # "together" is an English word: it must be a key's name (together_api_key, TOGETHER_KEY)
        # or the client's constructor, not the word in a sentence before a sha256
        (
            r"(?i:together(?:[_.-]?ai)?(?:[_.-]?api)?[_.-]?(?:key|token)" + Q + r"\s*(?:=|:=|=>|:|\s)\s*"
            r"|together\w*\(\s*(?:api_key\s*=\s*)?)" + Q + r"(?P<s>[0-9a-f]{64})(?![A-Za-z0-9])"
        ),
        accept=key,
        reference="trufflehog detector togetherai (legacy keys); https://docs.together.ai/reference/authentication-1",
    ),
    # --- Tavily ---------------------------------------------------------------------------------
    Rule(
        "tavily-api-key",
        BLOCK,
        "Tavily API key (tvly-, tvly-dev-, tvly-prod-)",
        ("tvly-",),
        r"(?P<s>tvly-(?:dev-|prod-)?[A-Za-z0-9]{20,40})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        reference="trufflehog detector tavily; https://docs.tavily.com/documentation/api-reference/introduction",
        prefixed=True,
    ),
    # --- Hugging Face ---------------------------------------------------------------------------
    Rule(
        "huggingface-token",
        BLOCK,
        "Hugging Face access token (hf_ and 34 letters)",
        ("hf_",),
        _START + r"(?P<s>hf_[A-Za-z]{34,40})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=mixed_key,
        reference="https://huggingface.co/docs/hub/security-tokens",
    ),
    Rule(
        "huggingface-org-token",
        BLOCK,
        "Hugging Face organization API token (api_org_ and 34 letters)",
        ("api_org_",),
        r"(?P<s>api_org_[A-Za-z]{34})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=mixed_key,
        reference="gitleaks rule huggingface-organization-api-token",
        prefixed=True,
    ),
    # --- Replicate ------------------------------------------------------------------------------
    Rule(
        "replicate-api-token",
        BLOCK,
        "Replicate API token (r8_ and 37 characters)",
        ("r8_",),
        _START + r"(?P<s>r8_[A-Za-z0-9_-]{37})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=alnum_key,
        reference="https://replicate.com/docs/topics/security/api-tokens; trufflehog detector replicate",
    ),
    # --- Cohere ---------------------------------------------------------------------------------
    Rule(
        "cohere-api-key",
        BLOCK,
        "Cohere API key (40 characters after cohere or CO_API_KEY)",
        ("cohere", "co_api_key"),
        _near(r"cohere|co_api_key", r"[A-Za-z0-9]{40}"),
        accept=alnum_key,
        span=64,
        reference="gitleaks rule cohere-api-token (CO_API_KEY is the variable the Cohere SDKs read)",
    ),
    # --- Mistral --------------------------------------------------------------------------------
    Rule(
        "mistral-api-key",
        BLOCK,
        "Mistral AI API key (32 characters after mistral)",
        ("mistral",),
        _near(r"mistral", r"[A-Za-z0-9]{32}"),
        accept=alnum_key,
        span=64,
        reference="trufflehog detector mistral; https://docs.mistral.ai/getting-started/quickstart/",
    ),
    # --- ElevenLabs -----------------------------------------------------------------------------
    Rule(
        "elevenlabs-api-key",
        BLOCK,
        "ElevenLabs API key (sk_ and 48 hex digits)",
        ("sk_",),
        _START + r"(?P<s>sk_[0-9a-f]{48})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=key,
        # `sk_` is in every `task_`, `disk_`, `risk_`: tried only where it starts
        anchored=True,
        reference="trufflehog detector elevenlabs v2; https://elevenlabs.io/docs/api-reference/authentication",
    ),
    # --- Composio -------------------------------------------------------------------------------
    Rule(
        "composio-api-key",
        BLOCK,
        "Composio project (ak_), organization (oak_) or user (uak_) API key",
        ("ak_",),
        _START + r"(?P<s>ak_[A-Za-z0-9_-]{20}|oak_[A-Za-z0-9_-]{20}|uak_[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        # a short prefix and 20 characters: only a random mix (both cases and a digit), not a snake_case
        # or camelCase name
        accept=_composio,
        anchored=True,
        back=1,  # the o of `oak_`, the u of `uak_`
        reference="semgrep rule detected-composio-api-key (Composio documents no key format; "
        "https://docs.composio.dev/reference/api-reference/api-keys)",
    ),
)

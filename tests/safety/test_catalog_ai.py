"""Edge cases of the AI family: which sk- key is whose, exact lengths (a longer token is not cut
into a shorter one), identifiers that share a prefix, and the prefix-less keys found by their
vendor's name."""

from __future__ import annotations

import random
import string

import pytest

from loopx_git.safety.scan import scan
from tests.safety.parts import ALNUM, URLSAFE, cat, rand

R = random.Random(4242)
HEX = "0123456789abcdef"


def _rules(text: str) -> list[str]:
    return [f.rule for f in scan(text)]


def _value(text: str) -> list[str]:
    return [text[f.start : f.end] for f in scan(text)]


# --- whose sk- key ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        cat("s", "k-proj-", rand(R, 74, URLSAFE), "T3Blbk", "FJ", rand(R, 74, URLSAFE)),
        cat("s", "k-svcacct-", rand(R, 58, URLSAFE), "T3Blbk", "FJ", rand(R, 58, URLSAFE)),
        cat("s", "k-admin-", rand(R, 58, URLSAFE), "T3Blbk", "FJ", rand(R, 58, URLSAFE)),
        cat("s", "k-None-", rand(R, 20), "T3Blbk", "FJ", rand(R, 20)),
        cat("s", "k-", rand(R, 20), "T3Blbk", "FJ", rand(R, 20)),
        cat("s", "k-", rand(R, 48)),
        cat("s", "k-proj-", rand(R, 48)),
    ],
)
def test_every_openai_key_form_is_openai_and_whole(key):
    text = f"OPENAI_API_KEY={key}\n"
    assert _rules(text) == ["openai-api-key"] and _value(text) == [key]


def test_sk_and_32_hex_is_deepseek_and_other_lengths_are_neither():
    deepseek = cat("s", "k-", rand(R, 32, HEX))
    assert _rules(f"key: {deepseek}") == ["deepseek-api-key"]
    assert _rules(cat("note s", "k-", rand(R, 32, HEX), "ab here")) == []  # 34 hex digits: no known shape
    assert _rules(cat("note s", "k-", rand(R, 40), " here")) == []  # 40 characters: neither


def test_anthropic_keys_are_not_openai_keys():
    for kind in ("api03", "admin01", "oat01", "ort01"):
        key = cat("s", "k-ant-", kind, "-", rand(R, 93, URLSAFE), "AA")
        assert _rules(f"x = '{key}'") == ["anthropic-api-key"] and _value(f"x = '{key}'") == [key]


# --- exact lengths and boundaries ---------------------------------------------------------------


@pytest.mark.parametrize(
    "prefix, good, too_long, alphabet",
    [
        (cat("g", "sk_"), 52, 60, ALNUM),
        (cat("pp", "lx-"), 48, 70, ALNUM),
        (cat("xa", "i-"), 80, 100, ALNUM),
        (cat("r", "8_"), 37, 38, ALNUM),
        (cat("tg", "p_v1_"), 43, 60, URLSAFE),
        (cat("h", "f_"), 34, 44, string.ascii_letters),
    ],
)
def test_a_longer_token_is_not_cut_into_a_key(prefix, good, too_long, alphabet):
    assert len(_rules(cat(prefix, rand(R, good, alphabet)))) == 1
    assert _rules(cat("id ", prefix, rand(R, too_long, alphabet), " end")) == []


@pytest.mark.parametrize("tier", ["", "dev-", "prod-"])
def test_tavily_keys_of_every_tier(tier):
    assert _rules(cat("TAVILY_API_KEY=tv", "ly-", tier, rand(R, 32))) == ["tavily-api-key"]


def test_a_key_at_the_start_of_an_escaped_line_is_found():
    text = cat('{"env": "A=1\\ng', "sk_", rand(R, 52), '\\nB=2"}')
    assert _rules(text) == ["groq-api-key"]


# --- identifiers and fakes ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "- (id)hf_requiredCharacteristicTypesForDisplay;",  # 34 letters, one case mostly
        "r8_registerValueForTheSecondStageOfItNow = 0",
        cat("s", "k-", "1234567890abcdef" * 2),
        cat("s", "k-proj-", "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL"),
        cat("g", "sk_", "ab" * 26),
    ],
)
def test_identifiers_and_counted_up_fakes_are_not_keys(text):
    assert scan(text) == []


# --- prefix-less keys: the vendor's name must be near -----------------------------------------


def test_a_mistral_key_needs_mistral_close_before_it():
    value = rand(R, 32)
    assert _value(f"MISTRAL_API_KEY={value}") == [value]
    assert _rules(f'mistral:\n  api_key: "{value}"') == ["mistral-api-key"]
    assert "mistral-api-key" not in _rules(f"SOME_VALUE={value}")
    assert "mistral-api-key" not in _rules(f"mistral {'x' * 60} {value}")  # too far


def test_a_cohere_key_after_its_variable_or_client():
    value = rand(R, 40)
    for text in (f"CO_API_KEY={value}", f'co = cohere.ClientV2(api_key="{value}")', f"--cohere-key {value}"):
        assert _rules(text) == ["cohere-api-key"], text


def test_hashes_next_to_a_vendor_name_are_not_keys():
    assert scan(f"mistral-7b.gguf md5 {rand(R, 32, HEX)}") == []
    assert scan(f"cohere model sha1 {rand(R, 40, HEX)}") == []
    assert scan(f"cohere model sha1 {rand(R, 40, HEX).upper()}") == []


def test_together_legacy_keys_need_a_keys_name_not_the_word():
    value = rand(R, 64, HEX)
    assert _rules(f"TOGETHER_API_KEY={value}") == ["together-legacy-api-key"]
    assert _rules(f'together_client = Together(api_key="{value}")') == ["together-legacy-api-key"]
    assert scan(f"we hash the parts together: {value}") == []

"""Decoding before matching: a secret written encoded or in pieces is found, placed where it was
written, fingerprinted as its decoded value, and redacted in every piece; decoding stays bounded."""

from __future__ import annotations

import base64
import json
import random
from itertools import pairwise
from urllib.parse import quote

import pytest

from loopx_git.safety import decode
from loopx_git.safety.decode import View, encoded, escaped, lines, view, views
from loopx_git.safety.decode.literals import split_literals
from loopx_git.safety.rules import BY_ID
from loopx_git.safety.scan import fingerprint, redact, scan
from tests.safety.parts import cat, rand

TOKEN = cat("gh", "p_", rand(random.Random(5), 36))
"""A GitHub-token-shaped fake, assembled at run time."""


def _percent(value: str) -> str:
    """Every character percent-encoded, as some clients write query values."""
    return "".join(f"%{b:02X}" for b in value.encode())


def _github(text: str) -> list:
    return [f for f in scan(text) if f.rule == "github-token"]


@pytest.mark.parametrize(
    "text",
    [
        # JSON string escapes, as serializers that escape `_` or `/` write them
        '{"token": "' + TOKEN.replace("_", "\\u005f") + '"}',
        '{"url": "https:\\/\\/hooks.example.net\\/t\\/gh' + TOKEN[2:].replace("_", "\\u005f") + '"}',
        # percent-encoding in a query string
        "https://ci.example.net/run?token=" + _percent(TOKEN) + "&n=1",
        "https://ci.example.net/run?note=" + quote("deploy with ", safe="") + _percent(TOKEN),
        # base64 and hex of a line that holds it
        "CONFIG_B64=" + base64.b64encode(f"GH_TOKEN={TOKEN}\n".encode()).decode(),
        "config_hex: " + f"GH_TOKEN={TOKEN}".encode().hex(),
        # literals joined by code
        f"token = {TOKEN[:10]!r} + {TOKEN[10:]!r}",
        f'$token = "{TOKEN[:10]}" . "{TOKEN[10:]}";',
        f'token = (\n    "{TOKEN[:10]}"\n    "{TOKEN[10:]}"\n)',
        # a line continued with a backslash, and a YAML double-quoted scalar continued the same way
        f'curl -H "Authorization: token {TOKEN[:12]}\\\n{TOKEN[12:]}" https://api.example.net',
        f'token: "{TOKEN[:12]}\\\n  {TOKEN[12:]}"',
    ],
    ids=[
        "json-u-escape",
        "json-slash-escape",
        "percent-value",
        "percent-sentence",
        "base64",
        "hex",
        "split-plus",
        "split-php-dot",
        "split-implicit",
        "backslash-continued",
        "yaml-continued",
    ],
)
def test_an_encoded_or_split_token_is_found_with_the_fingerprint_of_its_value(text):
    assert TOKEN not in text and not _github_plain(text)  # invisible without decoding
    found = _github(text)
    assert len(found) == 1, found
    assert found[0].fingerprint == fingerprint(TOKEN)
    out, _ = redact(text)
    assert not _github(out) and redact(out)[0] == out


def _github_plain(text: str) -> list:
    """What the rule finds in ``text`` itself, decoding nothing."""
    return list(BY_ID["github-token"].pattern.finditer(text))


def test_a_folded_yaml_block_brings_a_key_and_its_value_onto_one_line():
    secret = rand(random.Random(3), 40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+")
    text = f"creds: >-\n  aws_secret_access_key =\n  {secret}\nn: 1\n"
    found = [f for f in scan(text) if f.blocks]
    assert [f.fingerprint for f in found] == [fingerprint(secret)]
    assert found[0].line == 3  # reported where the value is written, not where the view put it


def test_a_finding_in_a_decoded_view_reports_its_original_line_and_column():
    text = "a: 1\nb: 2\nurl: https://ci.example.net/x?t=" + _percent(TOKEN) + "\n"
    (finding,) = _github(text)
    assert (finding.line, finding.column) == (3, text.splitlines()[2].index("t=") + 3)


def test_redaction_replaces_every_piece_and_is_a_fixed_point():
    text = f'token = "{TOKEN[:10]}" + "{TOKEN[10:20]}" + "{TOKEN[20:]}"\n'
    out, replaced = redact(text)
    assert [f.rule for f in replaced] == ["github-token"]
    assert out == 'token = "[REDACTED:github-token]" + "[REDACTED:github-token]" + "[REDACTED:github-token]"\n'
    assert redact(out)[0] == out
    assert not [f for f in scan(out) if f.blocks]


def test_redaction_of_escaped_json_keeps_it_valid_json():
    text = json.dumps({"token": TOKEN.replace("_", "\\u005f"), "n": 1}).replace("\\\\u005f", "\\u005f")
    assert json.loads(text)["token"] == TOKEN
    out, replaced = redact(text)
    assert len(replaced) == 1
    assert json.loads(out)["token"] == "[REDACTED:github-token]"


def test_redaction_inside_base64_replaces_only_the_groups_that_encode_the_value():
    line = f"GH_TOKEN={TOKEN} and some more text after it to keep\n"
    blob = base64.b64encode(line.encode()).decode()
    text = f"CONFIG_B64={blob}\n"
    out, replaced = redact(text)
    assert len(replaced) == 1
    assert out.startswith("CONFIG_B64=") and "[REDACTED:github-token]" in out
    assert TOKEN not in "".join(v.text for v in views(out))
    assert redact(out)[0] == out


def test_base64_and_hex_that_do_not_decode_to_text_are_left_alone():
    rng = random.Random(9)
    image = base64.b64encode(bytes(rng.randrange(256) for _ in range(600))).decode()
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    text = f"![logo](data:image/png;base64,{image})\nsha256: {digest}\nid: SomeLongCamelCaseIdentifierName\n"
    assert list(encoded.blobs(text)) == []
    assert scan(text) == []


def test_view_pieces_merge_touching_spans_and_map_through_a_parent():
    outer = View("abcdef", ((0, 3, 10, 13, True), (3, 6, 20, 23, True)))
    assert outer.pieces(1, 5) == ((11, 13), (20, 22))
    inner = View("cd", ((0, 2, 2, 4, True),), parent=outer)
    assert inner.pieces(0, 2) == ((12, 13), (20, 21))


def test_decoding_is_bounded_on_hostile_input(monkeypatch):
    monkeypatch.setattr(decode, "MAX_TOTAL", 50_000)
    line = '"' + "a\\u0041" * 20 + '" + "b"\n'
    text = line * 5_000  # 5k lines that each decode, and each split literal
    total = sum(len(v.text) for v in views(text))
    assert total <= 50_000 + 8 * len(text)  # the budget grows with the text, never past it
    big = "x=" + "%41" * 200_000  # one percent run longer than a region
    assert all(len(v.text) <= view.MAX_REGION for v in views(big))


def test_a_continued_line_is_joined_as_yaml_and_as_a_shell_joins_it():
    text = "run --name \\\n    value-two \\\nend\n"
    joined = sorted(v.text.rstrip("\n") for v in lines.continued(text))
    assert joined == ["run --name     value-two end", "run --name value-two end"]


# --- found by review: each was a miss, a partial redaction, a crash or a quadratic path -----------

RNG = random.Random(11)
RANDOM = "".join(RNG.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(36))


def test_a_value_split_under_a_key_is_redacted_in_every_piece():
    out, replaced = redact('password: "Xk29" + "aQ7vLm3zPq8Wd"\n')
    assert replaced and out == 'password: "[REDACTED:generic-secret]" + "[REDACTED:generic-secret]"\n'


def test_literals_joined_on_one_line_by_blanks_are_joined():
    token = cat("gh", "p_", RANDOM)
    out, _ = redact(f'GITHUB_TOKEN = "{token[:12]}" "{token[12:]}"\n')
    assert out == 'GITHUB_TOKEN = "[REDACTED:github-token]" "[REDACTED:github-token]"\n'


def test_a_value_found_encoded_and_decoded_is_reported_decoded():
    text = "url = https://api.example.net/v1?api_key=Xk29%2BaQ7vLm3zPq8Wd&n=1\n"
    (finding,) = [f for f in scan(text) if f.blocks]
    assert finding.fingerprint == fingerprint("Xk29+aQ7vLm3zPq8Wd") and finding.decoded


def test_an_empty_secret_part_is_no_finding_and_no_crash():
    from loopx_git.safety.policy import Policy
    from loopx_git.safety.rule import BLOCK, Rule

    policy = Policy(extra_rules=(Rule("team-pw", BLOCK, "team rule", ("pw=",), r"pw=(?P<s>\\?)"),))
    assert scan("pw=%5C and pw=\\\n", policy) == []


def test_base64_wrapped_at_76_and_blobs_glued_to_a_path_or_a_name_are_decoded():
    line = ("x" * 30 + f" GH_TOKEN={TOKEN} " + "y" * 40) * 3
    encoded = base64.b64encode(line.encode()).decode()
    wrapped = "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    for text in (
        f"data:\n{wrapped}\n",
        "https://x.example.net/v1/" + base64.b64encode(f"GH_TOKEN={TOKEN}".encode()).decode(),
        "0x" + f"GH_TOKEN={TOKEN}".encode().hex(),
        "cfg_" + f"GH_TOKEN={TOKEN}".encode().hex(),
        "v=" + f"GH_TOKEN={TOKEN}".encode().hex() + "a",  # odd length
    ):
        assert {f.fingerprint for f in _github(text)} == {fingerprint(TOKEN)}, text[:40]
        out, _ = redact(text)
        assert not _github(out) and all(TOKEN[4:20] not in v.text for v in views(out))


def test_regions_are_bounded_and_each_encoded_run_is_covered_once():
    """What kept hostile inputs linear: a region never re-covers what the one before covered."""
    text = "%41x" * 50_000  # one long URL part full of escapes, no separator
    regions = list(view.regions(text, escaped._PERCENT.finditer(text), escaped._url_token))
    assert all(e - s <= view.MAX_REGION for s, e in regions)
    assert all(e1 <= s2 for (_, e1), (s2, _) in pairwise(regions))
    assert sum(e - s for s, e in regions) <= len(text)
    literals = '"\\\' + "' * 20_000  # a join after every literal, quotes escaped in between
    assert sum(len(v.text) for v in split_literals(literals)) <= 4 * len(literals)


def test_an_escaped_token_far_into_one_long_json_line_is_found():
    filler = '"path": "a\\/b\\/c", ' * 10_000  # 200 KB on one line, an escape every 20 characters
    text = "{" + filler + '"token": "' + TOKEN.replace("_", "\\u005f") + '"}'
    assert {f.fingerprint for f in _github(text)} == {fingerprint(TOKEN)}

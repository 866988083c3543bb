"""Edge cases of the keys family: where a PEM body sits (comments, logs, escaped strings, joined
literals), encrypted keys as warnings, PuTTY files, the age and NATS checksums, and which members
of a JSON Web Key are secret."""

from __future__ import annotations

import base64
import json
import random

import pytest

from loopx_git.safety.catalog.keys import bech32_valid, crc16_xmodem, nkey_valid
from loopx_git.safety.scan import fingerprint, redact, scan
from tests.safety.parts import B64, URLSAFE, cat, rand

PRIVATE = "PRIVATE " + "KEY"  # assembled: no key header whole in this file
R = random.Random(20260101)


def _body(lines: int = 5) -> list[str]:
    return [rand(R, 64, B64) for _ in range(lines)]


def _pem(label: str, body: list[str], *, prefix: str = "", nl: str = "\n") -> str:
    lines = [f"-----BEGIN {label}-----", *body, f"-----END {label}-----"]
    return nl.join(prefix + line for line in lines)


def _rules(text: str) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in scan(text)]


# --- PEM blocks -------------------------------------------------------------------------------


@pytest.mark.parametrize("label", ["RSA", "EC", "DSA", "OPENSSH", "", "PGP"])
def test_every_private_key_label_blocks(label):
    full = cat(label + " " if label else "", PRIVATE, " BLOCK" if label == "PGP" else "")
    assert _rules(_pem(full, _body())) == [("private-key", "block")]


@pytest.mark.parametrize("prefix", ["# ", "// ", " * ", "; ", "-- ", "> "])
def test_a_block_behind_comment_marks_is_found_and_redacted_whole(prefix):
    body = _body()
    text = _pem(cat("RSA ", PRIVATE), body, prefix=prefix)
    out, [finding] = redact(text)
    assert finding.rule == "private-key"
    assert not any(line in out for line in body)
    assert out.startswith(cat(prefix, "-----BEGIN RSA ", PRIVATE, "-----")) and out.endswith(
        cat("END RSA ", PRIVATE, "-----")
    )


def test_a_block_after_a_log_prefix_and_with_a_log_prefix_on_every_line():
    body = _body()
    one_line = cat("2026-01-01T00:00:00Z INFO key: ", _pem(cat("RSA ", PRIVATE), body, nl="\\n"))
    every_line = "\n".join(
        f"2026-01-01T00:00:0{i}Z DEBUG {line}" for i, line in enumerate(_pem(PRIVATE, body).split("\n"))
    )
    for text in (one_line, every_line):
        out, found = redact(text)
        assert [f.rule for f in found] == ["private-key"]
        assert not any(line in out for line in body)


def test_a_google_service_account_file_keeps_its_json_valid_after_redaction():
    body = _body(8)
    text = json.dumps(
        {
            "type": "service_account",
            "private_key_id": rand(R, 40, "0123456789abcdef"),
            "private_key": _pem(PRIVATE, body) + "\n",
        },
        indent=2,
    )
    out, found = redact(text)
    assert "private-key" in [f.rule for f in found]  # (the cloud family names the private_key_id)
    key = json.loads(out)["private_key"]
    assert key == cat("-----BEGIN ", PRIVATE, "-----[REDACTED:private-key]-----END ", PRIVATE, "-----\n")


def test_a_key_in_joined_string_literals_is_redacted_and_the_code_still_compiles():
    body = _body()
    text = (
        "KEY = (\n" + "\n".join(f'    "{line}\\n"' for line in _pem(cat("RSA ", PRIVATE), body).split("\n")) + "\n)\n"
    )
    out, found = redact(text)
    assert [f.rule for f in found] == ["private-key"]
    assert not any(line in out for line in body)
    compile(out, "<redacted>", "exec")


def test_the_body_is_the_fingerprinted_part():
    body = _body()
    text = _pem(cat("EC ", PRIVATE), body)
    [finding] = scan(text)
    assert text[finding.start : finding.end].strip() == "\n".join(body)
    assert finding.fingerprint == fingerprint(text[finding.start : finding.end])


@pytest.mark.parametrize(
    "text",
    [
        _pem(cat("RSA ", PRIVATE), ["..."]),
        _pem(cat("RSA ", PRIVATE), ["<key>"]),
        _pem(cat("RSA ", PRIVATE), ["MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi..."]),
        _pem(cat("RSA ", PRIVATE), ["A" * 64, "A" * 64]),
        _pem(PRIVATE, ["YOUR_PRIVATE_KEY_HERE"]),
        cat(
            'pem = "-----BEGIN ',
            PRIVATE,
            '-----\\n" + base64.encodebytes(der).decode() + "-----END ',
            PRIVATE,
            '-----\\n"',
        ),
    ],
)
def test_placeholder_bodies_and_code_that_builds_a_key_are_not_keys(text):
    assert scan(text) == []


def test_a_missing_end_line_does_not_swallow_the_closing_quote_of_a_json_string():
    text = json.dumps({"k": cat("-----BEGIN RSA ", PRIVATE, "-----\n") + "\n".join(_body()), "n": 1})
    out, found = redact(text)
    assert [f.rule for f in found] == ["private-key"]
    assert json.loads(out)["n"] == 1


# --- encrypted keys: a warning, never redacted ------------------------------------------------


def _openssh(cipher_prefix: str) -> str:
    first = cipher_prefix + rand(R, 64 - len(cipher_prefix), B64)
    return _pem(cat("OPENSSH ", PRIVATE), [first, *_body(4)])


@pytest.mark.parametrize(
    "text",
    [
        _pem(cat("ENCRYPTED ", PRIVATE), _body()),
        _pem(cat("RSA ", PRIVATE), ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,0123ABCD0123ABCD", "", *_body()]),
        _openssh("b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0"),  # aes256-ctr, bcrypt
    ],
)
def test_encrypted_keys_warn_and_redaction_leaves_them(text):
    assert _rules(text) == [("private-key-encrypted", "warn")]
    assert redact(text) == (text, [])


def test_armor_comments_with_quotes_do_not_end_the_body():
    body = _body()
    pgp = _pem(cat("PGP ", PRIVATE, " BLOCK"), ['Comment: alice "test" key', "", *body])
    ssh2 = "\n".join(
        [cat("---- BEGIN SSH2 ENCRYPTED ", PRIVATE, " ----"), 'Comment: "rsa-key"', *body, "---- END SSH2 ----"]
    )
    for text, rule in ((pgp, "private-key"), (ssh2, "private-key-encrypted")):
        for form in (text, json.dumps({"k": text, "n": 1})):
            [finding] = scan(form)
            assert finding.rule == rule and body[-1] in form[finding.start : finding.end]


def test_an_openssh_key_with_cipher_none_blocks():
    assert _rules(_openssh("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ")) == [("private-key", "block")]


# --- PuTTY --------------------------------------------------------------------------------------


def _ppk(encryption: str, private: str) -> str:
    lines = [cat("PuTTY", "-User-Key-File-3: ssh-ed25519"), f"Encryption: {encryption}"]
    if encryption != "none":
        lines += ["Key-Derivation: Argon2id", "Argon2-Memory: 8192", "Argon2-Salt: " + rand(R, 32, "0123456789abcdef")]
    lines += ["Comment: eddsa-key", "Public-Lines: 2", rand(R, 64, B64), rand(R, 16, B64), "Private-Lines: 1", private]
    return "\n".join([*lines, "Private-MAC: " + rand(R, 64, "0123456789abcdef")])


def test_a_putty_file_blocks_unless_encrypted_and_only_its_private_lines_are_redacted():
    private = rand(R, 44, B64)
    plain = _ppk("none", private)
    out, found = redact(plain)
    assert [f.rule for f in found] == ["putty-private-key"]
    assert private not in out and "Private-MAC: " in out and "Public-Lines: 2" in out
    assert _rules(_ppk("aes256-cbc", rand(R, 44, B64))) == [("private-key-encrypted", "warn")]
    assert scan(_ppk("none", "<private lines>")) == []


# --- age ----------------------------------------------------------------------------------------

_CHARSET = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"


def _bech32_checksum(hrp: str, data: list[int]) -> list[int]:
    """BIP-173, written out here independently of the catalog's checker."""
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp] + data + [0] * 6:
        b = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if (b >> i) & 1 else 0
    polymod = chk ^ 1
    return [(polymod >> 5 * (5 - i)) & 31 for i in range(6)]


def _age_key(key: bytes) -> str:
    bits = "".join(f"{byte:08b}" for byte in key)
    bits += "0" * (-len(bits) % 5)
    data = [int(bits[i : i + 5], 2) for i in range(0, len(bits), 5)]
    hrp = "age-secret-key-"
    return (hrp + "1" + "".join(_CHARSET[d] for d in data + _bech32_checksum(hrp, data))).upper()


def test_age_checksum_is_computed_as_age_does():
    good = _age_key(bytes(R.randrange(256) for _ in range(32)))
    assert len(good) == len(cat("AGE-SECRET", "-KEY-1")) + 58 and bech32_valid(good)
    flipped = good[:-1] + ("Q" if good[-1] != "Q" else "P")
    assert not bech32_valid(flipped)


def test_age_checksum_only_rescues_values_that_fail_the_entropy_check():
    low = _age_key(bytes(32))  # all zero bits: "QQQQ…" and a valid checksum
    assert [f.rule for f in scan(low)] == ["age-secret-key"]
    broken = low[:-6] + "QQQQQQ"
    assert scan(broken) == []  # low entropy and a wrong checksum: a fake
    random_body = cat("AGE-SECRET", "-KEY-1", rand(R, 58, _CHARSET.upper()))
    assert not bech32_valid(random_body) and [f.rule for f in scan(random_body)] == ["age-secret-key"]


# --- NATS ---------------------------------------------------------------------------------------

_NKEY_TYPES = {"U": 20 << 3, "A": 0, "O": 14 << 3, "N": 13 << 3, "C": 2 << 3}


def _seed(kind: str, key: bytes) -> str:
    prefix = _NKEY_TYPES[kind]
    raw = bytes([(18 << 3) | (prefix >> 5), (prefix & 31) << 3]) + key
    return base64.b32encode(raw + crc16_xmodem(raw).to_bytes(2, "little")).decode().rstrip("=")


def test_crc16_is_xmodem():
    assert crc16_xmodem(b"123456789") == 0x31C3


@pytest.mark.parametrize("kind", sorted(_NKEY_TYPES))
def test_nkey_seeds_of_every_kind_are_found(kind):
    seed = _seed(kind, bytes(R.randrange(256) for _ in range(32)))
    assert seed.startswith("S" + kind + "A") and len(seed) == 58 and nkey_valid(seed)
    assert [f.rule for f in scan(f"NATS_NKEY_SEED={seed}")] == ["nats-nkey-seed"]


def test_nkey_checksum_only_rescues_values_that_fail_the_entropy_check():
    low = _seed("U", bytes(32))
    assert [f.rule for f in scan(low)] == ["nats-nkey-seed"]
    assert scan(low[:-2] + ("AA" if low[-2:] != "AA" else "BA")) == []
    creds = cat("-----BEGIN USER NKEY SEED-----\n", _seed("U", bytes(R.randrange(256) for _ in range(32))))
    assert [f.rule for f in scan(creds + "\n------END USER NKEY SEED------\n")] == ["nats-nkey-seed"]


def test_a_public_nkey_is_not_a_seed():
    public = base64.b32encode(bytes([20 << 3]) + bytes(R.randrange(256) for _ in range(34))).decode().rstrip("=")
    assert public.startswith("U") and scan(f"user: {public}") == []


# --- JSON Web Keys ------------------------------------------------------------------------------


def _jwk(kty: str, **members: str) -> dict[str, str]:
    return {"kty": kty, **members}


def test_the_private_exponent_of_an_rsa_jwk_is_the_secret_part():
    d = rand(R, 342, URLSAFE)
    text = json.dumps(_jwk("RSA", n=rand(R, 342, URLSAFE), e="AQAB", d=d, p=rand(R, 171, URLSAFE)))
    [finding] = scan(text)
    assert finding.rule == "jwk-private-key" and text[finding.start : finding.end] == d


def test_a_jwk_with_d_before_kty_is_found_too():
    text = json.dumps(_jwk("EC", crv="P-256", d=rand(R, 43, URLSAFE), x=rand(R, 43, URLSAFE)), indent=2, sort_keys=True)
    assert text.index('"d"') < text.index('"kty"')
    assert [f.rule for f in scan(text)] == ["jwk-private-key"]


def test_an_oct_key_secret_is_found():
    assert [f.rule for f in scan(json.dumps(_jwk("oct", k=rand(R, 43, URLSAFE), alg="HS256")))] == ["jwk-private-key"]


@pytest.mark.parametrize(
    "jwk",
    [
        _jwk("RSA", n=rand(R, 342, URLSAFE), e="AQAB", kid="k1"),
        _jwk("EC", crv="P-256", x=rand(R, 43, URLSAFE), y=rand(R, 43, URLSAFE)),
        _jwk("OKP", crv="Ed25519", x=rand(R, 43, URLSAFE)),
    ],
)
def test_public_jwks_are_not_secrets(jwk):
    assert scan(json.dumps({"keys": [jwk]}, indent=2)) == []


def test_a_d_member_of_another_object_is_not_a_jwk():
    text = json.dumps({"a": _jwk("RSA", n=rand(R, 342, URLSAFE), e="AQAB"), "b": {"d": rand(R, 43, URLSAFE)}})
    assert scan(text) == []
    after_a_closed_jwk = json.dumps({"a": _jwk("RSA", n=rand(R, 342, URLSAFE), e="AQAB"), "d": rand(R, 43, URLSAFE)})
    assert scan(after_a_closed_jwk) == []


def test_a_jwk_in_a_python_dict_and_escaped_in_json():
    d = rand(R, 43, URLSAFE)
    python = cat("key = {'kty': 'OKP', 'crv': 'Ed25519', 'd': '", d, "'}")
    assert _rules(python) == [("jwk-private-key", "block")]
    assert _rules(json.dumps({"jwk": json.dumps(_jwk("oct", k=d))})) == [("jwk-private-key", "block")]

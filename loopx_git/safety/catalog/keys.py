"""Private keys and signed tokens.

A PEM block is found by its ``-----BEGIN … PRIVATE KEY-----`` line and reaches past it (``span``)
over its body, wherever the body sits: plain lines, lines behind a comment or log prefix (``# ``,
``// ``, `` * ``, a timestamp), escaped ``\\n`` inside a JSON string (a Google service-account
file), or quoted lines joined by ``+``. The body is the secret part, so redaction keeps the BEGIN
and END lines. An encrypted key is a warning: without its passphrase it is not yet a secret.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from loopx_git.safety.rule import (
    BLOCK,
    WARN,
    Context,
    Rule,
    entropy,
    is_placeholder,
    lazy_pattern,
    looks_random,
    secret,
)

# --- PEM, OpenSSH, PGP and PuTTY private keys ---------------------------------------------------

_PEM_HEAD = r"-{4,5} ?BEGIN (?P<label>[A-Z0-9 ]{0,30}?)PRIVATE KEY(?: BLOCK)? ?-{4,5}"
# a line break, also escaped inside a string literal
_NL = r"(?:\r?\n|(?:\\r)?\\n)"
# PuTTY: a header line, a few `Name: value` lines (Encryption, Comment, the public lines…), then
# the private lines; `head` holds what comes before them, to tell an encrypted file
_PPK_HEAD = (
    r"PuTTY-User-Key-File-\d+:[^\n\\]*(?P<head>(?:" + _NL + r"[^\n\\]*){1,60}?)" + _NL + r"[ \t]*Private-Lines: ?\d+"
)
# a string literal closed at a line's end and opened again on the next (`"…\n" +`, Python's
# implicit concatenation); a quote anywhere else ends the body, so that redaction never takes
# the quote that ends a JSON string
_JOIN = r"""["'`][ \t]*\+?[ \t]*(?:""" + _NL + r"""[ \t]*\+?[ \t]*)?\\?["'`]"""
# the body: base64 and armor headers (`Proc-Type: 4,ENCRYPTED`), with what wraps its lines —
# comment marks, joined literals, escaped line breaks, log prefixes — up to the END line (four
# dashes stop it: PEM has five, SSH2 four)
_PEM_BODY = r"""(?:Comment:(?:[^\n\\]|\\")*|[A-Za-z0-9+/=:,.\s\\#*;!%>|_\[\]]|-(?!---)|""" + _JOIN + r"){16,}"
# PuTTY has no END line: its private lines are the base64 lines after `Private-Lines: N`
_PPK_BODY = r"""(?:""" + _NL + r"""[ \t]*[A-Za-z0-9+/=]{4,}(?![^\s\\"'`]))+"""

PEM_BLOCK = _PEM_HEAD + "(?P<s>" + _PEM_BODY + ")"
PPK_BLOCK = _PPK_HEAD + "(?P<s>" + _PPK_BODY + ")"
ANY_KEY_BLOCK = "(?:" + _PEM_HEAD + "|" + _PPK_HEAD + ")(?P<s>(?(head)" + _PPK_BODY + "|" + _PEM_BODY + "))"

_MATERIAL = lazy_pattern(r"[A-Za-z0-9+/]{16,}")
_PROC_TYPE_ENCRYPTED = lazy_pattern(r"Proc-Type:\s*4,\s*ENCRYPTED", re.I)
_OPENSSH_MAGIC = "b3BlbnNzaC1rZXktdjEA"  # base64 of "openssh-key-v1\0"
_OPENSSH_NONE = _OPENSSH_MAGIC + "AAAABG5vbmU"  # … followed by the cipher name "none"


def _key_material(body: str) -> bool:
    """Enough base64 that looks like key bytes: a body of ``...``, ``<key>``, ``YOUR_KEY_HERE`` or
    the code that builds a PEM string is not a key."""
    if is_placeholder(body):
        return False
    material = "".join(_MATERIAL.findall(body))
    if len(material) < 40 or entropy(material) < 3.5:
        return False
    return all(any(test(c) for c in material) for test in (str.isupper, str.islower, str.isdigit))


def _encrypted(m: re.Match) -> bool:
    body = secret(m)
    groups = m.groupdict()
    if groups.get("head") is not None:  # PuTTY names its cipher
        return re.search(r"Encryption:\s*none\b", groups["head"]) is None
    if "ENCRYPTED" in (groups.get("label") or "") or _PROC_TYPE_ENCRYPTED.search(body):
        return True
    material = "".join(_MATERIAL.findall(body))
    return _OPENSSH_MAGIC in material and _OPENSSH_NONE not in material


def plain_key(m: re.Match, ctx: Context) -> bool:
    return _key_material(secret(m)) and not _encrypted(m)


def encrypted_key(m: re.Match, ctx: Context) -> bool:
    return _key_material(secret(m)) and _encrypted(m)


# --- age and NATS: checksummed base32 -----------------------------------------------------------

# not inside a longer word, but at the start of a line inside a string literal (`…\nAGE-…`)
_START = r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))"
_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
_BECH32_GEN = (0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3)


def bech32_valid(text: str) -> bool:
    """The BIP-173 checksum of a bech32 string (``hrp1data``), as age writes its keys."""
    hrp, sep, data = text.lower().rpartition("1")
    if not sep or len(data) < 6 or any(c not in _BECH32 for c in data):
        return False
    check = 1
    for value in [ord(c) >> 5 for c in hrp] + [0] + [ord(c) & 31 for c in hrp] + [_BECH32.index(c) for c in data]:
        top = check >> 25
        check = (check & 0x1FFFFFF) << 5 ^ value
        for i, gen in enumerate(_BECH32_GEN):
            if top >> i & 1:
                check ^= gen
    return check == 1


def crc16_xmodem(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021 if crc & 0x8000 else crc << 1) & 0xFFFF
    return crc


def nkey_valid(text: str) -> bool:
    """A NATS nkey's checksum: base32 of the prefix bytes and the key, then a little-endian CRC-16."""
    try:
        raw = base64.b32decode(text + "=" * (-len(text) % 8))
    except (binascii.Error, ValueError):
        return False
    return len(raw) > 2 and crc16_xmodem(raw[:-2]) == int.from_bytes(raw[-2:], "little")


def _random_or_checksummed(valid: Callable[[str], bool]) -> Callable[[re.Match, Context], bool]:
    """Entropy decides; a good checksum accepts a value low on entropy that is still a real key."""

    def check(m: re.Match, ctx: Context) -> bool:
        value = secret(m)
        return not is_placeholder(value) and (looks_random(value, 3.0) or valid(value))

    return check


# --- JSON Web Key ---------------------------------------------------------------------------------

_JQ = r"""(?:'\\''|\\?["'])"""  # a JSON or Python quote, also escaped inside a string or for a shell
# `"d"` (an RSA, EC or OKP private key) or `"k"` (an oct key's secret); the check below wants a
# `"kty"` in the same object, before or after (JSON keys come in any order; sorted output puts d
# first). Looked for by the check, not the regex: a regex reaching out for it from every `"d"`
# costs a scan of the whole object each time, quadratic on a large JSON.
JWK_PRIVATE = _JQ + r"[dk]" + _JQ + r"\s*:\s*" + _JQ + r"(?P<s>[A-Za-z0-9_-]{16,})(?=" + _JQ + r")"
_KTY = lazy_pattern(r"""["']kty\\?["']""")
_JWK_REACH = 4000  # an RSA-8192 private JWK is under 8 kB; from d to either end, under 4 kB


def _in_a_jwk(m: re.Match) -> bool:
    """The match sits in a JSON object (no brace between) that names its ``kty``."""
    text, start, end = m.string, m.start(), m.end()
    opening = text.rfind("{", max(0, start - _JWK_REACH), start)
    if opening < 0 or text.find("}", opening, start) >= 0:
        return False
    closing = text.find("}", end, end + _JWK_REACH)
    return _KTY.search(text, opening, closing if closing >= 0 else end + _JWK_REACH) is not None


def jwk_secret(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    return not is_placeholder(value) and looks_random(value, 3.0) and _in_a_jwk(m)


def jwt_header(m: re.Match, ctx: Context) -> bool:
    """A JWT's first segment is the base64url of a JSON object naming its ``alg`` (RFC 7515 §4.1.1)
    or ``typ``. One that decodes to anything else, or that is no base64url at all (a length of 4n+1),
    is a string that happens to start with ``eyJ``: a token edited by hand for a test, a blob."""
    value = secret(m)
    if is_placeholder(value):
        return False
    head = value.split(".", 1)[0]
    try:
        raw = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    import json  # only for a match: not paid by every commit's import of the rules

    try:
        header = json.loads(raw)
    except ValueError:  # also UnicodeDecodeError: random bytes after `{"`
        return b'"alg"' in raw or b'"typ"' in raw  # a header with a byte mangled still names them
    return isinstance(header, dict) and ("alg" in header or "typ" in header)


RULES: tuple[Rule, ...] = (
    Rule(
        "private-key",
        BLOCK,
        "PEM, OpenSSH or PGP private key block (RSA, EC, DSA, PKCS#8…)",
        ("private key",),
        PEM_BLOCK,
        fingerprint_only=True,
        accept=plain_key,
        span=20_000,  # an RSA-8192 PEM is 6 kB, a PGP secret key with subkeys about 10 kB
        reference="RFC 7468 (PEM); OpenSSH PROTOCOL.key; RFC 4880 §6.2 (PGP armor)",
    ),
    Rule(
        "private-key-encrypted",
        WARN,
        "passphrase-encrypted private key block (PKCS#8, Proc-Type: 4,ENCRYPTED, OpenSSH, PuTTY)",
        ("private key", "putty-user-key-file"),
        ANY_KEY_BLOCK,
        accept=encrypted_key,
        span=20_000,
        reference="RFC 5958 §3 (EncryptedPrivateKeyInfo); RFC 1421 §4.6.1.1 (Proc-Type)",
    ),
    Rule(
        "putty-private-key",
        BLOCK,
        "PuTTY private key file (.ppk) with Encryption: none",
        ("putty-user-key-file",),
        PPK_BLOCK,
        fingerprint_only=True,
        accept=plain_key,
        span=10_000,
        reference="https://the.earth.li/~sgtatham/putty/0.78/htmldoc/AppendixC.html",
    ),
    Rule(
        "age-secret-key",
        BLOCK,
        "age secret key (AGE-SECRET-KEY-1 and 58 bech32 characters)",
        ("age-secret-key-1",),
        r"(?P<s>AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=_random_or_checksummed(bech32_valid),
        reference="https://github.com/C2SP/C2SP/blob/main/age.md (X25519 identities)",
        prefixed=True,
    ),
    Rule(
        "nats-nkey-seed",
        BLOCK,
        "NATS nkey seed (S, a key type, and 56 base32 characters)",
        # every seed starts S?A: the seed prefix, the type (user, account, operator, server,
        # cluster, curve), then zero bits
        ("sua", "saa", "soa", "sna", "sca", "sxa"),
        _START + r"(?P<s>S[UAONCX]A[A-Z2-7]{55})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=_random_or_checksummed(nkey_valid),
        reference="https://docs.nats.io/running-a-nats-service/configuration/securing_nats/auth_intro/nkey_auth",
    ),
    Rule(
        "jwk-private-key",
        BLOCK,
        'private member of a JSON Web Key ("d" of an RSA, EC or OKP key, "k" of an oct key)',
        ('"d"', "'d'", '\\"d\\"', '"k"', "'k'", '\\"k\\"'),
        JWK_PRIVATE,
        accept=jwk_secret,
        reference="RFC 7517 §4; RFC 7518 §6.2.2.1, §6.3.2.1, §6.4.1",
    ),
    Rule(
        "jwt",
        BLOCK,
        "JSON Web Token",
        ("eyj",),
        (r"(?:(?<![A-Za-z0-9-])|(?<=\\[nrt]))(?P<s>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"),
        accept=jwt_header,
        reference="RFC 7519",
    ),
)

"""Shapes of private keys and signed tokens: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import json
import random
import string

from tests.safety.parts import B64, URLSAFE, Shape, cat, jwt, pem, rand

BECH32_UPPER = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
BASE32 = string.ascii_uppercase + "234567"
PRIVATE = "PRIVATE " + "KEY"  # assembled: no key header whole in this file
OPENSSH_NONE = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"  # "openssh-key-v1", cipher and kdf "none"
OPENSSH_AES = "b3BlbnNzaC1rZXktdjEAAAAACmFlczI1Ni1jdHIAAAAGYmNyeXB0"  # cipher "aes256-ctr", kdf "bcrypt"


def _dek_info(r: random.Random) -> str:
    return "DEK-Info: AES-128-CBC," + rand(r, 32, "0123456789ABCDEF")


def _ec_jwk_sorted(r: random.Random) -> str:
    """Pretty-printed with sorted keys, as many tools write it: ``"d"`` comes before ``"kty"``."""
    members = {"crv": "P-256", "d": rand(r, 43, URLSAFE), "kty": "EC", "x": rand(r, 43, URLSAFE)}
    return json.dumps(members, indent=2, sort_keys=True)


def _okp_jwk_python(r: random.Random) -> str:
    return cat("jwk = {'kty': 'OKP', 'x': '", rand(r, 43, URLSAFE), "', 'd': '", rand(r, 43, URLSAFE), "'}")


def _lines(r: random.Random, n: int = 4, first: str = "") -> list[str]:
    return [first + rand(r, 64 - len(first), B64)] + [rand(r, 64, B64) for _ in range(n - 1)]


def _block(label: str, lines: list[str], prefix: str = "", nl: str = "\n", headers: tuple[str, ...] = ()) -> str:
    """A PEM block whose lines all start with ``prefix`` and end with ``nl`` (a newline, or an
    escaped one inside a string literal)."""
    body = [*headers, *([""] if headers else []), *lines]
    out = [f"-----BEGIN {label}-----", *body, f"-----END {label}-----"]
    return nl.join(prefix + line for line in out)


def _ppk(r: random.Random, encryption: str) -> str:
    extra = ["Key-Derivation: Argon2id", "Argon2-Memory: 8192", "Argon2-Passes: 13", "Argon2-Parallelism: 1"]
    return "\n".join(
        [
            cat("PuTTY", "-User-Key-File-3: ssh-ed25519"),
            f"Encryption: {encryption}",
            *(extra if encryption != "none" else []),
            "Comment: eddsa-key-20240101",
            "Public-Lines: 2",
            rand(r, 64, B64),
            rand(r, 16, B64),
            "Private-Lines: 1",
            rand(r, 44, B64),
            "Private-MAC: " + rand(r, 64, "0123456789abcdef"),
        ]
    )


def _jwk(r: random.Random, kty: str, members: dict[str, str], **dump) -> str:
    return json.dumps({"kty": kty, **members}, **dump)


def _rsa_jwk(r: random.Random) -> dict[str, str]:
    n = {k: rand(r, 86, URLSAFE) for k in ("p", "q", "dp", "dq", "qi")}
    return {"n": rand(r, 342, URLSAFE), "e": "AQAB", "d": rand(r, 342, URLSAFE), **n}


SHAPES: dict[str, list[Shape]] = {
    "private-key": [
        lambda r: pem(r, "RSA"),
        lambda r: pem(r, "OPENSSH"),
        lambda r: pem(r, "EC"),
        lambda r: pem(r, ""),
        lambda r: pem(r, "DSA"),
        lambda r: _block(cat("PGP ", PRIVATE, " BLOCK"), [*_lines(r, 6), "=" + rand(r, 4, B64)], headers=("V: 1",)),
        lambda r: _block(cat("OPENSSH ", PRIVATE), _lines(r, 5, OPENSSH_NONE)),
        lambda r: _block(cat("RSA ", PRIVATE), _lines(r), prefix="# "),
        lambda r: _block(cat("EC ", PRIVATE), _lines(r), prefix="// "),
        lambda r: "/**\n" + _block(PRIVATE, _lines(r), prefix=" * ") + "\n */",
        lambda r: cat("2026-01-01T00:00:00Z INFO key: ", _block(cat("RSA ", PRIVATE), _lines(r), nl="\\n")),
        lambda r: "\n".join(f"2026-01-01T00:00:0{i}Z DEBUG {line}" for i, line in enumerate(pem(r, "RSA").split("\n"))),
        lambda r: json.dumps(
            {
                "type": "service_account",
                "private_key_id": rand(r, 40, "0123456789abcdef"),
                "private_key": _block(PRIVATE, _lines(r, 6)) + "\n",
            },
            indent=2,
        ),
        lambda r: "KEY = (\n" + "\n".join(f'    "{line}\\n"' for line in pem(r, "RSA").split("\n")) + "\n)",
    ],
    "private-key-encrypted": [
        lambda r: pem(r, "ENCRYPTED"),
        lambda r: _block(cat("RSA ", PRIVATE), _lines(r, 5), headers=("Proc-Type: 4,ENCRYPTED", _dek_info(r))),
        lambda r: _block(cat("OPENSSH ", PRIVATE), _lines(r, 5, OPENSSH_AES)),
        lambda r: _ppk(r, "aes256-cbc"),
    ],
    "putty-private-key": [
        lambda r: _ppk(r, "none"),
        lambda r: _ppk(r, "none").replace("File-3: ssh-ed25519", "File-2: ssh-rsa"),
        lambda r: "# deploy.ppk\n" + _ppk(r, "none"),
    ],
    "age-secret-key": [
        lambda r: cat("AGE-SECRET", "-KEY-1", rand(r, 58, BECH32_UPPER)),
        lambda r: cat(
            "# public key: age1", rand(r, 58, BECH32_UPPER.lower()), "\nAGE-SECRET", "-KEY-1", rand(r, 58, BECH32_UPPER)
        ),
        lambda r: cat("SOPS_AGE_KEY=AGE-SECRET", "-KEY-1", rand(r, 58, BECH32_UPPER)),
    ],
    "nats-nkey-seed": [
        lambda r: cat(
            "-----BEGIN USER NKEY SEED-----\nS", "UA", rand(r, 55, BASE32), "\n------END USER NKEY SEED------"
        ),
        lambda r: cat("NATS_NKEY_SEED=S", "AA", rand(r, 55, BASE32)),
        lambda r: cat('nkey_seed: "S', "OA", rand(r, 55, BASE32), '"'),
        lambda r: cat("nats.Nkey(pub, sign_with=S", "NA", rand(r, 55, BASE32), ")"),
    ],
    "jwk-private-key": [
        lambda r: _jwk(r, "RSA", _rsa_jwk(r)),
        _ec_jwk_sorted,
        lambda r: _jwk(r, "oct", {"k": rand(r, 43, URLSAFE), "alg": "HS256"}),
        _okp_jwk_python,
        lambda r: json.dumps({"keys": [{"kty": "RSA", **_rsa_jwk(r), "kid": "k1"}]}, indent=2),
    ],
    "jwt": [lambda r: jwt(r), lambda r: cat("session=", jwt(r)), lambda r: cat("id_token: ", jwt(r))],
}


def _public_material(seed: int, n: int) -> str:
    r = random.Random(seed)
    return "\n".join(rand(r, 64, B64) for _ in range(n))


# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = [
    # public halves: PEM blocks that hold no secret, ssh and age public keys
    cat("-----BEGIN PUBLIC KEY-----\n", _public_material(1, 6), "\n-----END PUBLIC KEY-----"),
    cat("-----BEGIN RSA PUBLIC KEY-----\n", _public_material(2, 4), "\n-----END RSA PUBLIC KEY-----"),
    cat("-----BEGIN CERTIFICATE-----\n", _public_material(3, 8), "\n-----END CERTIFICATE-----"),
    cat("-----BEGIN CERTIFICATE REQUEST-----\n", _public_material(4, 5), "\n-----END CERTIFICATE REQUEST-----"),
    cat("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n", _public_material(5, 6), "\n-----END PGP PUBLIC KEY BLOCK-----"),
    cat("-----BEGIN PGP SIGNATURE-----\n\n", _public_material(6, 3), "\n-----END PGP SIGNATURE-----"),
    cat("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", _public_material(7, 1)[:43], " deploy-key"),
    cat("ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ", _public_material(8, 5).replace("\n", ""), " ci"),
    "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p",
    "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4",
    # headers with a placeholder or a shortened body, and code that handles key text
    cat("-----BEGIN RSA ", PRIVATE, "-----\n...\n-----END RSA ", PRIVATE, "-----"),
    cat("-----BEGIN RSA ", PRIVATE, "-----\n<key>\n-----END RSA ", PRIVATE, "-----"),
    cat("-----BEGIN OPENSSH ", PRIVATE, "-----\nYOUR_PRIVATE_KEY_HERE\n-----END OPENSSH ", PRIVATE, "-----"),
    cat("-----BEGIN RSA ", PRIVATE, "-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAM...\n-----END RSA ", PRIVATE, "-----"),
    cat('"private_key": "-----BEGIN ', PRIVATE, "-----\\n<your key>\\n-----END ", PRIVATE, '-----\\n"'),
    cat('if pem.startswith("-----BEGIN RSA ', PRIVATE, '-----"):'),
    cat('pem = "-----BEGIN ', PRIVATE, '-----\\n" + b64(der) + "-----END ', PRIVATE, '-----\\n"'),
    cat("# paste the -----BEGIN OPENSSH ", PRIVATE, "----- block of ~/.ssh/id_ed25519 into the secret"),
    cat("PuTTY", "-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n<private lines>"),
    # placeholders of the checksummed formats
    cat("AGE-SECRET", "-KEY-1", "X" * 58),
    cat("NATS_NKEY_SEED=S", "UA", "X" * 55),
    # public JSON Web Keys: n/e, x/y, no d or k
    json.dumps({"kty": "RSA", "n": _public_material(9, 6).replace("\n", "").replace("+", "-"), "e": "AQAB"}),
    json.dumps({"kty": "EC", "x": _public_material(10, 1)[:43], "y": _public_material(11, 1)[:43]}, indent=2),
    json.dumps({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": _public_material(12, 1)[:43], "use": "sig"}]}),
    json.dumps({"kty": "oct", "k": "xxxxxxxxxxxxxxxxxxxxxxxxxx", "alg": "HS256"}),
    json.dumps({"d": "2024-01-01T00:00:00Z", "k": "value"}),
    # JWT pieces that are not a token
    "Authorization header starts with eyJhbGciOiJIUzI1NiJ9 when signed with HS256",
]

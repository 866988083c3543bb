"""A planted-secret corpus: every rule, at least three shapes each, inside JSON, YAML, Python,
shell and Markdown, plus the benign look-alikes that must pass.

No secret-shaped literal is in this file: each planted value is assembled at run time from a
seeded random generator, so the file itself passes the rules (and secret scanners elsewhere).

Run it to print recall per rule and false positives:  python -m tests.safety.corpus
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _cat(*parts: str) -> str:
    """Joins pieces so that no prefix a scanner knows appears whole in this source file."""
    return "".join(parts)


def _pem(rng: random.Random, kind: str) -> str:
    body = "\n".join(_r(rng, 64, B64) for _ in range(4))
    label = f"{kind} PRIVATE KEY".strip()
    return _cat("-----BEGIN ", label, "-----\n", body, "\n-----END ", label, "-----")


def _jwt(rng: random.Random) -> str:
    return _cat("ey", "J", _r(rng, 20, URLSAFE), ".ey", "J", _r(rng, 30, URLSAFE), ".", _r(rng, 43, URLSAFE))


# rule id -> shapes; each shape makes one text holding one planted value
Shape = Callable[[random.Random], str]
SHAPES: dict[str, list[Shape]] = {
    "private-key": [
        lambda r: _pem(r, "RSA"),
        lambda r: _pem(r, "OPENSSH"),
        lambda r: _pem(r, "EC"),
        lambda r: _pem(r, ""),
    ],
    "aws-access-key-id": [
        lambda r: _cat("AK", "IA", _r(r, 16, UPPER_DIGITS)),
        lambda r: _cat("aws_access_key_id = AS", "IA", _r(r, 16, UPPER_DIGITS)),
        lambda r: _cat("key id AK", "IA", _r(r, 16, UPPER_DIGITS), " for deploys"),
    ],
    "aws-secret-access-key": [
        lambda r: _cat("aws_secret_access_key = ", _r(r, 40, B64)),
        lambda r: _cat("AWS_SECRET_ACCESS_KEY: ", _r(r, 40, B64)),
        lambda r: _cat('"aws_secret_key": "', _r(r, 40, B64), '"'),
    ],
    "github-token": [
        lambda r: _cat("gh", "p_", _r(r, 36)),
        lambda r: _cat("GH_TOKEN=gh", "s_", _r(r, 36)),
        lambda r: _cat("oauth gh", "o_", _r(r, 36), " for the app"),
        lambda r: _cat("github", "_pat_", _r(r, 22), "_", _r(r, 59)),
    ],
    "gitlab-token": [
        lambda r: _cat("gl", "pat-", _r(r, 20, URLSAFE)),
        lambda r: _cat("deploy token gl", "dt-", _r(r, 24, URLSAFE)),
        lambda r: _cat("RUNNER=gl", "rt-", _r(r, 22, URLSAFE)),
    ],
    "slack-token": [
        lambda r: _cat("xo", "xb-", _r(r, 12, string.digits), "-", _r(r, 13, string.digits), "-", _r(r, 24)),
        lambda r: _cat("xo", "xp-", _r(r, 12, string.digits), "-", _r(r, 32)),
        lambda r: _cat("xa", "pp-1-", _r(r, 11, UPPER_DIGITS), "-", _r(r, 13, string.digits), "-", _r(r, 40)),
    ],
    "slack-webhook": [
        lambda r: _cat(
            "https://hooks.",
            "slack.com/services/T",
            _r(r, 8, UPPER_DIGITS),
            "/B",
            _r(r, 8, UPPER_DIGITS),
            "/",
            _r(r, 24),
        ),
        lambda r: _cat(
            "url: https://hooks.",
            "slack.com/workflows/T",
            _r(r, 8, UPPER_DIGITS),
            "/A",
            _r(r, 10, UPPER_DIGITS),
            "/",
            _r(r, 20),
        ),
        lambda r: _cat(
            "post to hooks.",
            "slack.com/triggers/T",
            _r(r, 8, UPPER_DIGITS),
            "/",
            _r(r, 12, string.digits),
            "/",
            _r(r, 32),
        ),
    ],
    "openai-api-key": [
        lambda r: _cat("s", "k-proj-", _r(r, 48, URLSAFE)),
        lambda r: _cat("OPENAI_API_KEY=s", "k-", _r(r, 20), "T3Blbk", "FJ", _r(r, 20)),
        lambda r: _cat("s", "k-svcacct-", _r(r, 40, URLSAFE)),
    ],
    "anthropic-api-key": [
        lambda r: _cat("s", "k-ant-api03-", _r(r, 93, URLSAFE), "AA"),
        lambda r: _cat("ANTHROPIC_API_KEY=s", "k-ant-api03-", _r(r, 60, URLSAFE)),
        lambda r: _cat("admin s", "k-ant-admin01-", _r(r, 80, URLSAFE)),
    ],
    "stripe-key": [
        lambda r: _cat("s", "k_live_", _r(r, 24)),
        lambda r: _cat("STRIPE=r", "k_live_", _r(r, 32)),
        lambda r: _cat("test mode s", "k_test_", _r(r, 26)),
    ],
    "npm-token": [
        lambda r: _cat("//registry.npmjs.org/:_authToken=np", "m_", _r(r, 36)),
        lambda r: _cat("NPM_TOKEN=np", "m_", _r(r, 36)),
        lambda r: _cat("publish with np", "m_", _r(r, 36)),
    ],
    "pypi-token": [
        lambda r: _cat("py", "pi-AgEIcHlwaS5vcmc", _r(r, 60, URLSAFE)),
        lambda r: _cat("TWINE_PASSWORD=py", "pi-AgENdGVzdC5weXBpLm9yZw", _r(r, 50, URLSAFE)),
        lambda r: _cat("token py", "pi-AgEIcHlwaS5vcmc", _r(r, 70, URLSAFE), " for upload"),
    ],
    "google-api-key": [
        lambda r: _cat("AI", "za", _r(r, 35, URLSAFE)),
        lambda r: _cat("GOOGLE_API_KEY=AI", "za", _r(r, 35, URLSAFE)),
        lambda r: _cat("maps key AI", "za", _r(r, 35, URLSAFE), " restricted"),
    ],
    "huggingface-token": [
        lambda r: _cat("h", "f_", _r(r, 34, string.ascii_letters)),
        lambda r: _cat("HF_TOKEN=h", "f_", _r(r, 34, string.ascii_letters)),
        lambda r: _cat("hub login h", "f_", _r(r, 34, string.ascii_letters), " done"),
    ],
    "sendgrid-key": [
        lambda r: _cat("S", "G.", _r(r, 22, URLSAFE), ".", _r(r, 43, URLSAFE)),
        lambda r: _cat("SENDGRID_API_KEY=S", "G.", _r(r, 22, URLSAFE), ".", _r(r, 43, URLSAFE)),
        lambda r: _cat("mail via S", "G.", _r(r, 22, URLSAFE), ".", _r(r, 43, URLSAFE), " ok"),
    ],
    "jwt": [lambda r: _jwt(r), lambda r: _cat("session=", _jwt(r)), lambda r: _cat("id_token: ", _jwt(r))],
    "authorization-header": [
        lambda r: _cat("Authorization: Basic ", _r(r, 28, B64), "=="),
        lambda r: _cat("curl -H 'Authorization: Bearer ", _r(r, 40), "' https://api.example.com"),
        lambda r: _cat('"Authorization": "token ', _r(r, 40), '"'),
    ],
    "bearer-token": [
        lambda r: _cat("send Bearer ", _r(r, 40, URLSAFE), " with each call"),
        lambda r: _cat("curl -H 'X-Upstream: bearer ", _r(r, 32), "'"),
        lambda r: _cat("headers = {'Proxy': 'Bearer ", _r(r, 36), "'}"),
    ],
    "api-key-header": [
        lambda r: _cat("X-API-Key: ", _r(r, 32)),
        lambda r: _cat("curl -H 'x-goog-api-key: ", _r(r, 39, URLSAFE), "'"),
        lambda r: _cat("PRIVATE-TOKEN: ", _r(r, 20, URLSAFE)),
    ],
    "cookie-header": [
        lambda r: _cat("Cookie: session=", _r(r, 32)),
        lambda r: _cat("Set-Cookie: sid=", _r(r, 40), "; Path=/; HttpOnly"),
        lambda r: _cat('"cookie": "auth=', _r(r, 24), '"'),
    ],
    "url-credentials": [
        lambda r: "https://user:pass@host.example.net/x",
        lambda r: _cat("postgres://admin:", _r(r, 16), "@db.internal:5432/app"),
        lambda r: _cat("redis://:", _r(r, 20), "@cache.internal:6379/0"),
    ],
    "generic-secret": [
        lambda r: _cat('password = "', _r(r, 16, ALNUM + "!#%"), '"'),
        lambda r: _cat("DB_PASSWORD=", _r(r, 20)),
        lambda r: _cat("client_secret: ", _r(r, 32)),
        lambda r: _cat("api_key = '", _r(r, 24), "'"),
    ],
    "home-path": [
        lambda r: "/home/alice/projects/app/main.py",
        lambda r: "open /Users/bob/Library/notes.txt",
        lambda r: "/" + "root/.ssh/config",  # the superuser's home, assembled: it is this kind of machine's own
        lambda r: "cd /mnt/c/Users/carol/src",
        lambda r: "C drive in Git Bash: /c/Users/dave/repo",
    ],
    "windows-user-path": [
        lambda r: "C:\\Users\\erin\\Documents\\plan.docx",
        lambda r: "D:/Users/frank/work/app",
        lambda r: "\\\\wsl$\\Ubuntu\\home\\gina\\repo",
    ],
    "temp-path": [
        lambda r: "/var/folders/xy/" + _r(r, 24).lower() + "/T/build.log",
        lambda r: "socket at /run/user/1000/agent.sock",
        lambda r: "/tmp/systemd-private-" + _r(r, 12).lower() + "-nginx/tmp",
    ],
    "email-address": [
        lambda r: "contact alice.smith@acme-corp.io",
        lambda r: "From: Bob <bob@mail.internal.net>",
        lambda r: "owner: carol+ops@big-company.co.uk",
    ],
    "private-ip": [
        lambda r: "db at 10.12.0.5:5432",
        lambda r: "gateway 192.168.1.1",
        lambda r: "node 172.20.3.44 joined",
    ],
}

BENIGN: list[str] = [
    "token = ${GITHUB_TOKEN}",
    "password: $DB_PASSWORD",
    "api_key = <token>",
    "secret: {{ vault_secret }}",
    "password = changeme",
    "api_key: example-key-goes-here",
    "token: xxxxxxxxxxxxxxxxxxxx",
    _cat("AK", "IAIOSFODNN7EXAMPLE"),
    "password = aaaaaaaaaaaa",
    "token: 1234567890123456",
    "secret = abcabcabcabc",
    "max_tokens: 4096",
    "/tmp/x",
    "~/work/project",
    "https://example.com/home/index.html",
    "git@github.com:org/repo.git",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "/home/runner/work/app/app",
    "version 10.2.0.1.5",
    "api_key = os.environ['API_KEY']",
    "token = get_token(scope)",
    "password: ${{ secrets.DB_PASSWORD }}",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "https://user@host.example.net/x",
    "tokenizer: sentencepiece",
    "secret_name: prod-database",
    "-----BEGIN PUBLIC KEY-----",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "python 3.10.2 on 10.0 build",
    "password_hint: ask the operator",
    "see /home/<user>/.config",
    "git clone https://github.com/org/repo.git",
    "postgres://app:${DB_PASSWORD}@db:5432/app",
    "user@example.com",
    "image@2x.png",
    "noreply@users.noreply.github.com",
    "the auth token is stored in the keychain",
    "Bearer tokens expire after one hour",
    "cookie: see the docs",
    "ssh://git@github.com:22/org/repo.git",
    "/home/user/project",
    "C:\\Users\\Public\\Documents",
]

FORMATS = ("json", "yaml", "python", "shell", "markdown")


def embed(value: str, fmt: str) -> str:
    """``value`` as it would sit in a file of format ``fmt``."""
    if fmt == "json":
        return json.dumps({"note": value, "n": 1}, indent=2) + "\n"
    if fmt == "yaml":
        if "\n" in value:
            return "note: |\n" + "".join(f"  {line}\n" for line in value.splitlines())
        return "note: " + json.dumps(value) + "\n"
    if fmt == "python":
        return f'NOTE = """{value}"""\n' if "\n" in value else f"NOTE = {value!r}\n"
    if fmt == "shell":
        return "export NOTE='" + value.replace("'", "'\\''") + "'\n"
    return f"# Notes\n\nSet it up:\n\n    {value.replace(chr(10), chr(10) + '    ')}\n\nThen run it.\n"


@dataclass(frozen=True)
class Sample:
    rule: str
    shape: int
    fmt: str
    text: str


def planted(seed: int = 7) -> list[Sample]:
    rng = random.Random(seed)
    out = []
    for rule, shapes in SHAPES.items():
        for i, shape in enumerate(shapes):
            value = shape(rng)
            out.extend(Sample(rule, i, fmt, embed(value, fmt)) for fmt in FORMATS)
    return out


def benign() -> list[Sample]:
    return [Sample("benign", i, fmt, embed(value, fmt)) for i, value in enumerate(BENIGN) for fmt in FORMATS]


def measure(seed: int = 7):
    """Recall per rule on the planted samples, and the benign samples that produced any finding."""
    from loopx_git.safety.scan import scan

    recall: dict[str, list[int]] = {}
    for sample in planted(seed):
        hit = any(f.rule == sample.rule for f in scan(sample.text))
        counts = recall.setdefault(sample.rule, [0, 0])
        counts[0] += hit
        counts[1] += 1
    false_positives = [(s, [f.rule for f in scan(s.text)]) for s in benign() if scan(s.text)]
    return recall, false_positives


def main() -> int:
    from loopx_git.safety.rules import BY_ID

    recall, false_positives = measure()
    print(f"{'rule':24} {'severity':8} {'found':>7}  recall")
    worst_block = 1.0
    for rule, (hit, total) in recall.items():
        rate = hit / total
        if BY_ID[rule].severity == "block":
            worst_block = min(worst_block, rate)
        print(f"{rule:24} {BY_ID[rule].severity:8} {hit:>3}/{total:<3}  {rate:.0%}")
    total = sum(t for _, t in recall.values())
    print(f"\n{len(recall)} rules, {total} planted samples; block-rule recall (lowest): {worst_block:.0%}")
    print(f"benign look-alikes: {len(BENIGN)} values x {len(FORMATS)} formats; false positives: {len(false_positives)}")
    for sample, rules in false_positives:
        print(f"  false positive: {rules} on look-alike #{sample.shape} as {sample.fmt}")
    return 0 if worst_block == 1.0 and not false_positives else 1


if __name__ == "__main__":
    raise SystemExit(main())

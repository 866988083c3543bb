"""A planted-secret corpus: every rule, at least three shapes each, inside JSON, YAML, Python,
shell, Markdown, a .env file, a URL and an HTTP header, and written in every way the scanner
decodes (JSON escapes, base64, hex, split literals, continued lines, folded YAML); plus the benign
look-alikes that must pass, in the plain formats.

No secret-shaped literal is in this file: each planted value is assembled at run time from a
seeded random generator, so the file itself passes the rules (and secret scanners elsewhere).

Run it to print recall per rule and false positives:  python -m tests.safety.corpus
"""

from __future__ import annotations

import base64
import json
import random
import re
from dataclasses import dataclass
from urllib.parse import quote

from tests.safety.parts import cat
from tests.safety.shapes import ai, cloud, generic, hosting, keys, payment, personal, saas

# rule id -> shapes; each shape makes one text holding one planted value
SHAPES = {
    **keys.SHAPES,
    **cloud.SHAPES,
    **hosting.SHAPES,
    **saas.SHAPES,
    **payment.SHAPES,
    **ai.SHAPES,
    **generic.SHAPES,
    **personal.SHAPES,
}

BENIGN: list[str] = [
    "token = ${GITHUB_TOKEN}",
    "password: $DB_PASSWORD",
    "api_key = <token>",
    "secret: {{ vault_secret }}",
    "password = changeme",
    "api_key: example-key-goes-here",
    "token: xxxxxxxxxxxxxxxxxxxx",
    cat("AK", "IAIOSFODNN7EXAMPLE"),
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
BENIGN += [
    *keys.LOOK_ALIKES,
    *cloud.LOOK_ALIKES,
    *hosting.LOOK_ALIKES,
    *saas.LOOK_ALIKES,
    *payment.LOOK_ALIKES,
    *ai.LOOK_ALIKES,
    *generic.LOOK_ALIKES,
    *personal.LOOK_ALIKES,
]

FORMATS = ("json", "yaml", "python", "shell", "markdown", ".env", "url", "header")
"""Where a value is written as it is (a URL query percent-encodes it)."""
DECODINGS = ("json-escaped", "base64", "hex", "split-literal", "continued-line", "yaml-folded", "yaml-folded-split")
"""Where a value is written encoded or in pieces, and found only by decoding (safety/decode.py)."""


def embed(value: str, fmt: str) -> str:
    """``value`` as it would sit in a file of format ``fmt`` (one of FORMATS or DECODINGS)."""
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
    if fmt == ".env":
        return "APP_MODE=production\nNOTE=" + json.dumps(value, ensure_ascii=False) + "\nWORKERS=4\n"
    if fmt == "url":
        return "open https://app.example.net/callback?note=" + quote(value, safe="") + "&n=1 to resume\n"
    if fmt == "header":
        return "GET /v1/items HTTP/1.1\nHost: api.example.net\nX-Note: " + value.replace("\n", "\\n") + "\n\n"
    if fmt == "json-escaped":  # as serializers that escape every sign write it (`_` as \u005f, `/` as \/)
        body = "".join(c if c.isalnum() or c == " " else "\\/" if c == "/" else f"\\u{ord(c):04x}" for c in value)
        return '{"note": "' + body + '", "n": 1}\n'
    if fmt == "base64":
        return "NOTE_B64=" + base64.b64encode(value.encode()).decode() + "\n"
    if fmt == "hex":
        return "note_hex: " + value.encode().hex() + "\n"
    if fmt == "split-literal":  # as a careless agent writes it to get past a scanner
        half = len(value) // 2
        return f"NOTE = {value[:half]!r} + {value[half:]!r}\n"
    if fmt == "continued-line":
        half = len(value) // 2
        return 'echo "' + value[:half] + "\\\n" + value[half:] + '"\n'
    if fmt == "yaml-folded-split":  # its longest token cut in two over a break of a folded scalar (issue 32)
        run = max(re.finditer(r"[A-Za-z0-9+/=_.~-]+", value), key=lambda m: len(m.group()))
        cut = (run.start() + run.end()) // 2
        lines = (value[:cut] + "\n" + value[cut:]).split("\n")
        return "note: >-\n" + "".join(f"  {line}\n" for line in lines) + "n: 1\n"
    if fmt == "yaml-folded":
        words = value.split()
        lines = [" ".join(words[k : k + 2]) for k in range(0, len(words), 2)]
        return "note: >-\n" + "".join(f"  {line}\n" for line in lines) + "n: 1\n"
    return f"# Notes\n\nSet it up:\n\n    {value.replace(chr(10), chr(10) + '    ')}\n\nThen run it.\n"


def _fits(value: str, fmt: str) -> bool:
    """A token cut over a line break is a threat to one-line values; a value of several lines (a key
    file, an ini section) cut anywhere and glued whole loses the lines its rule reads."""
    return fmt != "yaml-folded-split" or "\n" not in value


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
            out.extend(Sample(rule, i, fmt, embed(value, fmt)) for fmt in (*FORMATS, *DECODINGS) if _fits(value, fmt))
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

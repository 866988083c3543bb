"""Credentials by context rather than by format: assignments to credential-named keys, SQL, command
lines, URLs and headers.

A vendor token carries its own prefix; these do not, so each rule reads the context (the key's name,
the flag, the URL, the header) and then asks what the value is not: a placeholder, code (a variable,
a call, an attribute, a type annotation), the name of an environment variable, a URL or a path, a
number, a word of a tiny denylist, or one of the fakes every tutorial and test suite uses
(``password123``, ``hunter2``, ``user:pass``). The checks are shared: ``_literal`` for every value;
then ``generic-password`` takes any literal of 4 or more characters under a password's name, and the
other rules want ``_random`` (8 or more characters, mixed classes, not a name).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re

from loopx_git.safety.rule import BLOCK, VALUE, Context, Q, Rule, is_placeholder, lazy_pattern, looks_random, secret

# --- key names --------------------------------------------------------------------------------

_WORD_SPLIT = lazy_pattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(name: str) -> list[str]:
    """``MYSQL_ROOT_PASSWORD``, ``AwsSecretKey``, ``x-api-key``, ``db.password`` -> lower-case words."""
    return [w.lower() for w in _WORD_SPLIT.findall(name)]


_PASSWORD_WORDS = frozenset({"password", "passwd", "passwort", "passphrase", "passcode", "pass", "pwd", "pw", "pword"})
_PASSWORD_ENDINGS = ("password", "passwd", "passphrase", "pwd", "pass")  # PGPASSWORD, dbpass, mysqlpwd
_NOT_PASSWORDS = frozenset(
    {
        "bypass", "compass", "surpass", "overpass", "underpass", "trespass", "encompass", "lowpass", "highpass",
        "bandpass", "allpass", "multipass", "onepass", "twopass", "singlepass", "firstpass", "secondpass",
        # a program that asks for one (`GIT_ASKPASS`), a package of streams (npm's `minipass`)
        "askpass", "minipass",
    }
)  # fmt: skip
# Not a bare "auth": `auth: true`, `"auth": "<base64>"` of a registry (docker-config-auth's business).
_SECRET_WORDS = frozenset({"secret", "secrets", "token", "credential", "credentials", "creds", "cred", "apikey"})
_SECRET_ENDINGS = ("secret", "token", "apikey", "secretkey", "accesskey", "privatekey", "authkey")
# A bare "key" is a dictionary key, a cache key, a sort key: it names a credential only after one of these.
# Not `primary`/`secondary`: a primary key is a database's (Azure's are azure-storage-key's).
_KEY_QUALIFIERS = frozenset(
    {
        "api", "access", "secret", "private", "auth", "app", "application", "client", "consumer", "master",
        "signing", "sign", "encryption", "encrypt", "crypt", "crypto", "hmac", "jwt", "session",
        "storage", "subscription", "service", "admin", "shared", "webhook", "root",
        "deploy", "live", "prod", "production", "sas", "aes", "cipher", "security", "ingest", "ingestion",
        "write", "rest", "server", "partner", "merchant", "developer", "personal",
        "x", "mgmt", "management", "token", "password", "user", "bot", "integration", "project", "org",
    }
)  # fmt: skip
# A word anywhere in the name that makes it name something about a credential, not the credential.
_NOT_CREDENTIAL = frozenset(
    {
        "public", "pub", "publishable", "csrf", "xsrf", "page", "next", "cursor", "continuation", "pagination",
        "is", "has", "use", "uses", "enable", "enabled", "disable", "disabled", "require", "required", "requires",
        "show", "hide", "no", "skip", "allow", "allowed", "forgot", "reset", "get", "fetch", "load", "read",
        "validate", "validation", "validator", "check", "generate", "generator", "max", "min", "num", "count",
        "mask", "masked", "prompt", "ask", "label", "placeholder", "hint", "error", "errors", "message", "msg",
        "help", "description", "desc", "title", "policy", "regex", "pattern", "type", "types", "kind", "format",
        "length", "len", "size", "field", "fields", "column", "input", "form", "widget", "url", "uri", "urls",
        "endpoint", "path", "file", "filename", "dir", "name", "names", "id", "ids", "env", "var", "header",
        "prefix", "suffix", "hash", "hashed", "digest", "checksum", "fingerprint", "expires", "expiry",
        "expiration", "ttl", "timeout", "lifetime", "duration", "interval", "rotation", "version", "index",
        "offset", "limit", "limits", "strength", "score", "level", "store", "manager", "provider", "class",
        "handler", "factory", "serializer", "backend", "method", "algorithm", "alg", "scheme", "strategy",
        "source", "location", "ref", "reference", "arn", "param", "params", "parameter", "arg", "args", "option",
        "options", "stdin", "cmd", "command", "script", "helper", "callback", "fn", "func", "function", "mode",
        "status", "state", "flag", "template", "usage", "budget", "cost", "price", "window", "estimate",
        "counter", "question", "lock", "locked", "attempts", "retries", "changed", "updated", "created", "at",
        "date", "time", "char", "chars", "charset", "alphabet", "separator", "delimiter", "tokens", "key_id",
        "exists", "missing", "valid", "invalid", "change", "changes", "update", "verify", "verification",
        "salt", "rounds", "iterations", "encoder", "hasher", "bucket", "table", "role", "group", "scope",
        "scopes", "audience", "issuer", "claims", "list", "map", "dict", "set", "lookup", "paths", "refs",
        "link", "links", "button", "dialog", "modal", "screen", "view", "route", "event", "events", "test",
        "tests", "spec", "mock", "stub", "fake",
        "dummy", "example", "sample", "default", "defaults", "starting", "request", "idempotency", "lifecycle",
        "incorrect", "wrong", "bad", "expired",
        # an action on a credential (a method, a handler, a button's id): `addPassword`, `onSaveToken`
        "add", "remove", "delete", "edit", "save", "submit", "toggle", "click", "handle",
        # a form's anti-forgery token is sent to every visitor of the page: `authenticity_token`
        "authenticity", "antiforgery", "forgery", "nonce",
        # a digest of a credential (`api_key_md5`, `token_sha256`) is not the credential
        "sha", "md", "crc",
    }
)  # fmt: skip
# Words after the last credential word that still name the credential itself (``SECRET_KEY_BASE``).
_SAME_CREDENTIAL = frozenset(
    {
        "key", "value", "val", "str", "string", "b64", "base64", "hex", "raw", "text", "prod", "production",
        "dev", "development", "staging", "stage", "live", "sandbox", "local", "old", "new", "current",
        "confirm", "confirmation", "again", "repeat", "base", "v", "bytes", "plain", "plaintext", "enc",
    }
)  # fmt: skip


# A token named after one of these is an idempotency or paging handle (AWS's `ClientToken`), a word
# of a tokenizer (`pad_token`, `eos_token`), or a public client token (Braintree): not a credential.
_NOT_CREDENTIAL_TOKENS = frozenset(
    {
        "client", "output", "input", "import", "export", "copy", "cancel", "cancellation", "marker", "lexer",
        "parser", "syntax", "end", "start", "stop", "special", "eos", "bos", "pad", "unk", "mask", "sep", "cls",
        "sentinel", "split", "work", "subject", "next", "prev", "previous", "first", "last",
    }
)  # fmt: skip


def _word_kind(word: str, previous: str | None) -> str | None:
    if word in _PASSWORD_WORDS or (word.endswith(_PASSWORD_ENDINGS) and word not in _NOT_PASSWORDS):
        return "password"
    if word in ("token", "tokens") and previous in _NOT_CREDENTIAL_TOKENS:
        return None
    if word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS):
        return "secret"
    qualified = previous is not None and (previous in _KEY_QUALIFIERS or _word_kind(previous, None) is not None)
    return "secret" if word in ("key", "keys") and qualified else None


def credential_kind(name: str) -> str | None:
    """``"password"`` or ``"secret"`` when ``name`` names a credential (``DB_PASSWORD``,
    ``clientSecret``, ``AwsSecretKey``), None when it names something else or something about one
    (``token_type``, ``password_reset_url``, ``max_tokens``, ``public_key``, ``cache_key``)."""
    words = _words(name)
    if not words or any(w in _NOT_CREDENTIAL for w in words):
        return None
    last, kind = -1, None
    for i, word in enumerate(words):
        found = _word_kind(word, words[i - 1] if i else None)
        if found is not None:
            # a password's token or key (`db_passwordToken`, `PASSWORD_KEY`) is still a password: short values count
            last, kind = i, "password" if kind == "password" else found
    if kind is None or any(not (w.isdigit() or w in _SAME_CREDENTIAL) for w in words[last + 1 :]):
        return None
    if words in (["pass"], ["pw"]):
        return "secret"  # pass/fail, a filter's pass band, `pw` for pixel width: a password only when random
    return kind


def _loosely_named(name: str) -> bool:
    """A credential's word among others that are neither about it nor the credential itself
    (``todo_secret_do_not_commit``, ``user_auth``, ``basic_auth``): a credential only when the
    value is a strong random key (``_strong_random``). A bare ``auth`` (``this._auth``) is a flag,
    an object's state or a registry's (npmrc-auth's)."""
    words = _words(name)
    if not words or any(w in _NOT_CREDENTIAL for w in words):
        return False
    if any(_word_kind(w, words[i - 1] if i else None) is not None for i, w in enumerate(words)):
        return True
    field = _words(name.rsplit(".", 1)[-1])
    return "auth" in field[1:]


_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _name_before(text: str, end: int, start: int) -> str:
    """The whole name whose tail matched at ``start``: ``MYSQL_ROOT_`` before ``PASSWORD``."""
    i = start
    while i > 0 and start - i < 64 and text[i - 1] in _NAME_CHARS:
        i -= 1
    if i < start and text[i - 1 : i] == "\\" and text[i] in "nrt":
        i += 1  # `…\npassword`: the `n` is an escaped line break's, not the name's
    return text[i:end].lstrip(".-")


# --- values -----------------------------------------------------------------------------------

# Exact values (lower-cased) that are never a credential: types, booleans, empties, algorithm names.
_NOT_SECRET_VALUES = frozenset(
    {
        "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "required", "optional", "undefined",
        "empty", "blank", "n/a", "tbd", "todo", "fixme", "unset", "unknown", "masked", "hidden", "encrypted",
        "plain", "plaintext", "auto", "random", "generated", "prompt", "input", "env", "environ", "environment",
        "string", "str", "bytes", "text", "int", "integer", "number", "bool", "boolean", "object", "any", "char",
        "varchar", "secretstr", "secretbytes", "password", "secret", "token", "bearer", "basic", "oauth",
        "oauth2", "jwt", "md5", "sha1", "sha256", "sha512", "bcrypt", "scrypt", "argon2", "argon2id", "pbkdf2",
        "hs256", "rs256", "aes", "aes256", "hmac", "values", "default", "inherit", "ignore", "sensitive",
        "redacted", "removed", "omitted", "hunter2", "tiger", "foobared", "s3cr3t", "sekret", "root", "admin",
        "guest", "demo", "postgres", "mysql", "letmein", "bitnami", "sekrit",
        "550e8400-e29b-41d4-a716-446655440000", "123e4567-e89b-12d3-a456-426614174000",
    }
)  # fmt: skip
# The vocabulary of fakes: words that say "this is not a real one". A value made only of these (with
# digits, punctuation and l33t spellings in between: `password123`, `P@ssw0rd!`, `my_test_secret`)
# is a fixture or a tutorial's value, the first guess of any attacker, not a leaked secret. Content
# words real weak passwords are made of (`admin`, `root`, `welcome`) are not in it: `Adm1n!2023` is
# found; the bare defaults (`root`, `postgres`) are listed as values above.
_FAKE_WORDS = (
    "password", "passwort", "passwd", "passw", "pass", "pwd", "pw", "passphrase", "secret", "secrets", "sensitive",
    "private", "hidden", "token", "key", "apikey", "api", "auth", "credential", "credentials", "creds", "cred",
    "user", "username", "test", "testing", "tester", "tests", "fake", "dummy", "sample", "mock", "stub",
    "example", "placeholder", "default", "foo", "bar", "baz", "qux", "quux", "foobar", "hello", "world", "qwerty",
    "asdf", "zxcv", "changeme", "change", "me", "abc", "xyz", "my", "your", "our", "the", "a", "i", "am", "is",
    "it", "this", "that", "super", "very", "so", "top", "new", "old", "wrong", "bad", "invalid", "incorrect",
    "correct", "right", "good", "valid", "other", "another", "different", "same", "here", "goes", "not", "real",
    "some", "any", "value", "string", "str", "bytes", "s", "word", "phrase", "long", "short", "strong", "weak",
    "random", "no", "none", "required", "needed", "empty", "blank", "missing", "unset", "does", "exist",
    "exists", "geheim", "parole", "motdepasse", "contrasena", "senha",
)  # fmt: skip
_LEET = {"0": "o", "1": "il", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "!": "i"}


def _spells(low: str, at: int, word: str) -> bool:
    if at + len(word) > len(low):
        return False
    return all(ch == want or want in _LEET.get(ch, "") for ch, want in zip(low[at : at + len(word)], word))


def _by_first_letter() -> dict[str, tuple[str, ...]]:
    """The fake words by the characters their first letter may be written as (``p``, or ``5`` for
    ``s``): a position is checked only against the words that can start there."""
    out: dict[str, list[str]] = {}
    for word in _FAKE_WORDS:
        for ch in {word[0], *(k for k, v in _LEET.items() if word[0] in v)}:
            out.setdefault(ch, []).append(word)
    return {k: tuple(v) for k, v in out.items()}


_FAKE_BY_FIRST = _by_first_letter()


def is_fake(value: str) -> bool:
    """``password123``, ``P@ssw0rd!``, ``IAmSensitive``, ``my_secret_pw``, ``test1234``, ``hunter2``:
    made only of the vocabulary of fakes (at least one word of three letters or more), digits and
    punctuation."""
    low = value.lower()
    if len(low) > 40:
        return False
    # reach[i]: None = position i cannot be reached; else whether a word of 3+ letters got us there
    reach: list[bool | None] = [None] * (len(low) + 1)
    reach[0] = False
    for i in range(len(low)):
        here = reach[i]
        if here is None:
            continue
        if not low[i].isalpha():
            reach[i + 1] = bool(reach[i + 1]) or here
        for word in _FAKE_BY_FIRST.get(low[i], ()):
            if _spells(low, i, word):
                j = i + len(word)
                reach[j] = bool(reach[j]) or here or len(word) >= 3
    return reach[-1] is True


_SEQUENCES = ("abcdefghijklmnopqrstuvwxyz", "0123456789", "qwertyuiop", "asdfghjkl", "zxcvbnm")


def _trivial(value: str) -> bool:
    """``aaaa``, ``abab``, ``1234``, ``abcdef``, ``qwerty``, ``A1b2c3d4``, ``abCDeFGhiJKlmn…``: no
    one's password, every tutorial's."""
    low = value.lower()
    return len(set(low)) < 3 or any(low in s or low in s[::-1] for s in _SEQUENCES) or _sequential(low)


def _sequential(low: str) -> bool:
    """Mostly the alphabet or the digits in order (``a1b2c3d4``), as documentation writes a value."""
    if len(low) < 8:
        return False  # too short to tell a pattern from chance (`67xy7x`)
    letters = "".join(c for c in low if c.isalpha())
    digits = "".join(c for c in low if c.isdigit())
    covered = 0
    for part in (letters, digits):
        if len(part) >= 4 and sum(ord(b) - ord(a) == 1 for a, b in itertools.pairwise(part)) >= (len(part) - 1) / 2:
            covered += len(part)
    return covered >= 0.7 * len(low)


_IDENTIFIER = lazy_pattern(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DOTTED = lazy_pattern(r"[A-Za-z_$@][\w$]*(?:(?:\.|->|::)[A-Za-z_$][\w$]*)+\??")
_ENV_NAME = lazy_pattern(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_TEMPLATE_START = tuple("$%{#?:&*!@=~^|")  # not `+` or `/`: base64 may start with them
_PERCENT_TEMPLATE = lazy_pattern(r"%(?:\(\w+\)|\{|[-+ #0-9.]*[sdifrx](?![A-Za-z0-9])|\w+%)")
_URL_OR_PATH = lazy_pattern(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//|\.\.?/|~/|[A-Za-z]:[\\/]|\\\\|(?:arn|urn):")
_NUMBER = lazy_pattern(r"[-+]?(?:\d+(?:\.\d*)?(?:e[-+]?\d+)?|0x[0-9a-f]+)", re.I)
_PATH_SEGMENT = lazy_pattern(r"[a-z0-9_.-]*|[\w-]*\.[A-Za-z0-9]{1,5}")


def _pathish(value: str) -> bool:
    """A URL or a file path (``/run/secrets/db``, ``./key.pem``, ``C:\\keys``); a base64 value may
    start with ``/`` too, but its segments are not names."""
    if _URL_OR_PATH.match(value):
        return True
    return "/" in value and all(_PATH_SEGMENT.fullmatch(p) or _wordish(p) for p in value.split("/"))


def _quote_of(m: re.Match) -> str:
    """The quote right before the value (``"``, ``'``, `````) or "" when it is bare."""
    start = m.start("s")
    return m.string[start - 1] if start and m.string[start - 1] in "\"'`" else ""


def _after(m: re.Match) -> str:
    return m.string[m.end("s") : m.end("s") + 1]


def _literal(value: str, quoted: bool, after: str, *, bare_words: bool = False, chosen: bool = False) -> bool:
    """Whether ``value`` reads as a literal credential rather than code, a template, a reference,
    a path, a number or a fake. ``bare_words``: an unquoted word is a literal here (a ``.env``
    line, SQL's ``IDENTIFIED BY``), not a variable. ``chosen``: the context says the value is a
    password someone chose (``_chosen_password``), so one made of the fakes' words counts too."""
    if _placeholder(value) or value.lower() in _NOT_SECRET_VALUES or _NUMBER.fullmatch(value):
        return False
    if _stand_in(value):
        return False
    if not chosen and _names_a_credential(value):
        return False  # a name (`"challengePassword"`, `smb-server-password`): where the value is, not the value
    if "[REDACTED:" in value or _pathish(value) or _ENV_NAME.fullmatch(value):
        return False
    if value.startswith(_TEMPLATE_START) and (not (quoted or bare_words) or value[0] in "${"):
        return False
    if _PERCENT_TEMPLATE.match(value):
        return False  # `%s`, `%(pw)s`, `%DB_PASS%`, `%{pw}`; a generated `%TMeI4…` is not one
    if _DOTTED.fullmatch(value) and all(_wordish(p) or p.isupper() for p in re.split(r"\.|->|::", value)):
        return False  # an attribute or a setting's path, quoted or not
    if not quoted:
        if after in ("(", "[") or _DOTTED.fullmatch(value):
            return False  # a call, a subscript, an attribute: code that fetches a secret
        if _IDENTIFIER.fullmatch(value) and not bare_words and (_wordish(value) or not any(c.isdigit() for c in value)):
            return False  # a variable (`char2`), a type (`password: SecretStr`), a word of prose
    return (chosen or not is_fake(value)) and not _trivial(value)


_ANGLED = lazy_pattern(r"<[^<>]*>|\A<")


def _placeholder(value: str) -> bool:
    """``is_placeholder``, except that a lone ``<`` inside a generated password (``Fq6e<x^46``) is
    one of its symbols; ``<token>``, ``<your-key`` stay stand-ins."""
    if "<" in value and not _ANGLED.search(value):
        value = value.replace("<", "\0")
    return is_placeholder(value)


# Words a value uses to say it is not a real one: `sk-or-v1-invalid`, `a-fake-key`, `TEST_TOKEN_1`.
_SAYS_FAKE = frozenset({"fake", "invalid", "dummy", "sample", "test", "mock", "bogus", "revoked"})
_MASKED = lazy_pattern(r"#{3,}|(?:[xX]{3,}|\*{3,})\Z|&lt;|&gt;", re.I)
# The same words in capitals inside a run no case splits: a documented key with `SAMPLE` or `TEST`
# spliced in (`…bPxRfiCYESAMPLEKEY`). A random 40-character base64 key holds one ~1 time in 10^5.
_SHOUTS_FAKE = lazy_pattern(r"FAKE|INVALID|DUMMY|SAMPLE|TEST|MOCK|BOGUS|REVOKED")
_UUID_LAYOUT = lazy_pattern(r"(?<![0-9A-Za-z])[0-9A-Za-z]{8}(?:-[0-9A-Za-z]{4}){3}-[0-9A-Za-z]{12}(?![0-9A-Za-z])")
_HEX_UUID = lazy_pattern(r"[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}")
_VERSION_TAIL = lazy_pattern(r"(?:\A[~^]?|[-_@:/v])\d{1,4}(?:\.\d{1,4}){2,3}\Z")  # also a range: `^7.1.3`
_VENDOR_HEAD = lazy_pattern(r"(?:[A-Za-z]{1,8}[-_]){1,3}")
_SELECTOR = lazy_pattern(r"#[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+")  # an element's id: `#add-password`


def _stand_in(value: str) -> bool:
    """A value that shows it stands in for a credential: masked (``xoxp-…-####``, ``…XXXX``,
    ``&lt;password&gt;``), a word saying so (``sk-or-v1-invalid``, ``a-fake-key``), a UUID laid
    out with letters no UUID has (``d4c3b2a1-f6e5-h8g7-…``), a known prefix before a counting run
    (``xoxp-1234567890``); or not a credential at all: an artifact's version
    (``jjwt-jackson-0.11.2``), a page anchor or CSS selector (``#add-password``)."""
    if _MASKED.search(value) or _SHOUTS_FAKE.search(value) or any(w in _SAYS_FAKE for w in _words(value)):
        return True
    for layout in _UUID_LAYOUT.finditer(value):
        if not _HEX_UUID.fullmatch(layout.group()):
            return True
    if _VERSION_TAIL.search(value) or (_SELECTOR.fullmatch(value) and _wordish(value[1:])):
        return True
    head = _VENDOR_HEAD.match(value)
    return head is not None and len(value) - head.end() >= 6 and _trivial(value[head.end() :])


_NAME = lazy_pattern(r"[A-Za-z_][\w-]*")


def _names_a_credential(value: str) -> bool:
    """``challengePassword``, ``PKCS7PrivateKeyTypes``, ``export-token-cu4lg26o``: a field, a type
    or a handle named after a credential."""
    words = _words(value)
    kinds = [(w, _word_kind(w, words[i - 1] if i else None)) for i, w in enumerate(words)]
    named = [w for w, kind in kinds if kind is not None]
    if not named:
        return False
    if not _NAME.fullmatch(value.replace(".", "_")):
        return False  # `Tiger#Secret88Blue` is a password made of words, not a name
    return _wordish(value) or any(len(w) >= 5 or w == "key" for w in named)


_DIGIT = lazy_pattern(r"\d")
_SYMBOL = lazy_pattern(r"[^\w.-]")


def _classes(value: str) -> int:
    """How many of lower case, upper case, digits and symbols (other than ``_-.``) ``value`` holds.
    (String methods and one search each, not a Python loop per character: a hostile line of
    ``pw=`` repeated asks this of tens of thousands of long values.)"""
    return (
        (value != value.upper())
        + (value != value.lower())
        + (_DIGIT.search(value) is not None)
        + (_SYMBOL.search(value) is not None)
    )


_CHUNKS = lazy_pattern(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
# Short parts of names that have no vowel, or only a `y`.
_ABBREVIATIONS = frozenset(
    {
        "str", "pwd", "pw", "src", "dst", "cfg", "ctx", "msg", "btn", "db", "sql", "tls", "ssl", "ssh", "ftp",
        "smb", "dns", "tcp", "udp", "http", "https", "xml", "html", "jwt", "sdk", "cmd", "pkg", "lib", "tmp",
        "txt", "pdf", "png", "jpg", "gpg", "pgp", "rsa", "dsa", "md", "rst", "js", "ts", "py", "rb", "rs", "kv",
        "std", "nbr", "qty", "cnt", "pk", "sk", "fk", "mgmt", "prd", "stg", "srv", "svc", "ws", "wss", "www",
        "dlg", "lbl", "hdr", "ftr", "nv", "gw", "vm", "vpc", "crm", "cdn", "rds", "sns", "sqs", "my", "by",
    }
)  # fmt: skip


def _wordish(value: str) -> bool:
    """Words joined in code style (``SecretBytes``, ``prod-database``, ``my_secret_name``,
    ``webdavpassword2``): a name, not random characters. Random letters split into vowel-less
    fragments (``Gk``, ``Qw``) or long runs of consonants."""
    if len(_DIGIT.findall(value)) > 4:
        return False
    chunks = _CHUNKS.findall(value)
    odd = sum(not (c in "AI" or word_like(c.lower())) for c in chunks)
    phrase = sum(len(c) >= 4 for c in chunks) >= 4  # a phrase may hold one odd word (`…AtLeast6Chars`)
    return bool(chunks) and (odd == 0 or (odd == 1 and phrase))


_CONSONANT_RUN = lazy_pattern(r"[^aeiouy]{5,}")


def word_like(chunk: str) -> bool:
    if chunk in _ABBREVIATIONS:
        return True
    if len(chunk) <= 3:
        return len(chunk) >= 2 and any(c in "aeiou" for c in chunk)
    return sum(c in "aeiouy" for c in chunk) >= len(chunk) / 4 and not _CONSONANT_RUN.search(chunk)


JUDGED = 256
"""Characters of a value the shape checks look at: a secret's randomness shows in its first 256, and
judging all of a 1000-character value at every keyword of a hostile line would be quadratic."""


def _random(value: str) -> bool:
    """A token without a prefix: 8+ characters, two classes or more, not a name, random enough."""
    value = value[:JUDGED]
    return len(value) >= 8 and _classes(value) >= 2 and not _wordish(value) and looks_random(value, 2.5)


_HEX_KEY = lazy_pattern(r"[0-9a-f]{32,64}|[0-9A-F]{32,64}")
_BASE64_KEY = lazy_pattern(r"[A-Za-z0-9+/_-]{24,200}={0,2}")


def _strong_random(value: str) -> bool:
    """What a generated key looks like, whatever it is called: 32 to 64 hex digits (128 to 256
    bits), or 24+ base64 characters of upper case, lower case and digits."""
    if _HEX_KEY.fullmatch(value):
        return looks_random(value, 3.0)
    return (
        _BASE64_KEY.fullmatch(value) is not None
        and all(any(test(c) for c in value) for test in (str.islower, str.isupper, str.isdigit))
        and not _wordish(value)
        and looks_random(value, 3.5)
    )


# --- assignments ------------------------------------------------------------------------------

# The value: quoted (anything but a quote, a space, a brace or a backslash: a backtick or an angle
# bracket inside quotes is one of a password's symbols) or bare (up to a separator); a string's
# quotes may be quoted again (`'"…"'`, `"\"…\""`: Gradle's, a JSON string holding a literal).
_VALUE = (
    r"""(?P<q>'\\''|'"|"\\"|[bBrRuUfFnN]?\\?["'`])?"""
    r"""(?P<s>(?(q)[^\s"'\\{}]|[^\s"'`\\{}<>,;()\[\]&|]){1,1000})(?(q)(?=\\?["'`]))"""
)
# After a key: its closing quote and subscript, an optional type annotation (`password: str = "…"`),
# then the separator of an assignment (after the spaces that align a column: `:password   => '…'`;
# make's `:=`, `::=`, `:::=`, `?=`), an XML element, a define or a getter's default, a .NET setting,
# a setter call or (.netrc, redis.conf) plain spaces.
_AFTER_KEY = (
    r"""(?:(?:'\\''|\\?["'`])\]?)?"""
    r"""(?:[ \t]{0,4}:[ \t]{0,4}[A-Za-z_][\w.]{0,40}(?:\[[\w., |\[\]]{0,60}\])?(?=[ \t]{0,4}=[^=>~]))?"""
    r"""(?:[ \t]{0,32}(?:(?P<sep>:{1,3}=|=>|<-|\?\?=|\|\|=|\?=|=(?![=~>]))|(?P<colon>:)(?![:=]))[ \t]{0,8}"""
    r"""|(?P<xml>(?:[ \t][^<>\n]{0,80})?>)"""
    r"""|(?P<arg>(?:'\\''|\\?["'])\s{0,4},\s{0,4})"""
    r"""|(?P<attr>\\?["'][ \t]+value[ \t]*=[ \t]*)"""
    r"""|(?P<call>\([ \t]*)"""
    r"""|(?P<space>(?<![\]"'`])[ \t]+))"""
)
_PASSWORD_KEY = r"(?i)(?P<key>(?:pass|pw)[A-Za-z0-9_.-]{0,40})"
# A bare `key` (`<add key="…"`, `key: value`) is never a credential's name: no match starts there, so
# none hides the name that follows it. An `auth` names a credential only after another word
# (`user_auth`, `basic_auth`), and only with a strong random value (`_loosely_named`).
_CREDENTIAL_KEY = r"(?i)(?P<key>(?:secret|token|cred|pass|pw|auth|(?<=[\w.-])key|key(?=[\w.-]))[A-Za-z0-9_.-]{0,40})"

_XML_OPEN = lazy_pattern(r"""<(?:[\w.:-]+\s[^<>]*?\b(?:key|name)\s*=\s*\\?["'])?[\w.:-]*\Z""")
# A call whose first argument is the name and the second the value: PHP's `define('KEY', '…')`, a
# getter's default (`os.getenv("API_TOKEN", "…")`, `GetEnvOrDefault(…)`, `cfg.get(…)`), a setter.
_DEFINE_OPEN = lazy_pattern(
    r"""(?i)(?:\b(?:define|get|fetch|put|set|\w*(?:env|default|property|setting|config)\w*)\(\s*"""
    # Gradle's `buildConfigField "String", "API_KEY", "\"…\""`: the type, the name, the value
    r"""|\b(?:buildConfigField|resValue)[ \t(]+\\?["']\w+\\?["'][ \t]*,[ \t]*)"""
    r"""(?:'\\''|\\?["'])[\w.-]*\Z"""
)
# Pairs of a connection string before the name (`Server=db;User ID=app; " & "Password=…;`, a JDBC
# URL's `?user=app&password=…`): a bare word there is the value, not a variable.
_CONNECTION_PAIRS = lazy_pattern(
    r"""(?i)\b(?:user[ _]?id|uid|user(?:name)?|server|data[ _]source|host|database|initial[ _]catalog|"""
    r"""provider|driver|dsn)[ \t]*=[^;&\n]{0,200}[;&][\s"'&+\\]{0,20}\Z"""
)
# An INI section's or a config file's line right before: `user = Aladdin` (then `password = …`); its
# line breaks may be escaped, in a string that holds the file
_USER_LINE = lazy_pattern(
    r"""(?i)(?:\A|\n|\\n)[ \t]*(?:user(?:name)?|login|user_?id|uid)[ \t]*[=:][ \t]*["']?[^\s"'()\[\]{}\\]+["']?"""
    r"""[ \t]*(?:\r?\n|(?:\\r)?\\n)(?:[ \t]*(?:\r?\n|(?:\\r)?\\n))?[ \t]*\Z"""
)
_ATTR_OPEN = lazy_pattern(r"""(?i)\b(?:key|name)\s*=\s*\\?["'][\w.-]*\Z""")
# `machine h login u password p` (.netrc), `requirepass p` (redis.conf): a name, spaces, the value
_NETRC = lazy_pattern(r"\blogin\s+\S+\s+\Z")
_SPACED_NAMES = frozenset({"password", "passwd"})  # at the start of a line
_SPACED_ANYWHERE = frozenset({"requirepass", "masterauth"})  # redis.conf's: no other meaning
# A Dockerfile's `ENV NAME value` (the form without `=`): the rest of the line is the value, as text.
# The instruction may sit in a string, a list, after an escaped line break: only a random value counts
# (`the ENV PASSWORD variable` is prose).
_DOCKER_ENV = lazy_pattern(r"(?<![\w-])ENV[ \t]+\Z")


def _starts_its_line(text: str, at: int) -> bool:
    """Whether only blanks stand between ``at`` and the start of its line. Walked back over the
    blanks alone: looking for the line's start would cost a long line's length at every keyword."""
    i = at
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    return i == 0 or text[i - 1] in "\r\n"


def _dockerfile_env(text: str, name_start: int) -> bool:
    return _DOCKER_ENV.search(text, max(0, name_start - 40), name_start) is not None


_SETTER_VERBS = frozenset({"", "set", "set_", "with", "with_"})
_PROSE_WORD = lazy_pattern(r"[A-Za-z]+[.,;:!?]")


# Code after a string: an operator (PHP's and Perl's `.`, Lua's `..`, `+`, VB's `&`, `~`) and a
# variable, or a subscript or call the next string's quote cuts (`.$p['pw']`, `.cfg('pw')`); or the
# separator of the next item (`"Password:",rememberMeLabel:"…"`)
_CONCATENATED = lazy_pattern(r"(?:\.\.?|\+|&|~)(?:[$@]|[\w.$>-]*[\[(]\Z)|[,;:)\]}]")


def _bare_words_are_values(m: re.Match, name: str, name_start: int) -> bool:
    """Where an unquoted word is the value itself, not a variable holding it: a .env line
    (``DB_PASSWORD=word``), a connection string (``User ID=app;Password=word;``), a config file's
    ``password = word`` line right after its ``user = …`` line."""
    text, sep = m.string, m.group("sep")
    if m.group("space") is not None:  # .netrc's, redis.conf's and ENV's lines hold no variables; prose has words
        if name.lower() in _SPACED_ANYWHERE or _dockerfile_env(text, name_start):
            return True
        return _NETRC.search(text, max(0, name_start - 200), name_start) is not None
    if sep in ("=", ":=", "::=", ":::=", "?=") and not any(c.islower() for c in name):
        between = text[m.end("key") : m.start("s")]
        if between == "=" or (sep != "=" and between.strip(" \t") == sep):
            return True  # also make's `DB_PASS := word`: a make variable's value is text
    if sep == "=" and _CONNECTION_PAIRS.search(text, max(0, name_start - 260), name_start):
        return True
    if sep != "=" and m.group("colon") is None:
        return False
    at_end = _after(m) in ("", "\n", "\r", "\\", '"', "'")  # the line's end, maybe escaped or in a string
    return at_end and _USER_LINE.search(text, max(0, name_start - 300), name_start) is not None


def _assignment_value(m: re.Match, kinds: tuple[str, ...]) -> bool:
    """The checks common to ``generic-password`` and ``generic-secret``: the key names a credential
    of one of ``kinds``, the form is complete (an XML element's closing tag, a define's quoted
    name), and the value is a literal."""
    text, start = m.string, m.start()
    name = _name_before(text, m.end("key"), start)
    before = text[max(0, start - 80) : start]
    quote = _quote_of(m)
    if m.group("xml") is not None:
        if not _XML_OPEN.search(before) or not text.startswith("</", m.end("s")):
            return False
        quote = "<"  # between tags a value is as literal as a quoted one
    elif m.group("arg") is not None:
        if not _DEFINE_OPEN.search(before) or not quote:
            return False
    elif m.group("attr") is not None:
        if not _ATTR_OPEN.search(before) or not quote:
            return False
    elif m.group("call") is not None:
        method = name.split(".")[-1]  # setPassword, with_token, pass_
        verb = method[: len(method) - (m.end("key") - start)]
        if verb.lower() not in _SETTER_VERBS or not quote or not (verb or "." in name):
            return False  # `check_password("x")`, `add_password(realm, …)`, `token("…")`: not a setter
        name = method[len(verb) :]
    name_start = m.end("key") - len(name)
    if m.group("space") is not None:
        at_line_start = _starts_its_line(text, name_start)
        netrc = _NETRC.search(text, max(0, name_start - 200), name_start)
        spaced = name.lower() in _SPACED_ANYWHERE or (at_line_start and name.lower() in _SPACED_NAMES)
        spaced = spaced or (_dockerfile_env(text, name_start) and _random(m.group("s")))
        if not (netrc or spaced):
            return False  # `password reset`, `token budget`: prose, not a setting
        if not netrc and _PROSE_WORD.fullmatch(m.group("s")):
            return False  # a wrapped sentence's line: `password combination.`
    if text[max(0, name_start - 2) : name_start] == "::":
        return False  # `AWS::IAM::AccessKey`, `Foo::SECRET`: a type's path, not a variable
    opening = text[name_start - 1 : name_start]
    if (
        opening in ("'", '"')
        and (m.group("q") or "").endswith(opening)
        and opening not in text[m.end("key") : m.start("q")]
        and _CONCATENATED.match(m.group("s"))
    ):
        return False  # `echo 'password = '.$p['pw']`, `"Password:",`: a string's text, then code
    if m.group("colon") is not None and "." in name and text[m.end("key") : m.start("s")] == ":":
        return False  # `io.jsonwebtoken:jjwt`, `pkg.token:main`: a Maven coordinate, an entry point
    kind = credential_kind(name)
    value = m.group("s")
    if kind not in kinds:
        if "secret" not in kinds or not _loosely_named(name) or not _strong_random(value):
            return False
        kind = "secret"
    if not _literal(value, bool(quote), _after(m), bare_words=_bare_words_are_values(m, name, name_start)):
        return False
    decoded = _base64_text(value)
    if decoded is None:
        return True
    # Base64 of text (a Kubernetes Secret's data, a registry's `auth`): judge what it says.
    if ":" in decoded:
        return _pair_password(*decoded.split(":", 1))
    if kind == "password":
        return len(decoded) >= 4 and _literal(decoded, True, "")
    return _random(decoded) or _long_random(decoded)


_BASE64 = lazy_pattern(r"(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")


def _base64_text(value: str) -> str | None:
    """The text that ``value`` is the base64 of, or None (random bytes, or not base64 at all)."""
    if len(value) < 8 or not _BASE64.fullmatch(value):
        return None
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return decoded if decoded.isprintable() else None


def _generic_password(m: re.Match, ctx: Context) -> bool:
    return len(secret(m)) >= 4 and _assignment_value(m, ("password",))


def _generic_secret(m: re.Match, ctx: Context) -> bool:
    return _random(secret(m)) and _assignment_value(m, ("password", "secret"))


# --- URLs and user:password pairs ---------------------------------------------------------------


def _pair_password(user: str, password: str) -> bool:
    """The password of a ``user:password`` pair (a URL's userinfo, ``curl -u``, a Basic header)."""
    from urllib.parse import unquote  # on a match only: the hooks' start-up stays lean

    user, password = unquote(user), unquote(password)
    if len(password) < 3 or password == user or password.lower() == user.lower():
        return False  # `guest:guest`, `postgres:postgres`: the image's default, in every README
    if password.isdigit() and len(password) <= 5:
        return False  # `host:8080@` is a port, not a password
    if password.isalpha() and password.islower() and len(password) <= 8:
        return False  # `evil:thing@`, `app:bitnami@`: a word in an example, not a generated password
    return _literal(password, True, "")


# scheme://user:password@host, and Oracle's jdbc:oracle:thin:user/password@[//]host. The host may be
# a name, an address, a bracketed IPv6 address or MySQL Connector/J's list (`@[h1:3306,h2:3306]`),
# or a template's field (`f"…:{pw}@{host}"`, `%s`, `${HOST}`): the password can be a literal still.
_URL_CREDENTIALS = (
    r"(?:://(?P<user>[^\s:/?#@\"'<>\[\]]{0,100}(?:@[^\s:/?#@\"'<>\[\]]{1,100}){0,3}):"
    r"|\boracle:thin:(?P<ouser>[A-Za-z0-9_$#.]{1,128})/)"
    r"(?P<s>[^\s/?#\"'<>]{1,200})@/{0,2}"
    r"(?P<host>[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Za-z:.,_%-]+\]"
    r"|\{\{?[ \t]?[A-Za-z_][\w.]*[ \t]?\}\}?|\$\{?[A-Za-z_]\w*\}?|%(?:\([A-Za-z_]\w*\))?s)"
)


def _chosen_password(user: str, password: str) -> bool:
    """A password a person chose from the words the fakes are made of (``mySecret789``,
    ``Str0ngP4ss``, ``Winter2024!``): 8 or more characters of three classes, not the user's
    name, and nothing that says it stands in (a placeholder, a template, ``test``, a sequence)."""
    from urllib.parse import unquote

    user, password = unquote(user), unquote(password)
    if len(password) < 8 or _classes(password) < 3 or password.lower() == user.lower():
        return False
    low = password.lower()
    if any(word in spelled for spelled in (low.translate(_UNLEET_I), low.translate(_UNLEET_L)) for word in _SAYS_FAKE):
        return False  # `samplEpassword12*`, `T3stPassw0rd!`: a word in it says what it is, however it is cased
    return _literal(password, True, "", chosen=True)


# l33t spellings read back as letters (a `1` is an `i` or an `l`: both are tried)
_UNLEET_I = str.maketrans("0134579@$!", "oieastgasi")
_UNLEET_L = str.maketrans("0134579@$!", "oleastgasi")


# Names RFC 2606 and RFC 6761 reserve for documentation and tests (`.test`, `example.com`), and the
# words a README writes where a host goes (`host.com`, `mydomain.com`).
_STAND_IN_TLDS = frozenset({"test", "example", "invalid", "localhost"})
_STAND_IN_NAMES = frozenset(
    {
        "example", "localhost", "test", "domain", "host", "hostname", "server", "foo", "bar", "baz", "dummy",
        "fake", "sample", "mydomain", "yourdomain", "somedomain", "myhost", "yourhost", "somehost", "myserver",
    }
)  # fmt: skip
# Addresses RFC 5737 and RFC 3849 reserve for documentation.
_DOCUMENTATION_NETS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")


def _real_host(host: str | None) -> bool:
    """A host that names a machine (``cluster0.mongodb.net``, ``db.corp.net``, ``10.0.4.12``),
    not a stand-in: a template's field, a single label (``db``, ``host``: every compose file's
    and README's), a reserved documentation or test name or address, loopback."""
    if host and host[0] == "[":  # `[::1]`, `[fe80::1%25eth0]`; a list's first host (`[h1:3306,h2:3306]`)
        first = host[1:-1].split(",")[0]
        host = first.rsplit(":", 1)[0] if first.count(":") == 1 else first.split("%")[0]
    if not host or host[0] in "{$%" or is_placeholder(host):
        return False
    import ipaddress  # on a match only

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        labels = host.lower().rstrip(".").split(".")
        if len(labels) < 2 or labels[-1] in _STAND_IN_TLDS or labels[-1].isdigit():
            return False
        return not any(label in _STAND_IN_NAMES for label in labels[-2:])
    if address.is_loopback or address.is_unspecified or address.is_link_local:
        return False
    return not any(address in ipaddress.ip_network(net) for net in _DOCUMENTATION_NETS)


def _url_credentials(m: re.Match, ctx: Context) -> bool:
    value = m.group("s")
    if value.lower() == "x-oauth-basic":
        return False  # GitHub's fixed stand-in password: the token is the user part (hosting rules)
    user = m.group("user") if m.group("user") is not None else m.group("ouser")
    if _pair_password(user, value):
        return True
    # A URL that names a real host (`…@cluster0.mongodb.net`) is a working credential even when its
    # password is made of the words tutorials use (`mySecret789`); on a stand-in host (`…@localhost`)
    # it is a fixture.
    return _real_host(m.group("host")) and _chosen_password(user, value)


# --- headers ----------------------------------------------------------------------------------


def _basic(value: str) -> bool:
    """A Basic credential: the base64 of ``user:password``, judged as a pair when it decodes."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return looks_random(value, 2.5)
    if not decoded.isprintable():
        return looks_random(value, 2.5)
    if ":" not in decoded:
        return _random(decoded) or _long_random(decoded)  # not `user:password`: judge what it says
    user, password = decoded.split(":", 1)
    return _pair_password(user, password)


def _header_value(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    if not _literal(value, bool(_quote_of(m)) or m.group("scheme") is not None, _after(m)):
        return False
    scheme = (m.group("scheme") or "").strip().lower()
    if scheme == "digest":
        return False  # a digest response is a hash of one request, not a credential
    if scheme == "basic":
        return len(value) >= 8 and _basic(value)
    return _random(value) or _long_random(value)


def _long_random(value: str) -> bool:
    """One class of characters only, but long and random (a lower-case or hex-less token)."""
    return len(value) >= 16 and not _wordish(value) and looks_random(value, 3.0)


_COOKIE_ATTRIBUTES = frozenset({"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"})


def _cookie(m: re.Match, ctx: Context) -> bool:
    """Some cookie's value is random (a session id), not a word or a counter."""
    for pair in secret(m).split(";"):
        name, _, value = pair.strip().partition("=")
        if name.lower() in _COOKIE_ATTRIBUTES or not _literal(value, True, ""):
            continue
        if _random(value) or _long_random(value):
            return True
    return False


def _token_value(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    return _literal(value, True, _after(m)) and (_random(value) or _long_random(value))


# --- command lines ----------------------------------------------------------------------------

_CLI_VALUE = (
    r"""(?P<q>'\\''|\\?["'])?(?P<s>(?(q)[^\s"'`\\{}<>]|[^\s"'`\\{}<>;|&()]){1,500})"""
    r"""(?(q)(?=\\?["'])|(?=[\s;|&)"'\\]|$))"""
)
_CLI = (
    # openssl -passin pass:VALUE (before the flags: `-passout` is not a credential's name)
    r"(?:(?<![\w-])-pass(?:in|out)?[ \t]+pass:"
    # --password VALUE, --db-password=VALUE, -storepass VALUE, --api-key VALUE, --token VALUE
    r"|(?<![\w-])--?(?P<flag>[A-Za-z0-9-]{0,30}?(?:pass|pwd|pw|token|secret|key|cred)[A-Za-z0-9-]{0,30})"
    r"(?:=|[ \t]+)(?!-)"
    # mysql -pVALUE (glued: with a space, -p prompts)
    r"|\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlslap|mariadb|mariadb-dump)\b"
    r"[^\n|;&]{0,200}?[ \t]-p(?=[^\s-])"
    # /password:VALUE, /pass:VALUE (wmic, cmdkey, tscon: Windows' flags; not a URL's or a path's segment)
    r"|(?<=/)(?<![\w/.:-]/)(?:pass(?:word)?|pwd):(?=[^\s/])"
    # curl -u user:VALUE, --user user:VALUE, -U/--proxy-user user:VALUE (the user may be an e-mail address)
    r"|\bcurl\b[^\n|;&]{0,300}?[ \t](?:-[uU]|--(?:proxy-)?user)(?:=|[ \t]*)(?:'\\''|\\?[\"'])?(?P<user>[^\s:\"']{0,100}):"
    # psexec \\host -u USER -p VALUE; winrs -p:VALUE; wevtutil /p:VALUE; schtasks /p VALUE, /rp VALUE
    r"|(?i:\b(?:psexec(?:64)?|paexec|winrs|wevtutil|schtasks)\b[^\n|;&]{0,300}?[ \t][-/](?:p|rp|password)(?::|[ \t]+))"
    # sshpass -p VALUE; docker/podman/az login -p VALUE; mongo -p VALUE; redis-cli -a VALUE; ldap* -w VALUE
    r"|\bsshpass\b[ \t]+(?:-[a-zA-Z]+[ \t]+)*?-p[ \t]*"
    r"|(?P<login>\blogin)\b[^\n|;&]{0,200}?[ \t]-p[ \t]+"
    r"|\bmongo(?:sh|dump|restore|import|export|stat|top)?\b[^\n|;&]{0,200}?[ \t]-p[ \t]+"
    r"|\bredis-cli\b[^\n|;&]{0,200}?[ \t]-a[ \t]+"
    r"|\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)\b[^\n|;&]{0,200}?[ \t]-w[ \t]+"
    r"|\b(?:sqlcmd|bcp|osql)\b[^\n|;&]{0,200}?[ \t]-P[ \t]*)" + _CLI_VALUE
)
# `… login -p VALUE` of these tools (elsewhere `-p` is a port or a path)
_LOGIN_TOOL = lazy_pattern(
    r"\b(?:docker|podman|nerdctl|buildah|skopeo|az|oras|crane|helm[ \t]+registry)[ \t]+(?:auth[ \t]+)?\Z"
)
_CLI_KEYWORDS = (
    "pass", "pw", "token", "secret", "key", "cred", "mysql", "mariadb", "curl", "sshpass", "login", "mongo",
    "redis-cli", "ldap", "sqlcmd", "bcp", "osql", "psexec", "paexec", "winrs", "wevtutil", "schtasks",
)  # fmt: skip


_NAME_RUNS_ON = lazy_pattern(r"[A-Za-z0-9_.-]{47}")
"""47 name characters: more than a credential name (a keyword of at most six and 40 more) can hold
before the separator, quote or bracket that ends it."""


def _name_runs_on(text: str, at: int) -> bool:
    """No assignment holds the keyword at ``at``: the name it starts runs on past any credential
    name's length (inside a long identifier, a hash, a base64 blob, ``passpass…``)."""
    return _NAME_RUNS_ON.match(text, at) is not None


def _flag_start(text: str, at: int) -> tuple[int, ...]:
    """Where a match holding the keyword at ``at`` can start: the dash opening the flag the keyword
    is part of (``--db-`` before ``password``), and the keyword itself (``/password:``, ``mysql``).
    Nowhere between: a flag's dash must follow neither a word character nor a dash."""
    if text.rfind("-", max(0, at - 40), at) < 0:
        return (at,)  # no dash close enough to open a flag: found in C, not character by character
    i = at
    while i > 0 and at - i < 40 and (text[i - 1].isalnum() or text[i - 1] == "-"):
        i -= 1
    return (i, at) if i < at and text[i] == "-" else (at,)


def _cli_value(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    quoted = bool(m.group("q"))
    if m.group("flag") is not None:
        kind = credential_kind(m.group("flag"))
        if kind is None or value.startswith("-"):
            return False
        # A command line has no bare variables (`$VAR` is one): a word glued by `=` or holding a digit
        # (`--password=bluefish`, `-storepass Kx7Oavark`) is the value; a spaced word may be prose's
        # (`the --password option`).
        glued = m.string[m.start("s") - 1 : m.start("s")] == "="
        if not _literal(value, quoted, _after(m), bare_words=glued or any(c.isdigit() for c in value)):
            return False
        return len(value) >= 4 if kind == "password" else _random(value)
    if m.group("user") is not None:
        return _pair_password(m.group("user"), value)
    if m.group("login") is not None and not _LOGIN_TOOL.search(m.string, max(0, m.start() - 40), m.start()):
        return False
    return len(value) >= 3 and _literal(value, True, _after(m))


# --- SQL --------------------------------------------------------------------------------------

# Starts at its keyword: IDENTIFIED BY '…' (MySQL, Oracle), or PASSWORD '…' / PASSWORD = '…' after
# CREATE|ALTER USER|ROLE|LOGIN (PostgreSQL, SQL Server, Snowflake), or SET PASSWORD … = '…'.
_SQL = (
    r"(?i)\b(?:identified[ \t]+(?:with[ \t]+['\"]?[\w-]{1,40}['\"]?[ \t]+)?by"
    r"|(?P<pw>password)\b(?:[ \t]+for[ \t]+[^;\n=]{1,120}?[ \t]*=|(?:[ \t]*=)?)(?:[ \t]*password[ \t]*\()?)"
    r"""[ \t]*(?P<q>N?(?:'\\''|["']))?(?P<s>(?(q)[^\s"'\\]|[^\s;'"(){}]){1,200})(?(q)(?=["'])|(?=[\s;)]|$))"""
)
# The statement that gives IDENTIFIED BY / PASSWORD their meaning, where a statement starts (a line, a
# string, after `;`, `=` or `:`), not in a sentence ("grants control to a user identified by …").
_SQL_STATEMENT = lazy_pattern(
    r"(?im)(?:(?:^|(?<=[;(\"'`=:>]))[ \t]*(?:(?:create|alter)\s+(?:user|role|login)|grant\b[^;]{0,200}?\bon\b[^;]{0,200}?\bto)"
    r"\b[^;]{0,300}|\bset\s+)\Z"
)


def _sql_password(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    quoted = bool(m.group("q"))
    if not _SQL_STATEMENT.search(m.string, max(0, m.start() - 320), m.start()):
        return False  # `identified by 'name'`, `password 'x'` outside CREATE/ALTER USER, GRANT, SET: prose
    if re.match(r"(?i)md5[0-9a-f]{32}\Z|scram-sha-256\$|\*[0-9A-F]{40}\Z", value):
        return False  # a stored hash (`ENCRYPTED PASSWORD 'md5…'`, MySQL's `*…`), not the password
    if not quoted and _wordish(value):
        return False  # `identified by their address`
    return len(value) >= 4 and _literal(value, quoted, _after(m), bare_words=True)


# --- Maven ------------------------------------------------------------------------------------

# `mvn --encrypt-password` writes `{base64}` into settings.xml (Maven 4: `{[name=master,…]base64}`),
# maybe after a comment; `mvn --encrypt-master-password` writes the same into settings-security.xml.
# Maven 3 encrypts the master password with a fixed, public key (`settings.security`), and the master
# password decrypts the others: the pair is as good as the plain password. A literal brace of a plain
# password is escaped (`\}`), so the value may end in one. Not a property (`${sonatypePassword}`).
_MAVEN_ENCRYPTED = (
    r"<(?P<tag>password|passphrase|master)>[^<>{}\n]{0,200}?(?<!\$)\{(?:\[[^\[\]{}<>\n]{1,200}\])?"
    r"(?P<s>[A-Za-z0-9+/]{16,400}={0,2})\\?\}[^<>{}\n]{0,200}</(?P=tag)>"
)


def _maven_encrypted(m: re.Match, ctx: Context) -> bool:
    """Base64 of random bytes, not a name in braces (`{mavenCentralPassword}`)."""
    value = secret(m)
    if is_placeholder(value) or _wordish(value) or _names_a_credential(value):
        return False
    return looks_random(value, 3.0)


RULES: tuple[Rule, ...] = (
    Rule(
        "authorization-header",
        BLOCK,
        "Authorization header value (Basic, Bearer, token, …), also in curl -H and code",
        ("authorization",),
        (
            r"(?i)\b(?:proxy-)?authorization"
            + Q
            + r"(?:\s*[:=]\s*|\s*,\s*(?=\\?[\"'`]))"
            + Q
            + r"(?P<scheme>(?:basic|bearer|token|digest|negotiate|apikey|api-key|sso-key|ssws|key|otp|hmac|"
            r"zoho-oauthtoken|klaviyo-api-key|splunk|dsn|gitlab-ci-token)\s+)?"
            r"(?P<s>" + VALUE + r"{8,})"
        ),
        accept=_header_value,
        reference="RFC 9110 §11.6.2 (Authorization); RFC 7617 (Basic); RFC 6750 (Bearer)",
    ),
    Rule(
        "bearer-token",
        BLOCK,
        "bearer token",
        ("bearer",),
        (r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{16,})"),
        accept=_token_value,
        reference="RFC 6750 §2.1 (b64token)",
    ),
    Rule(
        "api-key-header",
        BLOCK,
        "API-key header value",
        ("api-key", "auth-token", "access-token", "private-token"),
        (
            r"(?i)\b(?:x-)?(?:api-key|auth-token|access-token|goog-api-key|private-token)"
            + Q
            + r"(?:\s*:\s*|\s*,\s*(?=\\?[\"'`]))"
            + Q
            + r"(?P<s>"
            + VALUE
            + r"{8,})"
        ),
        accept=_token_value,
        reference="—",
    ),
    Rule(
        "cookie-header",
        BLOCK,
        "Cookie header value",
        ("cookie",),
        (
            r"(?i)\b(?:set-)?cookie"
            + Q
            + r"\s*:\s*"
            + Q
            + r"(?P<s>[A-Za-z0-9_.-]+=[^\s\"';\\]{8,}(?:;\s*[A-Za-z0-9_.-]+=[^\s\"';\\]*)*)"
        ),
        accept=_cookie,
        reference="RFC 6265 §4.2 (Cookie)",
    ),
    Rule(
        "url-credentials",
        BLOCK,
        "user:password inside a URL (any scheme, JDBC's and Oracle's thin user/password@host too)",
        ("://", "oracle:thin:"),
        _URL_CREDENTIALS,
        accept=_url_credentials,
        anchored=True,  # a match starts at its keyword: tried there only, not at every place on a URL's line
        reference="RFC 3986 §3.2.1 (userinfo); MySQL Connector/J multi-host URLs; Oracle JDBC thin URLs",
    ),
    Rule(
        "sql-password",
        BLOCK,
        "SQL password: IDENTIFIED BY '…', CREATE/ALTER USER|ROLE|LOGIN … PASSWORD '…'",
        ("identified", "password"),
        _SQL,
        accept=_sql_password,
        anchored=True,
        reference="MySQL CREATE USER; PostgreSQL CREATE ROLE; SQL Server CREATE LOGIN; Oracle CREATE USER",
    ),
    Rule(
        "cli-credential",
        BLOCK,
        "password or token on a command line: --password …, mysql -p…, curl -u user:…, sshpass -p …",
        _CLI_KEYWORDS,
        _CLI,
        accept=_cli_value,
        anchored=True,
        start=_flag_start,
        reference="mysql(1) --password; curl(1) --user; sshpass(1) -p; openssl-passphrase-options(1ossl)",
    ),
    Rule(
        "maven-encrypted-password",
        BLOCK,
        "Maven encrypted password or master password ({…} in settings.xml, settings-security.xml)",
        ("<password>", "<passphrase>", "<master>"),
        _MAVEN_ENCRYPTED,
        accept=_maven_encrypted,
        reference="https://maven.apache.org/guides/mini/guide-encryption.html",
    ),
    Rule(
        "generic-secret",
        BLOCK,
        "password/secret/token/API key/credential assignment (compound names too) with a random-looking value",
        ("secret", "token", "key", "cred", "pass", "pw", "auth"),
        _CREDENTIAL_KEY + _AFTER_KEY + _VALUE,
        accept=_generic_secret,
        anchored=True,
        hopeless=_name_runs_on,
        reference="—",
    ),
    Rule(
        "generic-password",
        BLOCK,
        "password assignment whose value is short or human-chosen (4+ characters, not a known fake)",
        ("pass", "pw"),
        _PASSWORD_KEY + _AFTER_KEY + _VALUE,
        accept=_generic_password,
        anchored=True,
        hopeless=_name_runs_on,
        reference="—",
    ),
)

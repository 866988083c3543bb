"""The rule table: what counts as a secret or private material, with a stable id and a severity.

Each rule has a cheap keyword prefilter (lower-case substrings, any of which must occur in the
lower-cased text before its regex runs) and a regex whose group ``s`` is the secret part — the
only part a finding fingerprints and ``redact`` replaces. Standard library only: this module is
on the hook path, where every millisecond of import is paid on every commit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property

BLOCK, WARN = "block", "warn"

# CI runners whose home folder is public knowledge, not a person's (extendable in config).
DEFAULT_CI_HOME_USERS = frozenset(
    {"runner", "runneradmin", "circleci", "travis", "vsts", "gitlab-runner", "buildkite-agent"}
)

_PLACEHOLDER_WORDS = (
    "example",
    "changeme",
    "change_me",
    "placeholder",
    "redacted",
    "dummy",
    "your_",
    "your-",
    "<",
    "${",
    "{{",
    "xxxx",
    "****",
    "...",
)
_PLACEHOLDER_RE = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|x+|\*+|\.+|0+", re.I)


def is_placeholder(value: str) -> bool:
    """``${VAR}``, ``$VAR``, ``<token>``, ``{{x}}``, ``changeme``, ``xxxx…``, ``…EXAMPLE…``: a
    stand-in for a secret, not one. Also an earlier redaction, so redaction is a fixed point."""
    low = value.lower()
    return any(word in low for word in _PLACEHOLDER_WORDS) or bool(_PLACEHOLDER_RE.fullmatch(value))


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str, minimum: float = 3.0) -> bool:
    """A real credential has mixed characters; ``aaaaaaaa``, ``12345678`` and words do not."""
    if value.isdigit() or len(set(value)) < 5:
        return False
    return entropy(value) >= minimum


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    description: str
    keywords: tuple[str, ...]
    source: str
    """The regex; compiled on first use, so a commit that triggers no rule compiles none."""
    fingerprint_only: bool = False
    """Only an exact fingerprint in ``.publicsafe-allow`` may allowlist it: no inline comment,
    no disabled rule, no severity override, no allowed path."""
    accept: Callable[[re.Match, Context], bool] | None = None
    """Extra check on a match; False means a look-alike, not a finding."""
    anchored: bool = False
    """Match only where a keyword occurs, instead of searching the whole text: for rules whose
    keywords are common words (``token``, ``@``). A match starts at most ``back`` characters
    before its keyword (or where ``start`` says)."""
    back: int = 0
    start: Callable[[str, int], int] | None = None

    @cached_property
    def pattern(self) -> re.Pattern:
        return re.compile(self.source)

    def finditer(self, text: str, low: str) -> Iterator[re.Match]:
        """The rule's matches in ``text`` (``low`` is ``text.lower()``), in order."""
        if not self.anchored or not text.isascii():  # lower() keeps positions only for ASCII
            yield from self.pattern.finditer(text)
            return
        positions = sorted({i for k in self.keywords for i in _occurrences(low, k)})
        end = 0
        for p in positions:
            if p < end:
                continue
            first = self.start(text, p) if self.start else max(0, p - self.back)
            for q in range(max(first, end), p + 1):
                m = self.pattern.match(text, q)
                if m is not None:
                    yield m
                    end = m.end()
                    break


def _occurrences(low: str, keyword: str) -> Iterator[int]:
    i = low.find(keyword)
    while i >= 0:
        yield i
        i = low.find(keyword, i + 1)


@dataclass(frozen=True)
class Context:
    ci_home_users: frozenset = DEFAULT_CI_HOME_USERS


def _secret(m: re.Match) -> str:
    return m.group("s")


def _not_placeholder(m: re.Match, ctx: Context) -> bool:
    return not is_placeholder(_secret(m))


def _random(minimum: float) -> Callable[[re.Match, Context], bool]:
    def check(m: re.Match, ctx: Context) -> bool:
        value = _secret(m)
        return not is_placeholder(value) and looks_random(value, minimum)

    return check


def _generic_assignment(m: re.Match, ctx: Context) -> bool:
    value = _secret(m)
    after = m.string[m.end("s") : m.end("s") + 1]
    if after in ("(", "[") or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+", value):
        return False  # a call, a subscript or a dotted name: code that fetches a secret, not a secret
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() and c not in "_-." for c in value),
        )
    )
    if classes < 2:
        return False  # one kind of character: a word or a number (`secret: my_secret_name`), not a password
    return not is_placeholder(value) and looks_random(value, 2.5)


# Names documentation uses for "some user": /home/user/project is an example, not a leak.
_EXAMPLE_USERS = frozenset({"user", "username", "name", "me", "you", "someone", "your-name", "yourname"})


def _home_user(m: re.Match, ctx: Context) -> bool:
    user = m.groupdict().get("user")
    if user is None:
        return True
    return user not in ctx.ci_home_users and user.lower() not in _EXAMPLE_USERS and not is_placeholder(user)


def _windows_user(m: re.Match, ctx: Context) -> bool:
    user = m.group("user")
    return user.lower() not in ("public", "default", "all users", "default user") and _home_user(m, ctx)


_EMAIL_SKIP_DOMAINS = ("example.com", "example.org", "example.net", "users.noreply.github.com", "noreply.github.com")
_FILE_SUFFIXES = (
    "png",
    "jpg",
    "jpeg",
    "gif",
    "svg",
    "webp",
    "ico",
    "pdf",
    "js",
    "css",
    "py",
    "json",
    "yaml",
    "yml",
    "md",
    "txt",
)


_RESERVED_TLDS = ("test", "example", "invalid", "localhost")  # RFC 2606: never a real mailbox


def _email(m: re.Match, ctx: Context) -> bool:
    local, domain = m.group("s").rsplit("@", 1)
    domain = domain.lower()
    tld = domain.rsplit(".", 1)[-1]
    if local.lower() in ("git", "noreply", "no-reply") or tld in _FILE_SUFFIXES or tld in _RESERVED_TLDS:
        return False
    return not any(domain == d or domain.endswith("." + d) for d in _EMAIL_SKIP_DOMAINS) and not is_placeholder(local)


_LOCAL_TAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}\Z")


def _local_part_start(text: str, at: int) -> int:
    """Where the local part before the ``@`` at ``at`` begins (``at`` itself if there is none)."""
    m = _LOCAL_TAIL.search(text, max(0, at - 64), at)
    return m.start() if m else at


def _ipv4_private(m: re.Match, ctx: Context) -> bool:
    return all(int(part) <= 255 for part in m.group("s").split("."))


def _r(pattern: str) -> str:
    return pattern


# A key's value, up to a quote, space or separator.
_VALUE = r"""[^\s"'`,;()\[\]{}<>\\]"""
# An optional quote around keys and values, also JSON-escaped (`\"`) or shell-escaped (`'\''`).
_Q = r"""(?:'\\''|\\?["'`])?"""

RULES: tuple[Rule, ...] = (
    # --- block: credentials -----------------------------------------------------------------
    Rule(
        "private-key",
        BLOCK,
        "PEM or OpenSSH private key block",
        ("private key",),
        _r(
            r"-----BEGIN[ A-Z0-9]{0,30}PRIVATE KEY(?: BLOCK)?-----"
            r"(?P<s>(?:\\[rn]|\s)*[A-Za-z0-9+/=](?:[A-Za-z0-9+/=:,\s\\]|-(?!----)){15,})"
        ),
        fingerprint_only=True,
    ),
    Rule(
        "aws-access-key-id",
        BLOCK,
        "AWS access key id",
        ("akia", "asia", "abia", "acca", "a3t"),
        _r(r"(?<![A-Za-z0-9])(?P<s>(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16})(?![A-Za-z0-9])"),
        accept=_not_placeholder,
    ),
    Rule(
        "aws-secret-access-key",
        BLOCK,
        "AWS secret access key assignment",
        ("secret",),
        _r(
            r"(?i)aws_?secret_?(?:access_?)?key"
            + _Q
            + r"\s*(?:=|:|=>)\s*"
            + _Q
            + r"(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        accept=_random(3.5),
    ),
    Rule(
        "github-token",
        BLOCK,
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        _r(r"(?<![A-Za-z0-9_])(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "gitlab-token",
        BLOCK,
        "GitLab token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "gr1348941"),
        _r(
            r"(?<![A-Za-z0-9_-])(?P<s>(?:glpat|gldt|glrt|glptt|glcbt|gloas)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})"
        ),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "slack-token",
        BLOCK,
        "Slack token",
        ("xox", "xapp-"),
        _r(r"(?<![A-Za-z0-9])(?P<s>xox[abposr]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "slack-webhook",
        BLOCK,
        "Slack webhook URL",
        ("hooks.slack.com",),
        _r(r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_-]{20,})"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "openai-api-key",
        BLOCK,
        "OpenAI API key",
        ("sk-",),
        _r(
            r"(?<![A-Za-z0-9_-])(?P<s>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}"
            r"|sk-[A-Za-z0-9]{48})(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "anthropic-api-key",
        BLOCK,
        "Anthropic API key",
        ("sk-ant-",),
        _r(r"(?<![A-Za-z0-9_-])(?P<s>sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{32,})"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "stripe-key",
        BLOCK,
        "Stripe secret or restricted key",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        _r(r"(?<![A-Za-z0-9])(?P<s>[sr]k_(?:live|test)_[A-Za-z0-9]{20,})"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "npm-token",
        BLOCK,
        "npm access token",
        ("npm_",),
        _r(r"(?<![A-Za-z0-9_])(?P<s>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "pypi-token",
        BLOCK,
        "PyPI API token",
        ("pypi-",),
        _r(r"(?P<s>pypi-AgE[A-Za-z0-9_-]{40,})"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "google-api-key",
        BLOCK,
        "Google API key",
        ("aiza",),
        _r(r"(?<![A-Za-z0-9_-])(?P<s>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "huggingface-token",
        BLOCK,
        "Hugging Face access token",
        ("hf_",),
        _r(r"(?<![A-Za-z0-9_])(?P<s>hf_[A-Za-z]{34,40})(?![A-Za-z0-9])"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "sendgrid-key",
        BLOCK,
        "SendGrid API key",
        ("sg.",),
        _r(r"(?<![A-Za-z0-9])(?P<s>SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=_random(3.0),
    ),
    Rule(
        "jwt",
        BLOCK,
        "JSON Web Token",
        ("eyj",),
        _r(r"(?<![A-Za-z0-9_-])(?P<s>eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"),
        accept=_not_placeholder,
    ),
    # --- block: credentials in headers, URLs and assignments --------------------------------
    Rule(
        "authorization-header",
        BLOCK,
        "Authorization header value",
        ("authorization",),
        _r(
            r"(?i)\b(?:proxy-)?authorization"
            + _Q
            + r"\s*[:=]\s*"
            + _Q
            + r"(?:(?:basic|bearer|token|digest|negotiate|apikey|sso-key)\s+)?"
            r"(?P<s>" + _VALUE + r"{8,})"
        ),
        accept=_random(2.5),
    ),
    Rule(
        "bearer-token",
        BLOCK,
        "bearer token",
        ("bearer",),
        _r(r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=-]{16,})"),
        accept=_random(3.0),
    ),
    Rule(
        "api-key-header",
        BLOCK,
        "API-key header value",
        ("api-key", "auth-token", "access-token", "private-token"),
        _r(
            r"(?i)\b(?:x-)?(?:api-key|auth-token|access-token|goog-api-key|private-token)"
            + _Q
            + r"\s*:\s*"
            + _Q
            + r"(?P<s>"
            + _VALUE
            + r"{8,})"
        ),
        accept=_random(2.5),
    ),
    Rule(
        "cookie-header",
        BLOCK,
        "Cookie header value",
        ("cookie",),
        _r(
            r"(?i)\b(?:set-)?cookie"
            + _Q
            + r"\s*:\s*"
            + _Q
            + r"(?P<s>[A-Za-z0-9_.-]+=[^\s\"';]{8,}(?:;\s*[A-Za-z0-9_.-]+=[^\s\"';]*)*)"
        ),
        accept=_random(3.0),
    ),
    Rule(
        "url-credentials",
        BLOCK,
        "user:password inside a URL",
        ("://",),
        _r(r"://(?P<s>[^\s:/@\"'<>]*:[^\s@/\"'<>]+)@[A-Za-z0-9.-]+"),
        accept=lambda m, ctx: not is_placeholder(m.group("s").split(":", 1)[1]),
    ),
    Rule(
        "generic-secret",
        BLOCK,
        "password/secret/token/api_key assignment",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        _r(
            r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
            r"private[_-]?key|auth[_-]?key|credentials?)"
            + _Q
            + r"\s*(?:=|:=|=>|:)\s*"
            + _Q
            + r"(?P<s>"
            + _VALUE
            + r"{8,})"
        ),
        accept=_generic_assignment,
        anchored=True,
        back=8,
    ),
    # --- block: paths that name a person ----------------------------------------------------
    Rule(
        "home-path",
        BLOCK,
        "absolute home path",
        ("/home/", "/users/", "/root"),  # publicsafe: allow[home-path]
        _r(
            r"(?<![A-Za-z0-9_.~$%/-])(?P<s>(?:/mnt/[a-z]/Users|/[a-z]/Users|/home|/Users)/(?P<user>[A-Za-z0-9._-]+)|/root)(?=[/\"'\s,;:)\]}]|$)"  # publicsafe: allow[home-path]  # noqa: E501
        ),
        accept=_home_user,
        anchored=True,
        back=6,
    ),
    Rule(
        "windows-user-path",
        BLOCK,
        "Windows user path",
        ("\\users\\", ":/users/", "\\wsl"),
        _r(
            r"(?i)(?P<s>(?<![A-Za-z])[A-Z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)(?P<user>[A-Za-z0-9._ -]+?)"
            r"|(?:\\\\){1,2}wsl(?:\$|\.localhost)(?:\\\\|\\)[^\\\s\"]+(?:\\\\|\\)home(?:\\\\|\\)(?P<wsluser>[A-Za-z0-9._-]+))"
            r"(?=\\|/|[\"'\s,;]|$)"
        ),
        accept=lambda m, ctx: _windows_user(m, ctx) if m.group("user") else True,
    ),
    # --- warn: probably private, sometimes fine ---------------------------------------------
    Rule(
        "temp-path",
        WARN,
        "per-user temporary folder",
        ("/var/folders/", "/run/user/", "/tmp/user", "/tmp/systemd-private", "\\temp"),
        _r(
            r"(?i)(?P<s>(?:/private)?/var/folders/[A-Za-z0-9_+-]{2}/[A-Za-z0-9_+-]+/T|/run/user/\d+|/tmp/(?:user|systemd-private)-[^\s/\"']+"
            r"|AppData(?:\\\\|\\)Local(?:\\\\|\\)Temp)"
        ),
    ),
    Rule(
        "email-address",
        WARN,
        "e-mail address",
        ("@",),
        _r(
            r"(?<![A-Za-z0-9._%+-])(?P<s>[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24})(?![A-Za-z0-9-])"
        ),
        accept=_email,
        anchored=True,
        start=_local_part_start,
    ),
    Rule(
        "private-ip",
        WARN,
        "RFC 1918 address",
        ("10.", "192.168.", "172."),
        _r(r"(?<![0-9.])(?P<s>(?:10\.\d{1,3}|192\.168|172\.(?:1[6-9]|2\d|3[01]))\.\d{1,3}\.\d{1,3})(?![0-9]|\.\d)"),
        accept=_ipv4_private,
        anchored=True,
    ),
)

BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}
KEYWORDS: tuple[str, ...] = tuple(sorted({k for rule in RULES for k in rule.keywords}))
"""Every prefilter keyword once: a text is searched for each of them one time, not once per rule."""

STRUCTURAL_RULE_IDS = ("raw-material-key", "field-too-large", "unsafe-ref", "boundary-claim")
"""The structural record rules (safety/records.py): no allowlist applies to them; a value that
breaks one is fixed (or, where a marker is valid, redacted)."""
OTHER_RULE_IDS = ("local-state", *STRUCTURAL_RULE_IDS)
"""Rules that are not text patterns: the local-state boundary (safety/boundary.py), which can be
allowlisted by fingerprint, and the structural record rules."""
KNOWN_RULE_IDS = frozenset(BY_ID) | frozenset(OTHER_RULE_IDS)

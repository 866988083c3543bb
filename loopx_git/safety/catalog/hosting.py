"""Code hosting, package registries and developer tools: GitHub, GitLab, Atlassian and Bitbucket,
Docker Hub, JFrog, npm, PyPI, RubyGems, NuGet, Clojars, crates.io, SonarQube, Jenkins, Postman,
Sourcegraph, StackHawk, Code Climate, Sauce Labs, Buildkite, CircleCI, Snyk, Prefect.

Where a format carries a checksum (GitHub's and npm's base62 CRC32 tail, GitLab's routable CRC32,
Atlassian's hex CRC32 tail) it only rescues a token that the entropy check would turn away: a
token whose checksum fails is still reported when it looks random, because test corpora and
hand-edited copies of real tokens are still secrets to keep out of git.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable

from loopx_git.safety.catalog.cloud import last_part, token
from loopx_git.safety.rule import (
    BLOCK,
    VALUE,
    Context,
    Q,
    Rule,
    is_placeholder,
    lazy_pattern,
    looks_random,
    random_enough,
    secret,
)

Accept = Callable[[re.Match, Context], bool]

_DIGITS, _LOWER = "0123456789", "abcdefghijklmnopqrstuvwxyz"  # not `string`'s: 1.3 ms of every hook
_BASE62 = _DIGITS + _LOWER.upper() + _LOWER
_BASE36 = _DIGITS + _LOWER
# `=`, `:`, `=>`, `:=` (`::=`, `:::=` of make), `.=` (PHP), `?=`/`+=` (make, shell) or a `,`
# between a key and its value (the `,` of `("key", "value")`).
_ASSIGN = Q + r"\s*(?:=>|:{1,3}=|[.?+]=|=|:|,)\s*" + Q


# --- checksums ------------------------------------------------------------------------------


def _number(digits: str, alphabet: str) -> int | None:
    n = 0
    for ch in digits:
        i = alphabet.find(ch)
        if i < 0:
            return None
        n = n * len(alphabet) + i
    return n


def base62_crc32_ok(token: str) -> bool:
    """GitHub's classic tokens and npm's: after the prefix, 30 random base62 characters, then the
    CRC32 of those 30 as 6 base62 digits (alphabet 0-9A-Za-z)."""
    if len(token) < 36:
        return False
    return _number(token[-6:], _BASE62) == binascii.crc32(token[-36:-6].encode("ascii", "replace"))


def gitlab_routable_crc_ok(token: str) -> bool:
    """GitLab's routable tokens, ``<prefix><payload>.<version>.<length><crc>``: the payload's
    length as 2 base36 digits, then the CRC32 of everything before it as 7 base36 digits."""
    head, dot, tail = token.rpartition(".")
    if not dot or len(tail) != 9:
        return False
    payload = head.rpartition(".")[0].partition("-")[2]  # the payload may hold `-` itself
    if _number(tail[:2], _BASE36) != len(payload):
        return False
    return _number(tail[2:], _BASE36) == binascii.crc32(token[:-7].encode("ascii", "replace"))


def atlassian_crc_ok(token: str) -> bool:
    """Atlassian's API and access tokens and Bitbucket's app passwords end with the CRC32 of
    everything before it as 8 upper-case hex digits."""
    tail = token[-8:]
    if len(token) <= 8 or any(ch not in "0123456789ABCDEF" for ch in tail):
        return False
    return int(tail, 16) == binascii.crc32(token[:-8].encode("ascii", "replace"))


def _b64decode(value: str) -> bytes | None:
    value = value.replace("-", "+").replace("_", "/").rstrip("=")
    try:
        return binascii.a2b_base64(value + "=" * (-len(value) % 4))
    except binascii.Error:
        return None


# --- accept checks --------------------------------------------------------------------------


def _mixed(value: str) -> bool:
    """Upper case, lower case and digits all present: a generated token, not a word or a name."""
    return any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)


def _body_random(
    prefixes: tuple[str, ...], minimum: float = 3.0, checksum: Callable[[str], bool] | None = None
) -> Accept:
    """Random enough once the fixed prefix is left out (so ``ghp_`` + digits or ``GR1348941`` +
    digits is not), or else carrying a valid checksum."""

    def check(m: re.Match, ctx: Context) -> bool:
        value = secret(m)
        if is_placeholder(value):
            return False
        low = value.lower()
        body = next((value[len(p) :] for p in prefixes if low.startswith(p)), value)
        return looks_random(body, minimum) or (checksum is not None and checksum(value))

    return check


def _github(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    if is_placeholder(value):
        return False
    body = value[4:]
    return looks_random(body, 3.0) or (len(value) == 40 and base62_crc32_ok(value))


def _gitlab(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    if is_placeholder(value):
        return False
    body = value[9:] if value.startswith("GR1348941") else value.partition("-")[2]
    return looks_random(body, 3.0) or gitlab_routable_crc_ok(value)


def _bitbucket_app_password(m: re.Match, ctx: Context) -> bool:
    # `ATBB` also starts Unreal Engine class names (`ATBBaseWeapon`): without the checksum, ask
    # for a generated mix with several digits.
    value = secret(m)
    if is_placeholder(value):
        return False
    if atlassian_crc_ok(value):
        return True
    body = value[4:]
    return looks_random(body, 3.0) and _mixed(body) and sum(c.isdigit() for c in body) >= 3


def _atlassian_context(m: re.Match, ctx: Context) -> bool:
    """A 24-character legacy API token must look generated; a 44-character Data Center personal
    access token decodes to ``<numeric id>:<random bytes>``, or at least looks random."""
    value = secret(m)
    if is_placeholder(value):
        return False
    if len(value) <= 24:
        return looks_random(value, 3.0) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)
    raw = _b64decode(value)
    if raw is not None and re.match(rb"[0-9]{1,20}:", raw) and len(raw) - raw.index(b":") > 8:
        return True
    return looks_random(value, 3.5)


def _gitlab_legacy(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    return not is_placeholder(value) and looks_random(value, 3.0) and _mixed(value)


def _jfrog_reference(m: re.Match, ctx: Context) -> bool:
    value = secret(m)
    if is_placeholder(value):
        return False
    raw = _b64decode(value)
    if raw is not None and re.match(rb"reftkn:[0-9]+:[0-9]+:[\x21-\x7e]{8,}", raw):
        return True
    return looks_random(value[8:], 3.5)


def _docker_config_auth(m: re.Match, ctx: Context) -> bool:
    """``auth`` in a Docker ``config.json`` is base64 of ``user:password``: anything else under
    that common key name is somebody else's field."""
    raw = _b64decode(secret(m))
    if raw is None or not raw.isascii():
        return False
    text = raw.decode("ascii")
    user, colon, password = text.partition(":")
    if not colon or not user or len(password) < 4 or not text.isprintable():
        return False
    return not is_placeholder(password) and not is_placeholder(user)


def _npmrc(m: re.Match, ctx: Context) -> bool:
    # `_auth` is base64 and `_authToken` a token or UUID: letters and digits both, or (base64 of a
    # short password has no digit about once in fifty) both cases over 16 characters; never one word
    value = secret(m)
    if _CONSTANT_NAME.fullmatch(value):
        return False  # `MYTOKEN1`, `NPM_TOKEN`: the name of a value, as npm's own docs write it
    letters_and_digits = any(c.isalpha() for c in value) and any(c.isdigit() for c in value)
    both_cases = len(value) >= 16 and any(c.islower() for c in value) and any(c.isupper() for c in value)
    return not is_placeholder(value) and looks_random(value, 3.0) and (letters_and_digits or both_cases)


_CONSTANT_NAME = lazy_pattern(r"[A-Z][A-Z_]*[0-9]{0,3}")


def _generated(prefix_length: int = 0, minimum: float = 3.5) -> Accept:
    """Random base62 after a short prefix (``cio``) or a vendor's name: upper case, lower case and
    digits all present, which a camelCase identifier and a hex hash are not."""

    def check(m: re.Match, ctx: Context) -> bool:
        value = secret(m)
        body = value[prefix_length:]
        return not is_placeholder(value) and looks_random(body, minimum) and _mixed(body)

    return check


# --- shapes shared by several rules ----------------------------------------------------------

_GITLAB_KINDS = (
    "glpat",  # personal, project and group access tokens
    "gldt",  # deploy tokens
    "glrt",  # runner authentication tokens
    "glrtr",  # runner authentication tokens made by a registration token
    "glptt",  # pipeline trigger tokens
    "glcbt",  # CI/CD job tokens
    "glagent",  # Kubernetes agent tokens
    "gloas",  # OAuth application secrets
    "glimt",  # incoming mail tokens
    "glft",  # feed tokens
    "glsoat",  # SCIM tokens
    "glffct",  # feature flag client tokens
    "glwt",  # workspace tokens
)
# A credential word at the end of a key name; `pat` but not `path`.
_CRED_WORD = r"(?:token|pat(?!h)|password|passwd|pwd|secret|key)[a-z0-9_]{0,12}"


RULES: tuple[Rule, ...] = (
    # --- GitHub ---------------------------------------------------------------------------
    Rule(
        "github-token",
        BLOCK,
        "GitHub token (ghp_, gho_, ghu_, ghs_ incl. the stateless ghs_<app>_<JWT> form, ghr_)",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        (
            r"(?P<s>"
            # installation tokens since 2026: ghs_<app id>_<JWT>, ~520 characters, two dots
            r"ghs_(?:[A-Za-z0-9]{1,20}_)?[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
            # every kind since 2021: 30 random base62 characters and a 6-character CRC32
            r"|gh[pousr]_[A-Za-z0-9]{36,255}"
            r")(?![A-Za-z0-9_])"
        ),
        fingerprint_only=True,
        accept=_github,
        reference=(
            "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/"
            "about-authentication-to-github#githubs-token-formats"
        ),
        prefixed=True,
    ),
    Rule(
        "github-fine-grained-pat",
        BLOCK,
        "GitHub fine-grained personal access token (github_pat_)",
        ("github_pat_",),
        (r"(?P<s>github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_body_random(("github_pat_",)),
        reference=(
            "https://docs.github.com/en/authentication/keeping-your-account-and-data-secure/"
            "about-authentication-to-github#githubs-token-formats"
        ),
        prefixed=True,
    ),
    Rule(
        "github-legacy-token",
        BLOCK,
        "GitHub token of the 40-hex format before 2021, under a GitHub key name, in Github(…) or a github.com URL",
        ("github", "gh_"),
        # A bare 40-hex value is a commit id; only a GitHub credential name, PyGithub's
        # `Github("…")`, or the user part of a github.com URL says it is a token.
        (
            r"(?i)(?:(?:github|(?<![a-z0-9])gh_)[a-z0-9_.-]{0,30}?"
            + _CRED_WORD
            + _ASSIGN
            + r"|github\(\s*(?:[a-z_]{1,20}\s*=\s*)?"
            + Q
            + r"|(?P<url>https?://))"
            r"(?P<s>[0-9a-f]{40})"
            r"(?(url)(?::x-oauth-basic)?@[a-z0-9.-]{0,40}?github(?:usercontent)?\.com|(?![0-9a-z]))"
        ),
        accept=random_enough(3.0),
        reference="https://github.blog/changelog/2021-03-31-authentication-token-format-updates-are-generally-available/",
    ),
    # --- GitLab ---------------------------------------------------------------------------
    Rule(
        "gitlab-token",
        BLOCK,
        "GitLab token (every gl…- prefix, routable forms, GR1348941 runner registration)",
        (*(kind + "-" for kind in _GITLAB_KINDS), "gr1348941"),
        # A self-managed instance may put its own prefix in front (`acme-glpat-`): a `-` before
        # the kind is allowed.
        (
            r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>(?:" + "|".join(_GITLAB_KINDS) + r")-[A-Za-z0-9_-]{20,320}"
            # routable: .<version>[.<payload length>]<crc>, lower-case base36
            r"(?:\.[0-9a-z]{2}(?:\.[0-9a-z]{2})?[0-9a-z]{7})?(?![A-Za-z0-9_-])"
            r"|GR1348941[A-Za-z0-9_-]{20,64}(?![A-Za-z0-9_-]))"
        ),
        fingerprint_only=True,
        accept=_gitlab,
        reference="https://docs.gitlab.com/security/tokens/#token-prefixes",
    ),
    Rule(
        "gitlab-session-cookie",
        BLOCK,
        "GitLab session cookie (_gitlab_session)",
        ("_gitlab_session",),
        (r"(?i)(?<![a-z0-9])_gitlab_session" + _ASSIGN + r"(?P<s>[0-9a-z]{32,64})(?![0-9a-z])"),
        accept=random_enough(3.0),
        reference="gitleaks rule gitlab-session-cookie (cmd/generate/config/rules/gitlab.go)",
    ),
    Rule(
        "gitlab-legacy-token",
        BLOCK,
        "GitLab token of the 20-character format before prefixes, under a GitLab key name",
        ("gitlab",),
        (r"(?i)gitlab[a-z0-9_.-]{0,30}?" + _CRED_WORD + _ASSIGN + r"(?P<s>[A-Za-z0-9_-]{20})(?![A-Za-z0-9_.-])"),
        accept=_gitlab_legacy,
        reference="https://docs.gitlab.com/user/profile/personal_access_tokens/ (trufflehog detector gitlab v1)",
    ),
    # --- Atlassian, Bitbucket -------------------------------------------------------------
    Rule(
        "atlassian-api-token",
        BLOCK,
        "Atlassian API token (ATATT3) or Bitbucket access token (ATCTT3)",
        ("atatt3", "atctt3"),
        (r"(?:(?<![A-Za-z0-9-])|(?<=\\[nrt]))(?P<s>AT[AC]TT3[A-Za-z0-9_-]{100,400}=[A-Za-z0-9]{8})(?![A-Za-z0-9_=-])"),
        fingerprint_only=True,
        accept=_body_random(("atatt3", "atctt3"), checksum=atlassian_crc_ok),
        reference="trufflehog detector atlassian v2 (shape); the 8-hex tail is a CRC32, as CredSweeper checks it",
    ),
    Rule(
        "bitbucket-app-password",
        BLOCK,
        "Bitbucket app password (ATBB)",
        ("atbb",),
        (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>ATBB[A-Za-z0-9]{24,64})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_bitbucket_app_password,
        reference="https://support.atlassian.com/bitbucket-cloud/docs/app-passwords/ (trufflehog bitbucketapppassword)",
    ),
    Rule(
        "atlassian-pat",
        BLOCK,
        "Jira/Confluence/Bitbucket Data Center token (BBDC-, or under an Atlassian key name) or legacy API token",
        ("jira", "confluence", "atlassian", "bitbucket", "bbdc-"),
        (
            r"(?i)(?:(?:jira|confluence|atlassian|bitbucket)[a-z0-9_.-]{0,30}?"
            + _CRED_WORD
            + _ASSIGN
            + r"|(?<![a-z0-9])bbdc-)"
            r"(?P<s>[A-Za-z0-9]{24}(?![A-Za-z0-9+/=_-])|[A-Za-z0-9+/]{40,48}={0,2}(?![A-Za-z0-9+/=_-]))"
        ),
        accept=_atlassian_context,
        reference="https://confluence.atlassian.com/enterprise/using-personal-access-tokens-1026032365.html",
    ),
    # --- Docker Hub -----------------------------------------------------------------------
    Rule(
        "docker-hub-token",
        BLOCK,
        "Docker Hub personal or organization access token (dckr_pat_, dckr_oat_)",
        ("dckr_pat_", "dckr_oat_"),
        (r"(?P<s>dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,64})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=_body_random(("dckr_pat_", "dckr_oat_")),
        reference="https://docs.docker.com/security/access-tokens/ (length: trufflehog detector dockerhub v2)",
        prefixed=True,
    ),
    Rule(
        "docker-config-auth",
        BLOCK,
        'registry credential in a Docker config.json ("auth": base64 of user:password)',
        ("auth",),
        (r"(?i)(?<![a-z0-9_])auth" + Q + r"\s*:\s*" + Q + r"(?P<s>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
        accept=_docker_config_auth,
        anchored=True,
        reference="https://docs.docker.com/reference/cli/docker/login/#credential-stores",
    ),
    # --- JFrog ----------------------------------------------------------------------------
    Rule(
        "jfrog-api-key",
        BLOCK,
        "JFrog Artifactory API key (AKCp)",
        ("akcp",),
        (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>AKCp[A-Za-z0-9]{69})(?![A-Za-z0-9])"),
        fingerprint_only=True,
        accept=_body_random(("akcp",)),
        reference="gitleaks rule jfrog-api-key (73 characters); CredSweeper: base58, 54 bytes",
    ),
    Rule(
        "jfrog-reference-token",
        BLOCK,
        "JFrog reference token (base64 of reftkn:…, cmVmdGtu)",
        ("cmvmdgtu",),
        # base64 of `reftkn:<version>:<expiry>:<random>`: the prefix is as distinctive as a key
        # name beside it would be, and the decoded shape is checked.
        (r"(?:(?<![A-Za-z0-9+/-])|(?<=\\[nrt]))(?P<s>cmVmdGtu[A-Za-z0-9+/]{48,120}={0,2})(?![A-Za-z0-9+/=_-])"),
        fingerprint_only=True,
        accept=_jfrog_reference,
        reference="https://jfrog.com/help/r/jfrog-platform-administration-documentation/access-tokens",
    ),
    Rule(
        "jfrog-identity-token",
        BLOCK,
        "JFrog identity token (64 characters) or API key (73) under a JFrog / Artifactory / Bintray name",
        ("jfrog", "artifactory", "bintray"),
        # no prefix: only after the vendor's name, and mixing cases and digits (an Artifactory
        # checksum is hex, one case)
        (
            r"(?i:jfrog|artifactory|bintray)[\w.-]{0,30}"
            + _ASSIGN
            + r"(?<![A-Za-z0-9])(?P<s>[A-Za-z0-9]{73}|[A-Za-z0-9]{64})(?![A-Za-z0-9_-])"
        ),
        accept=_generated(),
        reference="gitleaks rules jfrog-identity-token and jfrog-api-key (cmd/generate/config/rules/jfrog.go)",
    ),
    # --- npm ------------------------------------------------------------------------------
    Rule(
        "npm-token",
        BLOCK,
        "npm access token (npm_)",
        ("npm_",),
        (r"(?P<s>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_body_random(("npm_",), checksum=base62_crc32_ok),
        reference="https://github.blog/changelog/2021-09-23-npm-has-a-new-access-token-format/",
        prefixed=True,
    ),
    Rule(
        "npmrc-auth",
        BLOCK,
        "registry credential in an .npmrc (_authToken, _auth, _password)",
        ("_auth", "_password"),
        # not an attribute (`self._password = …`, `$this->_auth = …`): a key of its own
        (r"(?i)(?<![A-Za-z0-9_.>$])_(?:authToken|auth|password)[ \t]*=[ \t]*" + Q + r"(?P<s>" + VALUE + r"{8,})"),
        accept=_npmrc,
        reference="https://docs.npmjs.com/cli/configuring-npm/npmrc#auth-related-configuration",
    ),
    # --- PyPI, RubyGems, NuGet, Clojars ---------------------------------------------------
    Rule(
        "pypi-token",
        BLOCK,
        "PyPI or TestPyPI API token (pypi-AgE…)",
        ("pypi-",),
        # a macaroon: `AgEIcHlwaS5vcmc` names pypi.org, `AgENdGVzdC5weXBpLm9yZw` test.pypi.org
        (r"(?P<s>pypi-AgE[A-Za-z0-9_-]{50,1000})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=_body_random(("pypi-",)),
        reference="https://pypi.org/help/#apitoken",
        prefixed=True,
    ),
    Rule(
        "rubygems-api-key",
        BLOCK,
        "RubyGems API key (rubygems_)",
        ("rubygems_",),
        (r"(?P<s>rubygems_[0-9a-f]{48})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_body_random(("rubygems_",)),
        reference="https://guides.rubygems.org/api-key-scopes/ (shape: gitleaks rule rubygems-api-token)",
        prefixed=True,
    ),
    Rule(
        "nuget-api-key",
        BLOCK,
        "NuGet API key (oy2)",
        ("oy2",),
        (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>oy2[a-z0-9]{43})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_body_random(("oy2",)),
        reference="NuGet documents no format; the shape common scanners agree on (oy2 + 43 [a-z0-9])",
    ),
    Rule(
        "clojars-token",
        BLOCK,
        "Clojars deploy token (CLOJARS_)",
        ("clojars_",),
        (r"(?i)(?P<s>CLOJARS_[a-z0-9]{60})(?![a-z0-9_])"),
        fingerprint_only=True,
        accept=_body_random(("clojars_",)),
        reference="gitleaks rule clojars-api-token (cmd/generate/config/rules/clojars.go)",
        prefixed=True,
    ),
    Rule(
        "cratesio-api-token",
        BLOCK,
        "crates.io API token (cio + 32) or trusted-publishing token (cio_tp_)",
        ("cio",),
        # `cio` is short: the exact length, the word boundary and a generated mix carry the rule
        (r"(?:(?<![A-Za-z0-9])|(?<=\\[nrt]))(?P<s>cio(?:_tp_)?[A-Za-z0-9]{32})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_generated(3),
        reference="https://doc.rust-lang.org/cargo/reference/registry-authentication.html; prefix and length "
        "as in crates.io crates_io_database/src/utils/token.rs",
    ),
    # --- SonarQube, SonarCloud ------------------------------------------------------------
    Rule(
        "sonarqube-token",
        BLOCK,
        "SonarQube / SonarCloud user (squ_), project analysis (sqp_) or global analysis (sqa_) token",
        ("squ_", "sqp_", "sqa_"),
        # `sqb_` (a badge token) is public by design: it ships in README badge URLs
        (r"(?P<s>sq[upa]_[0-9a-f]{40})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_body_random(("squ_", "sqp_", "sqa_")),
        reference="https://docs.sonarsource.com/sonarqube-server/latest/user-guide/managing-tokens/ "
        "(prefixes as in SonarQube's TokenGeneratorImpl)",
        prefixed=True,
    ),
    Rule(
        "sonarqube-legacy-token",
        BLOCK,
        "SonarQube / SonarCloud token of the 40-hex format before prefixes (sonar.login, sonar.token, SONAR_TOKEN)",
        ("sonar",),
        # a bare 40-hex value is a commit id: only the scanner's login/token setting says it is a token
        (
            r"(?i)sonar(?:qube|cloud)?[ _.-]?(?:login|(?:auth[_.-]?)?token)[a-z0-9_]{0,12}"
            + _ASSIGN
            + r"(?P<s>[0-9a-f]{40})(?![0-9a-z])"
        ),
        accept=random_enough(3.0),
        reference="https://docs.sonarsource.com/sonarqube-server/latest/analyzing-source-code/"
        "analysis-parameters/ (shape as in Nosey Parker np.sonarqube.1)",
    ),
    # --- Jenkins --------------------------------------------------------------------------
    Rule(
        "jenkins-api-token",
        BLOCK,
        "Jenkins API token (11 + 32 hex, or 32 hex before 2.129) or crumb, under a Jenkins name",
        ("jenkins",),
        (
            r"(?i)jenkins[a-z0-9_.-]{0,30}?(?:" + _CRED_WORD + r"|crumb[a-z0-9_]{0,12}|pass)"
            r"(?![a-z0-9_.-])" + _ASSIGN + r"(?P<s>[0-9a-f]{64}|(?:11)?[0-9a-f]{32})(?![0-9a-z])"
        ),
        accept=random_enough(3.0),
        reference="https://www.jenkins.io/blog/2018/07/02/new-api-token-system/; "
        "https://www.jenkins.io/doc/book/security/csrf-protection/ (shape as in Nosey Parker np.jenkins.1)",
    ),
    # --- Postman, Sourcegraph, StackHawk, Code Climate, Sauce Labs ------------------------
    Rule(
        "postman-api-key",
        BLOCK,
        "Postman API key (PMAK-)",
        ("pmak-",),
        (r"(?P<s>PMAK-[0-9a-f]{24}-[0-9a-f]{34})(?![A-Za-z0-9_-])"),
        fingerprint_only=True,
        accept=_body_random(("pmak-",)),
        reference="https://learning.postman.com/docs/developer/postman-api/authentication/ "
        "(shape as in gitleaks postman-api-token)",
        prefixed=True,
    ),
    Rule(
        "sourcegraph-access-token",
        BLOCK,
        "Sourcegraph access token (sgp_ + 40 hex, with an instance id or local_)",
        ("sgp_",),
        (r"(?P<s>sgp_(?:[0-9a-f]{16}_|local_)?[0-9a-f]{40})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_body_random(("sgp_",)),
        reference="https://sourcegraph.com/docs/cli/how-tos/creating_an_access_token "
        "(format: sourcegraph internal/accesstoken/personal_access_token.go)",
        prefixed=True,
    ),
    Rule(
        "stackhawk-api-key",
        BLOCK,
        "StackHawk API key (hawk.<id>.<secret>)",
        ("hawk.",),
        (r"(?:(?<![A-Za-z0-9.-])|(?<=\\[nrt]))(?P<s>hawk\.[A-Za-z0-9_-]{20}\.[A-Za-z0-9_-]{20})(?![A-Za-z0-9_.-])"),
        fingerprint_only=True,
        accept=_generated(5),
        reference="https://docs.stackhawk.com/apidocs.html (shape as in gitleaks stackhawk-api-key)",
    ),
    Rule(
        "codeclimate-reporter-id",
        BLOCK,
        "Code Climate test reporter id or repository token (64 hex) under its setting name",
        ("cc_test_reporter_id", "codeclimate"),
        (
            r"(?i)(?:cc_test_reporter_id|codeclimate[a-z0-9_.-]{0,20}?(?:token|id|key))[a-z0-9_]{0,12}"
            + _ASSIGN
            + r"(?P<s>[0-9a-f]{64})(?![0-9a-z])"
        ),
        accept=random_enough(3.0),
        reference="https://docs.codeclimate.com/docs/finding-your-test-coverage-token "
        "(shape as in Nosey Parker np.codeclimate.1)",
    ),
    Rule(
        "saucelabs-access-key",
        BLOCK,
        "Sauce Labs access key (a UUID) under a Sauce Labs name",
        ("sauce",),
        (
            r"(?i)sauce[a-z0-9_.-]{0,20}?(?:access[_.-]?key|key|token|secret)[a-z0-9_]{0,12}"
            + _ASSIGN
            + r"(?P<s>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-z-])"
        ),
        accept=random_enough(2.8),
        reference="https://docs.saucelabs.com/basics/acct-team-mgmt/managing-user-info/#access-key "
        "(shape as in trufflehog saucelabs)",
    ),
    # --- Buildkite, CircleCI, Snyk, Prefect -----------------------------------------------
    Rule(
        "buildkite-api-token",
        BLOCK,
        "Buildkite API access token (bkua_)",
        ("bkua_",),
        (r"(?P<s>bkua_[a-z0-9]{40})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=token(3.0, skip=5),
        reference="https://buildkite.com/docs/apis/managing-api-tokens (shape as in trufflehog buildkite v2)",
        prefixed=True,
    ),
    Rule(
        "circleci-token",
        BLOCK,
        "CircleCI personal (CCIPAT_) or project (CCIPRJ_) API token",
        ("ccipat_", "cciprj_"),
        # <base58 UUID>_<40 hex>
        (r"(?P<s>CCIP(?:AT|RJ)_[1-9A-HJ-NP-Za-km-z]{21,22}_[0-9a-f]{40})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=last_part("_", 3.0),
        reference="https://circleci.com/changelog/new-format-for-api-access-tokens/ (trufflehog circleci v2: "
        "the same shape)",
        prefixed=True,
    ),
    Rule(
        "circleci-legacy-token",
        BLOCK,
        "CircleCI API token of the 40-hex format before prefixes, under a CircleCI token name or Circle-Token",
        ("circle",),
        # a bare 40-hex value is a commit id: only CircleCI's token names (and its header) say otherwise
        (
            r"(?i)(?<![a-z0-9])circle(?:ci)?[_.-]?(?:api[_.-]?|project[_.-]?|personal[_.-]?)?"
            r"(?:token|key|secret)[a-z0-9_]{0,12}" + _ASSIGN + r"(?P<s>[0-9a-f]{40})(?![0-9a-z])"
        ),
        accept=token(3.0),
        anchored=True,  # `circle` is common in drawing code: tried only where it starts
        reference="https://circleci.com/docs/managing-api-tokens/ (shape as in Kingfisher kingfisher.circleci.2)",
    ),
    Rule(
        "snyk-api-token",
        BLOCK,
        "Snyk API token (a UUID) under a Snyk token name or after snyk auth",
        ("snyk",),
        (
            r"(?i)(?:(?<![a-z0-9])snyk[_.-]?(?:(?:api|oauth|auth)[_.-]?)?(?:key|token)[a-z0-9_]{0,12}"
            + _ASSIGN
            + r"|(?<![a-z0-9])snyk[ \t]+auth[ \t]+)"
            r"(?P<s>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-z-])"
        ),
        accept=token(2.8),
        anchored=True,
        reference="https://docs.snyk.io/snyk-api/authentication-for-api (shape as in gitleaks snyk-api-token and "
        "trufflehog snykkey)",
    ),
    Rule(
        "prefect-api-key",
        BLOCK,
        "Prefect Cloud API key (pnu_)",
        ("pnu_",),
        (r"(?P<s>pnu_[A-Za-z0-9]{36})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=_generated(4),
        reference="https://docs.prefect.io/v3/manage/cloud/manage-users/api-keys (shape as in gitleaks prefect-api-"
        "token and trufflehog prefect)",
        prefixed=True,
    ),
)

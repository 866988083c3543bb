"""Cloud providers: AWS, Google, Azure (and Azure DevOps), Alibaba, DigitalOcean, Heroku, HashiCorp
Vault and Terraform Cloud, Databricks, Cloudflare, Vercel, Supabase, Doppler, Dynatrace, Fly.io,
Aiven, Pulumi, OpenShift, IBM Cloud and SoftLayer, PlanetScale, Netlify, Tailscale and Confluent.

A format with a fixed prefix is matched wherever it occurs; one without (an AWS secret key, an
Azure storage key, a Heroku API key) only after a name that says whose it is. Either way the value
must look drawn at random, and a value the vendor publishes for everyone (an emulator's key, the
example in the documentation) is not a finding.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise

from loopx_git.safety.rule import BLOCK, Context, Q, Rule, is_placeholder, lazy_pattern, looks_random, secret

Accept = Callable[[re.Match, Context], bool]

# A key's name, then `=`, `:`, `=>`, `:=` (`::=`, `:::=` of make), `.=` (PHP), `?=`/`+=` (make,
# shell), the `>` of an XML element or the ` value=` of .NET's `<add key="…" value="…"/>`, each
# side maybe quoted; optional where a space alone can separate them (`aws configure set
# aws_secret_access_key VALUE`).
_SEP = r"(?:=>|:{1,3}=|[.?+]=|=|:|>|[ \t]value[ \t]*=)"
_SET = Q + r"[ \t]*" + _SEP + r"[ \t]*" + Q
_SET_OPT = Q + r"[ \t]*" + _SEP + r"?[ \t]*" + Q
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


def starts_after(alphabet: str) -> str:
    """A token starts here: the character before is not of its ``alphabet`` (a regex class body),
    or is the letter of a ``\\n``, ``\\r`` or ``\\t`` escape (a value on the next line of a JSON or
    .env string)."""
    return rf"(?:(?<![{alphabet}])|(?<=\\[nrt]))"


def after_id(alphabet: str) -> str:
    """Between a key id and the secret written after it: the rest of the id's line and at most the
    start of the next, 40 characters each (`AKIA…,secret` of the console's credentials.csv,
    `AKIA…\\nSecret: secret`, a JSON member name); the secret then starts a token of ``alphabet``."""
    return r"(?![A-Za-z0-9])[^\n]{0,40}?(?:\n[^\n]{0,40}?)?" + starts_after(alphabet)


# sha256[:16] of values their vendor publishes for everyone: the Azurite and Cosmos DB emulator
# keys, the Dynatrace, Stripe and Kolide documentation examples, the Supabase CLI's local secret key,
# the sample API keys of firebase-android-sdk (the list gitleaks allows) and the two example UUIDs
# of RFC 4122 and Wikipedia that documentation writes for any UUID-shaped key. Hashes, not the
# values, so that this file holds no secret-shaped literal.
_PUBLISHED = frozenset(
    {
        "0011cc25eb432071",
        "aa6547439583c3a2",
        "9154e2e6fbfb1e50",
        "c85debb55f2f204d",
        "2cafc0970149a84f",
        "f2d6ca16515033e5",
        "7e8de44ea9ecf6d5",
        "f56e323494a6ffc2",
        "2037abcaffb2b777",
        "3f370c9dd8225c63",
        "e4a5542bb7fd7b67",
        "a19f89ab3555eac1",
        "0b476bdf9acf2123",
        "eb540d2b6ee2a0a4",
        "37f8f09bdf12c2f2",
        "8731261cb72d8626",
        "49f777db995e8260",
        "27a9a42931dff7eb",
        "dc0fcf046c61640c",
        "4c98242dcadc8b29",
        "ea9bb1082cf95663",
        "3a8b61d0f636b007",
        "a6c814bc555ae62c",
        "db428e261c42c645",
        "986c0dc956dc822b",
        "a3a9e1ed9732cab2",
    }
)


# --- shared checks (payment.py uses them too) -----------------------------------------------


def published(value: str) -> bool:
    """A value the vendor itself publishes (see ``_PUBLISHED``): public knowledge, not a secret."""
    import hashlib  # on a match only: the hooks' start-up stays lean

    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:16] in _PUBLISHED


def typed_run(value: str, run: int = 6) -> bool:
    """``abcdef``, ``123456``, ``FEDCBA``: a run a person typed. Six in a row come up in a random
    base62 token about once in a billion positions."""
    up = down = 1
    low = value.lower()
    for a, b in pairwise(low):
        step = ord(b) - ord(a) if a.isalnum() and b.isalnum() else 0
        up = up + 1 if step == 1 else 1
        down = down + 1 if step == -1 else 1
        if up >= run or down >= run:
            return True
    return False


_REPEATED_BLOCK = lazy_pattern(r"(.{4,16})\1\1")


def repeated_block(value: str) -> bool:
    """``a1b2c3d4e5f6a1b2c3d4e5f6…``, ``asdfasdfasdf``: a block of 4 to 16 characters, not all one
    character, three times in a row, as people fill a placeholder. Random characters do so about
    once in 10^9 values (hex, 4-character blocks); a format's fixed run of one character (the
    `AAAAAAAAAA` inside a Dropbox token) is not such a block."""
    return any(len(set(m.group(1))) > 1 for m in _REPEATED_BLOCK.finditer(value))


def classes(value: str) -> int:
    """How many of lower case, upper case and digits ``value`` holds."""
    return sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value)))


def token(minimum: float, *, skip: int = 0, kinds: int = 1) -> Accept:
    """The secret part, less its first ``skip`` characters (a fixed prefix, which adds nothing
    random), looks random: entropy at least ``minimum`` bits a character, at least ``kinds`` of
    lower/upper/digits, no typed run or (in a key short enough to be typed, up to 128 characters)
    repeated block; and it is neither a placeholder nor a published value."""

    def check(m: re.Match, ctx: Context) -> bool:
        value = secret(m)
        body = value[skip:]
        if is_placeholder(value) or published(value) or typed_run(body):
            return False
        if len(body) <= 128 and repeated_block(body):
            return False
        if code_name(body):
            return False
        return classes(body) >= kinds and looks_random(body, minimum)

    return check


_PARTS = lazy_pattern(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def code_name(body: str) -> bool:
    """Words joined by ``_`` or ``-`` (``layers_DenseVariational_v2_kernel``): an identifier that
    happens to start with a vendor's prefix (``tfp_`` is also TensorFlow Probability's), not a
    token. Most of its letters are in words of four or more; a random body's letters are in short
    fragments (its case changes every few characters). Measured: 0 in 50,000 random mixed-case
    bodies and 63 in 50,000 random lower-case ones with underscores read as a name; 8 of 10
    TensorFlow Probability and Android names do."""
    if body.count("_") + body.count("-") < 2:
        return False
    from loopx_git.safety.catalog.generic import word_like  # shared; generic.py imports nothing of this module

    # a run of hex letters (`fefc` in a UUID) is no word, however word-like it reads
    words = [p for p in _PARTS.findall(body) if len(p) >= 4 and p.lower().strip("abcdef") and word_like(p.lower())]
    letters = sum(c.isalpha() for c in body)
    return len(words) >= 2 and sum(map(len, words)) >= 0.8 * letters


def last_part(separator: str, minimum: float, *, kinds: int = 1) -> Accept:
    """Like ``token``, for a format whose secret is what follows its last ``separator``
    (`tskey-auth-<id>-<secret>`, `api_live.<id>.<secret>`): the id before it names the key and
    adds nothing random."""

    def check(m: re.Match, ctx: Context) -> bool:
        return token(minimum, skip=secret(m).rfind(separator) + 1, kinds=kinds)(m, ctx)

    return check


# --- AWS ------------------------------------------------------------------------------------

_AWS_KEY_ID = r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}"


_RANDOM_B64 = token(3.5)
# sha256[:16] of the first 30 characters of the secret key AWS's documentation shows: a copy whose
# last ten are rewritten (`…SAMPLEKEY`, `…TESTKEY`, `…FAKEKEY`) is still that public example
_AWS_DOC_SECRET_HEAD = "0ef9259701f6faa1"


def _aws_doc_variant(value: str) -> bool:
    import hashlib  # on a match only: the hooks' start-up stays lean

    return hashlib.sha256(value[:30].encode("utf-8", "surrogatepass")).hexdigest()[:16] == _AWS_DOC_SECRET_HEAD


def _aws_secret(m: re.Match, ctx: Context) -> bool:
    # 40 base64 characters drawn at random hold both cases and a digit or `/`/`+`; a SHA-1 in hex
    # or a word-like name does not.
    value = secret(m)
    mixed = any(c.islower() for c in value) and any(c.isupper() for c in value)
    return mixed and any(not c.isalpha() for c in value) and not _aws_doc_variant(value) and _RANDOM_B64(m, ctx)


# --- Azure ----------------------------------------------------------------------------------

_SAS_PARAM = r"(?:sv|ss|srt|sp|se|st|spr|sr|si|sip|skn|skoid|sktid|skt|ske|sks|skv|sdd|saoid|suoid|scid)"
_SAS_VERSION = lazy_pattern(r"(?<![A-Za-z0-9_-])s[ve]=")
# between the `;`-separated parts of a connection string: nothing, or spaces and a line break
# (also one written as a `\n` escape inside a string literal)
_GAP = r"(?:[ \t]|\r?\n|\\[rn]){0,6}"


def _sas(m: re.Match, ctx: Context) -> bool:
    """A signature with a version (`sv=`) or an expiry (`se=`) on its line: a SAS token, not any
    URL's `sig=`."""
    text = m.string
    begin = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    line = text[begin : end if end >= 0 else len(text)]
    return bool(_SAS_VERSION.search(line)) and _RANDOM_B64(m, ctx)


# --- HashiCorp ------------------------------------------------------------------------------

_VAULT_NAMED = token(3.0, skip=2, kinds=2)
_VAULT_BARE = token(3.0, skip=2, kinds=3)


def _vault_legacy(m: re.Match, ctx: Context) -> bool:
    """After a Vault name, a random-looking value; after a bare `token`, one that also mixes
    cases and digits (an `s.` + 24 letters is as likely a field access)."""
    named = "vault" in m.group(0)[: m.start("s") - m.start()].lower()
    return (_VAULT_NAMED if named else _VAULT_BARE)(m, ctx)


# --- Cloudflare -----------------------------------------------------------------------------

# `CLOUDFLARE_API_TOKEN`, `cloudflare: …`, `CF_API_TOKEN`, `cf-auth-key`: a name that says
# Cloudflare (`cf` only together with key or token).
_CLOUDFLARE_NAME = (
    r"(?i:cloudflare[\w.-]{0,30}(?![\w.-])"
    r"|(?<![A-Za-z0-9])cf[\w.-]{0,20}?(?:token|key|secret|auth)[\w.-]{0,10}(?![\w.-]))"
)


def _cloudflare(prefixes: tuple[str, ...]) -> Accept:
    """A scannable token (`cfut_` …) must have its full shape; a legacy one only looks random."""
    random = token(3.0)

    def check(m: re.Match, ctx: Context) -> bool:
        value = secret(m)
        if value.startswith(prefixes) and len(value) != len(prefixes[0]) + 48:
            return False
        return random(m, ctx)

    return check


# --- OpenShift ------------------------------------------------------------------------------

_RESOURCE_NAME = lazy_pattern(r"(?i)\bname\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?$")


def _openshift(m: re.Match, ctx: Context) -> bool:
    """An OAuthAccessToken resource is named ``sha256~`` + the base64url SHA-256 of its token, the
    same shape as the token: a `name:` is the hash, which lets nobody in."""
    text = m.string
    before = text[text.rfind("\n", 0, m.start("s")) + 1 : m.start("s")]
    return not _RESOURCE_NAME.search(before) and token(3.5, skip=7)(m, ctx)


RULES: tuple[Rule, ...] = (
    # --- AWS --------------------------------------------------------------------------------
    Rule(
        "aws-access-key-id",
        BLOCK,
        "AWS access key id (long-term, temporary, bearer or context credential)",
        ("akia", "asia", "abia", "acca", "a3t"),
        starts_after("A-Za-z0-9") + r"(?P<s>" + _AWS_KEY_ID + r")(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(2.5, skip=4),
        reference="https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids",
    ),
    Rule(
        "aws-secret-access-key",
        BLOCK,
        "AWS secret access key: after a name of it, or after an access key id",
        ("secret", "akia", "asia", "abia", "acca", "a3t"),
        (
            r"(?:(?i:(?:aws|amazon)[\w.-]{0,24}?secret[\w.-]{0,24}(?![\w.-])|secret[ _.-]?access[ _.-]?key(?:[ _.-]?id)?)"
            r"(?:[ \t]*\[[^\]\n]{0,30}\])?"  # the `[None]` of `aws configure`'s prompt
            + _SET_OPT
            + r"|"
            + starts_after("A-Za-z0-9")
            + _AWS_KEY_ID
            + after_id("A-Za-z0-9/+")
            + r")"
            + starts_after("A-Za-z0-9/+")
            + r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        accept=_aws_secret,
        span=200,
        reference="https://docs.aws.amazon.com/IAM/latest/UserGuide/id_credentials_access-keys.html",
    ),
    Rule(
        "aws-session-token",
        BLOCK,
        "AWS session token (STS temporary credential)",
        ("session", "security", "ojb3jpz2lux2vj", "ogzxivyxdz"),
        (
            # after `aws_session_token`, `SessionToken`, `x-amz-security-token` …, or bare with the
            # serialised header every STS token starts with (`IQoJb3JpZ2luX2Vj`: "origin_ec";
            # `FwoGZXIvYXdz`: "er/aws" of the older format)
            r"(?:(?i:(?:session|security)[_.-]?token)"
            + _SET_OPT
            + r"|(?=[A-Za-z0-9/+]{2}(?:oJb3JpZ2luX2Vj|oGZXIvYXdz)))"
            + starts_after("A-Za-z0-9/+")
            + r"(?P<s>[A-Za-z0-9/+]{100,}={0,2})(?![A-Za-z0-9/+=])"
        ),
        accept=token(4.0),
        reference="https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html; "
        "header markers as in trufflehog's aws session_keys detector",
    ),
    Rule(
        "amazon-mws-auth-token",
        BLOCK,
        "Amazon Marketplace Web Service (MWS) authorisation token (amzn.mws. + UUID)",
        ("amzn.mws.",),
        r"(?P<s>amzn\.mws\." + _UUID + r")(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.0, skip=9),
        reference="https://docs.developer.amazonservices.com/en_US/dev_guide/DG_SendingRequestsToMWS.html "
        "(MWSAuthToken); shape as in gitleaks and Nosey Parker amazon-mws rules",
        prefixed=True,
    ),
    # --- Google -----------------------------------------------------------------------------
    Rule(
        "google-api-key",
        BLOCK,
        "Google API key",
        ("aiza",),
        # not followed by `=` (or `%3D`): 39 characters then base64 padding are the end of a base64 blob
        starts_after("A-Za-z0-9-") + r"(?P<s>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_=-]|%3[Dd])",
        fingerprint_only=True,
        accept=token(3.0, skip=4),
        reference="https://cloud.google.com/docs/authentication/api-keys",
    ),
    Rule(
        "google-oauth-client-secret",
        BLOCK,
        "Google OAuth client secret",
        ("gocspx-",),
        r"(?P<s>GOCSPX-[A-Za-z0-9_-]{28})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.0, skip=7),
        reference="https://developers.google.com/identity/protocols/oauth2; shape as in Nosey Parker np.google.2",
        prefixed=True,
    ),
    Rule(
        "google-oauth-legacy-client-secret",
        BLOCK,
        "OAuth client secret of Google's format before GOCSPX- (24 characters) under a client secret name",
        ("client_secret", "clientsecret", "client-secret", "client.secret"),
        (
            # no prefix: only as the value of `client_secret` / `clientSecret`, and random-looking with
            # upper and lower case and digits (a passphrase or a word-like name has fewer)
            r"(?i:(?<![A-Za-z0-9])client[_.-]?secret)"
            + _SET
            + starts_after("A-Za-z0-9_-")
            # the exact length ends the value: not where a split literal or a continued line goes on
            # (a line's match window ends before its newline: `\` then the window's end is a
            # continued line too)
            + r"(?P<s>[A-Za-z0-9_-]{24})(?![A-Za-z0-9_-])(?![\"'`][ \t]*\+|\\(?:\r?\n|$))"
        ),
        accept=token(3.5, kinds=3),
        reference="https://developers.google.com/identity/protocols/oauth2; shape as in Nosey Parker np.google.3",
    ),
    Rule(
        "google-oauth-access-token",
        BLOCK,
        "Google OAuth access token",
        ("ya29.",),
        r"(?P<s>ya29\.[A-Za-z0-9_.-]{29,}[A-Za-z0-9_-])(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=5),
        reference="https://developers.google.com/identity/protocols/oauth2",
        prefixed=True,
    ),
    Rule(
        "google-oauth-refresh-token",
        BLOCK,
        "Google OAuth refresh token",
        ("1//0",),
        starts_after("A-Za-z0-9/-") + r"(?P<s>1//0[A-Za-z0-9_-]{40,})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=4),
        reference="https://developers.google.com/identity/protocols/oauth2",
    ),
    Rule(
        "google-express-mode-api-key",
        BLOCK,
        "Google Cloud API key bound to a service account (Vertex AI express mode, AQ.Ab8R…)",
        ("aq.ab8r",),
        r"(?P<s>AQ\.Ab8R[A-Za-z0-9_-]{46})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=7, kinds=2),
        reference="https://cloud.google.com/vertex-ai/generative-ai/docs/start/express-mode/overview; shape as "
        "in Google's osv-scalibr veles/secrets/gcpexpressmode and Kingfisher kingfisher.gcp.4",
        prefixed=True,
    ),
    Rule(
        "gcp-service-account",
        BLOCK,
        "Google Cloud service-account key file (its private_key_id)",
        ("service_account", "private_key_id"),
        (
            # the id of a key file, when the same JSON says `"type": "service_account"`, before or after
            r'(?:\\?"type\\?"\s*:\s*\\?"service_account\\?"[\s\S]{0,4000}?(?=\\?"private_key_id\\?")'
            r'|(?=\\?"private_key_id\\?"\s*:\s*\\?"[0-9a-f]{40}\\?"[\s\S]{0,600}?'
            r'\\?"type\\?"\s*:\s*\\?"service_account\\?"))'
            r'\\?"private_key_id\\?"\s*:\s*\\?"(?P<s>[0-9a-f]{40})(?![0-9a-f])'
        ),
        accept=token(3.0),
        span=4000,
        reference="https://cloud.google.com/iam/docs/keys-create-delete",
    ),
    # --- Azure ------------------------------------------------------------------------------
    Rule(
        "azure-client-secret",
        BLOCK,
        "Azure AD / Entra ID client secret",
        ("q~",),
        starts_after("A-Za-z0-9_~.-") + r"(?P<s>[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])",
        fingerprint_only=True,
        accept=token(3.5),
        reference="https://learn.microsoft.com/en-us/purview/sit-defn-azure-ad-client-secret; "
        "shape as in gitleaks azure-ad-client-secret",
    ),
    Rule(
        "azure-connection-string",
        BLOCK,
        "Azure connection string key (Storage, Service Bus, Event Hubs, IoT Hub, Cosmos DB, SignalR, App Configuration)",
        ("endpoint", "hostname="),
        (
            # the parts may go on over a few lines (`…;AccountName=acct;` + newline + `AccountKey=…`);
            # App Configuration names its key `Secret` (`Endpoint=https://….azconfig.io;Id=…;Secret=…`)
            r"(?i:(?:DefaultEndpointsProtocol|AccountEndpoint|Endpoint|HostName)=[^\s;\"'\\]{1,200};"
            + _GAP
            + r"(?:[^\s;\"'\\]{1,200};"
            + _GAP
            + r"){0,6}?"
            r"(?:AccountKey|SharedAccessKey|AccessKey|Secret)=)"
            r"(?P<s>[A-Za-z0-9+/]{20,}={0,2})(?![A-Za-z0-9+/=])"
        ),
        accept=token(3.5),
        span=600,
        reference="https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string; "
        "https://learn.microsoft.com/en-us/azure/azure-app-configuration/howto-best-practices",
    ),
    Rule(
        "azure-storage-key",
        BLOCK,
        "Azure storage account key",
        (
            "accountkey",
            "account_key",
            "account-key",
            "account.key",
            "azure",
            "storage",
            "cosmos",
            "primary",
            "secondary",
        ),
        (
            # `AccountKey`, `AZURE_STORAGE_KEY`, `--account-key`, Cosmos DB's `primaryMasterKey`
            r"(?i:account[_.-]?key|(?:azure|storage|cosmos|primary|secondary)[\w.-]{0,30}?key)"
            + _SET_OPT
            + starts_after("A-Za-z0-9+/")
            + r"(?P<s>[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])"
        ),
        accept=token(4.0),
        reference="https://learn.microsoft.com/en-us/azure/storage/common/storage-account-keys-manage",
    ),
    Rule(
        "azure-sas-token",
        BLOCK,
        "Azure shared access signature (sig= of a SAS URL or token)",
        ("sig=",),
        (
            r"(?<![A-Za-z0-9_-])" + _SAS_PARAM + r"=[^\s\"'<>&#]{0,200}"
            r"(?:&(?:amp;)?[A-Za-z-]{1,20}=[^\s\"'<>&#]{0,200}){0,16}?"
            # a storage SAS signs in base64 (percent-encoded), a Logic Apps / Power Automate trigger
            # URL (the workflow webhooks of Teams) in base64url
            r"&(?:amp;)?sig=(?P<s>[A-Za-z0-9%+/=_-]{30,200})"
        ),
        accept=_sas,
        reference="https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas",
    ),
    Rule(
        "azure-openai-api-key",
        BLOCK,
        "Azure OpenAI / Azure AI services key (32 hex) under an Azure OpenAI name or in AzureOpenAI(api_key=…)",
        ("azure",),
        (
            r"(?i:azure[_.-]?(?:openai|oai|ai[_.-]?services|cognitive[_.-]?services?)[\w.-]{0,20}?"
            r"(?:key|secret|token)[\w.-]{0,12}(?![\w.-])"
            + _SET
            + r"|azureopenai\([^()]{0,200}?(?<![\w.-])api_key[ \t]*=[ \t]*"
            + Q
            + r")"
            + starts_after("A-Za-z0-9")
            + r"(?P<s>[0-9a-f]{32})(?![A-Za-z0-9])"
        ),
        accept=token(3.0),
        # `azure` is on many lines of an Azure project: tried only where the name starts
        anchored=True,
        reference="https://learn.microsoft.com/en-us/azure/ai-services/openai/reference#authentication; shape as "
        "in trufflehog azure_openai",
    ),
    Rule(
        "azure-devops-pat",
        BLOCK,
        "Azure DevOps personal access token (84 characters, AZDO at 77-80)",
        ("azdo",),
        starts_after("A-Za-z0-9") + r"(?P<s>[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(3.5, kinds=2),
        reference="https://learn.microsoft.com/en-us/purview/sit-defn-azure-devops-personal-access-token",
    ),
    Rule(
        "azure-devops-legacy-pat",
        BLOCK,
        "Azure DevOps personal access token of the 52-character format, under an Azure DevOps / ADO / VSTS name",
        ("azure_devops", "azure-devops", "azuredevops", "azure.devops", "ado_", "ado-", "vsts", "azdo"),
        (
            # base32 (a-z, 2-7) with no prefix: only as the value of a name that says whose it is
            r"(?i:(?:azure[_.-]?devops|(?<![A-Za-z0-9])(?:ado|vsts|azdo))[\w.-]{0,20}?"
            r"(?:pat|token|key|secret|pass(?:word)?)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + starts_after("A-Za-z0-9")
            + r"(?P<s>[a-z2-7]{52})(?![A-Za-z0-9])"
        ),
        accept=token(3.5, kinds=2),
        anchored=True,
        reference="https://learn.microsoft.com/en-us/azure/devops/organizations/accounts/use-personal-access-tokens-"
        "to-authenticate; shape as in trufflehog azuredevopspersonalaccesstoken",
    ),
    # --- Alibaba Cloud ----------------------------------------------------------------------
    Rule(
        "alibaba-access-key-id",
        BLOCK,
        "Alibaba Cloud AccessKey ID",
        ("ltai",),
        starts_after("A-Za-z0-9") + r"(?P<s>LTAI[A-Za-z0-9]{12,20})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(2.5, skip=4),
        reference="https://www.alibabacloud.com/help/en/ram/user-guide/create-an-accesskey-pair; "
        "shape as in gitleaks alibaba-access-key-id",
    ),
    Rule(
        "alibaba-secret-key",
        BLOCK,
        "Alibaba Cloud AccessKey secret: after a name of it, or after an AccessKey ID",
        ("alibaba", "aliyun", "alicloud", "accesskeysecret", "access_key_secret", "access-key-secret", "ltai"),
        (
            r"(?:(?i:(?:alibaba|aliyun|alicloud)[\w.-]{0,30}?secret[\w.-]{0,12}(?![\w.-])|access[_-]?key[_-]?secret)"
            + _SET_OPT
            + r"|"
            + starts_after("A-Za-z0-9")
            + r"LTAI[A-Za-z0-9]{12,20}"
            + after_id("A-Za-z0-9")
            + r")"
            + starts_after("A-Za-z0-9")
            + r"(?P<s>[A-Za-z0-9]{30})(?![A-Za-z0-9])"
        ),
        accept=token(3.3, kinds=2),
        span=200,
        reference="https://www.alibabacloud.com/help/en/ram/user-guide/create-an-accesskey-pair; "
        "shape as in gitleaks alibaba-secret-key",
    ),
    # --- DigitalOcean -----------------------------------------------------------------------
    Rule(
        "digitalocean-token",
        BLOCK,
        "DigitalOcean personal access, OAuth or refresh token",
        ("dop_v1_", "doo_v1_", "dor_v1_"),
        r"(?P<s>do[por]_v1_[a-f0-9]{64})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(3.0, skip=7),
        reference="https://docs.digitalocean.com/reference/api/create-personal-access-token/; "
        "prefixes as in gitleaks digitalocean-pat/-access-token/-refresh-token",
        prefixed=True,
    ),
    # --- Heroku -----------------------------------------------------------------------------
    Rule(
        "heroku-api-key",
        BLOCK,
        "Heroku API key (a UUID named as Heroku's, or the api.heroku.com password of a .netrc)",
        ("heroku",),
        (
            r"(?:(?i:heroku[\w.-]{0,30}?(?:key|token|secret|pass(?:word)?|auth)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + r"|(?i:machine[ \t]+(?:api|git)\.heroku\.com)(?:[^\n]{0,80}\n){0,2}?[^\n]{0,80}?(?<![A-Za-z])password[ \t]+)"
            + starts_after("0-9A-Za-z-")
            + r"(?P<s>"
            + _UUID
            + r")(?![0-9A-Za-z-])"
        ),
        accept=token(2.8),
        span=300,
        reference="https://devcenter.heroku.com/articles/authentication; shape as in gitleaks heroku-api-key",
    ),
    Rule(
        "heroku-api-token",
        BLOCK,
        "Heroku API token (HRKU- prefixed)",
        ("hrku-",),
        r"(?P<s>HRKU-[A-Za-z0-9_-]{60})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=5),
        reference="https://devcenter.heroku.com/articles/authentication; shape as in gitleaks heroku-api-key-v2",
        prefixed=True,
    ),
    # --- HashiCorp --------------------------------------------------------------------------
    Rule(
        "vault-token",
        BLOCK,
        "HashiCorp Vault service, batch or recovery token",
        ("hvs.", "hvb.", "hvr."),
        r"(?P<s>hv[sbr]\.[A-Za-z0-9_-]{80,})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=4),
        reference="https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes",
        prefixed=True,
    ),
    Rule(
        "vault-legacy-token",
        BLOCK,
        "HashiCorp Vault service token of the pre-1.10 format (s. + 24), after a Vault or token name",
        ("vault", "token"),
        (
            r"(?i:vault[\w.-]{0,20}?token(?![\w.-])|vault[ \t]+login(?:[ \t]+-{1,2}[A-Za-z][\w-]*(?:=\S*)?)*"
            r"|(?<![A-Za-z0-9])token(?![\w.-]))"
            + _SET_OPT
            + starts_after("A-Za-z0-9.")
            + r"(?P<s>s\.[A-Za-z0-9]{24})(?![A-Za-z0-9])"
        ),
        accept=_vault_legacy,
        reference="https://developer.hashicorp.com/vault/docs/concepts/tokens#token-prefixes; "
        "shape as in gitleaks vault-service-token",
    ),
    Rule(
        "terraform-api-token",
        BLOCK,
        "Terraform Cloud / Enterprise API token",
        ("atlasv1",),
        starts_after("A-Za-z0-9") + r"(?P<s>[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70})(?![A-Za-z0-9_=-])",
        fingerprint_only=True,
        accept=token(3.5),
        reference="https://developer.hashicorp.com/terraform/cloud-docs/users-teams-organizations/api-tokens; "
        "shape as in gitleaks hashicorp-tf-api-token",
    ),
    # --- Databricks -------------------------------------------------------------------------
    Rule(
        "databricks-token",
        BLOCK,
        "Databricks personal access token",
        ("dapi",),
        starts_after("A-Za-z0-9") + r"(?P<s>dapi[a-h0-9]{32}(?:-\d)?)(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(3.0, skip=4),
        reference="https://docs.databricks.com/en/dev-tools/auth/pat.html; shape as in gitleaks databricks-api-token",
    ),
    # --- Cloudflare -------------------------------------------------------------------------
    Rule(
        "cloudflare-api-token",
        BLOCK,
        "Cloudflare API token (cfut_/cfat_, or 40 characters after a Cloudflare name)",
        ("cloudflare", "cf_", "cf-", "cfut_", "cfat_"),
        (
            r"(?:"
            + _CLOUDFLARE_NAME
            + _SET
            + starts_after("A-Za-z0-9_-")
            + r"|(?=cf[ua]t_))"  # the prefix is the anchor: nothing before it matters
            + r"(?P<s>cf[ua]t_[A-Za-z0-9]{40}[a-f0-9]{8}|[A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])"
        ),
        accept=_cloudflare(("cfut_", "cfat_")),
        prefixed=True,
        reference="https://developers.cloudflare.com/fundamentals/api/get-started/token-formats/; "
        "legacy shape as in gitleaks cloudflare-api-key",
    ),
    Rule(
        "cloudflare-global-api-key",
        BLOCK,
        "Cloudflare global API key (cfk_, or 37 hex after a Cloudflare name or X-Auth-Key)",
        ("cloudflare", "cf_", "cf-", "x-auth-key", "cfk_"),
        (
            r"(?:(?:"
            + _CLOUDFLARE_NAME
            + r"|(?i:x-auth-key))"
            + _SET
            + starts_after("A-Za-z0-9_-")
            + r"|(?=cfk_))"
            + r"(?P<s>cfk_[A-Za-z0-9]{40}[a-f0-9]{8}|[a-f0-9]{37})(?![A-Za-z0-9_-])"
        ),
        accept=_cloudflare(("cfk_",)),
        prefixed=True,
        reference="https://developers.cloudflare.com/fundamentals/api/get-started/token-formats/; "
        "legacy shape as in gitleaks cloudflare-global-api-key",
    ),
    Rule(
        "cloudflare-origin-ca-key",
        BLOCK,
        "Cloudflare Origin CA key",
        ("v1.0-",),
        r"(?P<s>v1\.0-[a-f0-9]{24}-[a-f0-9]{146})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(3.0, skip=5),
        reference="https://developers.cloudflare.com/ssl/origin-configuration/origin-ca/; "
        "shape as in gitleaks cloudflare-origin-ca-key",
        prefixed=True,
    ),
    # --- Vercel -----------------------------------------------------------------------------
    Rule(
        "vercel-token",
        BLOCK,
        "Vercel personal, integration, app access/refresh token or API key (vcp_, vci_, vca_, vcr_, vck_)",
        ("vcp_", "vci_", "vca_", "vcr_", "vck_"),
        r"(?P<s>vc[pirak]_[A-Za-z0-9_-]{40,80})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=4, kinds=3),
        reference="https://vercel.com/changelog/new-token-formats-and-secret-scanning; "
        "length as in betterleaks vercel rules",
        prefixed=True,
    ),
    Rule(
        "vercel-legacy-token",
        BLOCK,
        "Vercel access token of the old format (24 characters after a Vercel name or --token)",
        ("vercel",),
        (
            r"(?:(?i:vercel[\w.-]{0,20}?(?:token|key|secret|auth)[\w.-]{0,10}(?![\w.-]))"
            + _SET
            + r"|(?i:vercel)\b[^\n]{0,80}?--token(?:[ \t]+|=)"
            + Q
            + r")"
            + starts_after("A-Za-z0-9")
            + r"(?P<s>[A-Za-z0-9]{24})(?![A-Za-z0-9])"
        ),
        accept=token(3.3, kinds=2),
        reference="https://vercel.com/docs/rest-api#creating-an-access-token; shape as in trufflehog vercel",
    ),
    # --- Supabase ---------------------------------------------------------------------------
    Rule(
        "supabase-access-token",
        BLOCK,
        "Supabase personal access token",
        ("sbp_",),
        r"(?P<s>sbp_(?:oauth_)?[a-f0-9]{40})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(3.0, skip=4),
        reference="https://supabase.com/docs/reference/api/introduction; shape as in trufflehog supabasetoken",
        prefixed=True,
    ),
    Rule(
        "supabase-secret-key",
        BLOCK,
        "Supabase secret API key (sb_secret_)",
        ("sb_secret_",),
        starts_after("A-Za-z0-9") + r"(?P<s>sb_secret_[A-Za-z0-9_-]{24,64})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.3, skip=10),
        reference="https://supabase.com/docs/guides/api/api-keys",
    ),
    # --- Doppler ----------------------------------------------------------------------------
    Rule(
        "doppler-token",
        BLOCK,
        "Doppler CLI, personal, service, service-account, SCIM or audit token",
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
        (
            r"(?P<s>dp\.(?:pt|sa|ct|scim|audit|st(?:\.[a-z0-9_-]{2,35})?)\.[A-Za-z0-9]{40,44})"
            r"(?![A-Za-z0-9])"
        ),
        fingerprint_only=True,
        accept=token(3.3),
        reference="https://docs.doppler.com/reference/auth-token-formats",
        prefixed=True,
    ),
    # --- Dynatrace --------------------------------------------------------------------------
    Rule(
        "dynatrace-token",
        BLOCK,
        "Dynatrace API, platform or OAuth token",
        ("dt0",),
        starts_after("A-Za-z0-9") + r"(?P<s>dt0[a-zA-Z]\d{2}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64})(?![A-Za-z0-9])",
        fingerprint_only=True,
        accept=token(3.5, skip=7),
        reference="https://docs.dynatrace.com/docs/manage/identity-access-management/access-tokens-and-oauth-clients/"
        "access-tokens-legacy (the documented token regex)",
    ),
    # --- Fly.io -----------------------------------------------------------------------------
    Rule(
        "flyio-token",
        BLOCK,
        "Fly.io access token (fo1_) or macaroon token (fm1r_, fm1a_, fm2_, as written after FlyV1)",
        ("fo1_", "fm1r_", "fm1a_", "fm2_"),
        (
            starts_after("A-Za-z0-9+/-")
            # a macaroon token is a comma-joined bundle (`FlyV1 fm2_…,fm2_…`): all of it is the secret
            + r"(?P<s>fo1_[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])"
            r"|(?:fm1[ar]|fm2)_[A-Za-z0-9+/]{100,}={0,3}(?:,(?:fm1[ar]|fm2)_[A-Za-z0-9+/]{20,}={0,3})*"
            r"(?![A-Za-z0-9+/=]))"
        ),
        fingerprint_only=True,
        accept=token(3.5, skip=4),
        reference="https://fly.io/docs/security/tokens/; macaroon labels as in superfly/macaroon format.go, "
        "fo1_ shape as in gitleaks flyio-access-token",
    ),
    # --- Aiven ------------------------------------------------------------------------------
    Rule(
        "aiven-service-password",
        BLOCK,
        "Aiven service password (AVNS_)",
        ("avns_",),
        r"(?P<s>AVNS_[A-Za-z0-9_-]{8,64})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.0, skip=5, kinds=2),
        reference="GitHub secret scanning pattern aiven_service_password; shape as in detect-secrets AivenTokenDetector",
        prefixed=True,
    ),
    # --- Pulumi -----------------------------------------------------------------------------
    Rule(
        "pulumi-access-token",
        BLOCK,
        "Pulumi Cloud access token (pul-)",
        ("pul-",),
        r"(?P<s>pul-[a-f0-9]{40})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.0, skip=4),
        reference="https://www.pulumi.com/docs/pulumi-cloud/access-management/access-tokens/; "
        "shape as in gitleaks pulumi-api-token",
        prefixed=True,
    ),
    # --- OpenShift --------------------------------------------------------------------------
    Rule(
        "openshift-token",
        BLOCK,
        "OpenShift OAuth access token (sha256~)",
        ("sha256~",),
        starts_after("A-Za-z0-9-") + r"(?P<s>sha256~[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=_openshift,
        reference="https://docs.redhat.com/en/documentation/openshift_container_platform/4.12/html/oauth_apis/"
        "oauth-apis (OAuthAccessToken)",
    ),
    # --- IBM Cloud, SoftLayer ---------------------------------------------------------------
    Rule(
        "ibm-cloud-api-key",
        BLOCK,
        "IBM Cloud IAM API key (44 characters) after an IBM Cloud key name or ibmcloud login --apikey",
        ("ibm",),
        (
            r"(?i:(?<![A-Za-z0-9])ibm[\w.-]{0,24}?(?:api[_.-]?key|apikey|key|pwd|password|pass|token)[\w.-]{0,12}"
            r"(?![\w.-])|ibmcloud[ \t]+login\b[^\n]{0,80}?--apikey)"
            + _SET_OPT
            + starts_after("A-Za-z0-9_-")
            + r"(?P<s>[A-Za-z0-9_-]{44})(?![A-Za-z0-9_-])"
        ),
        accept=token(3.5, kinds=2),
        reference="https://cloud.ibm.com/docs/account?topic=account-manapikey; shape as in detect-secrets "
        "IbmCloudIamDetector",
    ),
    Rule(
        "softlayer-api-key",
        BLOCK,
        "IBM SoftLayer (Classic Infrastructure) API key (64 hex) after a SoftLayer name",
        ("softlayer",),
        (
            # `SOFTLAYER_API_KEY=…`, `--softlayer-api-key …`, or the api_key of the `[softlayer]`
            # section of ~/.softlayer a few lines down
            r"(?i:softlayer[\w.-]{0,20}?(?:api[_.-]?key|apikey|key|token|pass(?:word)?)[\w.-]{0,12}(?![\w.-])"
            r"|\[softlayer\][^\[]{0,300}?(?:(?<![\w.-])|(?<=\\n))api_key)"
            + _SET_OPT
            + starts_after("A-Za-z0-9")
            + r"(?P<s>[a-z0-9]{64})(?![A-Za-z0-9])"
        ),
        accept=token(3.5),
        span=500,
        reference="https://cloud.ibm.com/docs/account?topic=account-classic_keys; shape as in detect-secrets "
        "SoftlayerDetector",
    ),
    # --- PlanetScale ------------------------------------------------------------------------
    Rule(
        "planetscale-token",
        BLOCK,
        "PlanetScale service token (pscale_tkn_), database password (pscale_pw_) or OAuth token (pscale_oauth_)",
        ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
        starts_after("A-Za-z0-9") + r"(?P<s>pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_-]{32,64})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=7, kinds=2),
        reference="https://planetscale.com/docs/concepts/service-tokens; shape as in gitleaks planetscale-* "
        "(32 to 64) and trufflehog planetscale (43)",
    ),
    # --- Netlify ----------------------------------------------------------------------------
    Rule(
        "netlify-token",
        BLOCK,
        "Netlify personal, CLI, OAuth, app or build token (nfp_, nfc_, nfo_, nfu_, nfb_)",
        ("nfp_", "nfc_", "nfo_", "nfu_", "nfb_"),
        starts_after("A-Za-z0-9") + r"(?P<s>nf[pcoub]_[A-Za-z0-9_]{36})(?![A-Za-z0-9_-])",
        fingerprint_only=True,
        accept=token(3.5, skip=4, kinds=2),
        # `nfo_` is inside every `info_`: tried only where a prefix starts, the look-behind turns it away
        anchored=True,
        reference="https://answers.netlify.com/t/change-to-the-netlify-authentication-token-format/106146; "
        "length as in gitleaks netlify-access-token and trufflehog netlify v2",
    ),
    Rule(
        "netlify-legacy-token",
        BLOCK,
        "Netlify access token of the format before prefixes (43 to 45 characters) under a Netlify name",
        ("netlify",),
        (
            r"(?i:netlify[\w.-]{0,30}?(?:token|key|secret|auth|pat)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + starts_after("A-Za-z0-9_-")
            + r"(?P<s>[A-Za-z0-9_-]{43,45})(?![A-Za-z0-9_-])"
        ),
        accept=token(3.5, kinds=2),
        reference="https://docs.netlify.com/api/get-started/#authentication; length as in trufflehog netlify "
        "(43 to 45, within gitleaks' 40 to 46)",
    ),
    # --- Tailscale --------------------------------------------------------------------------
    Rule(
        "tailscale-key",
        BLOCK,
        "Tailscale API access token, auth key, OAuth client secret, SCIM or webhook key (tskey-)",
        ("tskey-",),
        (
            r"(?P<s>tskey-(?:api|auth|client|scim|webhook)-[A-Za-z0-9]{6,40}-[A-Za-z0-9]{16,64})"
            r"(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=last_part("-", 3.3, kinds=2),
        reference="https://tailscale.com/kb/1277/key-prefixes; shape as in trufflehog tailscale",
        prefixed=True,
    ),
    # --- Confluent --------------------------------------------------------------------------
    Rule(
        "confluent-api-secret",
        BLOCK,
        "Confluent Cloud API secret (64 characters) under a Confluent name",
        ("confluent",),
        (
            # the 16-character API key beside it is the secret's id, not a secret
            r"(?i:confluent[\w.-]{0,30}?(?:secret|token|key|pass(?:word)?)[\w.-]{0,12}(?![\w.-]))"
            + _SET
            + starts_after("A-Za-z0-9+/")
            + r"(?P<s>[A-Za-z0-9+/]{64})(?![A-Za-z0-9+/=])"
        ),
        accept=token(4.0, kinds=3),
        reference="https://docs.confluent.io/cloud/current/security/authenticate/workload-identities/"
        "service-accounts/api-keys/overview.html; shape as in gitleaks confluent-secret-key",
    ),
)

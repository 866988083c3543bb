"""Shapes of cloud providers: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string

from tests.safety.parts import ALNUM, B64, UPPER_DIGITS, URLSAFE, Shape, cat, rand

HEX = "0123456789abcdef"
AZURE_SECRET = ALNUM + "_~.-"


def _hex(r: random.Random, n: int) -> str:
    return rand(r, n, HEX)


def _key_id(r: random.Random, prefix: str = "AKIA") -> str:
    # current key ids are base32 after the prefix
    return cat(prefix[:2], prefix[2:], rand(r, 16, string.ascii_uppercase + "234567"))


def _aws_secret(r: random.Random) -> str:
    return rand(r, 40, B64)


def _session(r: random.Random, head: str = "IQoJb3JpZ2luX2Vj") -> str:
    return cat(head[:6], head[6:], rand(r, 340, B64))


def _uuid(r: random.Random) -> str:
    return cat(_hex(r, 8), "-", _hex(r, 4), "-4", _hex(r, 3), "-", r.choice("89ab"), _hex(r, 3), "-", _hex(r, 12))


def _service_account(r: random.Random, *, type_last: bool = False, indent: int | None = 2) -> str:
    project = "build-" + rand(r, 6, string.ascii_lowercase + string.digits)
    doc = {
        "project_id": project,
        "private_key_id": _hex(r, 40),
        "client_id": rand(r, 21, string.digits),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    doc = {**doc, "type": "service_account"} if type_last else {"type": "service_account", **doc}
    return json.dumps(doc, indent=indent)


def _azure_client_secret(r: random.Random) -> str:
    return cat(rand(r, 3, AZURE_SECRET), r.choice(string.digits), "Q", "~", rand(r, 34, AZURE_SECRET))


def _storage_key(r: random.Random) -> str:
    return rand(r, 86, B64) + "=="


def _sig(r: random.Random) -> str:
    # the base64 HMAC-SHA256 of a SAS, percent-encoded in a URL
    return cat(rand(r, 20, ALNUM), "%2B", rand(r, 22, ALNUM), "%3D")


def _cf_scannable(r: random.Random, prefix: str) -> str:
    return cat(prefix[:2], prefix[2:], rand(r, 40), _hex(r, 8))


def _mixed(r: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """``n`` characters of ``alphabet`` holding upper case, lower case and a digit."""
    chars = [r.choice(string.ascii_uppercase), r.choice(string.ascii_lowercase), r.choice(string.digits)]
    chars += [r.choice(alphabet) for _ in range(n - 3)]
    r.shuffle(chars)
    return "".join(chars)


def _legacy_client_secret(r: random.Random) -> str:
    return _mixed(r, 24, URLSAFE)


def _azdo_pat(r: random.Random) -> str:
    """84 characters: 52 random, the common annotated key's signature and fields, AZDO at 77-80, 4 more."""
    return cat(_mixed(r, 52), "JQQJ99", rand(r, 18, string.ascii_uppercase + string.digits), "AZ", "DO", rand(r, 4))


def _azdo_legacy(r: random.Random) -> str:
    """52 characters of base32 (a-z, 2-7), holding a digit."""
    return cat(r.choice("234567"), rand(r, 51, string.ascii_lowercase + "234567"))


def _fly_macaroon(r: random.Random, label: str = "fm2_", n: int = 180) -> str:
    return cat(label[:2], label[2:], rand(r, n, B64), "=" * r.randint(0, 2))


def _openshift(r: random.Random) -> str:
    return cat("sha", "256~", rand(r, 43, URLSAFE))


def _fixed_b64(label: str, n: int) -> str:
    """Base64url that looks random but is the same on every run (a look-alike must be stable)."""
    out = ""
    while len(out) < n:
        label = hashlib.sha256(label.encode()).hexdigest()
        out += base64.urlsafe_b64encode(bytes.fromhex(label)).decode().rstrip("=")
    return out[:n]


SHAPES: dict[str, list[Shape]] = {
    "aws-access-key-id": [
        lambda r: _key_id(r),
        lambda r: cat("aws_access_key_id = ", _key_id(r, "ASIA")),
        lambda r: cat("key id ", _key_id(r), " for deploys"),
        lambda r: cat('{"AccessKeyId": "', _key_id(r, "ASIA"), '", "Expiration": "2030-01-01T00:00:00Z"}'),
    ],
    "aws-secret-access-key": [
        lambda r: cat("[default]\naws_access_key_id = ", _key_id(r), "\naws_secret_access_key = ", _aws_secret(r)),
        lambda r: cat("AWS_SECRET_ACCESS_KEY: ", _aws_secret(r)),
        lambda r: cat('"aws_secret_key": "', _aws_secret(r), '"'),
        lambda r: cat('{"Credentials": {"SecretAccessKey": "', _aws_secret(r), '"}}'),
        lambda r: cat("AwsSecretKey = '", _aws_secret(r), "'"),
        lambda r: cat("new AWS.Config({ accessKeyId: 'x', secretAccessKey: '", _aws_secret(r), "' })"),
        lambda r: cat("aws configure set aws_secret_access_key ", _aws_secret(r)),
        lambda r: cat("AWS Secret Access Key [None]: ", _aws_secret(r)),
        # the console's credentials.csv, and a key pair pasted on two lines
        lambda r: cat("User name,Password,Access key ID,Secret access key\nci,,", _key_id(r), ",", _aws_secret(r)),
        lambda r: cat("Access key: ", _key_id(r), "\nSecret: ", _aws_secret(r)),
    ],
    "aws-session-token": [
        lambda r: cat("aws_session_token = ", _session(r)),
        lambda r: cat('"SessionToken": "', _session(r, "FwoGZXIvYXdzE"), '"'),
        lambda r: cat("AWS_SESSION_TOKEN=", rand(r, 360, B64)),
        lambda r: cat("X-Amz-Security-Token: ", _session(r)),
        lambda r: cat("token ", _session(r), " pasted from the console"),
    ],
    "amazon-mws-auth-token": [
        lambda r: cat("MWS Authorisation Token:  amzn", ".mws.", _uuid(r)),
        lambda r: cat("MWS_AUTH_TOKEN=amzn", ".mws.", _uuid(r)),
        lambda r: cat('{"MWSAuthToken": "amzn', ".mws.", _uuid(r), '"}'),
    ],
    "google-api-key": [
        lambda r: cat("AI", "za", rand(r, 35, URLSAFE)),
        lambda r: cat("GOOGLE_API_KEY=AI", "za", rand(r, 35, URLSAFE)),
        lambda r: cat("maps key AI", "za", rand(r, 35, URLSAFE), " restricted"),
        lambda r: cat('{"apiKey": "AI', "zaSy", rand(r, 33, URLSAFE), '", "projectId": "demo"}'),
    ],
    "google-oauth-client-secret": [
        lambda r: cat("GOOGLE_CLIENT_SECRET=GOC", "SPX-", rand(r, 28, URLSAFE)),
        lambda r: cat(
            '{"web": {"client_id": "1-x.apps.googleusercontent.com", "client_secret": "GOC',
            "SPX-",
            rand(r, 28, URLSAFE),
            '"}}',
        ),
        lambda r: cat("--client-secret GOC", "SPX-", rand(r, 28, URLSAFE)),
    ],
    "google-oauth-legacy-client-secret": [
        lambda r: cat("GOOGLE_CLIENT_SECRET=", _legacy_client_secret(r)),
        lambda r: cat("'clientSecret' : '", _legacy_client_secret(r), "'"),
        lambda r: cat(
            '{"installed": {"client_id": "1-x.apps.googleusercontent.com", "client_secret": "',
            _legacy_client_secret(r),
            '"}}',
        ),
        lambda r: cat("$google_client_secret .= '", _legacy_client_secret(r), "';"),
    ],
    "google-oauth-access-token": [
        lambda r: cat('"access_token": "ya', "29.a0", rand(r, 160, URLSAFE), '"'),
        lambda r: cat(
            "curl -H 'Authorization: Bearer ya", "29.", rand(r, 180, URLSAFE), "' https://www.googleapis.com"
        ),
        lambda r: cat("GOOGLE_OAUTH_ACCESS_TOKEN=ya", "29.c.", rand(r, 120, URLSAFE)),
    ],
    "google-oauth-refresh-token": [
        lambda r: cat('"refresh_token": "1/', "/0", r.choice("g4de"), rand(r, 98, URLSAFE), '"'),
        lambda r: cat("refresh_token=1/", "/04", rand(r, 100, URLSAFE)),
        lambda r: cat("GOOGLE_REFRESH_TOKEN: 1/", "/0g", rand(r, 96, URLSAFE)),
    ],
    "gcp-service-account": [
        lambda r: _service_account(r),
        lambda r: _service_account(r, type_last=True),
        lambda r: _service_account(r, indent=None),
    ],
    "azure-client-secret": [
        lambda r: cat("AZURE_CLIENT_SECRET=", _azure_client_secret(r)),
        lambda r: cat('"clientSecret": "', _azure_client_secret(r), '"'),
        lambda r: cat("Connect-AzAccount -ClientSecret '", _azure_client_secret(r), "'"),
        lambda r: cat("use the client secret ", _azure_client_secret(r), " for the app"),
    ],
    "azure-connection-string": [
        lambda r: cat(
            "DefaultEndpointsProtocol=https;AccountName=acct;Account",
            "Key=",
            _storage_key(r),
            ";EndpointSuffix=core.windows.net",
        ),
        lambda r: cat(
            "Endpoint=sb://shop.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccess",
            "Key=",
            rand(r, 43, B64),
            "=",
        ),
        lambda r: cat("AccountEndpoint=https://db.documents.azure.com:443/;Account", "Key=", _storage_key(r), ";"),
        lambda r: cat(
            '"IOTHUB": "HostName=hub.azure-devices.net;SharedAccessKeyName=iothubowner;SharedAccess',
            "Key=",
            rand(r, 43, B64),
            '="',
        ),
        # App Configuration names its key Secret; a string whose parts go on over lines
        lambda r: cat(
            "Endpoint=https://appcs-shop.azconfig.io;Id=",
            rand(r, 4, string.ascii_lowercase + string.digits),
            "-l0-s0:",
            rand(r, 20),
            ";Sec",
            "ret=",
            rand(r, 43, B64),
            "=",
        ),
        lambda r: cat(
            "DefaultEndpointsProtocol=http;AccountName=acct;\nAccount", "Key=", _storage_key(r), ";\nBlobEndpoint=x;"
        ),
    ],
    "azure-storage-key": [
        lambda r: cat("AZURE_STORAGE_KEY=", _storage_key(r)),
        lambda r: cat("az storage blob upload --account-name acct --account-key ", _storage_key(r), " -f a.txt"),
        lambda r: cat('"storageAccountKey": "', _storage_key(r), '"'),
        lambda r: cat("Account", "Key=", _storage_key(r)),
    ],
    "azure-sas-token": [
        lambda r: cat(
            "https://acct.blob.core.windows.net/c/a.txt?sv=2022-11-02&ss=b&srt=sco&sp=rl",
            "&se=2030-01-01T00:00:00Z&spr=https&si",
            "g=",
            _sig(r),
        ),
        lambda r: cat(
            "AZURE_SAS='?sp=r&st=2024-01-01T00:00:00Z&se=2030-01-01&spr=https&sv=2022-11-02&sr=b&si", "g=", _sig(r), "'"
        ),
        lambda r: cat(
            "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2021-06-08&ss=bfqt&se=2030-01-01&si",
            "g=",
            _sig(r),
        ),
        lambda r: cat(
            '<add key="blob" value="https://a.blob.core.windows.net/x?sv=2020-08-04&amp;se=2030-01-01&amp;si',
            "g=",
            _sig(r),
            '"/>',
        ),
        # a Logic Apps / Power Automate trigger (the workflow webhooks of Teams) signs in base64url
        lambda r: cat(
            "TEAMS_WORKFLOW_URL=https://prod-27.westeurope.logic.azure.com:443/workflows/",
            _hex(r, 32),
            "/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&si",
            "g=",
            rand(r, 20, URLSAFE),
            "-",
            rand(r, 22, URLSAFE),
        ),
    ],
    "alibaba-access-key-id": [
        lambda r: cat("LT", "AI", rand(r, 20)),
        lambda r: cat("ALIBABA_CLOUD_ACCESS_KEY_ID=LT", "AI5t", rand(r, 18)),
        lambda r: cat('"AccessKeyId": "LT', "AI", rand(r, 12), '"'),
    ],
    "alibaba-secret-key": [
        lambda r: cat("ALIBABA_CLOUD_ACCESS_KEY_SECRET=", rand(r, 30)),
        lambda r: cat("new OSS({ accessKeyId: 'x', accessKeySecret: '", rand(r, 30), "' })"),
        lambda r: cat("AccessKey ID,AccessKey Secret\nLT", "AI5t", rand(r, 18), ",", rand(r, 30)),
        lambda r: cat('aliyun_secret = "', rand(r, 30), '"'),
    ],
    "digitalocean-token": [
        lambda r: cat("DIGITALOCEAN_ACCESS_TOKEN=do", "p_v1_", _hex(r, 64)),
        lambda r: cat("doctl auth init -t do", "p_v1_", _hex(r, 64)),
        lambda r: cat('{"access_token": "do', "o_v1_", _hex(r, 64), '", "refresh_token": "x"}'),
        lambda r: cat("refresh with do", "r_v1_", _hex(r, 64)),
    ],
    "heroku-api-key": [
        lambda r: cat("HEROKU_API_KEY=", _uuid(r)),
        lambda r: cat("heroku_api_key: '", _uuid(r), "'"),
        lambda r: cat('"HEROKU_AUTH_TOKEN": "', _uuid(r), '"'),
        lambda r: cat("machine api.heroku.com\n  login ops\n  password ", _uuid(r)),
    ],
    "heroku-api-token": [
        lambda r: cat("HEROKU_API_KEY=HR", "KU-AA", rand(r, 58, URLSAFE)),
        lambda r: cat("heroku token HR", "KU-AA", rand(r, 58, URLSAFE)),
        lambda r: cat('{"token": "HR', "KU-AA", rand(r, 58, URLSAFE), '"}'),
    ],
    "vault-token": [
        lambda r: cat("VAULT_TOKEN=hv", "s.CAESI", rand(r, 86, URLSAFE)),
        lambda r: cat("X-Vault-Token: hv", "s.", rand(r, 91, URLSAFE)),
        lambda r: cat("vault login hv", "b.AAAAAQ", rand(r, 140, URLSAFE)),
        lambda r: cat("recovery token hv", "r.", rand(r, 91, URLSAFE)),
    ],
    "vault-legacy-token": [
        lambda r: cat("VAULT_TOKEN=s", ".", rand(r, 24)),
        lambda r: cat("vault login s", ".", rand(r, 24)),
        lambda r: cat("X-Vault-Token: s", ".", rand(r, 24)),
        lambda r: cat('{"vault_token": "s', ".", rand(r, 24), '"}'),
    ],
    "terraform-api-token": [
        lambda r: cat("TF_TOKEN_app_terraform_io=", rand(r, 14), ".atlas", "v1.", rand(r, 67, URLSAFE)),
        lambda r: cat(
            'credentials "app.terraform.io" {\n  token = "', rand(r, 14), ".atlas", "v1.", rand(r, 67, URLSAFE), '"\n}'
        ),
        lambda r: cat("TFE_TOKEN: ", rand(r, 14), ".atlas", "v1.", rand(r, 60, URLSAFE)),
    ],
    "databricks-token": [
        lambda r: cat("DATABRICKS_TOKEN=da", "pi", _hex(r, 32)),
        lambda r: cat("token = da", "pi", _hex(r, 32), "-2"),
        lambda r: cat("databricks configure --token da", "pi", _hex(r, 32)),
    ],
    "cloudflare-api-token": [
        lambda r: cat("CLOUDFLARE_API_TOKEN=", _cf_scannable(r, "cfut_")),
        lambda r: cat("CF_API_TOKEN: ", rand(r, 40, URLSAFE)),
        lambda r: cat('cloudflare_api_token = "', rand(r, 40, URLSAFE), '"'),
        lambda r: cat("account token ", _cf_scannable(r, "cfat_")),
    ],
    "cloudflare-global-api-key": [
        lambda r: cat("CLOUDFLARE_API_KEY=", _hex(r, 37)),
        lambda r: cat("X-Auth-Key: ", _hex(r, 37)),
        lambda r: cat('cloudflare_global_api_key = "', _hex(r, 37), '"'),
        lambda r: cat("global key ", _cf_scannable(r, "cfk_")),
    ],
    "cloudflare-origin-ca-key": [
        lambda r: cat("CLOUDFLARE_ORIGIN_CA_KEY=v1", ".0-", _hex(r, 24), "-", _hex(r, 146)),
        lambda r: cat('origin_ca_key = "v1', ".0-", _hex(r, 24), "-", _hex(r, 146), '"'),
        lambda r: cat("X-Auth-User-Service-Key: v1", ".0-", _hex(r, 24), "-", _hex(r, 146)),
    ],
    "vercel-token": [
        lambda r: cat("VERCEL_TOKEN=vc", "p_", rand(r, 56)),
        lambda r: cat("vercel deploy --prod --token vc", "i_", rand(r, 56)),
        lambda r: cat('{"apiKey": "vc', "k_", rand(r, 56), '"}'),
        lambda r: cat("access vc", "a_", rand(r, 56), " refresh vc", "r_", rand(r, 56)),
    ],
    "vercel-legacy-token": [
        lambda r: cat("VERCEL_TOKEN=", rand(r, 24)),
        lambda r: cat("vercel deploy --prod --token ", rand(r, 24)),
        lambda r: cat('"vercelToken": "', rand(r, 24), '"'),
    ],
    "supabase-access-token": [
        lambda r: cat("SUPABASE_ACCESS_TOKEN=sb", "p_", _hex(r, 40)),
        lambda r: cat("supabase login --token sb", "p_", _hex(r, 40)),
        lambda r: cat('{"token": "sb', "p_oauth_", _hex(r, 40), '"}'),
    ],
    "supabase-secret-key": [
        lambda r: cat("SUPABASE_SECRET_KEY=sb", "_secret_", rand(r, 22, URLSAFE), "_", rand(r, 8)),
        lambda r: cat("createClient(url, 'sb", "_secret_", rand(r, 22, URLSAFE), "_", rand(r, 8), "')"),
        lambda r: cat("apikey: sb", "_secret_", rand(r, 31, URLSAFE)),
    ],
    "doppler-token": [
        lambda r: cat("DOPPLER_TOKEN=dp", ".st.prd.", rand(r, 43)),
        lambda r: cat("doppler secrets --token dp", ".pt.", rand(r, 43)),
        lambda r: cat('{"token": "dp', ".sa.", rand(r, 43), '"}'),
        lambda r: cat(
            "cli dp", ".ct.", rand(r, 43), " scim dp", ".scim.", rand(r, 43), " audit dp", ".audit.", rand(r, 43)
        ),
    ],
    "dynatrace-token": [
        lambda r: cat("DT_API_TOKEN=dt", "0c01.", rand(r, 24, UPPER_DIGITS), ".", rand(r, 64, UPPER_DIGITS)),
        lambda r: cat(
            "https://abc.live.dynatrace.com/api/v2/metrics?Api-Token=dt",
            "0c01.",
            rand(r, 24, UPPER_DIGITS),
            ".",
            rand(r, 64, UPPER_DIGITS),
        ),
        lambda r: cat(
            '{"platformToken": "dt', "0s16.", rand(r, 24, UPPER_DIGITS), ".", rand(r, 64, UPPER_DIGITS), '"}'
        ),
    ],
    "flyio-token": [
        lambda r: cat("FLY_API_TOKEN=fo", "1_", rand(r, 43, URLSAFE)),
        lambda r: cat('"BindToParentToken": "FlyV1 ', _fly_macaroon(r), '",'),
        lambda r: cat('FLY_API_TOKEN="FlyV1 ', _fly_macaroon(r, "fm1r_"), ",", _fly_macaroon(r, "fm1a_", 120), '"'),
        lambda r: cat("<flyToken>\n    fo", "1_", rand(r, 43, URLSAFE), "\n</flyToken>"),
    ],
    "aiven-service-password": [
        lambda r: cat('"password": "AV', "NS_", rand(r, 19, URLSAFE), '",'),
        lambda r: cat("AIVEN_DB_PASSWORD=AV", "NS_", rand(r, 19, URLSAFE)),
        lambda r: cat("senha = 'AV", "NS_", rand(r, 22), "'"),
    ],
    "pulumi-access-token": [
        lambda r: cat("PULUMI_ACCESS_TOKEN=pu", "l-", _hex(r, 40)),
        lambda r: cat('{"accessTokens": {"https://api.pulumi.com": "pu', "l-", _hex(r, 40), '"}}'),
        lambda r: cat("pulumi login with pu", "l-", _hex(r, 40), " in CI"),
    ],
    "openshift-token": [
        lambda r: cat("oc login --token=", _openshift(r), " --server=https://api.crc.testing:6443"),
        lambda r: cat("OPENSHIFT_TOKEN=", _openshift(r)),
        lambda r: cat('{"token": "', _openshift(r), '"}'),
    ],
    "ibm-cloud-api-key": [
        lambda r: cat("IBMCLOUD_API_KEY=", rand(r, 44, URLSAFE)),
        lambda r: cat('"ibm_cloud_api_key": "', rand(r, 44, URLSAFE), '"'),
        lambda r: cat("IBM_IAM_API_KEY: ", rand(r, 44, URLSAFE)),
        lambda r: cat("ibmcloud login --apikey ", rand(r, 44, URLSAFE)),
    ],
    "softlayer-api-key": [
        lambda r: cat("SOFTLAYER_API_KEY=", _hex(r, 64)),
        lambda r: cat('--softlayer-api-key "', _hex(r, 64), '"'),
        lambda r: cat("[softlayer]\nusername = ops\napi_key = ", _hex(r, 64)),
        lambda r: cat('softlayer_apikey: "', _hex(r, 64), '"'),
    ],
    "google-express-mode-api-key": [
        lambda r: cat("GOOGLE_API_KEY=AQ", ".Ab8R", _mixed(r, 46, URLSAFE)),
        lambda r: cat("client = genai.Client(vertexai=True, api_key='AQ", ".Ab8R", _mixed(r, 46, URLSAFE), "')"),
        lambda r: cat(
            'curl "https://aiplatform.googleapis.com/v1/models:list?key=AQ', ".Ab8R", _mixed(r, 46, URLSAFE), '"'
        ),
    ],
    "azure-openai-api-key": [
        lambda r: cat("AZURE_OPENAI_API_KEY=", _hex(r, 32)),
        lambda r: cat('client = AzureOpenAI(\n    azure_endpoint=endpoint,\n    api_key="', _hex(r, 32), '",\n)'),
        lambda r: cat('"azure_ai_services_key": "', _hex(r, 32), '"'),
    ],
    "azure-devops-pat": [
        lambda r: cat("AZURE_DEVOPS_EXT_PAT=", _azdo_pat(r)),
        lambda r: cat("git clone https://build:", _azdo_pat(r), "@dev.azure.com/acme/app/_git/app"),
        lambda r: cat('{"pat": "', _azdo_pat(r), '"}'),
    ],
    "azure-devops-legacy-pat": [
        lambda r: cat("AZURE_DEVOPS_EXT_PAT=", _azdo_legacy(r)),
        lambda r: cat('ado_pat = "', _azdo_legacy(r), '"'),
        lambda r: cat("  vsts_token: ", _azdo_legacy(r)),
    ],
    "planetscale-token": [
        lambda r: cat("PLANETSCALE_SERVICE_TOKEN=pscale", "_tkn_", _mixed(r, 43, URLSAFE)),
        lambda r: cat("DATABASE_URL=mysql://app:pscale", "_pw_", _mixed(r, 43, URLSAFE), "@aws.connect.psdb.cloud/db"),
        lambda r: cat('{"access_token": "pscale', "_oauth_", _mixed(r, 43, URLSAFE), '"}'),
    ],
    "netlify-token": [
        lambda r: cat("NETLIFY_AUTH_TOKEN=nf", "p_", _mixed(r, 36)),
        lambda r: cat("netlify deploy --prod --auth nf", "c_", _mixed(r, 36)),
        lambda r: cat('"Authorization": "Bearer nf', "o_", _mixed(r, 36), '"'),
    ],
    "netlify-legacy-token": [
        lambda r: cat("NETLIFY_AUTH_TOKEN=", _mixed(r, 43, URLSAFE)),
        lambda r: cat('netlify_api_token: "', _mixed(r, 43, URLSAFE), '"'),
        lambda r: cat('{"netlifyToken": "', _mixed(r, 43, URLSAFE), '"}'),
    ],
    "tailscale-key": [
        lambda r: cat("TS_AUTHKEY=ts", "key-auth-k", _mixed(r, 11), "CNTRL-", _mixed(r, 33)),
        lambda r: cat("tailscale up --auth-key=ts", "key-auth-k", _mixed(r, 11), "CNTRL-", _mixed(r, 33)),
        lambda r: cat('oauth_client_secret = "ts', "key-client-k", _mixed(r, 11), "CNTRL-", _mixed(r, 33), '"'),
    ],
    "confluent-api-secret": [
        lambda r: cat("CONFLUENT_CLOUD_API_SECRET=", _mixed(r, 64, B64)),
        lambda r: cat('confluent_secret: "', _mixed(r, 64, B64), '"'),
        lambda r: cat('{"confluent_api_secret": "', _mixed(r, 64, B64), '"}'),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = [
    # AWS: ids that are not keys, documented examples, code that fetches the secret
    "arn:aws:iam::123456789012:role/deploy-role",
    cat("RoleId: AR", "OAY3L4XK2QZ7N5VW6HJ8P"),
    cat("AK", "IAXXXXXXXXXXXXXXXX"),
    cat("AK", "IA1234567890ABCDEF"),
    "TODAYINASIAASACKOFRICEFELLOVER",
    cat("aws_secret_access_key = ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "EXAMPLEKEY"),
    "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']",
    "def connect(secret_access_key: str, aws_session_token: Optional[str] = None): ...",
    '"SecretAccessKey": {"Fn::GetAtt": ["DeployKey", "SecretAccessKey"]}',
    "AWS_SECRET_ACCESS_KEY: ${{ secrets.AWS_SECRET_ACCESS_KEY }}",
    cat("aws_secret_checksum = 3f786850e387550fdab836ed7e6dc881de23001b"),
    cat("Access key: ", "AKIAIOSFODNN7EXAMPLE", "\nSecret: ", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "EXAMPLEKEY"),
    # Google: example and truncated values, public client ids, configs that hold no secret
    cat("AI", "zaSyabcdefghijklmnopqrstuvwxyz1234567"),
    cat("AI", "zaSyAnLA7NfeLquW1tJFpx_eQCxoX-oo6YyIs"),
    "GOOGLE_CLIENT_ID=123456789012-abc123def456.apps.googleusercontent.com",
    cat("client_secret: GOC", "SPX-<your-client-secret>"),
    cat("access_token: ya", "29.a0AfH6SM..."),
    '{"type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/x"}',
    '{"type": "service_account", "private_key_id": "<key id>"}',
    # Azure: emulator keys everyone has, ids, placeholders, other signed URLs
    cat(
        "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;Account",
        "Key=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/",
        "K1SZFPTOtr/KBHBeksoGMGw==;",
    ),
    cat(
        "AccountEndpoint=https://localhost:8081/;Account",
        "Key=C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/",
        "Jw==",
    ),
    "UseDevelopmentStorage=true",
    "AZURE_TENANT_ID=72f988bf-86f1-41af-91ab-2d7cd011db47",
    "AZURE_CLIENT_SECRET=${{ secrets.AZURE_CLIENT_SECRET }}",
    cat("client_secret=bP8", "8Q~xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    "'url': 'http://www.2doc.nl/speel~VARA_101375237~mh17-het-verdriet-van-nederland~.html'",
    "AccountKey=<your-storage-account-key>",
    "https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig=<signature>",
    "https://img.example.org/a.png?w=640&h=480&sig=9b2c4f1e8d7a6b5c3e2f1a0b9c8d7e6f5a4b3c2d",
    # Alibaba, DigitalOcean, Heroku: words, placeholders, ids
    "ALTAIR and LTAIR are star names",
    "accessKeySecret: process.env.OSS_ACCESS_KEY_SECRET",
    cat("DIGITALOCEAN_ACCESS_TOKEN=do", "p_v1_<token>"),
    "HEROKU_APP_ID=6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b",
    'const HEROKU_KEY = "12345678-ABCD-ABCD-ABCD-1234567890AB"',
    "heroku_api_key: ${{ secrets.HEROKU_API_KEY }}",
    # HashiCorp, Databricks, Cloudflare, Vercel, Supabase, Doppler, Dynatrace: ids, not keys
    "VAULT_TOKEN=root",
    "vault login -method=github",
    "s.makeKubeConfigController = args",
    cat("hv", "s.CAESIABcDeFgHiJkLmNoPqRsTuVwXyZ"),
    'host = "https://adb-1234567890123456.7.azuredatabricks.net"',
    "CLOUDFLARE_ZONE_ID=023e105f4ecef8ad9ca31a8372d0c353",
    "CLOUDFLARE_ACCOUNT_ID=f037e56e89293a057740de681ac9abbe",
    "VERCEL_PROJECT_ID=prj_a1B2c3D4e5F6g7H8i9J0k1L2m3N4",
    "vcp_memory_write is a tool name, not a token",
    cat("createClient(url, 'sb", "_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH')"),
    cat("the local stack prints sb", "_secret_N7UND0UgjKTVK-", "Uodkm0Hg_xSvEMPvz for everyone"),
    "DOPPLER_PROJECT=backend DOPPLER_CONFIG=dev",
    # Amazon MWS: the documentation's example ends in EXAMPLE
    cat("MWSAuthToken=amzn", ".mws.4ea38b7b-f563-7709-4bae-87aea", "EXAMPLE"),
    # Google's legacy client secret: names and placeholders only
    "clientSecret: process.env.GOOGLE_CLIENT_SECRET",
    '"client_secret": "YOUR_CLIENT_SECRET"',
    "def exchange(code: str, client_secret: str) -> Token: ...",
    # Azure App Configuration: the documented placeholder
    "az appconfig kv list --connection-string Endpoint=https://contoso.azconfig.io;Id=xxx;Secret=xxx",
    # Fly.io, Aiven, Pulumi, OpenShift, IBM Cloud, SoftLayer: placeholders, names, hashes
    cat('api_key = "fo', "1_", "x" * 43, '"'),
    cat("https://cdn.example.net/file/NfNf", "m2_", _fixed_b64("fly", 120), ".jpg"),
    cat("AV", "NS_"),
    cat("AV", "NS12345678"),
    "PULUMI_ORG=acme PULUMI_STACK=prod",
    cat("metadata:\n  name: sha", "256~", _fixed_b64("openshift", 43)),
    "oc whoami --show-token",
    'softlayer_api_key="%s" % SL_API_KEY_ENV',
    'iam_api_key="%s" % IBM_IAM_API_KEY_ENV',
    'CLOUD_APIKEY: "insert_key_here"',
    cat("token id dt", "0c01.ST2EY72KQINMH574WMNVI7YN is safe to log"),
    cat("dt", "0s01.ST2EY72KQINMH574WMNVI7YN.", "G3DFPBEJYMODIDAEX454M7YWBUVEFOWKPRVMWFASS64NFH52PX6BNDVFFM572RZM"),
    # a Google key's shape then base64 padding: the end of a base64 blob
    cat("AI", "za", _fixed_b64("google-key-blob", 35), "=="),
    # Google express mode, Azure OpenAI and DevOps: prose, endpoints, deployment names, a doc sample
    cat("API keys bound to a service account start with AQ", ".Ab8R and are 53 characters long"),
    "AZURE_OPENAI_ENDPOINT=https://acme-openai.openai.azure.com/",
    "AZURE_OPENAI_DEPLOYMENT=gpt-4o-mini-2024-07-18",
    "azure_openai_api_version: 2024-10-21",
    cat("azure_openai_key_checksum: sha1=", hashlib.sha1(b"aoai").hexdigest()),
    "AZURE_DEVOPS_ORG_URL=https://dev.azure.com/acme",
    cat("PAT = ", '"abcdefghijklmnopqrstuvwxyz012345679ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmno', "AZ", 'DOabcd"'),
    "info_messages = [m for m in log if m.level == 'info']; info_path = '/var/log/app/info_2024-01-01.log'",
    # PlanetScale, Netlify, Tailscale, Confluent: placeholders, ids, prose
    cat("PLANETSCALE_SERVICE_TOKEN=pscale", "_tkn_", "x" * 43),
    "PLANETSCALE_SERVICE_TOKEN_ID=nyprhd2z6bd3",
    cat("Netlify tokens start with nf", "p_ for personal access tokens"),
    "NETLIFY_SITE_ID=3fa85f64-5717-4562-b3fc-2c963f66afa6",
    cat("ts", "key-auth-XXXXXXCNTRL-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"),
    cat("ts", "key-api-abcDEF1CNTRL-091234567890ABCDEF"),
    "CONFLUENT_CLOUD_API_KEY=ABCD1234EFGH5678",
    "confluent_bootstrap_servers: pkc-12345.us-east-1.aws.confluent.cloud:9092",
]

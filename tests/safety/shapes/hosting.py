"""Shapes of code hosting, registries and tools: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import base64
import binascii
import random
import string

from tests.safety.parts import ALNUM, URLSAFE, Shape, cat, rand

HEX = "0123456789abcdef"
HEX_UPPER = "0123456789ABCDEF"
LOWER_DIGITS = string.ascii_lowercase + string.digits
BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def mixed(r: random.Random, n: int) -> str:
    """``n`` alphanumerics holding upper case, lower case and digits (a generated token, for
    the rules that turn away values missing one of them)."""
    chars = [r.choice(string.ascii_uppercase), r.choice(string.ascii_lowercase), r.choice(string.digits)]
    chars += [r.choice(ALNUM) for _ in range(n - 3)]
    r.shuffle(chars)
    return "".join(chars)


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def with_crc_hex(head: str) -> str:
    """Atlassian's layout: ``head`` and the CRC32 of it in 8 upper-case hex digits."""
    return f"{head}{binascii.crc32(head.encode()):08X}"


def routable(r: random.Random, kind: str) -> str:
    """A GitLab routable token, ``<kind>-<payload>.01.<length><crc>``, with its CRC32 computed."""
    payload = rand(r, 38, URLSAFE)
    head = cat(kind, "-", payload, ".01.", _base36(len(payload), 2))
    return head + _base36(binascii.crc32(head.encode()), 7)


def _base36(n: int, width: int) -> str:
    alphabet = string.digits + string.ascii_lowercase
    digits = ""
    while n:
        n, d = divmod(n, 36)
        digits = alphabet[d] + digits
    return digits.rjust(width, "0")


def stateless_ghs(r: random.Random) -> str:
    """GitHub's installation token since 2026: ``ghs_<app id>_<JWT>``."""
    jwt = cat("ey", "J", rand(r, 40, URLSAFE), ".ey", "J", rand(r, 300, URLSAFE), ".", rand(r, 170, URLSAFE))
    return cat("gh", "s_", rand(r, 7, string.digits), "_", jwt)


def dc_pat(r: random.Random) -> str:
    """A Jira/Confluence/Bitbucket Data Center token: base64 of ``<12-digit id>:<20 random bytes>``."""
    return b64(rand(r, 12, string.digits).encode() + b":" + bytes(r.randrange(256) for _ in range(20)))


def _uuid(r: random.Random) -> str:
    return "-".join(rand(r, n, HEX) for n in (8, 4, 4, 4, 12))


def reference_token(r: random.Random) -> str:
    """A JFrog reference token: base64 of ``reftkn:01:<expiry>:<random>``."""
    return b64(cat("ref", "tkn:01:", rand(r, 10, string.digits), ":", rand(r, 27)).encode())


SHAPES: dict[str, list[Shape]] = {
    "github-token": [
        lambda r: cat("gh", "p_", rand(r, 36)),
        lambda r: cat("GH_TOKEN=gh", "s_", rand(r, 36)),
        lambda r: cat("oauth gh", "o_", rand(r, 36), " for the app"),
        lambda r: cat('{"refresh_token": "gh', "r_", rand(r, 36), '", "expires_in": 15897600}'),
        lambda r: cat("git clone https://gh", "u_", rand(r, 36), "@github.com/org/repo.git"),
        lambda r: cat("GITHUB_TOKEN=", stateless_ghs(r)),
        lambda r: cat("installation token ", stateless_ghs(r), " expires in an hour"),
    ],
    "github-fine-grained-pat": [
        lambda r: cat("github", "_pat_", rand(r, 22), "_", rand(r, 59)),
        lambda r: cat("export GITHUB_PAT=github", "_pat_", rand(r, 22), "_", rand(r, 59)),
        lambda r: cat('{"github": {"token": "github', "_pat_", rand(r, 22), "_", rand(r, 59), '"}}'),
    ],
    "github-legacy-token": [
        lambda r: cat("GITHUB_TOKEN=", rand(r, 40, HEX)),
        lambda r: cat('"github_oauth_token": "', rand(r, 40, HEX), '"'),
        lambda r: cat("git clone https://", rand(r, 40, HEX), "@github.com/org/repo.git"),
        lambda r: cat("HOMEBREW_GITHUB_API_TOKEN: ", rand(r, 40, HEX)),
        lambda r: cat('g = Github("', rand(r, 40, HEX), '")'),
        lambda r: cat("gh = Github(login_or_token='", rand(r, 40, HEX), "')"),
    ],
    "gitlab-token": [
        lambda r: cat("gl", "pat-", rand(r, 20, URLSAFE)),
        lambda r: cat("deploy token gl", "dt-", rand(r, 24, URLSAFE)),
        lambda r: cat("RUNNER=gl", "rt-", rand(r, 22, URLSAFE)),
        lambda r: cat('token = "', routable(r, "gl" + "rtr"), '"'),
        lambda r: cat("GITLAB_TOKEN=", routable(r, "gl" + "pat")),
        lambda r: cat("gitlab-runner register --registration-token GR", "1348941", rand(r, 20, URLSAFE)),
        lambda r: cat("CI_JOB_TOKEN=gl", "cbt-64_", rand(r, 20, URLSAFE)),
        lambda r: cat("acme-gl", "pat-", rand(r, 20, URLSAFE), " is the instance-prefixed form"),
        lambda r: cat('{"agent_token": "gl', "agent-", rand(r, 50, URLSAFE), '"}'),
        lambda r: cat("client_secret: gl", "oas-", rand(r, 64, URLSAFE)),
    ],
    "gitlab-session-cookie": [
        lambda r: cat("curl -b '_gitlab", "_session=", rand(r, 32, HEX), "' https://gitlab.example.com/api/v4/user"),
        lambda r: cat('document.cookie = "_gitlab', "_session=", rand(r, 32, HEX), '"'),
        lambda r: cat('{"_gitlab', '_session": "', rand(r, 32, HEX), '"}'),
    ],
    "gitlab-legacy-token": [
        lambda r: cat("GITLAB_PAT=", mixed(r, 20)),
        lambda r: cat("gitlab_api_token: ", mixed(r, 20)),
        lambda r: cat('{"gitlab_private_token": "', mixed(r, 20), '"}'),
    ],
    "atlassian-api-token": [
        lambda r: cat("JIRA_API_TOKEN=", with_crc_hex(cat("AT", "ATT3xFfGF0", rand(r, 171, URLSAFE), "="))),
        lambda r: cat('basic_auth=("me", "AT', "ATT3xFfGF0", rand(r, 171, URLSAFE), "=", rand(r, 8, HEX_UPPER), '")'),
        lambda r: cat(
            "curl -H 'Authorization: Bearer AT", "CTT3xFfGN0", rand(r, 171, URLSAFE), "=", rand(r, 8, HEX_UPPER), "'"
        ),
    ],
    "bitbucket-app-password": [
        lambda r: cat("BITBUCKET_APP_PASSWORD=", with_crc_hex(cat("AT", "BB", rand(r, 24)))),
        lambda r: cat('requests.get(url, auth=("alice", "', with_crc_hex(cat("AT", "BB", rand(r, 24))), '"))'),
        lambda r: cat("app password AT", "BB", mixed(r, 24), rand(r, 8, HEX_UPPER), " for the pipeline"),
    ],
    "atlassian-pat": [
        lambda r: cat("JIRA_PAT=", dc_pat(r)),
        lambda r: cat("confluence_api_token: ", mixed(r, 24)),
        lambda r: cat("use the HTTP access token BB", "DC-", dc_pat(r), " in CI"),
        lambda r: cat('{"bitbucket_password": "', dc_pat(r), '"}'),
        lambda r: cat('$confluenceToken .= "', mixed(r, 24), '";'),
    ],
    "docker-hub-token": [
        lambda r: cat("dckr", "_pat_", rand(r, 27, URLSAFE)),
        lambda r: cat("DOCKERHUB_TOKEN=dckr", "_oat_", rand(r, 32, URLSAFE)),
        lambda r: cat("docker login -u alice -p dckr", "_pat_", rand(r, 27, URLSAFE)),
    ],
    "docker-config-auth": [
        lambda r: cat(
            '{"auths": {"https://index.docker.io/v1/": {"auth": "', b64(cat("alice:", rand(r, 16)).encode()), '"}}}'
        ),
        lambda r: cat('"auth": "', b64(cat("ci-bot:", rand(r, 24, URLSAFE)).encode()), '",'),
        lambda r: cat("auth: ", b64(cat("deploy:", rand(r, 12)).encode())),
    ],
    "jfrog-api-key": [
        lambda r: cat("AK", "Cp", rand(r, 69, BASE58)),
        lambda r: cat("ARTIFACTORY_API_KEY=AK", "Cp", rand(r, 69, BASE58)),
        lambda r: cat(
            "curl -H 'X-JFrog-Art-Api: AK",
            "Cp",
            rand(r, 69, BASE58),
            "' https://acme.jfrog.io/artifactory/api/repositories",
        ),
    ],
    "jfrog-reference-token": [
        lambda r: reference_token(r),
        lambda r: cat("JFROG_ACCESS_TOKEN=", reference_token(r)),
        lambda r: cat("jf config add acme --access-token ", reference_token(r)),
    ],
    "npm-token": [
        lambda r: cat("//registry.npmjs.org/:_authToken=np", "m_", rand(r, 36)),
        lambda r: cat("NPM_TOKEN=np", "m_", rand(r, 36)),
        lambda r: cat("publish with np", "m_", rand(r, 36)),
    ],
    "npmrc-auth": [
        lambda r: cat(
            "//registry.npmjs.org/:_auth",
            "Token=",
            rand(r, 8, HEX),
            "-",
            rand(r, 4, HEX),
            "-",
            rand(r, 4, HEX),
            "-",
            rand(r, 4, HEX),
            "-",
            rand(r, 12, HEX),
        ),
        lambda r: cat("_auth", "=", b64(cat("alice:", rand(r, 14)).encode())),
        lambda r: cat("//npm.pkg.example.com/:_pass", "word=", b64(rand(r, 18).encode())),
    ],
    "pypi-token": [
        lambda r: cat("py", "pi-AgEIcHlwaS5vcmc", rand(r, 60, URLSAFE)),
        lambda r: cat("TWINE_PASSWORD=py", "pi-AgENdGVzdC5weXBpLm9yZw", rand(r, 50, URLSAFE)),
        lambda r: cat("token py", "pi-AgEIcHlwaS5vcmc", rand(r, 70, URLSAFE), " for upload"),
        lambda r: cat("password = py", "pi-AgEIcHlwaS5vcmc", rand(r, 160, URLSAFE)),
    ],
    "rubygems-api-key": [
        lambda r: cat("ruby", "gems_", rand(r, 48, HEX)),
        lambda r: cat("GEM_HOST_API_KEY=ruby", "gems_", rand(r, 48, HEX)),
        lambda r: cat(":rubygems_api_key: ruby", "gems_", rand(r, 48, HEX)),
    ],
    "nuget-api-key": [
        lambda r: cat("o", "y2", rand(r, 43, LOWER_DIGITS)),
        lambda r: cat(
            "dotnet nuget push pkg.nupkg --api-key o", "y2", rand(r, 43, LOWER_DIGITS), " --source nuget.org"
        ),
        lambda r: cat("NUGET_API_KEY=o", "y2", rand(r, 43, LOWER_DIGITS)),
    ],
    "clojars-token": [
        lambda r: cat("CLOJARS", "_", rand(r, 60, LOWER_DIGITS)),
        lambda r: cat("CLOJARS_PASSWORD=CLOJARS", "_", rand(r, 60, LOWER_DIGITS)),
        lambda r: cat('{:username "alice" :password "CLOJARS', "_", rand(r, 60, LOWER_DIGITS), '"}'),
    ],
    "jfrog-identity-token": [
        lambda r: cat('  "jfrogToken" => "', mixed(r, 64), '"'),
        lambda r: cat('config.set("artifactory", "', mixed(r, 64), '")'),
        lambda r: cat("--set imagePullSecretJfrog.password=", mixed(r, 73)),
        lambda r: cat("ARTIFACTORY_IDENTITY_TOKEN=", mixed(r, 64)),
    ],
    "cratesio-api-token": [
        lambda r: cat("CARGO_REGISTRY_TOKEN=ci", "o", mixed(r, 32)),
        lambda r: cat('[registry]\ntoken = "ci', "o", mixed(r, 32), '"'),
        lambda r: cat("Authorization: ci", "o", mixed(r, 32)),
        lambda r: cat("cargo publish --token ci", "o_tp_", mixed(r, 32)),
    ],
    "sonarqube-token": [
        lambda r: cat("SONAR_TOKEN=sq", "u_", rand(r, 40, HEX)),
        lambda r: cat("mvn sonar:sonar -Dsonar.token=sq", "p_", rand(r, 40, HEX)),
        lambda r: cat('"sonarToken": "sq', "a_", rand(r, 40, HEX), '"'),
    ],
    "sonarqube-legacy-token": [
        lambda r: cat("mvn sonar:sonar -Dsonar.host.url=https://sonarcloud.io -Dsonar.login=", rand(r, 40, HEX)),
        lambda r: cat("properties.put('sonar.login', '", rand(r, 40, HEX), "')"),
        lambda r: cat('$sonarLogin .= "', rand(r, 40, HEX), '";'),
        lambda r: cat("SONAR_TOKEN: ", rand(r, 40, HEX)),
    ],
    "jenkins-api-token": [
        lambda r: cat("export JENKINS_TOKEN=11", rand(r, 32, HEX)),
        lambda r: cat("jenkins_passwd = '11", rand(r, 32, HEX), "'   # dev token"),
        lambda r: cat("curl -X POST -H 'Jenkins-Crumb:", rand(r, 32, HEX), "' https://ci.example.net/job/x/build"),
        lambda r: cat('jenkins.api_token: "', rand(r, 32, HEX), '"'),
    ],
    "postman-api-key": [
        lambda r: cat("POSTMAN_API_KEY=PM", "AK-", rand(r, 24, HEX), "-", rand(r, 34, HEX)),
        lambda r: cat(
            "curl -H 'X-Api-Key: PM", "AK-", rand(r, 24, HEX), "-", rand(r, 34, HEX), "' https://api.getpostman.com/me"
        ),
        lambda r: cat('{"apikey": "PM', "AK-", rand(r, 24, HEX), "-", rand(r, 34, HEX), '"}'),
    ],
    "sourcegraph-access-token": [
        lambda r: cat("SRC_ACCESS_TOKEN=sg", "p_", rand(r, 16, HEX), "_", rand(r, 40, HEX)),
        lambda r: cat("Authorization: token sg", "p_local_", rand(r, 40, HEX)),
        lambda r: cat('"accessToken": "sg', "p_", rand(r, 40, HEX), '"'),
    ],
    "stackhawk-api-key": [
        lambda r: cat('HAWK_API_KEY="ha', "wk.", mixed(r, 20), ".", mixed(r, 20), '"'),
        lambda r: cat("hawk init --api-key ha", "wk.", mixed(r, 20), ".", mixed(r, 20)),
        lambda r: cat("stackhawk:\n  apiKey: ha", "wk.", mixed(r, 20), ".", mixed(r, 20)),
    ],
    "codeclimate-reporter-id": [
        lambda r: cat("CC_TEST_REPORTER_ID=", rand(r, 64, HEX)),
        lambda r: cat(" - RAILS_ENV=test CODECLIMATE_REPO_TOKEN=", rand(r, 64, HEX)),
        lambda r: cat("coverageCommand: test\nenv:\n  CC_TEST_REPORTER_ID: ", rand(r, 64, HEX)),
    ],
    "saucelabs-access-key": [
        lambda r: cat("- SAUCE_ACCESS_KEY=", _uuid(r)),
        lambda r: cat('sauceKey: "', _uuid(r), '",'),
        lambda r: cat("export SAUCE_ACCESS_KEY='", _uuid(r), "'"),
    ],
    "buildkite-api-token": [
        lambda r: cat("BUILDKITE_API_TOKEN=bk", "ua_", rand(r, 40, LOWER_DIGITS)),
        lambda r: cat(
            'curl -H "Authorization: Bearer bk', "ua_", rand(r, 40, LOWER_DIGITS), '" https://api.buildkite.com'
        ),
        lambda r: cat("bk configure --token bk", "ua_", rand(r, 40, LOWER_DIGITS)),
    ],
    "circleci-token": [
        lambda r: cat("CIRCLE_TOKEN=CCIP", "AT_", rand(r, 22, BASE58), "_", rand(r, 40, HEX)),
        lambda r: cat("curl -H 'Circle-Token: CCIP", "RJ_", rand(r, 22, BASE58), "_", rand(r, 40, HEX), "'"),
        lambda r: cat("circleci setup --token CCIP", "AT_", rand(r, 21, BASE58), "_", rand(r, 40, HEX)),
    ],
    "circleci-legacy-token": [
        lambda r: cat("CIRCLE_TOKEN=", rand(r, 40, HEX)),
        lambda r: cat("curl -H 'Circle-Token: ", rand(r, 40, HEX), "' https://circleci.com/api/v2/me"),
        lambda r: cat('{"circleci_api_token": "', rand(r, 40, HEX), '"}'),
    ],
    "snyk-api-token": [
        lambda r: cat("SNYK_TOKEN=", _uuid(r)),
        lambda r: cat("snyk auth ", _uuid(r)),
        lambda r: cat('  snyk_api_key: "', _uuid(r), '"'),
    ],
    "prefect-api-key": [
        lambda r: cat("PREFECT_API_KEY=pn", "u_", mixed(r, 36)),
        lambda r: cat("prefect cloud login --key pn", "u_", mixed(r, 36)),
        lambda r: cat('{"PREFECT_API_KEY": "pn', "u_", mixed(r, 36), '"}'),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = [
    # GitHub: placeholders, prefixes in prose, commit ids, public client ids, short values
    cat("GITHUB_TOKEN=gh", "p_", "x" * 36),
    cat("the gh", "p_ prefix marks a classic personal access token"),
    cat("gh", "s_APPID_JWT is the shape of the new installation tokens"),
    "GITHUB_SHA=3f786850e387550fdab836ed7e6dc881de23001b",
    "github_commit: 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "https://github.com/org/repo/commit/9fceb02d0ae598e95dc970b74767f19372d61af8",
    "client_id: Iv1.8a61f9b3a7aba766",
    "GITHUB_CLIENT_ID=Iv23liQ0Xn7Tb2kLmVwR",
    "github_app_id: 123456",
    cat("gh", "p_", "1234567890" * 3, "123456"),
    cat("gh", "p_", "aB3dE5fG7hJ9kL1mN3pQ5"),
    cat("GITHUB_PAT=github", "_pat_11ABCDEFG0..."),
    "github_token_path: ~/.config/gh/hosts.yml",
    "GH_TOKEN: ${{ secrets.GH_TOKEN }}",
    # GitLab: documented false positives, placeholders, CI variables, paths
    cat("gl", "pat-", "XXXXXXXXXXX-XXXXXXXX"),
    cat("gl", "pat-", "xxxxxxxx-xxxxxxxxxxxxxxxxxx.xxxxxxxxx"),
    cat("GR", "1348941", "12312312312312312312"),
    cat("GR", "1348941", "XXXXXXXXXXXXXXXXXXXX"),
    "CI_JOB_TOKEN: $CI_JOB_TOKEN",
    "GITLAB_PROJECT_PATH=platform-team/deployment-tools",
    cat("gl", "pat- tokens expire after at most a year"),
    "gitlab_pat_scope: read_api",
    cat("_gitlab", "_session=<session-id>"),
    # Atlassian and Bitbucket: truncated tokens, Unreal class names, issue keys, cloud ids
    cat("JIRA_API_TOKEN=AT", "ATT3xFfGF0..."),
    cat("AT", "BBaseWeapon::AT", "BBaseWeapon()"),
    cat("class AT", "BBaseCharacterMovementComponent2 : public ACharacter"),
    "jira_issue_key: PROJ-1234",
    "confluence_space_key: ENGINEERING",
    "jira_cloud_id: 123e4567-e89b-12d3-a456-426614174000",
    "JIRA_API_TOKEN=your-api-token",
    cat("BB", "DC-<token>"),
    # Docker: placeholders, credential helpers, an auth field that is no user:password
    cat("dckr", "_pat_", "x" * 27),
    '{"auths": {"ghcr.io": {}}, "credsStore": "desktop"}',
    '"auth": "required"',
    'auth: "oauth2"',
    cat('"auth": "', b64(b"no-colon-in-this-one"), '"'),
    # JFrog
    cat("AK", "Cp", "5bKfM7xRzQ"),
    "artifactory_url: https://acme.jfrog.io/artifactory",
    cat("cmVmdGtu", "..."),
    # npm: lifecycle variables share the prefix
    "npm_config_registry=https://registry.npmjs.org/",
    "npm_package_version=1.2.3",
    "npm_lifecycle_event: test",
    "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    "//somewhere-else.com/myorg/:_authToken=MYTOKEN1",
    "this._auth = options.auth || defaultAuth2;",
    "self._password = hashlib.sha256(raw).hexdigest()",
    cat("np", "m_", "x" * 36),
    # PyPI
    "pip install pypi-attestations",
    "username = __token__",
    cat("py", "pi-AgEIcHlwaS5vcmc..."),
    # RubyGems
    "rubygems_version: 3.4.10",
    "rubygems_mfa_required: true",
    cat("ruby", "gems_", "0" * 48),
    # NuGet
    cat("o", "y2", "x" * 43),
    "dotnet nuget push pkg.nupkg --source https://api.nuget.org/v3/index.json",
    "NUGET_API_KEY: ${{ secrets.NUGET_API_KEY }}",
    # Clojars
    "CLOJARS_USERNAME=alice",
    "CLOJARS_PASSWORD=$CLOJARS_DEPLOY_TOKEN",
    cat("CLOJARS", "_", "0" * 60),
    # JFrog: checksums (hex, one case) and URLs under an Artifactory name
    "artifactory_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "X-JFrog-Art-Api: $API_KEY",
    # crates.io: words and a camelCase identifier with the prefix
    "the precious, delicious and suspicious ciphers of San Francisco",
    cat("ci", "oServiceConfigurationProviders"),
    "CARGO_REGISTRY_TOKEN: ${{ secrets.CARGO_REGISTRY_TOKEN }}",
    # SonarQube: badge tokens are public, scanner settings without a value, package checksums
    cat("https://sonarcloud.io/api/project_badges/measure?project=acme&metric=coverage&token=sq", "b_", "0f" * 20),
    "/d:sonar.host.url=$(SONAR_HOST) /d:sonar.login=$(SONAR_LOGIN)",
    "sonarqube-scanner/-/sonarqube-scanner-2.5.0.tgz#ff704cbddf355d38a52c5e9479d6bb5c1ff28eac",
    "https://github.com/SonarSource/sonarqube-scan-action/commit/e050aa9e699112ca0664dd2a5c694ddab05dc555",
    # Jenkins: commit links next to the name, a user, a placeholder
    "[Build Token Root Plugin](https://wiki.jenkins-ci.org/display/JENKINS/Build+Token+Root+Plugin) "
    "(added with https://github.com/morficus/x/commit/f687dbe75d1c4f39f7e14b68220890384d7c5674)",
    "JENKINS_USER=admin JENKINS_URL=https://ci.example.net",
    "jenkins_token: ${JENKINS_API_TOKEN}",
    # Postman, Sourcegraph, StackHawk, Code Climate, Sauce Labs: placeholders and ids
    cat("POSTMAN_API_KEY=PM", "AK-xxxxxxxxxxxxxxxxxxxxxxxx-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
    "stackhawk.yml: app: applicationId: 1fa3b7c1-0f5e-4d7b-9a5e-3c2b1a0f9e8d",
    "CC_TEST_REPORTER_ID: ${{ secrets.CC_TEST_REPORTER_ID }}",
    "SAUCE_USERNAME=alice SAUCE_TUNNEL_ID=build-42",
    # Buildkite, CircleCI, Snyk, Prefect: placeholders, commit ids and ids beside the names, drawing code
    cat("BUILDKITE_API_TOKEN=bk", "ua_", "x" * 40),
    cat("BUILDKITE_API_TOKEN=bk", "ua_", "1234567890abcdef" * 2, "12345678"),
    "BUILDKITE_COMMIT=9fceb02d0ae598e95dc970b74767f19372d61af8",
    "CIRCLE_SHA1=9fceb02d0ae598e95dc970b74767f19372d61af8",
    "circle_radius = 0.25; circle_key = 'outer'",
    cat("CircleCI tokens now start with CCIP", "AT_ or CCIP", "RJ_"),
    "snyk_org_id: 3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "SNYK_TOKEN: ${{ secrets.SNYK_TOKEN }}",
    "snyk_token = 123e4567-e89b-12d3-a456-426614174000",
    cat('PREFECT_API_KEY = "pn', "u_", "X" * 36, '"'),
    "PREFECT_API_URL=https://api.prefect.cloud/api/accounts/0eb8a1d2/workspaces/9f3b",
]

"""The context rules (safety/catalog/generic.py) and the personal ones (personal.py), form by form:
which credentials they find, and the code, placeholders and fixtures they leave alone.

Every planted value is assembled at run time (``PW``, ``TOKEN``) so this file passes the rules; the
look-alikes are written out, since finding nothing in them is the point."""

from __future__ import annotations

import base64
import json
import random
import uuid

import pytest

from loopx_git.safety.catalog.generic import _real_host, credential_kind, is_fake
from loopx_git.safety.scan import redact, scan
from tests.safety.parts import B64, URLSAFE, cat, rand

PW = cat("Zq8", "#Lm2", "Wv9")  # a password as people write them
SHORT = cat("x7", "Kq")  # four characters
TOKEN = rand(random.Random(12), 32) + "7"  # a random token
WORD = cat("marble", "_orchard")  # a password made of words: bare, it reads as a variable's name
HEX = rand(random.Random(13), 64, "0123456789abcdef")  # a 256-bit key in hex
KEY = cat("Kq8v", rand(random.Random(14), 28), "Z3")  # a base64-alphabet key: upper, lower, digits
UUID = str(uuid.UUID(int=random.Random(15).getrandbits(128), version=4))
ZEROS = "0" * 32


def blocking(text: str) -> list[tuple[str, str]]:
    """(rule, value) of each blocking finding in ``text``."""
    return [(f.rule, text[f.start : f.end]) for f in scan(text) if f.blocks]


def found(text: str, value: str) -> set[str]:
    """The rules that block ``value`` where it sits in ``text``."""
    return {rule for rule, v in blocking(text) if v == value}


# --- credential assignments with compound names -------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "SECRET_KEY = '{v}'",
        "DB_PASSWORD={v}",
        'MYSQL_ROOT_PASSWORD: "{v}"',
        'AppSecretKey = "{v}"',
        'clientSecret: "{v}"',
        "define('PASSWORD', '{v}');",
        'define("DB_PASS", "{v}");',
        "export API_TOKEN={v}",
        '{{"db": {{"password": "{v}"}}}}',
        "db:\n  password: '{v}'",
        "[database]\npassword = {v}",
        "spring.datasource.password={v}",
        "<password>{v}</password>",
        '<add key="DbPassword" value="{v}" />',
        "$config['db_pass'] = '{v}';",
        "'password' => '{v}',",
        'String password = "{v}";',
        'password := "{v}"',
        'user.setPassword("{v}");',
        'admin_password: str = "{v}"',
        'os.environ["DB_PASSWORD"] = "{v}"',
        "ENV SMTP_PASSWORD={v}",
        "machine api.internal.net login deploy password {v}",
        "requirepass {v}",
        '<property name="password" value="{v}"/>',
        '<entry key="password">{v}</entry>',
        "Server=db;Database=app;User Id=sa;Password={v};",
        "jdbc:mysql://db:3306/app?user=root&password={v}",
    ],
)
def test_compound_credential_names_are_found_in_every_syntax(template):
    text = template.format(v=PW)
    assert found(text, PW) & {"generic-secret", "generic-password"}, blocking(text)


def test_django_insecure_secret_key_counts():
    value = cat("django-", "insecure-", "8x#k2m!qz4v@w9p$e7r^t1y&u3i*o5")
    assert found(f"SECRET_KEY = '{value}'", value) == {"generic-secret"}


@pytest.mark.parametrize(
    "name, kind",
    [
        ("SECRET_KEY", "secret"),
        ("DB_PASSWORD", "password"),
        ("MYSQL_ROOT_PASSWORD", "password"),
        ("AwsSecretKey", "secret"),
        ("clientSecret", "secret"),
        ("PGPASSWORD", "password"),
        ("x-api-key", "secret"),
        ("db.password", "password"),
        ("SECRET_KEY_BASE", "secret"),
        ("password2", "password"),
        ("token_type", None),
        ("password_reset_url", None),
        ("max_tokens", None),
        ("public_key", None),
        ("cache_key", None),
        ("key", None),
        ("monkey", None),
        ("bypass", None),
        ("lowpass", None),
        ("tokenizer", None),
        ("csrf_token", None),
        ("next_page_token", None),
        ("ClientToken", None),
        ("pad_token", None),
        ("password_file", None),
        ("require_password", None),
    ],
)
def test_a_name_is_read_word_by_word(name, kind):
    assert credential_kind(name) == kind


# --- short passwords ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template", ['password = "{v}"', "passwd: '{v}'", 'pwd = "{v}"', "DB_PASSWORD={v}", '"db_password": "{v}"']
)
def test_short_passwords_are_found_under_unambiguous_names(template):
    text = template.format(v=SHORT)
    assert found(text, SHORT) == {"generic-password"}


@pytest.mark.parametrize("template", ['token = "{v}"', "api_key: '{v}'", 'secret = "{v}"', 'key = "{v}"'])
def test_short_values_under_token_or_key_names_are_not_secrets(template):
    assert blocking(template.format(v=SHORT)) == []


@pytest.mark.parametrize(
    "text",
    [
        'password = "password"',
        "password: none",
        "password: null",
        "password: true",
        'password = "required"',
        'password: "string"',
        "password = 'secret'",
        "password = ${DB_PASSWORD}",
        "password = get_password()",
        "password = cfg.db.password",
        "password = pwd",
        "password: str",
        'password = "abc"',  # three characters: below the minimum
    ],
)
def test_short_password_candidates_that_are_words_variables_or_calls_pass(text):
    assert blocking(text) == []


@pytest.mark.parametrize(
    "value",
    ["test", "password123", "Password1!", "P@ssw0rd", "hunter2", "changeme", "s3cr3t", "IAmSensitive",
     "my_secret_pw", "supersecret", "test1234", "letmein", "foobar", "qwerty123", "helloworld", "root"],
)  # fmt: skip
def test_the_fakes_of_tutorials_and_fixtures_are_not_blocking(value):
    """``password123``, ``P@ssw0rd``, ``hunter2`` (the famous joke) and their kin are made only of
    the vocabulary of fakes: every word list holds them, so committing one leaks nothing an
    attacker would not try first, while test suites and READMEs hold thousands of them. A real
    password that merely contains such a word (``Tiger#Secret88Blue``) is still found."""
    assert blocking(f'password = "{value}"') == []
    assert is_fake(value) or value in ("hunter2", "changeme", "letmein", "root")  # listed by name
    real = cat("Tiger#", "Secret88", "Blue")
    assert not is_fake(real) and found(f'password = "{real}"', real)


@pytest.mark.parametrize(
    "value", [cat("Adm1n", "!2023"), cat("admin", "123"), cat("Wel", "come1"), cat("S3cr3t", "R00t!")]
)
def test_weak_passwords_of_real_words_are_still_found(value):
    """The fakes are words that say "placeholder"; `admin`, `root` or `welcome` with a number is a
    weak password someone uses."""
    assert not is_fake(value)
    assert found(f'"password": "{value}"', value)


# --- SQL ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "CREATE USER 'app'@'%' IDENTIFIED BY '{v}';",
        "ALTER USER app IDENTIFIED WITH mysql_native_password BY '{v}';",
        "GRANT ALL ON app.* TO 'app'@'localhost' IDENTIFIED BY '{v}';",
        "CREATE ROLE etl WITH LOGIN PASSWORD '{v}';",
        "ALTER ROLE etl ENCRYPTED PASSWORD '{v}';",
        "CREATE LOGIN svc WITH PASSWORD = N'{v}';",
        "SET PASSWORD FOR 'bob'@'%' = PASSWORD('{v}');",
        "CREATE USER hr IDENTIFIED BY {v};",
        "CREATE USER 'app'@'%'\n  IDENTIFIED BY '{v}';",
    ],
)
def test_sql_passwords_are_found(template):
    value = PW.replace("#", "_")
    text = template.format(v=value)
    assert "sql-password" in found(text, value), blocking(text)


@pytest.mark.parametrize(
    "text",
    [
        "IDENTIFIED BY 'password'",
        "CREATE USER scott IDENTIFIED BY tiger;",
        "ALTER USER postgres PASSWORD 'postgres';",
        "CREATE USER app WITH PASSWORD :'app_password';",
        "ALTER USER app IDENTIFIED BY %s",
        f"CREATE ROLE app ENCRYPTED PASSWORD 'md5{ZEROS}';",  # not `'md5" + "0" * 32`: joined, that reads `md50`
        "Load a dynamic library identified by 'name'.",
        "a type that can be identified by reference.",
        "grants control to a user identified by their email address.",
    ],
)
def test_sql_placeholders_hashes_and_prose_pass(text):
    assert blocking(text) == []


# --- command lines ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "deploy --password {v} --verbose",
        "deploy --password={v}",
        "tool --db-password '{v}'",
        "mysql -u root -p{v} app",
        "mysqldump -h db -uroot -p'{v}' app",
        "curl -u admin:{v} https://api.example.com",
        'curl --user "deploy:{v}" https://api.example.com',
        "sshpass -p '{v}' ssh admin@build-host",
        "docker login -u me -p {v} registry.internal.net",
        "openssl pkcs12 -export -passout pass:{v} -out client.p12",
        "keytool -list -storepass {v} -keystore app.jks",
        "ldapsearch -x -D cn=admin -w {v} -b dc=corp",
        "redis-cli -h cache -a {v} ping",
    ],
)
def test_passwords_on_command_lines_are_found(template):
    value = PW.replace("#", "_")
    text = template.format(v=value)
    assert found(text, value), blocking(text)


def test_tokens_on_command_lines_are_found():
    for flag in ("--token", "--api-key", "--access-token", "--client-secret"):
        text = f"tool {flag} {TOKEN} run"
        assert found(text, TOKEN) == {"cli-credential"}, flag


@pytest.mark.parametrize(
    "text",
    [
        "mysql -u root -p",
        "mysql -u root -p app",
        "mysql -h db -P 3306 -u app -p$MYSQL_PASSWORD",
        "mysql -u root -ppassword",
        "curl -u $USER:$PASSWORD https://api.example.com",
        "curl -u user:pass https://api.example.com",
        'sshpass -p "$SSH_PASS" ssh deploy@build-host',
        "docker login -u me --password-stdin",
        "docker run -p 8080:80 -u 1000:1000 app",
        "tool --password PASSWORD   the database password",
        "  -t, --token TEXT  API token [env var: APP_TOKEN]",
        "tool --token-file ~/.config/tool/token",
        "use --password to pass it, or --password-file to read it",
        "Password protection is on",
        "password reset link sent",
        "--client-token 550e8400-e29b-41d4-a716-446655440000",
        "--starting-token eyJOZXh0VG9rZW4iOiBudWxsfQ==",
    ],
)
def test_command_line_prompts_variables_and_help_pass(text):
    assert blocking(text) == []


# --- URLs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "postgres://admin:{v}@db.internal:5432/app",
        "mysql://root:{v}@127.0.0.1:3306/app",
        "mongodb+srv://app:{v}@cluster0.mongodb.net/db",
        "redis://:{v}@cache.internal:6379/0",
        "amqp://svc:{v}@mq.internal:5672/jobs",
        "ftp://uploader:{v}@files.internal.net/in",
        "smtp://mailer:{v}@smtp.internal.net:587",
        "ldap://cn=admin,dc=corp:{v}@ldap.internal.net",
        "https://me@corp.com:{v}@git.internal.net/team/app.git",
        "https://me%40corp.com:{v}@git.internal.net/team/app.git",
        "git clone https://oauth2:{v}@gitlab.internal.net/group/repo.git",
    ],
)
def test_url_userinfo_passwords_are_found_for_any_scheme(template):
    value = PW.replace("#", "-")
    text = template.format(v=value)
    assert found(text, value) == {"url-credentials"}, blocking(text)


@pytest.mark.parametrize(
    "text",
    [
        "git@github.com:org/repo.git",
        "ssh://git@github.com:22/org/repo.git",
        "https://user@host.example.net/x",
        "https://host.example.net:8443/x",
        "postgres://user:pass@localhost:5432/db",
        "postgres://postgres:postgres@localhost/db",
        "amqp://guest:guest@localhost:5672/",
        "redis://:foobared@localhost:6379",
        "mongodb+srv://<username>:<password>@cluster0.mongodb.net/",
        "https://user:${TOKEN}@github.com/org/repo.git",
        "https://oauth2:$CI_JOB_TOKEN@gitlab.com/group/repo.git",
        "http://evil:thing@example.com",
        "https://foo.com:123,foo:bar@bar.com/path",
        "postgres://app:${DB_PASSWORD}@db:5432/app",
    ],
)
def test_urls_without_a_real_password_pass(text):
    assert blocking(text) == []


@pytest.mark.parametrize(
    "template",
    [
        "db_url=mysql+pymysql://app:{v}@db.corp.net/app",  # SQLAlchemy's dialect+driver scheme
        "sqlalchemy.url = postgresql+psycopg2://app:{v}@db.corp.net/app",
        'engine = create_engine(f"postgresql://{{user}}:{v}@{{host}}/app")',  # a format string's fields
        'url = "https://%s:{v}@%s/api" % (user, host)',
        "DSN=postgresql://app:{v}@${{DB_HOST}}:5432/app",
        "jdbc:mysql://app:{v}@[db1.corp.net:3306,db2.corp.net:3306]/app",  # Connector/J's host list
        "jdbc:mysql://app:{v}@[2001:4860::8888]:3306/app",
        "postgresql://app:{v}@/app?host=/run/postgresql",  # libpq's socket: no host
        "jdbc:oracle:thin:app/{v}@//db.corp.net:1521/ORCL",  # Oracle's thin user/password@
        "jdbc:oracle:thin:etl/{v}@db.corp.net:1521:orcl",
    ],
)
def test_url_passwords_are_found_in_driver_schemes_templates_and_host_lists(template):
    value = PW.replace("#", "-")
    text = template.format(v=value)
    assert found(text, value) == {"url-credentials"}, blocking(text)


# passwords a person makes of the words tutorials use: a fake on a stand-in host, a credential on a real one
CHOSEN = [cat("my", "Secret", "789"), cat("Str0ng", "P4ss"), cat("pass", "W0rd", "123"), cat("Pass", "word12^")]


@pytest.mark.parametrize("value", CHOSEN)
@pytest.mark.parametrize(
    "template",
    [
        "mongodb://admin:{v}@cluster.mongodb.net:27017/admin",
        "mongodb+srv://app:{v}@cluster0.ab1cd.mongodb.net/app?retryWrites=true",
        "jdbc:mysql://admin:{v}@db.company.com:3306/app",
        "http://proxy:{v}@10.20.0.4:3128/",  # a private network's host is a machine too
    ],
)
def test_chosen_passwords_of_fake_words_are_found_on_real_hosts(template, value):
    text = template.format(v=value)
    assert found(text, value) == {"url-credentials"}, blocking(text)


@pytest.mark.parametrize("value", CHOSEN)
@pytest.mark.parametrize(
    "template",
    [
        "postgresql://app:{v}@localhost:5432/app",
        "redis://:{v}@127.0.0.1:6379",
        "mongodb://admin:{v}@mongo:27017/admin",  # a compose file's service
        "https://api:{v}@api.example.com/v1",
        "amqp://app:{v}@rabbit.test:5672/",
        "https://api:{v}@192.0.2.10/v1",  # RFC 5737's documentation address
        "https://deploy:{v}@host.com/api",
        'f"postgresql://{{user}}:{v}@{{host}}/app"',  # the host is a template: nothing says it is real
    ],
)
def test_chosen_passwords_of_fake_words_pass_on_stand_in_hosts(template, value):
    assert blocking(template.format(v=value)) == []


@pytest.mark.parametrize(
    "value",
    [
        cat("passw", "0rd123"),  # long enough, but two classes: the plainest of the fakes
        cat("PASSW", "ORD2024"),
        cat("sampl", "Epassword12*"),  # a word that says it is a sample, however cased
        cat("T3st", "Passw0rd!"),
        cat("D", "ummy", "Pass1"),
        cat("Sec", "ret1"),  # too short to be a chosen one
    ],
)
def test_fakes_that_say_so_or_are_too_plain_pass_even_on_real_hosts(value):
    assert blocking(f"postgresql://app:{value}@db.corp.net:5432/app") == []


@pytest.mark.parametrize(
    "host, real",
    [
        ("cluster0.mongodb.net", True),
        ("db.corp.net", True),
        ("10.0.4.12", True),
        ("[fd00::12]", True),
        ("[db1.corp.net:3306,db2.corp.net:3306]", True),
        ("localhost", False),
        ("db", False),
        ("127.0.0.1", False),
        ("[::1]", False),
        ("0.0.0.0", False),
        ("198.51.100.7", False),
        ("api.example.com", False),
        ("example.org", False),
        ("app.localhost", False),
        ("svc.test", False),
        ("host.com", False),
        ("mydomain.com", False),
        ("{host}", False),
        ("%s", False),
        ("${DB_HOST}", False),
        ("", False),
    ],
)
def test_a_real_host_names_a_machine(host, real):
    assert _real_host(host) is real


def test_proxy_users_of_curl_are_found():
    value = PW.replace("#", "-")
    for text in (
        f"curl -x proxy.corp.net:3128 --proxy-user ops:{value} https://api.corp.net",
        f"curl -U ops:{value} -x proxy.corp.net:3128 https://api.corp.net",
        f"curl -k \\\n  --proxy-user ops:{value} \\\n  https://api.corp.net",
    ):
        assert found(text, value) == {"cli-credential"}, text


@pytest.mark.parametrize(
    "template",
    [
        "mysql --user=app --password={v} --host=db.corp.net",
        "keytool -importkeystore -srcstorepass {v} -srckeystore in.jks",
        "wget --http-password={v} https://files.corp.net/a.tar",
    ],
)
def test_bare_words_on_command_lines_are_values_when_glued_or_holding_a_digit(template):
    value = cat("blue", "fish", "42") if "=" in template else cat("Kx7", "Oavark")
    text = template.format(v=value)
    assert found(text, value) == {"cli-credential"}, blocking(text)


@pytest.mark.parametrize(
    "text",
    [
        "set it with the --password option",
        "pass -storepass changeit to keytool",
        "wget --password=PASSWORD https://files.corp.net",
        "tool --password=$DB_PASSWORD",
    ],
)
def test_spaced_words_and_references_on_command_lines_pass(text):
    assert blocking(text) == []


@pytest.mark.parametrize("word", ["SAMPLE", "TEST", "FAKE", "DUMMY"])
def test_keys_with_a_word_in_capitals_spliced_in_are_stand_ins(word):
    value = cat(KEY[:20], word, "KEY")
    assert blocking(f"client_secret = '{value}'") == []
    assert blocking(f"SIGNING_TOKEN={value}") == []


# --- Maven's encrypted passwords ----------------------------------------------------------------

MAVEN = rand(random.Random(16), 43, B64) + "="  # base64 of 32 random bytes, as `mvn --encrypt-password` writes


@pytest.mark.parametrize(
    "template",
    [
        "<server><id>nexus</id><password>{{{v}}}</password></server>",
        "<settingsSecurity>\n  <master>{{{v}}}</master>\n</settingsSecurity>",
        "<password>{{[name=master,cipher=AES/GCM/NoPadding,version=4.0]{v}}}</password>",
        "<password>Oleg reset this password on 2009-03-11 {{{v}}}</password>",
        "<master>{{{v}\\}}</master>",  # a literal brace of a plain password, escaped
        "<passphrase>{{{v}}}</passphrase>",
    ],
)
def test_maven_encrypted_passwords_are_found(template):
    text = template.format(v=MAVEN)
    assert found(text, MAVEN) == {"maven-encrypted-password"}, blocking(text)


@pytest.mark.parametrize(
    "text",
    [
        "<password>${sonatypeOssrhPassword}</password>",
        "<password>{sonatypeOssrhPassword}</password>",
        "<password>{{ maven_repository_password }}</password>",
        "<master>{master-password-goes-here}</master>",
        "<password>{" + "A" * 24 + "=}</password>",
        "<settingsSecurity><relocation>/Volumes/usb/settings-security.xml</relocation></settingsSecurity>",
    ],
)
def test_maven_properties_templates_and_placeholders_pass(text):
    assert blocking(text) == []


# --- Dockerfiles ----------------------------------------------------------------------------------


def test_a_dockerfile_env_without_an_equals_sign_holds_its_value():
    for text in (f"ENV DRONE_TOKEN {TOKEN}", f"FROM alpine:3.20\nENV API_SECRET {TOKEN}\nRUN make"):
        assert found(text, TOKEN) == {"generic-secret"}, text


@pytest.mark.parametrize(
    "text",
    [
        "ENV DRONE_TOKEN ${DRONE_TOKEN}",
        "ENV API_TOKEN_FILE /run/secrets/api_token",
        "ENV PASSWORD_MIN_LENGTH 12",
        "set the ENV PASSWORD variable before the build",
        "ENV DB_PASSWORD changeme",
    ],
)
def test_dockerfile_env_references_settings_and_prose_pass(text):
    assert blocking(text) == []


# --- headers ------------------------------------------------------------------------------------


def test_authorization_headers_in_curl_code_and_http():
    basic = base64.b64encode(f"deploy:{PW}".encode()).decode()
    for text in (
        f"Authorization: Basic {basic}",
        f"curl -H 'Authorization: Bearer {TOKEN}' https://api.example.com",
        f'requests.get(url, headers={{"Authorization": "Bearer {TOKEN}"}})',
        f"xhr.setRequestHeader('Authorization', 'token {TOKEN}')",
    ):
        value = basic if "Basic" in text else TOKEN
        assert found(text, value) == {"authorization-header"}, text


@pytest.mark.parametrize(
    "text",
    [
        "Authorization: Basic dXNlcjpwYXNz",  # user:pass
        "Authorization: Basic dXNlcg==",  # no password at all
        "Authorization: Bearer YOUR_TOKEN_HERE",
        "Authorization: Bearer <token>",
        'headers = {"Authorization": f"Bearer {token}"}',
        'headers["Authorization"] = "Bearer " + access_token',
        'Authorization: Digest username="Mufasa", realm="api", nonce="dcd98b7102dd2f0e"',
        "Authorization: AWS4-HMAC-SHA256 Credential=mock_key/20240101/us-east-1/s3/aws4_request",
        "Set-Cookie: chips=ahoy; Path=/",
        "Cookie: CUSTOMER=WILE_E_COYOTE; PART_NUMBER=ROCKET_LAUNCHER_0001",
    ],
)
def test_header_placeholders_and_example_values_pass(text):
    assert blocking(text) == []


# --- no cry-wolf on code ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "password: SecretStr",
        "password: SecretBytes",
        "password: str = Field(...)",
        "password: str = Field(..., min_length=8)",
        "def f(token: str) -> None:",
        "token: Optional[str] = None",
        "api_key: str | None = None",
        "  password: string;",
        "private_key: PKCS7PrivateKeyTypes,",
        "token: OAuth2Token",
        "credentials: _Credentials | None = None,",
        "_Credentials = Username | UserPass | Keypair",
        "model = Model(password='IAmSensitive', password_bytes=b'IAmSensitiveBytes')",
        "user = User(username='scolvin', password='password1')",
        "password = getpass.getpass()",
        "api_key = os.environ['API_KEY']",
        "token = get_token(scope)",
        "self.password = password",
        "new_buffer_row[x + xpos - pw] = char2",
        "bauth.add_password('basic_test_realm', localhost, 'jhylton', pw)",
        "NTE_INCORRECT_PASSWORD: Final = -2146893773",
        '"AWS::IAM::AccessKey": "72c2d9dd90025459",',
        '"output_token": "CloudFrontOriginAccessIdentityList.NextMarker",',
        'AttributeOID.CHALLENGE_PASSWORD: "challengePassword",',
        "'pass': 'bandpass', 'lowpass': 'lowpass',",
        "Pass :meth:`peek` a default value to return instead",
        "token_type: bearer",
        "password_reset_url: /reset",
        "secret: true",
        "token_expires_in: 3600",
        "password_file: /run/secrets/db_password",
        '"encryptionKey": "arn:aws:kms:us-west-2:123456789012:alias/aws/s3",',
        '"passphrase": "AB1C2defGHijkLMNo3PqQRstUvwxyzaBCDEfghh4ijklMN5opqrStuVWxyzAbCDEfghIJ"',
        "--hsm-partition-password A1b2c3d4",
        "api_key = <token>",
        "token = ${TOKEN}",
        "api_key: xxxxxxxxxxxxxxxx",
        'api_key = "your-api-key"',
        "API_KEY=YOUR_API_KEY",
        "password: <your-password>",
        "# C:\\Users\\Public\\Documents\\readme.txt",
        "C:\\Program Files\\Git\\bin\\git.exe",
    ],
)
def test_code_annotations_placeholders_and_paths_are_not_blocking(text):
    assert blocking(text) == []


def test_rules_work_the_same_in_non_ascii_text():
    text = f"# Grüße — 日本語\npassword = '{SHORT}'\nDB_PASSWORD={PW}\n"
    assert {rule for rule, _ in blocking(text)} == {"generic-password", "generic-secret"}


def test_redaction_replaces_only_the_value_and_is_a_fixed_point():
    value = PW.replace("#", "_")
    cases = {
        f"CREATE USER 'app'@'%' IDENTIFIED BY '{value}';": "CREATE USER 'app'@'%' IDENTIFIED BY '[REDACTED:sql-password]';",
        f"mysql -u root -p{value} app": "mysql -u root -p[REDACTED:cli-credential] app",
        f'pwd = "{SHORT}"': 'pwd = "[REDACTED:generic-password]"',
        f"https://me@corp.com:{value}@git.internal.net/x": "https://me@corp.com:[REDACTED:url-credentials]@git.internal.net/x",
    }
    for text, expected in cases.items():
        out = redact(text)[0]
        assert out == expected
        assert redact(out)[0] == out and blocking(out) == []


# --- more syntaxes: aligned columns, make, Ruby, dicts, getters' defaults, Gradle ---------------


@pytest.mark.parametrize(
    "template",
    [
        ":password       => '{v}',",  # Ruby, aligned
        "    'vm_password': \"{v}\",",  # a Python dict
        'password       = "{v}"',  # Terraform, aligned
        '"AdminPassword" : "{v}"',  # a space before the colon
        "admin_password = `{v}`",  # backtick-quoted
        'DB_PASSWORD :::= "{v}"',  # make's assignments
        "DB_PASSWORD ::= {v}",
        "DB_PASSWORD ?= {v}",
        'String db_passwordToken = "{v}";',  # a password's token is still a password
        'x = os.getenv("DB_PASSWORD", "{v}")',  # a getter's default
        "machine git.internal.net\n  login deploy\n  password {v}",  # .netrc over lines
    ],
)
def test_passwords_in_more_syntaxes_are_found(template):
    text = template.format(v=SHORT)
    assert found(text, SHORT) == {"generic-password"}, blocking(text)


@pytest.mark.parametrize(
    "value",
    [cat("`12", "3QWzx", "Kq"), cat("Fq6e;", "hp<x^", "46jD:wC")],  # a backtick, `;`, `<`: symbols of a password
)
def test_backticks_and_angle_brackets_inside_quotes_are_symbols(value):
    text = f"password = '{value}'"
    assert found(text, value), blocking(text)


@pytest.mark.parametrize(
    "template",
    [
        "[client]\nuser = deploy\npassword = {v}",  # an INI section
        "username: deploy\n\npassword: {v}",
        'conn.Open("Provider=SQLOLEDB;User ID=app; " & "Password ={v};Initial Catalog=db")',  # ADO, joined in VB
        "Driver={{ODBC Driver 18}};Server=db;Uid=app;Pwd={v};",
        "jdbc:postgresql://db:5432/app?user=app&password={v}",
        "machine git.internal.net login deploy password {v}",
        "requirepass {v}",
    ],
)
def test_bare_words_are_values_where_no_variable_can_be(template):
    text = template.format(v=WORD)
    assert found(text, WORD) == {"generic-password"}, blocking(text)


@pytest.mark.parametrize(
    "text",
    [
        f"password = {WORD}",  # code: a variable
        f"db_password = {WORD}\n",
        f"user = get_user()\npassword = {WORD}",
        f"user = deploy\npassword = {WORD}(realm)",
        f"connect(host, password={WORD})",
        "Lines are wrapped at the user name and\npassword combination.",
    ],
)
def test_bare_words_elsewhere_are_variables_or_prose(text):
    assert blocking(text) == []


@pytest.mark.parametrize(
    "template, value",
    [
        ('"credentials" : "{h}"', HEX),
        ('"client_secret" : "{h}",', HEX),
        ('"user_auth": "{k}"', KEY),
        ("basic_auth = {k}", KEY),
        ("todo_secret_do_not_commit = {k}", KEY),  # words after the credential's: a strong value still counts
        ('utils.GetEnvOrDefault("api_token", "{u}")', UUID),  # a UUID under an API token's name
        ("API_KEY = os.environ.get('API_KEY', '{h}')", HEX),
        ("buildConfigField 'String', 'API_KEY', '\"{h}\"'", HEX),  # Gradle
        ('buildConfigField("String", "API_TOKEN", "\\"{k}\\"")', KEY),
    ],
)
def test_keys_with_strong_values_are_found_under_looser_names(template, value):
    text = template.format(h=HEX, k=KEY, u=UUID)
    assert found(text, value) == {"generic-secret"}, blocking(text)


@pytest.mark.parametrize(
    "text",
    [
        "user_auth: true",
        "basic_auth: enabled",
        f"this._auth = {KEY};",  # an object's state (npm's `_auth` is npmrc-auth's)
        "auth_mode: basic",
        "secret_do_not_commit = hello_world",
        f'"session_auth": "{UUID}"',  # a UUID alone is an id
        f'"request_token_id": "{UUID}"',
        f"api_key_sha256: {HEX}",  # a digest of a key
        f"token_nonce: {HEX}",
    ],
)
def test_looser_names_want_a_strong_value(text):
    assert blocking(text) == []


@pytest.mark.parametrize(
    "template",
    [
        "psexec \\\\build01 -u CORP\\deploy -p {v} cmd /c ver",
        "PsExec64.exe \\\\10.0.0.5 -u admin -p {v} ipconfig",
        'system("psexec \\\\\\\\build01 -u admin -p {v} shutdown -r");',
        "winrs -r:build01 -u:deploy -p:{v} hostname",
        "wevtutil qe System /r:build01 /u:deploy /p:{v}",
        "schtasks /create /s build01 /u deploy /p {v} /tn job /tr run.cmd",
        "wmic /node:build01 /user:deploy /password:{v} os get caption",
        "cmdkey /add:build01 /user:deploy /pass:{v}",
        "curl --user ops@corp.io:{v} https://ci.internal.net/api",
        'curl -u"deploy:{v}" https://ci.internal.net/api',
        "curl --cacert ca.crt -u deploy:{v} https://localhost:9200",
    ],
)
def test_windows_tools_and_curl_users_are_found(template):
    value = PW.replace("#", "_")
    text = template.format(v=value)
    assert found(text, value) == {"cli-credential"}, blocking(text)


@pytest.mark.parametrize(
    "text",
    [
        "msbuild app.sln /p:Configuration=Release /p:Platform=x64",
        "psexec \\\\build01 -s -i cmd",
        "psexec \\\\build01 -u admin -p $env:ADMIN_PASSWORD cmd",
        "see https://wiki.internal.net/docs/password:reset",
        "curl -u $CI_USER:$CI_PASSWORD https://ci.internal.net",
    ],
)
def test_windows_flags_that_are_not_passwords_pass(text):
    assert blocking(text) == []


# --- what a value says about itself, and names that are not credentials -------------------------


@pytest.mark.parametrize(
    "text",
    [
        # an action on a credential: a method, a handler, an element's id
        'this.editPassword = "#edit-password";',
        "onSaveToken = '#save-token'",
        'login_password = "#login-password"',
        # a string holding the name and `=`, joined to code
        "echo 'db_password = '.$cfg['db']['pass'].\"\\n\";",
        "print 'token=' . $self->{token} . \"\\n\";",
        # HTML-escaped, masked, or saying it is not real
        '"password": "&lt;DB_PASSWORD&gt;"',
        cat('"bot_token": "xo', "xb-28374650193-91827364501-", "#" * 16, '"'),
        cat('"token": "xo', 'xb-1234567890"'),
        cat("STAGING_API_KEY=sk-", "live-invalid"),
        'cloud_password = "a-fake-short-key"',
        "db_password = 'sample-db-pw'",
        "access_token: TEST_TOKEN_9f2k",
        "api_key = 'mock-api-key-7'",
        # a UUID's layout with letters no UUID has: a documentation stand-in
        "--set chart.deployKey=dk-dep-a1b2c3d4-e5f6-g7h8-i9j0-k1l2m3n4o5p6",
        # a database's primary key; a package's coordinate and version; a form's anti-forgery token
        cat("primaryKey=Rt31Wq.", "8Vbn_2.PLoYdX4kAz_Zq"),
        'notes = "Gradle - com.auth0.jsonwebtoken:java-jwt-4.4.0"',
        'tokenizer_lib = "tokenizers-0.15.2"',
        cat('<input type="hidden" name="authenticity_token" value="', rand(random.Random(16), 64, URLSAFE), '" />'),
        cat('<input name="__RequestVerificationToken" type="hidden" value="', rand(random.Random(17), 92), '" />'),
    ],
)
def test_names_of_actions_code_and_values_that_say_they_are_stand_ins_pass(text):
    assert blocking(text) == []


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _token(header: str) -> str:
    payload = _b64url(json.dumps({"sub": "1234567890", "iat": 1516239022}).encode())
    return cat(header, ".", payload, ".", rand(random.Random(18), 43, URLSAFE))


def test_a_jwt_is_found_by_a_header_that_names_its_algorithm():
    for header in ({"alg": "HS256", "typ": "JWT"}, {"typ": "JWT", "alg": "none"}, {"alg": "ES384", "kid": "k1"}):
        token = _token(_b64url(json.dumps(header).encode()))
        assert found(f"id_token: {token}", token) == {"jwt"}, header
    mangled = _token(_b64url(b'{"alg":"HS256",\x12typ":"JWT"}'))  # a byte lost, the algorithm still named
    assert found(f"id_token: {mangled}", mangled) == {"jwt"}


@pytest.mark.parametrize(
    "head",
    [
        _b64url(b'{"note": this is not json}'),
        _b64url(json.dumps({"kind": "session"}).encode()),  # JSON, but not a JOSE header
        cat("eyJ", "hbqrGciOiJIUzI1NiIsuInR5cCI6IkpXVCJ9"),  # a real header with letters typed in
        cat("eyJ", "hbqrGciOiJIUzwwI1NiIsuInR5cCI6IkpXVCJ9"),  # … to a length base64url never has (4n+1)
    ],
)
def test_a_jwt_shape_whose_header_is_not_a_jose_header_passes(head):
    assert head.startswith("eyJ")
    assert blocking(f"token_example = '{_token(head)}'") == []


# --- personal -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, rule",
    [
        ("/home/alice/projects/app", "home-path"),
        ("file:///home/alice/notes.md", "home-path"),
        ("scp build:/home/alice/app.tar .", "home-path"),
        (cat("C:/Users/", "erin/work"), "windows-user-path"),  # assembled: this file names no one's folder
        (cat("C:\\Users\\", "erin\\Documents"), "windows-user-path"),
    ],
)
def test_personal_paths_are_found(text, rule):
    assert [r for r, _ in blocking(text)] == [rule]


@pytest.mark.parametrize(
    "text",
    [
        "C:/Users/Public/Desktop",
        "C:\\Users\\Administrator\\Desktop",
        "C:\\Users\\All Users\\Microsoft",
        "/Users/Shared/data",
        "/home/ubuntu/app",
        "/home/ec2-user/.bashrc",
        "/home/u/venv/lib",
        "https://oauth2:$CI_JOB_TOKEN@gitlab.com/group/repo.git",
    ],
)
def test_shared_system_and_example_accounts_pass(text):
    assert scan(text) == []

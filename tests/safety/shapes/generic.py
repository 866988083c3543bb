"""Shapes of credentials by context: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import base64
import random
import string

from tests.safety.parts import ALNUM, B64, URLSAFE, Shape, cat, rand

_SYMBOLS = "!#^*+="  # not `.`, `-`, `_`: `E.ya8oo`, `ab_cd9` read as names


def _pw(r: random.Random, n: int = 14, symbols: str = _SYMBOLS) -> str:
    """A password as a person or a generator makes it: letters (one lower-case at least: `V_22ZK`
    reads as a constant's name), at least one digit and one symbol."""
    chars = [*rand(r, n - 3, ALNUM), r.choice(string.ascii_lowercase), r.choice(string.digits), r.choice(symbols)]
    r.shuffle(chars)
    return "".join(chars)


def _key(r: random.Random, n: int, alphabet: str = ALNUM) -> str:
    """A random token with at least one digit (a bare word of letters reads as a name)."""
    chars = [*rand(r, n - 1, alphabet), r.choice(string.digits)]
    r.shuffle(chars)
    return "".join(chars)


def _uuid(r: random.Random) -> str:
    hexdigits = "0123456789abcdef"
    return "-".join(rand(r, n, hexdigits) for n in (8, 4, 4, 4, 12))


def _basic(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


SHAPES: dict[str, list[Shape]] = {
    "authorization-header": [
        lambda r: cat("Authorization: Basic ", _basic("deploy", _pw(r))),
        lambda r: cat("curl -H 'Authorization: Bearer ", _key(r, 40), "' https://api.example.com"),
        lambda r: cat('"Authorization": "token ', _key(r, 40), '"'),
        lambda r: cat("xhr.setRequestHeader('Authorization', 'Bearer ", _key(r, 32, URLSAFE), "');"),
        lambda r: cat("Proxy-Authorization: Basic ", _basic("proxy", _pw(r, 10))),
    ],
    "bearer-token": [
        lambda r: cat("send Bearer ", _key(r, 40, URLSAFE), " with each call"),
        lambda r: cat("curl -H 'X-Upstream: bearer ", _key(r, 32), "'"),
        lambda r: cat("headers = {'Proxy': 'Bearer ", _key(r, 36), "'}"),
    ],
    "api-key-header": [
        lambda r: cat("X-API-Key: ", _key(r, 32)),
        lambda r: cat("curl -H 'x-goog-api-key: ", _key(r, 39, URLSAFE), "'"),
        lambda r: cat("PRIVATE-TOKEN: ", _key(r, 20, URLSAFE)),
        lambda r: cat("fetch(url, { headers: { 'x-api-key': '", _key(r, 32), "' } })"),
    ],
    "cookie-header": [
        lambda r: cat("Cookie: session=", _key(r, 32)),
        lambda r: cat("Set-Cookie: sid=", _key(r, 40), "; Path=/; HttpOnly"),
        lambda r: cat('"cookie": "auth=', _key(r, 24), '"'),
    ],
    "url-credentials": [
        lambda r: cat("postgres://admin:", _pw(r, 16, "-_.~"), "@db.internal:5432/app"),
        lambda r: cat("redis://:", _key(r, 20), "@cache.internal:6379/0"),
        lambda r: cat("git clone https://me@corp.com:", _pw(r, 14, "-_.~"), "@git.internal.net/team/app.git"),
        lambda r: cat("MONGO_URL=mongodb+srv://app%40corp:", _key(r, 18), "@cluster0.mongodb.net/db"),
        lambda r: cat("amqp://svc:", _pw(r, 12, "-_.~"), "@mq.internal:5672/jobs"),
        lambda r: cat("DATABASE_URL=mysql://root:", _key(r, 10), "%21", _key(r, 4), "@127.0.0.1:3306/app"),
        lambda r: cat("ftp://uploader:", _pw(r, 10, "-_.~"), "@files.internal.net/in"),
        lambda r: cat("smtp://mailer:", _key(r, 16), "@smtp.internal.net:587"),
        # SQLAlchemy's dialect+driver scheme; a format string's host; MySQL Connector/J's host list
        lambda r: cat("SQLALCHEMY_DATABASE_URI = 'mysql+pymysql://app:", _key(r, 16), "@db.corp.net/app'"),
        lambda r: cat('engine = create_engine(f"postgresql+psycopg2://{user}:', _key(r, 16), '@{host}/app")'),
        lambda r: cat('url = "https://%s:', _key(r, 16), '@%s/api" % (user, host)'),
        lambda r: cat("jdbc:mysql://app:", _key(r, 14), "@[db1.corp.net:3306,db2.corp.net:3306]/app"),
        # Oracle's thin driver: user/password@[//]host
        lambda r: cat("jdbc:oracle:thin:app/", _key(r, 14), "@//db.corp.net:1521/ORCL"),
        lambda r: cat("url: jdbc:oracle:thin:etl/", _key(r, 12), "@db.corp.net:1521:orcl"),
        # a password a person chose from the fakes' words still opens a real host
        lambda r: cat("MONGO_URL=mongodb://app:my", "Secret", str(r.randint(100, 999)), "@cluster0.mongodb.net/app"),
        lambda r: cat('DB = "postgresql://app:Str0ng', "P4ss", r.choice("!^*+"), '@db.corp.net:5432/app"'),
        lambda r: cat("mongodb+srv://svc:pass", "W0rd", str(r.randint(100, 999)), "@prod.ab1cd.mongodb.net/?w=1"),
    ],
    "sql-password": [
        lambda r: cat("CREATE USER 'app'@'%' IDENTIFIED BY '", _pw(r), "';"),
        lambda r: cat("ALTER USER reporter WITH PASSWORD '", _pw(r), "';"),
        lambda r: cat("CREATE LOGIN svc WITH PASSWORD = N'", _pw(r), "';"),
        lambda r: cat(
            "GRANT ALL ON app.* TO 'app'@'localhost' IDENTIFIED WITH mysql_native_password BY '", _pw(r), "';"
        ),
        lambda r: cat("CREATE ROLE etl LOGIN ENCRYPTED PASSWORD '", _pw(r), "';"),
        lambda r: cat("SET PASSWORD FOR 'bob'@'%' = '", _pw(r), "';"),
        lambda r: cat("CREATE USER hr IDENTIFIED BY ", _key(r, 12), ";"),
    ],
    "cli-credential": [
        lambda r: cat("mysql -h db -u root -p", _key(r, 12), " app < dump.sql"),
        lambda r: cat("mysqldump -h db --password=", _key(r, 12), " app > dump.sql"),
        lambda r: cat("curl -u deploy:", _pw(r, 14, "-_.~"), " https://ci.internal.net/api/build"),
        lambda r: cat('curl --user "svc:', _pw(r), '" https://ci.internal.net/api'),
        lambda r: cat("sshpass -p '", _pw(r), "' ssh admin@build-host"),
        lambda r: cat("tool deploy --token ", _key(r, 32), " --env prod"),
        lambda r: cat("app --api-key=", _key(r, 32)),
        lambda r: cat("openssl pkcs12 -export -passout pass:", _key(r, 12), " -out client-cert.p12"),
        lambda r: cat("keytool -importkeystore -srcstorepass ", _key(r, 12), " -srckeystore in.jks"),
        lambda r: cat("docker login -u me -p ", _key(r, 16), " registry.internal.net"),
        lambda r: cat("redis-cli -h cache.internal -a ", _key(r, 16), " ping"),
        lambda r: cat("ldapsearch -x -D cn=admin -w ", _key(r, 12), " -b dc=corp"),
        lambda r: cat("sqlcmd -S db -U sa -P ", _key(r, 12), " -Q 'select 1'"),
        lambda r: cat("psexec \\\\build01 -u CORP\\deploy -p ", _key(r, 12), " cmd /c ver"),
        lambda r: cat("winrs -r:build01 -u:deploy -p:", _key(r, 12), " hostname"),
        lambda r: cat("wmic /node:build01 /user:deploy /password:", _key(r, 12), " os get caption"),
        lambda r: cat("curl --user ops@corp.io:", _key(r, 14), " https://ci.internal.net/api"),
        lambda r: cat("curl -x proxy.corp.net:3128 --proxy-user ops:", _key(r, 14), " https://api.corp.net"),
        lambda r: cat("curl -U ops:", _key(r, 14), " -x proxy.corp.net:3128 https://api.corp.net"),
    ],
    "maven-encrypted-password": [
        lambda r: cat("<server>\n  <id>nexus</id>\n  <password>{", rand(r, 43, B64), "=}</password>\n</server>"),
        lambda r: cat("<settingsSecurity>\n  <master>{", rand(r, 43, B64), "=}</master>\n</settingsSecurity>"),
        lambda r: cat(
            "<password>{[name=master,cipher=AES/GCM/NoPadding,version=4.0]", rand(r, 72, B64), "}</password>"
        ),
        lambda r: cat("<password>rotated in March {", rand(r, 22, B64), "==}</password>"),
        lambda r: cat("<passphrase>{", rand(r, 43, B64), "=}</passphrase>"),
    ],
    "generic-secret": [
        lambda r: cat('password = "', _pw(r, 16), '"'),
        lambda r: cat("DB_PASSWORD=", _key(r, 20)),
        lambda r: cat("client_secret: ", _key(r, 32)),
        lambda r: cat("api_key = '", _key(r, 24), "'"),
        lambda r: cat("SECRET_KEY = 'django-insecure-", _pw(r, 50, "!@#$%^&*(-_=+)"), "'"),
        lambda r: cat('"clientSecret": "', _key(r, 40, URLSAFE), '"'),
        lambda r: cat("define('AUTH_KEY', '", _pw(r, 64, "!@#$%^&*-_=+|:.?"), "');"),
        lambda r: cat("WEBHOOK_SECRET=", _key(r, 40, "0123456789abcdef")),
        lambda r: cat("access_token: ", _key(r, 48, URLSAFE)),
        lambda r: cat("<apiKey>", _key(r, 32), "</apiKey>"),
        lambda r: cat('config.encryption_key = "', _key(r, 64, "0123456789abcdef"), '"'),
        lambda r: cat('MYSQL_ROOT_PASSWORD: "', _pw(r, 16), '"'),
        lambda r: cat('<add key="DbPassword" value="', _pw(r, 14), '" />'),
        lambda r: cat("spring.datasource.password=", _key(r, 16)),
        lambda r: cat("refresh_token: '", _key(r, 64, URLSAFE), "'"),
        lambda r: cat("kube_secret: ", _key(r, 40, B64)),
        lambda r: cat('"credentials" : "', _key(r, 64, "0123456789abcdef"), '"'),
        lambda r: cat('"user_auth": "', _key(r, 40, B64), '"'),
        lambda r: cat("todo_secret_do_not_commit = ", _key(r, 30)),
        lambda r: cat('utils.GetEnvOrDefault("api_token", "', _uuid(r), '")'),
        lambda r: cat("DEPLOY_TOKEN ::= ", _key(r, 40, URLSAFE)),
        lambda r: cat("ENV DRONE_TOKEN ", _key(r, 32)),  # a Dockerfile's ENV without `=`
    ],
    # short or human-chosen values: what the random check of generic-secret lets through
    "generic-password": [
        lambda r: cat('password = "', _pw(r, 6), '"'),
        lambda r: cat("DB_PASSWORD=", _key(r, 6)),
        lambda r: cat('MYSQL_ROOT_PASSWORD: "', _pw(r, 7), '"'),
        lambda r: cat("define('DB_PASSWORD', '", _pw(r, 7), "');"),
        lambda r: cat("spring.datasource.password=", _key(r, 6)),
        lambda r: cat("<password>", _pw(r, 6), "</password>"),
        lambda r: cat('"dbPassword": "', _pw(r, 6), '"'),
        lambda r: cat("$config['db_pass'] = '", _pw(r, 7), "';"),
        lambda r: cat("PGPASSWORD=", _key(r, 7), " psql -h db.internal -U app"),
        lambda r: cat('String password = "', _pw(r, 6), '";'),
        lambda r: cat('user.setPassword("', _pw(r, 6), '");'),
        lambda r: cat('<add key="DbPassword" value="', _pw(r, 6), '" />'),
        lambda r: cat('passwd: "', _pw(r, 5), '"'),
        lambda r: cat('admin_password: str = "', _pw(r, 6), '"'),
        lambda r: cat("ENV SMTP_PASS=", _key(r, 6)),
        lambda r: cat("db_pwd => '", _pw(r, 5), "',"),
        lambda r: cat("machine api.internal.net login deploy password ", _key(r, 7)),
        lambda r: cat("requirepass ", _key(r, 6)),
        lambda r: cat('<property name="password" value="', _pw(r, 6), '"/>'),
        lambda r: cat('<entry key="password">', _pw(r, 6), "</entry>"),
        lambda r: cat(":password       => '", _pw(r, 7), "',"),
        lambda r: cat('password       = "', _pw(r, 6), '"'),
        lambda r: cat("    'vm_password': \"", _pw(r, 7), '",'),
        lambda r: cat("DB_PASS :::= ", _pw(r, 7)),
        lambda r: cat('String db_passwordToken = "', _pw(r, 6), '";'),
        lambda r: cat("machine git.internal.net\n  login deploy\n  password ", _pw(r, 7)),
        lambda r: cat("[client]\nuser = deploy\npassword = ", r.choice(string.ascii_letters), _pw(r, 6)),
        lambda r: cat(
            'adoConn.Open("Provider=SQLOLEDB;User ID=app; " & "Password =', _pw(r, 6, "!#^*+"), ';Data Source=db")'
        ),
        lambda r: cat("Driver={ODBC Driver 18};Server=db;Uid=app;Pwd=", _pw(r, 7, "!#^*+"), ";"),  # `==`: a test
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = [
    # code: annotations, parameters, reads of a secret from somewhere else
    "password: SecretStr",
    "password: str = Field(..., min_length=8)",
    "def login(user: str, password: str) -> Token:",
    "token: Optional[str] = None",
    "api_key: str | None = None",
    "export interface Login { username: string; password: string; }",
    "private String password;",
    "password = getpass.getpass()",
    'secret = os.environ["APP_SECRET"]',
    'token = request.headers.get("X-Token")',
    "password=form.cleaned_data['password']",
    "client_secret = settings.CLIENT_SECRET",
    "self.password = password",
    "db_password = config.get('db', 'password')",
    "const token = process.env.GITHUB_TOKEN;",
    "let apiKey = await vault.read(path);",
    "func Connect(password string) error {",
    "password_hash = bcrypt.hashpw(password, bcrypt.gensalt())",
    "if password == confirm_password:",
    "user.set_password(new_password)",
    "parser.add_argument('--password', help='database password')",
    "@click.option('--token', envvar='API_TOKEN', required=True)",
    "  -t, --token TEXT  API token [env var: APP_TOKEN]",
    "tool --password PASSWORD   the database password",
    'headers = {"Authorization": f"Bearer {token}"}',
    'headers["Authorization"] = "Bearer " + access_token',
    '"x-api-key": process.env.API_KEY',
    "pwd = os.getcwd()",
    "token_count = len(tokens)",
    'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")',
    'csrf_token = "{{ csrf_token() }}"',
    # words after a key name: the credential's type, address, length, file, not the credential
    "token_type: bearer",
    "password_reset_url: /accounts/reset",
    "secret: true",
    "require_password: false",
    "token_expires_in: 3600",
    "password_min_length: 12",
    "token_endpoint: https://oauth2.googleapis.com/token",
    "password_file: /run/secrets/db_password",
    "DB_PASSWORD_FILE=/run/secrets/db_password",
    "key: value",
    'cache_key = f"user:{user_id}"',
    'sort_key = "created_at"',
    "primary_key=True",
    "next_page_token: CiAKGjBpNDd2Nmp2Zml2cXRwYjBpOXA0",
    "keyboard_layout: us-intl",
    "monkey_patch = Xk29Lm4Pq8Zr",
    "bypass = Xk29Lm4Pq8",
    "tokens_used: 1532",
    "OLDPWD=/tmp",
    "docker login -u me --password-stdin",
    # placeholders and the fakes of every tutorial
    "postgres://user:pass@localhost:5432/db",
    "mysql://root:password@127.0.0.1:3306/test",
    "amqp://guest:guest@localhost:5672/",
    "redis://:foobared@localhost:6379",
    "mongodb+srv://<username>:<password>@cluster0.mongodb.net/",
    "https://user:${TOKEN}@github.com/org/repo.git",
    "https://oauth2:$CI_JOB_TOKEN@gitlab.com/group/repo.git",
    "curl -u $USER:$PASSWORD https://api.example.com",
    "curl -u user:pass https://api.example.com",
    "mysql -u root -p",
    "mysql -u root -ppassword",
    "mysql -h db -P 3306 -u app -p$MYSQL_PASSWORD",
    'sshpass -p "$SSH_PASS" ssh deploy@build-host',
    'api_key = "your-api-key"',
    "API_KEY=YOUR_API_KEY",
    "password: <your-password>",
    "secret: ${SECRET}",
    'password = "xxxxxxxx"',
    'password = "********"',
    'password = "test"',
    'password = "password123"',
    "password: hunter2",
    '"password": "P@ssw0rd"',
    "PASSWORD=changeme",
    "password = 'secret'",
    "password='IAmSensitive'",
    "IDENTIFIED BY 'password'",
    "CREATE USER scott IDENTIFIED BY tiger;",
    "ALTER USER postgres PASSWORD 'postgres';",
    "CREATE USER app WITH PASSWORD :'app_password';",
    "Authorization: Basic dXNlcjpwYXNz",
    "Authorization: Bearer YOUR_TOKEN_HERE",
    'Authorization: Digest username="Mufasa", realm="api", nonce="dcd98b7102dd2f0e"',
    # prose about credentials
    "Lorem ipsum: the password must be at least twelve characters long.",
    "Rotate the token every 90 days; never paste a secret key into chat.",
    "The API key identifies the project; the secret authenticates it.",
    "Enter your password: ",
    "Password: ********",
    "Forgot your password? Reset it at /reset",
    "use --password to pass it, or --token-file to read it from a file",
    # hashes, ids, encoded images, versions, colours
    "md5: d41d8cd98f00b204e9800998ecf8427e",
    "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    cat(
        "sha512: cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce",
        "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
    ),
    "integrity: sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    "git object 8f94139338f9404f26296befa88755fc2598c289",
    'etag: "33a64df551425fcc55e4d42a148795d9f25f89d4"',
    "uuid 550e8400-e29b-41d4-a716-446655440000",
    "request_id: 7f3c2d1e-9b8a-4c5d-8e7f-6a5b4c3d2e1f",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "background: url(data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7)",
    "color: #1e90ff; border: 1px solid #c0c0c0",
    "version: 2.14.4",
    "pydantic>=2.14,<3",
    # URLs without credentials
    "https://pypi.org/project/pydantic/",
    "https://github.com/org/repo/blob/main/README.md#install",
    "http://localhost:8080/api/v1/health",
    "https://[::1]:8443/status",
    "postgres://db.internal:5432/app",
    "https://example.com/login?next=/dashboard&token_type=bearer",
    "https://www.npmjs.com/package/@scope/pkg",
    "jdbc:postgresql://localhost:5432/app?user=app&password=${DB_PASSWORD}",
    # passwords of the fakes' words on stand-in hosts: loopback, a compose service, reserved names and
    # addresses, a README's `host.com`; or saying what they are (`sample`, `test`), however cased
    "postgresql://app:Passw0rd123@localhost:5432/app",
    "mongodb://admin:MySecret789@mongo:27017/admin",
    "mysql+pymysql://app:Str0ngP4ss!@db.example.com/app",
    "amqp://app:Secret123!@rabbit.test:5672/",
    "redis://:Passw0rd1@127.0.0.1:6379/0",
    "https://api:MyPassword1@192.0.2.10/v1",
    "https://deploy:Secur3Pass@host.com/api",
    "mysql://app:samplEpassword12*@db.corp.net/app",
    "postgresql://app:T3stPassw0rd!@db.corp.net/app",
    'f"postgresql://{user}:{password}@{host}/{db}"',
    '"https://%s:%s@%s/api" % (user, password, host)',
    "jdbc:mysql://app:${DB_PASSWORD}@[db1:3306,db2:3306]/app",
    "jdbc:oracle:thin:scott/tiger@//localhost:1521/orcl",
    "jdbc:oracle:thin:@//db.corp.net:1521/ORCL",
    "curl --proxy-user $PROXY_USER:$PROXY_PASS https://api.corp.net",
    # Maven: a property, a template, the unencrypted placeholder of every guide
    "<password>${sonatypePassword}</password>",
    "<password>{sonatypeOssrhPassword}</password>",
    "<password>{{ maven_repository_password }}</password>",
    "<master>{master-password-goes-here}</master>",
    "<password>{" + "x" * 24 + "=}</password>",
    # a Dockerfile's ENV whose value is a reference, a file or a setting about a credential
    "ENV DRONE_TOKEN ${DRONE_TOKEN}",
    "ENV API_TOKEN_FILE /run/secrets/api_token",
    "ENV PASSWORD_MIN_LENGTH 12",
    # a documented or random-looking key with a word in capitals spliced in to say it is not real
    "signing_secret: Kq8vT3mZ9xLw2NpR4sYbTESTKEY7hJd",
    "client_secret = 'Hn52Tq4WzcMvRaPe7xQsKdSAMPLEKEY'",
    # an npm dependency's version range, a program that asks for a password
    '"minipass": "^7.1.3",',
    "GIT_ASKPASS: 'echo',",
    # names of actions on a credential, and the ids of their elements
    'this.resetPassword = "#reset-password";',
    "onSubmitToken = '#submit-token'",
    'handleDeletePassword = "#delete-password"',
    # the name and `=` inside a string, joined to code
    "echo 'smtp_password = '.$conf['mail']['pw'].\"\\n\";",
    "$out .= 'api_token=' . $row['token'];",
    # HTML-escaped placeholders, masked values, values that say they are not real
    '"db_password": "&lt;DB_PASSWORD&gt;"',
    "<password>&lt;your password&gt;</password>",
    cat('"webhook_token": "xo', "xb-48213-77120-", "#" * 20, '"'),
    cat('"bot_token": "xo', 'xb-1234567890"'),
    cat("GATEWAY_API_KEY=gk-", "v2-invalid"),
    'backup_password = "a-fake-backup-key"',
    "session_secret = 'dummy-session-secret-for-ci'",
    "API_TOKEN=sample_token_7Xq2",
    # documentation stand-ins in a UUID's layout, with letters a UUID never has
    "helm upgrade app --set agent.licenseKey=lk-dev-a1b2c3d4-e5f6-g7h8-i9j0-k1l2m3n4o5p6",
    # a database's primary key, a package's coordinate and version, a form's anti-forgery token
    cat("primaryKey=Hn52Tq.", "4Wzc_8.MvRaPe7xQs_Kd"),
    'description = "Gradle - org.example.token:token-core-2.4.1"',
    cat('<input type="hidden" name="authenticity_token" value="', rand(random.Random(41), 86, URLSAFE), '" />'),
    # a string that starts like a JWT, but whose header is no JOSE header
    cat("eyJ", "ub3RlIjogbm90IGpzb24gYXQgYWxsfQ.eyJzdWIiOiIxMjM0NTY3ODkwIn0.", rand(random.Random(42), 43, URLSAFE)),
]

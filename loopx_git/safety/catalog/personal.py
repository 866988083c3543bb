"""Material that names a person or a machine: home paths, temporary folders, e-mail addresses, private addresses."""

from __future__ import annotations

import re

from loopx_git.safety.rule import BLOCK, WARN, Context, Rule, is_placeholder, lazy_pattern

# Names documentation uses for "some user": /home/user/project is an example, not a leak.
_EXAMPLE_USERS = frozenset(
    {
        "user", "username", "name", "me", "you", "someone", "your-name", "yourname", "your_name", "yourusername",
        "your-username", "myuser", "myname", "someuser", "foo", "bar", "jdoe", "johndoe", "janedoe", "john.doe",
        "jane.doe", "john_doe", "example",
    }
)  # fmt: skip
# Accounts that images, clouds and systems create, the same on every machine: naming one says
# nothing about a person (`/home/ubuntu/app` is every EC2 tutorial, `/Users/Shared` every Mac).
_SYSTEM_USERS = frozenset(
    {
        "ubuntu", "ec2-user", "centos", "debian", "fedora", "admin", "azureuser", "opc", "vagrant", "pi", "node",
        "jenkins", "git", "docker", "app", "appuser", "www-data", "nobody", "coder", "gitpod", "codespace",
        "vscode", "jovyan", "shared", "guest", "public", "default", "all users", "default user", "administrator",
        "defaultuser0", "all",
    }
)  # fmt: skip


def _home_user(m: re.Match, ctx: Context) -> bool:
    user = m.groupdict().get("user")
    if user is None:
        return True
    low = user.lower()
    if len(user) == 1 or low in _EXAMPLE_USERS or low in _SYSTEM_USERS:
        return False  # `/home/u/venv`, `/home/ubuntu`: an example or an image's account, not a person
    return user not in ctx.ci_home_users and not is_placeholder(user)


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


# What comes right before a URL's password: `scheme://user:` (the "address" is then `password@host`).
_USERINFO_BEFORE = lazy_pattern(r"//[^\s/@]*:\Z")


def _email(m: re.Match, ctx: Context) -> bool:
    text, start = m.string, m.start("s")
    if start and text[start - 1] in "${":
        return False  # `$CI_JOB_TOKEN@gitlab.com`: a variable before a host, not a mailbox
    if _USERINFO_BEFORE.search(text, max(0, start - 200), start):
        return False  # the password of `https://user:password@host`: url-credentials' business
    local, domain = m.group("s").rsplit("@", 1)
    domain = domain.lower()
    tld = domain.rsplit(".", 1)[-1]
    if local.lower() in ("git", "noreply", "no-reply") or tld in _FILE_SUFFIXES or tld in _RESERVED_TLDS:
        return False
    return not any(domain == d or domain.endswith("." + d) for d in _EMAIL_SKIP_DOMAINS) and not is_placeholder(local)


_LOCAL_TAIL = lazy_pattern(r"[A-Za-z0-9._%+-]{1,64}\Z")


def _local_part_start(text: str, at: int) -> tuple[int, ...]:
    """Where the local part before the ``@`` at ``at`` begins, the one place an address can start
    (none before a local part longer than 64 characters: nothing there can match)."""
    m = _LOCAL_TAIL.search(text, max(0, at - 64), at)
    return (m.start(),) if m else ()


def _ipv4_private(m: re.Match, ctx: Context) -> bool:
    return all(int(part) <= 255 for part in m.group("s").split("."))


RULES: tuple[Rule, ...] = (
    Rule(
        "home-path",
        BLOCK,
        "absolute home path",
        ("/home/", "/users/", "/root"),  # publicsafe: allow[home-path]
        (
            r"(?:(?<![A-Za-z0-9_.~$%/-])(?<!\b[A-Za-z]:)|(?<=file://))"
            r"(?P<s>(?:/mnt/[a-z]/Users|/[a-z]/Users|/home|/Users)/(?P<user>[A-Za-z0-9._-]+)|/root)(?=[/\"'\s,;:)\]}]|$)"  # publicsafe: allow[home-path]  # noqa: E501
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
        (
            r"(?i)(?P<s>(?<![A-Za-z])[A-Z]:(?:\\\\|\\|/)Users(?:\\\\|\\|/)(?P<user>[A-Za-z0-9._ -]+?)"
            r"|(?:\\\\){1,2}wsl(?:\$|\.localhost)(?:\\\\|\\)[^\\\s\"]+(?:\\\\|\\)home(?:\\\\|\\)(?P<wsluser>[A-Za-z0-9._-]+))"
            r"(?=\\|/|[\"'\s,;]|$)"
        ),
        accept=_home_user,  # a WSL path has no `user` group: always a finding
    ),
    Rule(
        "temp-path",
        WARN,
        "per-user temporary folder",
        ("/var/folders/", "/run/user/", "/tmp/user", "/tmp/systemd-private", "\\temp"),
        (
            r"(?i)(?P<s>(?:/private)?/var/folders/[A-Za-z0-9_+-]{2}/[A-Za-z0-9_+-]+/T|/run/user/\d+|/tmp/(?:user|systemd-private)-[^\s/\"']+"
            r"|AppData(?:\\\\|\\)Local(?:\\\\|\\)Temp)"
        ),
    ),
    Rule(
        "email-address",
        WARN,
        "e-mail address",
        ("@",),
        (
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
        (r"(?<![0-9.])(?P<s>(?:10\.\d{1,3}|192\.168|172\.(?:1[6-9]|2\d|3[01]))\.\d{1,3}\.\d{1,3})(?![0-9]|\.\d)"),
        accept=_ipv4_private,
        anchored=True,
    ),
)

"""Repositories and pull requests as people paste them — a browser URL, a clone URL, ``github.com/o/r``
— reduced to the forms the state branch stores: ``owner/repo`` and ``owner/repo#N``.

The stored forms are GitHub's, and a ``pr_merged`` wake-up matches GitHub-style refs, so only
github.com addresses are reduced: an address on another host is refused, never stored with its host
silently dropped (``gitlab.com/o/r`` and ``github.com/o/r`` are different repositories)."""

from __future__ import annotations

import re

_NAME = r"[A-Za-z0-9_.-]+"
# matched whole (fullmatch): in Python's re, `$` also matches before a final newline
REPOSITORY_RE = re.compile(rf"{_NAME}/{_NAME}")
PR_REF_RE = re.compile(rf"(?:(?P<repo>{_NAME}/{_NAME}))?#(?P<number>[1-9][0-9]{{0,9}})")

REPOSITORY_FORMS = (
    "owner/repo, https://github.com/owner/repo (http, www., .git and a final / too), "
    "git@github.com:owner/repo.git, ssh://git@github.com/owner/repo.git or github.com/owner/repo"
)
PR_REF_FORMS = "#N, owner/repo#N or a github.com pull request URL (https://github.com/owner/repo/pull/N)"
_GITHUB_ONLY = "other hosts are refused: the stored owner/repo and pr_merged refs are GitHub's"
REPOSITORY_RULE = f"a repository is one of {REPOSITORY_FORMS}; {_GITHUB_ONLY}"
PR_REF_RULE = f"a PR ref is one of {PR_REF_FORMS}; {_GITHUB_ONLY}"

_SCHEME = re.compile(r"(?:https?|ssh)://(?:[^@/]*@)?(?P<host>[^/]*)/(?P<path>.*)", re.IGNORECASE | re.DOTALL)
_SCP = re.compile(r"[A-Za-z0-9_.-]+@(?P<host>[^/:]+):(?P<path>.*)", re.DOTALL)  # git@github.com:o/r.git
_BARE_HOST = re.compile(r"(?P<host>[^/@:]+\.[^/@:]+)/(?P<path>.*)", re.DOTALL)  # github.com/o/r (the host has a dot)
_GITHUB_HOSTS = ("github.com", "www.github.com")
_PR_PATH = re.compile(rf"(?P<repo>{_NAME}/{_NAME})/pull/(?P<number>[1-9][0-9]{{0,9}})(?:/.*)?", re.DOTALL)


def _address(text: str) -> tuple[str, str] | None:
    """(host, path) of a pasted address, with any query, fragment and final ``/`` left out of the
    path; None when ``text`` names no host."""
    for pattern in (_SCHEME, _SCP, _BARE_HOST):
        match = pattern.fullmatch(text)
        if match:
            host = match.group("host").lower().rpartition("@")[2].partition(":")[0]  # no user, no port
            path = re.split(r"[?#]", match.group("path"), maxsplit=1)[0].rstrip("/")
            return host, path
    return None


def _on_github(text: str, host: str, rule: str) -> None:
    if host not in _GITHUB_HOSTS:
        raise ValueError(f"{text!r} is an address on {host or 'no host'}, not github.com; rule: {rule}")


def repository(text: str) -> str:
    """``owner/repo`` for any accepted form of a GitHub repository; ValueError (naming what was
    given and the accepted forms) for anything else."""
    if REPOSITORY_RE.fullmatch(text):
        return text
    address = _address(text)
    if address is None:
        raise ValueError(f"{text!r} is not a repository; rule: {REPOSITORY_RULE}")
    host, path = address
    _on_github(text, host, REPOSITORY_RULE)
    path = path.removesuffix(".git")
    if not REPOSITORY_RE.fullmatch(path):
        raise ValueError(f"{text!r} does not name a repository as owner/repo; rule: {REPOSITORY_RULE}")
    return path


def pr_ref(text: str) -> str:
    """``#N`` or ``owner/repo#N`` as given, ``owner/repo#N`` for a github.com pull request URL (any
    page of it: ``/files``, ``#issuecomment-...``, a query); ValueError for anything else."""
    if PR_REF_RE.fullmatch(text):
        return text
    address = _address(text)
    if address is None:
        raise ValueError(f"{text!r} is not a PR ref; rule: {PR_REF_RULE}")
    host, path = address
    _on_github(text, host, PR_REF_RULE)
    match = _PR_PATH.fullmatch(path)
    if not match:
        raise ValueError(f"{text!r} is not a pull request URL (owner/repo/pull/N); rule: {PR_REF_RULE}")
    return f"{match.group('repo')}#{match.group('number')}"

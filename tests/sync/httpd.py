"""A real web server for the tests: Debian's lighttpd on a free port of 127.0.0.1 running ``git
http-backend`` as a CGI program (git's "smart HTTP"), behind HTTP basic auth with one user whose
password is made up per test. Skipped, with the reason, where lighttpd is not installed (``.ci/run``
installs it)."""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.sync.helpers import bare, free_port, listening

LIGHTTPD = "/usr/sbin/lighttpd"
USER = "agent"


def http_backend() -> Path | None:
    proc = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=False)
    backend = Path(proc.stdout.strip()) / "git-http-backend"
    return backend if proc.returncode == 0 and backend.is_file() else None


class HttpServer:
    """lighttpd serving ``root``'s repositories on ``port``; started by ``httpd()``, and again by
    ``restart()`` after a test killed it."""

    def __init__(self, folder: Path, backend: Path):
        self.folder, self.root, self.port = folder, folder / "repos", free_port()
        self.password = f"placeholder-{secrets.token_hex(8)}"  # made up per test: it lives in the temp folder only
        for sub in ("repos", "docroot", "uploads"):
            (folder / sub).mkdir(parents=True, exist_ok=True)
        users = folder / "users"
        users.write_text(f"{USER}:{self.password}\n")
        users.chmod(0o600)
        (folder / "lighttpd.conf").write_text(_config(folder, self.port, backend))
        self.proc: subprocess.Popen | None = None

    def url(self, name: str, password: str | None = None) -> str:
        """The URL of ``root/name`` with the credentials in it, as a user may configure a remote."""
        return f"http://{USER}:{password or self.password}@127.0.0.1:{self.port}/{name}"

    def repository(self, name: str) -> Path:
        """A bare repository served at ``name``, open to pushes by whoever logs in."""
        path = bare(self.root / name)
        subprocess.run(["git", "-C", str(path), "config", "http.receivepack", "true"], check=True)
        return path

    def start(self) -> None:
        with (self.folder / "lighttpd.out").open("a") as log:
            self.proc = subprocess.Popen(
                [LIGHTTPD, "-D", "-f", str(self.folder / "lighttpd.conf")], stdout=log, stderr=subprocess.STDOUT
            )
        if not listening(self.port, self.proc):
            said = (self.folder / "lighttpd.out").read_text()
            errors = self.folder / "error.log"
            pytest.fail(f"lighttpd did not start: {said}{errors.read_text() if errors.exists() else ''}")

    def stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
            self.proc.wait(timeout=10)

    def restart(self) -> None:
        """The server again, on the same port, after a test killed it."""
        self.stop()
        self.start()


def _config(folder: Path, port: int, backend: Path) -> str:
    # the CGI program gets only what lighttpd sets, plus these: no system or user git config is read,
    # so the served repository's own config (and hooks) is all that decides
    env = {
        "GIT_PROJECT_ROOT": str(folder / "repos"),
        "GIT_HTTP_EXPORT_ALL": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "HOME": str(folder),
    }
    setenv = ", ".join(f'"{k}" => "{v}"' for k, v in env.items())
    return "\n".join(
        [
            'server.modules = ("mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi")',
            'server.bind = "127.0.0.1"',
            f"server.port = {port}",
            f'server.document-root = "{folder / "docroot"}"',
            f'server.errorlog = "{folder / "error.log"}"',
            f'server.upload-dirs = ("{folder / "uploads"}")',
            f'alias.url = ("/" => "{backend}/")',
            'cgi.assign = ("" => "")',
            f"setenv.add-environment = ({setenv})",
            'auth.backend = "plain"',
            f'auth.backend.plain.userfile = "{folder / "users"}"',
            'auth.require = ("/" => ("method" => "basic", "realm" => "loopx test", "require" => "valid-user"))',
            "",
        ]
    )


@contextmanager
def httpd(folder: Path) -> Iterator[HttpServer]:
    backend = http_backend()
    if not Path(LIGHTTPD).exists():
        pytest.skip("no lighttpd here (apt-get install lighttpd; .ci/run installs it)")
    if backend is None:
        pytest.skip("this git has no git-http-backend to serve smart HTTP with")
    server = HttpServer(folder, backend)
    try:
        server.start()
        yield server
    finally:
        server.stop()

"""A real OpenSSH server for the tests: ``sshd -D`` on a free port of 127.0.0.1 with a generated
host key, serving the repositories of a temporary folder to one generated client key. Skipped, with
the reason, where Debian's openssh-server is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import getpass
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.sync.helpers import free_port, listening

SSHD = "/usr/sbin/sshd"
PRIVSEP = Path("/run/sshd")


@dataclass(frozen=True)
class SshServer:
    port: int
    user: str
    key: Path
    """The authorised client key."""
    stranger: Path
    """A key the server does not know: auth is refused."""

    def url(self, repo: Path) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{repo}"

    def command(self, key: Path | None = None) -> str:
        """``GIT_SSH_COMMAND`` for this server (host key not checked: it is made per test)."""
        return (
            f"ssh -i {key or self.key} -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no "
            "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=10"
        )


def _keygen(path: Path) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    return path


@contextmanager
def sshd(folder: Path) -> Iterator[SshServer]:
    if not Path(SSHD).exists() or shutil.which("ssh") is None:
        pytest.skip("no OpenSSH server here (apt-get install openssh-server; .ci/run installs it)")
    if not PRIVSEP.is_dir():
        pytest.skip(f"sshd needs its privilege separation directory {PRIVSEP} (.ci/run creates it)")
    folder.mkdir(parents=True, exist_ok=True)
    host, key, stranger = _keygen(folder / "host"), _keygen(folder / "client"), _keygen(folder / "stranger")
    (folder / "authorized_keys").write_text((folder / "client.pub").read_text())
    port = free_port()
    config = folder / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                "ListenAddress 127.0.0.1",
                f"HostKey {host}",
                f"PidFile {folder / 'sshd.pid'}",
                f"AuthorizedKeysFile {folder / 'authorized_keys'}",
                "StrictModes no",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "PermitRootLogin prohibit-password",
                "LogLevel ERROR",
                "",
            ]
        )
    )
    log = (folder / "sshd.log").open("w")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=log, stderr=subprocess.STDOUT)
    try:
        if not listening(port, proc):
            pytest.fail(f"sshd did not start: {(folder / 'sshd.log').read_text()}")
        yield SshServer(port=port, user=getpass.getuser(), key=key, stranger=stranger)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()

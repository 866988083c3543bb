"""Shapes of paths, addresses and other personal material: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

from tests.safety.parts import Shape, rand

SHAPES: dict[str, list[Shape]] = {
    "home-path": [
        lambda r: "/home/alice/projects/app/main.py",
        lambda r: "open /Users/bob/Library/notes.txt",
        lambda r: "/" + "root/.ssh/config",  # the superuser's home, assembled: it is this kind of machine's own
        lambda r: "cd /mnt/c/Users/carol/src",
        lambda r: "C drive in Git Bash: /c/Users/dave/repo",
    ],
    "windows-user-path": [
        lambda r: "C:\\Users\\erin\\Documents\\plan.docx",
        lambda r: "D:/Users/frank/work/app",
        lambda r: "\\\\wsl$\\Ubuntu\\home\\gina\\repo",
    ],
    "temp-path": [
        lambda r: "/var/folders/xy/" + rand(r, 24).lower() + "/T/build.log",
        lambda r: "socket at /run/user/1000/agent.sock",
        lambda r: "/tmp/systemd-private-" + rand(r, 12).lower() + "-nginx/tmp",
    ],
    "email-address": [
        lambda r: "contact alice.smith@acme-corp.io",
        lambda r: "From: Bob <bob@mail.internal.net>",
        lambda r: "owner: carol+ops@big-company.co.uk",
    ],
    "private-ip": [
        lambda r: "db at 10.12.0.5:5432",
        lambda r: "gateway 192.168.1.1",
        lambda r: "node 172.20.3.44 joined",
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

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
        lambda r: "open file:///home/erin/notes/plan.md in a browser",
        lambda r: "scp build:/home/frank/app.tar.gz .",
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
LOOK_ALIKES: list[str] = [
    # Windows paths that name no person: shared folders, system folders, variables, placeholders
    "# C:\\Users\\Public\\Documents\\readme.txt",
    "C:\\Program Files\\Git\\bin\\git.exe",
    "C:\\Program Files (x86)\\Common Files",
    "%USERPROFILE%\\.ssh\\config",
    "C:\\Users\\%USERNAME%\\AppData\\Roaming",
    "C:/Users/Public/Desktop",
    "C:\\Users\\Default\\NTUSER.DAT",
    "C:\\Users\\Administrator\\Desktop",
    "C:\\Users\\All Users\\Microsoft",
    "C:\\Users\\<username>\\AppData",
    "C:\\Windows\\System32\\drivers\\etc\\hosts",
    "\\\\fileserver\\share\\reports",
    "$env:LOCALAPPDATA\\Programs",
    # homes of accounts that images and systems create, the same on every machine
    "/home/ubuntu/app/deploy.sh",
    "/home/ec2-user/.bashrc",
    "/home/node/app/server.js",
    "/home/vscode/.cache/pip",
    "/home/jovyan/work/analysis.ipynb",
    "/home/vagrant/sync",
    "/home/pi/projects",
    "/Users/Shared/Previously Relocated Items",
    "/Users/Guest/Desktop",
    "/home/u/venv/lib/python3.11/site-packages",
    "/home/jdoe/src",
    "/Users/$USER/Library/Caches",
    "~/.config/app/settings.toml",
    "$HOME/.cache/loopx",
    "/usr/local/bin/loopx",
    "/var/lib/postgresql/data",
    "/etc/ssl/certs/ca-certificates.crt",
    "/opt/homebrew/bin/git",
    # addresses at documentation domains and what only looks like one
    "alice@example.com",
    "bob@example.org",
    "ops@example.net",
    "someone@test.invalid",
    "mailto:support@example.com",
    "12345+octocat@users.noreply.github.com",
    "git@gitlab.com:group/project.git",
    "logo@2x.png",
    "pkg@1.2.3",
    "user@localhost",
    # addresses that are not private
    "listen on 127.0.0.1:8080",
    "bind 0.0.0.0",
    "resolver 8.8.8.8",
    "version 10.0.19045.3803",
]

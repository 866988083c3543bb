"""The ``loopx`` executable. ``loopx hook run ...`` — what git runs on every commit and push —
goes straight to the hook runner without loading typer, rich or pydantic; everything else goes
to the typer app."""

from __future__ import annotations

import sys


def run() -> None:
    argv = sys.argv[1:]
    if argv[:2] == ["hook", "run"] and not {"-h", "--help"} & set(argv):
        from loopx_git.hooks.runner import main

        sys.exit(main(argv[2:]))
    from loopx_git.cli.main import run_cli

    sys.exit(run_cli(argv))


def mcp() -> None:
    """The ``loopx-mcp`` executable: ``loopx mcp`` with the same options."""
    from loopx_git.cli.main import run_cli

    sys.exit(run_cli(["mcp", *sys.argv[1:]]))

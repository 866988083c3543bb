"""The layer rules, checked on the source: only store/ imports pygit2, only cli/ imports typer,
and no package imports a layer above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "loopx_git"
RANK = {
    "errors": 0,
    "docblock": 0,  # the generated blocks of docs/*.md: standard library only
    "model": 1,
    "safety": 2,
    "store": 3,
    "domain": 4,
    "views": 4,
    "hooks": 5,
    "api": 6,
    "sync": 6,
    "fire": 6,
    "integrity": 6,
    "upkeep": 6,
    "defaults": 6,
    "evidence": 6,
    "dashboard": 6,
    "cli": 7,
    "mcp": 7,  # a front end beside the CLI: its tools are the CLI's commands, run in-process
}


def imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


SOURCES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers(path):
    layer = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    found = imports(path)
    if layer != "store":
        assert not any(n.split(".")[0] == "pygit2" for n in found), "only store/ imports pygit2"
    if layer != "cli":
        assert not any(n.split(".")[0] in ("typer", "click", "rich") for n in found), "only cli/ imports typer"
    if path.relative_to(PACKAGE).as_posix() != "mcp/server.py":  # the SDK is an optional extra
        assert not any(n.split(".")[0] in ("mcp", "anyio") for n in found), "only mcp/server.py imports the SDK"
    for name in found:
        parts = name.split(".")
        if parts[0] == "loopx_git" and len(parts) > 1 and layer in RANK and parts[1] in RANK:
            assert RANK[parts[1]] <= RANK[layer], f"{layer} must not import {parts[1]}"
        if layer in ("views", "domain"):
            other = "domain" if layer == "views" else "views"
            assert not name.startswith(f"loopx_git.{other}"), (
                "domain and views read the same fold; neither imports the other"
            )
        if layer == "views":
            assert not name.startswith(("loopx_git.store.transaction", "loopx_git.domain.todo.add")), (
                "a view never writes"
            )


def test_every_module_has_a_layer():
    """A module without a rank would escape the checks above, and so would whatever imports it."""
    tops = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in SOURCES}
    assert tops - {"__init__", "__main__"} <= RANK.keys()


def test_the_hook_path_loads_no_heavy_library():
    """`loopx hook run` runs on every commit: no typer, rich or pydantic may load on its path."""
    import subprocess
    import sys

    code = (
        "import sys; from loopx_git.hooks import runner, checks, prepush; from loopx_git.cli import entry; "
        "print(' '.join(m for m in ('typer', 'rich', 'pydantic', 'click', 'ruamel') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""

"""The layer rules, checked on the source, counting every import a module makes (those inside
functions too; not those under ``if TYPE_CHECKING:``, which never run, nor a script's own
``if __name__ == "__main__":`` block): only store/ imports pygit2, only cli/ imports typer, every
module has a rank, no module imports one ranked above it, no circle of imports, and no private name
is taken from another module."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "loopx_git"
RANK = {
    "loopx_git.errors": 0,  # every exception type, and the one mapping of an error to an exit code
    "loopx_git.version": 0,
    "loopx_git.arguments": 0,  # the rules every value handed to a command follows (NUL, repeats)
    "loopx_git.docblock": 0,  # the generated blocks of docs/*.md: standard library only
    "loopx_git.model": 1,
    "loopx_git.safety": 2,
    "loopx_git.store": 3,
    "loopx_git.domain": 4,
    "loopx_git.views": 4,
    "loopx_git.hooks": 5,
    # the services the API wires together: each takes the StateRepo it works on as an argument
    "loopx_git.integrity": 6,
    "loopx_git.evidence": 6,
    "loopx_git.sync": 6,
    "loopx_git.upkeep": 6,
    "loopx_git.defaults": 6,
    "loopx_git.fire": 6,
    "loopx_git.dashboard": 6,
    "loopx_git.app": 7,  # the families StateRepo is made of, each over app.core
    "loopx_git.api": 8,  # StateRepo: the facade composing the families
    "loopx_git": 9,  # the package itself: loopx_git.open, the public entry to the API
    "loopx_git.cli": 10,
    "loopx_git.mcp": 10,  # a front end beside the CLI: its tools are the CLI's commands, run in-process
    "loopx_git.__main__": 10,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


SOURCES = sorted(PACKAGE.rglob("*.py"))
MODULES = {module_name(p): p for p in SOURCES}


def rank(module: str) -> int:
    while module not in RANK:
        module = module.rpartition(".")[0]
    return RANK[module]


def _skipped(node: ast.AST) -> bool:
    """A block that never runs as part of the package: ``if TYPE_CHECKING:`` and a script's main."""
    if not isinstance(node, ast.If):
        return False
    test = ast.unparse(node.test)
    return "TYPE_CHECKING" in test or "__main__" in test


def _nodes(tree: ast.AST):
    for node in ast.iter_child_nodes(tree):
        if _skipped(node):
            yield from (n for child in node.orelse for n in [child, *_nodes(child)])
            continue
        yield node
        yield from _nodes(node)


@functools.cache
def read(path: Path) -> tuple[frozenset[str], frozenset[str], tuple[tuple[str, str], ...]]:
    """What ``path`` imports: every module named (third-party ones too), the loopx_git modules it
    depends on, and the (module, name) pairs of private names it takes from another module."""
    here = module_name(path)
    named, depends, private = set(), set(), []
    aliases: dict[str, str] = {}  # a name bound to a loopx_git module -> that module
    nodes = list(_nodes(ast.parse(path.read_text())))
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                named.add(alias.name)
                if alias.name in MODULES:
                    depends.add(alias.name)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            assert node.level == 0, f"{here}: relative imports are not used here"
            named.add(node.module)
            submodules = 0
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in MODULES:  # from loopx_git.cli import fast
                    submodules += 1
                    depends.add(full)
                    aliases[alias.asname or alias.name] = full
                elif node.module in MODULES and alias.name.startswith("_") and not alias.name.startswith("__"):
                    private.append((node.module, alias.name))
            if node.module in MODULES and submodules < len(node.names):
                depends.add(node.module)
    for node in nodes:  # fast._defaults: a private name read through a module
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            private.append((aliases[node.value.id], node.attr))
    depends.discard(here)
    return frozenset(named), frozenset(depends), tuple(p for p in private if p[0] != here)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_layers(path):
    here = module_name(path)
    layer = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    named, depends, private = read(path)
    tops = {n.split(".")[0] for n in named}
    if layer != "store":
        assert "pygit2" not in tops, "only store/ imports pygit2"
    if layer != "cli":
        assert not tops & {"typer", "click", "rich"}, "only cli/ imports typer"
    if path.relative_to(PACKAGE).as_posix() != "mcp/server.py":  # the SDK is an optional extra
        assert not tops & {"mcp", "anyio"}, "only mcp/server.py imports the SDK"
    for name in depends:
        assert rank(name) <= rank(here), f"{here} (rank {rank(here)}) must not import {name} (rank {rank(name)})"
        if layer in ("views", "domain"):
            other = "domain" if layer == "views" else "views"
            assert not name.startswith(f"loopx_git.{other}"), (
                "domain and views read the same fold; neither imports the other"
            )
        if layer == "views":
            assert not name.startswith(("loopx_git.store.transaction", "loopx_git.domain.todo")), "a view never writes"
    assert not private, f"{here} takes private names from other modules: {private}"


def test_every_module_has_a_rank():
    """A module without a rank would escape the checks above, and so would whatever imports it."""
    unranked = []
    for module in MODULES:
        name = module
        while name and name not in RANK:
            name = name.rpartition(".")[0]
        if not name or (name == "loopx_git" and module != "loopx_git"):
            unranked.append(module)
    assert not unranked


def circles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_circle_of_imports():
    graph = {module: read(path)[1] for module, path in MODULES.items()}
    assert circles(graph) == []


def test_circles_are_found():
    """The check above can fail: a circle through a function-level import is one."""
    assert circles({"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}) == [
        ["a", "b", "c"]
    ]


def test_imports_inside_functions_are_read(tmp_path):
    source = tmp_path / "x.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pygit2\n"
        "def f():\n    from loopx_git.cli import fast\n    return fast._defaults\n"
    )
    global ROOT
    was = ROOT
    try:
        ROOT = tmp_path
        named, _, private = read.__wrapped__(source)
    finally:
        ROOT = was
    assert "pygit2" not in named and "loopx_git.cli" in named
    assert private == (("loopx_git.cli.fast", "_defaults"),)


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


MAX_LINES = 400
"""A module a newcomer reads in one sitting; the rule catalogue's data files (one rule after
another, in safety/catalog/) are tables, not code, and are left out."""


def test_no_module_is_longer_than_a_sitting():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in SOURCES
        if "catalog" not in path.relative_to(PACKAGE).parts[:-1]
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"over {MAX_LINES} lines (split by what each part does): {long}"


def test_the_facade_holds_no_method_of_its_own():
    """``StateRepo`` is composed of the families of app/: a method added to api.py instead of its
    family would grow the facade back into the 1,500-line class it was."""
    from loopx_git.api import StateRepo
    from loopx_git.domain.catalog import OPERATIONS

    own = set(vars(StateRepo)) - set(OPERATIONS)  # a declared operation's method is kept on the class once made
    assert own <= {"__module__", "__doc__", "__qualname__", "__firstlineno__", "__static_attributes__"}
    assert all(base.__module__.startswith("loopx_git.app.") for base in StateRepo.__mro__[1:-1])

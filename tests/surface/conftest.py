"""The surface tests share the hostile-input tests' repository (module-scoped: g1, alice, bob, todo
t1, ledger entry e1), built by the same fixture."""

from tests.hostile.test_cli_options import shared  # noqa: F401 - a fixture, found by name

"""loopx-git: durable state for long-running agent work, kept on a git state branch.

The Python API is ``loopx_git.open(path) -> StateRepo``; the ``loopx`` command is
a thin shell over it.
"""

from __future__ import annotations

from loopx_git.version import __version__

__all__ = ["__version__", "open"]


def open(path: str = ".", *, state_ref: str | None = None, redact: bool = False):
    """Open the git repository at or above ``path`` and return its :class:`StateRepo`.

    With ``redact=True`` a write replaces secrets with ``[REDACTED:<rule>]`` instead of being refused."""
    from loopx_git.api import StateRepo  # lazy: keeps ``import loopx_git`` cheap for hooks

    return StateRepo.open(path, state_ref=state_ref, redact=redact)

"""The global options every command sees, held in one small frozen object (no module state)."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Iterator, Optional

import typer

if TYPE_CHECKING:
    from loopx_git.api import StateRepo


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    yaml = "yaml"


@dataclass(frozen=True)
class Ctx:
    repo: str = "."
    format: OutputFormat = OutputFormat.text
    state_branch: Optional[str] = None

    def open(self, *, redact: bool = False) -> "StateRepo":
        from loopx_git.api import StateRepo  # lazy: `loopx --help` must not load git

        return StateRepo.open(self.repo, state_ref=self.state_branch, redact=redact)

    @contextmanager
    def session(self, *, redact: bool = False) -> Iterator["StateRepo"]:
        """The repository for one command; closing it saves the fold cache and packs if due."""
        repo = self.open(redact=redact)
        try:
            yield repo
        finally:
            repo.close()


REDACT = typer.Option(False, "--redact", help="Write secrets and private paths as [REDACTED:<rule>] instead of refusing.")
"""Every writing command takes it: refusing is the default, redacting is asked for."""


def get(ctx: typer.Context) -> Ctx:
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, Ctx) else Ctx()

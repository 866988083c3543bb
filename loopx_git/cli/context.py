"""The global options every command sees, held in one small frozen object (no module state)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

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
    state_branch: str | None = None
    notices: list = field(default_factory=list, compare=False)
    """Notices (``errors.Notice``) a command's repository handed back when it closed: a write's
    JSON envelope carries them as ``warnings``; whatever is left is printed to stderr at the end."""

    def open(self, *, redact: bool = False) -> StateRepo:
        from loopx_git.api import StateRepo  # lazy: `loopx --help` must not load git

        return StateRepo.open(self.repo, state_ref=self.state_branch, redact=redact)

    @contextmanager
    def session(self, *, redact: bool = False) -> Iterator[StateRepo]:
        """The repository for one command; closing it saves the fold cache and packs if due."""
        repo = self.open(redact=redact)
        try:
            yield repo
        finally:
            self.notices.extend(n for n in repo.close() if n not in self.notices)

    def flush_notices(self) -> None:
        """Print the notices no envelope carried (stderr, so JSON on stdout stays clean)."""
        import sys

        while self.notices:
            sys.stderr.write(f"warning: {self.notices.pop(0).describe()}\n")


REDACT = typer.Option(
    False, "--redact", help="Write secrets and private paths as [REDACTED:<rule>] instead of refusing."
)
"""Every writing command takes it: refusing is the default, redacting is asked for."""


def get(ctx: typer.Context) -> Ctx:
    root = ctx.find_root()
    return root.obj if isinstance(root.obj, Ctx) else Ctx()


MAX_INPUT_BYTES = 16 << 20
"""A JSON file given to a command (a packet, a conformance document) is read up to this size:
/dev/zero or a runaway file is refused, not read until memory runs out."""


def read_input(path, *, field: str, source: str) -> bytes:
    """The bytes of an input file, or a ValidationError naming ``field``: unreadable, or too large."""
    from loopx_git.errors import ValidationError

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise ValidationError(
            f"field '{field}': {source} cannot be read ({exc.strerror or exc})", code="invalid-field"
        ) from exc
    if len(data) > MAX_INPUT_BYTES:
        raise ValidationError(
            f"field '{field}': {source} is larger than {MAX_INPUT_BYTES >> 20} MiB; rule: a JSON input "
            f"file is at most {MAX_INPUT_BYTES >> 20} MiB",
            code="invalid-field",
        )
    return data

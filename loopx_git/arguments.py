"""The rules every value handed to a command follows, whichever front end handed it (the CLI's
fast path, typer, an MCP call): checked before the command runs, refused by the parameter's name."""

from __future__ import annotations

from typing import Any

from loopx_git.errors import ValidationError

MAX_REPEATS = 256
"""How many times one repeatable option may be given: more is a script gone wrong, not a todo with
3000 labels (and each value may cost a warning, a lookup, a line of output)."""


def refuse_too_many(values: dict[str, Any]) -> None:
    for name, value in values.items():
        if isinstance(value, (list, tuple)) and len(value) > MAX_REPEATS:
            raise ValidationError(
                f"field '{name}': given {len(value)} times; rule: a repeatable option takes at most {MAX_REPEATS} "
                "values in one command",
                code="invalid-field",
            )


def refuse_nul(values: dict[str, Any]) -> None:
    """No value holds NUL. An operating system cannot pass one in argv, so only a caller running a
    command in-process can; left alone it reaches open() or a git subprocess as a ValueError (an
    internal error) or cuts a value short."""
    for name, value in values.items():
        items = value if isinstance(value, (list, tuple)) else [value]
        if any(isinstance(item, str) and "\x00" in item for item in items):
            raise ValidationError(
                f"field '{name}': holds a NUL character (U+0000); rule: no value given to loopx holds NUL "
                "(no command line can carry one)",
                code="invalid-field",
            )

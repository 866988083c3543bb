"""The id rule as plain text and a regular expression, without pydantic: what the command line checks
before it loads any model (``model/ids.py`` builds the ``Id`` type on the same pattern)."""

from __future__ import annotations

import re
from typing import Final

from loopx_git.errors import ValidationError

# Opaque tokens, never paths: no '/', no leading '.', no spaces. Underscore is
# accepted because upstream LoopX records use it (todo_public_boundary_repair).
ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
ID_RULE: Final = "an id (1-128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit)"


def is_id(text: str) -> bool:
    # fullmatch: in Python's re, `$` also matches before a final newline
    return re.fullmatch(ID_PATTERN, text) is not None


def require_id(**values: str | None) -> None:
    """Refuse a value that is not an opaque id before it reaches a record built later, or a command
    template (exit 1, naming the field)."""
    for name, value in values.items():
        if value is not None and not is_id(value):
            raise ValidationError(f"field '{name}': {value!r} is not an id; rule: {ID_RULE}", code="invalid-field")

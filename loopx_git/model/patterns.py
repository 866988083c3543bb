"""The id rule as plain text and a regular expression, without pydantic: what the command line checks
before it loads any model (``model/ids.py`` builds the ``Id`` type on the same pattern)."""

from __future__ import annotations

import re
from typing import Final

# Opaque tokens, never paths: no '/', no leading '.', no spaces. Underscore is
# accepted because upstream LoopX records use it (todo_public_boundary_repair).
ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
ID_RULE: Final = "an id (1-128 characters of A-Z a-z 0-9 . _ : -, starting with a letter or digit)"


def is_id(text: str) -> bool:
    # fullmatch: in Python's re, `$` also matches before a final newline
    return re.fullmatch(ID_PATTERN, text) is not None

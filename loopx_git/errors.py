"""The few exception types loopx-git raises, each with a short stable code.

Everything below ``cli/`` and ``hooks/`` raises one of these; the CLI maps them
to exit codes in one place (``cli/main.py``).
"""

from __future__ import annotations


class LoopxError(Exception):
    """Root of every refusal. ``code`` is short and stable; ``hint`` says what to do."""

    code = "error"
    exit_code = 1

    def __init__(self, message: str, *, code: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class ValidationError(LoopxError):
    """Input that breaks a field rule (shape, enum, id syntax)."""

    code = "invalid"


class RuleError(LoopxError):
    """A well-formed command that a lifecycle rule refuses (claim held, todo done...)."""

    code = "rule"


class NotFoundError(LoopxError):
    """A goal, todo, agent or ref that does not exist."""

    code = "not-found"


class ConflictError(LoopxError):
    """Concurrent writers kept moving the state ref past the retry budget."""

    code = "conflict"


class StoreError(LoopxError):
    """Git could not do what was asked (no repository, unreadable object...)."""

    code = "store"


class FormatError(LoopxError):
    """A record on the branch that this version cannot read (unknown kind, newer schema)."""

    code = "format"


def shown_path(path, limit: int = 200) -> str:
    """A path quoted for a message: repr (so a newline or an undecodable byte shows), and cut
    after ``limit`` characters (a 10 000-character --repo is not echoed back whole)."""
    import os

    text = os.fspath(path)
    text = text if isinstance(text, str) else os.fsdecode(text)
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text)} characters)"


class Notice:
    """Something a command says beside its result without failing: a post-commit chore that could not
    run (the write stands), an evidence path not found yet. ``to_json`` is its shape in JSON output."""

    __slots__ = ("code", "field", "message")

    def __init__(self, code: str, message: str, *, field: str | None = None):
        self.code, self.message, self.field = code, message, field

    def describe(self) -> str:
        return (f"field '{self.field}': " if self.field else "") + self.message

    def to_json(self) -> dict:
        return {"code": self.code, "field": self.field, "message": self.message}

    def __repr__(self) -> str:
        return f"Notice({self.code!r}, {self.message!r}, field={self.field!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Notice) and (self.code, self.message, self.field) == (
            other.code,
            other.message,
            other.field,
        )

    def __hash__(self) -> int:
        return hash((self.code, self.message, self.field))

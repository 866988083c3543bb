"""Every exception type loopx-git raises, and the one place an error becomes an exit code.

Everything below ``cli/`` and ``hooks/`` raises a ``LoopxError`` (each with a short stable code);
the CLI, the hooks, the MCP server and ``loopx fire`` turn whatever ended a command into a message
and an exit code with ``outcome``, so the four say the same thing about the same error.
"""

from __future__ import annotations

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
"""0 done; 1 refused (bad input, a rule, nothing written); 2 a usage error; 3 a bug in loopx."""
EXIT_ATTENTION, EXIT_INTERRUPTED = 4, 130
"""4: ``loopx fire`` stopped where a person must look; 130: interrupted (Ctrl-C), as shells count it."""


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


class SyncRefused(LoopxError):
    """The remote side breaks an invariant (an invalid, edited or clashing record): nothing is merged."""

    code = "remote-refused"


class PushRefused(ConflictError):
    """A push refused — by the remote (its hooks, its rules) or by this clone's own pre-push hook —
    rather than lost to another clone: never retried, reported with what the refusing side printed
    (redacted: a server's message may quote a secret)."""

    code = "push-refused"

    def __init__(self, message: str, *, remote: str, refused_by: str, messages: list[str], hint: str):
        super().__init__(message, hint=hint)
        self.remote, self.refused_by, self.messages = remote, refused_by, messages

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "remote": self.remote,
            "refused_by": self.refused_by,
            "messages": self.messages,
        }


class BrokenBranch(RuleError):
    """The state branch fails verification: nothing is built on it."""

    code = "broken-branch"


class RefMoved(ConflictError):
    """The ref was not where the writer read it (or its lock was held): re-read and retry.

    A refusal of its own where a step does not retry (sync's fast-forward or merge, a claim taken
    back): seen with a killed writer's lock left on the state ref, it reached the CLI as an
    internal error (exit 3) instead of saying which file holds the ref."""

    code = "ref-moved"

    def __init__(self, message: str = "", *, lock: str | None = None):
        said = message.strip().splitlines()[0] if message.strip() else "the ref moved"
        hint = (
            f"if no other git or loopx process is running, one that crashed left {lock} behind: the next loopx "
            "write removes it, or remove it yourself; then try again"
            if lock
            else "another writer moved it meanwhile: run the command again"
        )
        super().__init__(said, hint=hint)
        self.lock = lock
        """The ref's lock file, when a held lock was the reason."""


class SafetyError(LoopxError):
    """A value that the public-safety rules keep off the state branch."""

    code = "unsafe"


class Exit(Exception):
    """End a command with ``code`` and nothing more to say (typer.Exit, without loading typer)."""

    def __init__(self, code: int = 0) -> None:
        super().__init__(code)
        self.exit_code = code


class BadParameter(Exception):
    """A usage error found in a command's body (exit 2). Typer reports it, with the usage line: on
    the fast path nothing has been written yet, so the command line is handed to typer."""

    def __init__(self, message: str, *, param_hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.param_hint = param_hint


class Unsure(Exception):
    """The fast parser does not settle this command line: typer will (a signal, never shown)."""


class Refusal(Exception):
    """An MCP call that did not do what it was asked: the error's code, message and hint, and the
    argument the message names. ``data`` is what the command printed before it refused, if
    anything. Built by ``mcp.calls.refusal``, which masks, cuts and escapes the text first."""

    def __init__(self, code: str, message: str, *, field: str | None = None, hint: str | None = None, data=None):
        super().__init__(message)
        self.code, self.message, self.field, self.hint, self.data = code, message, field, hint, data

    def to_json(self) -> dict:
        error: dict = {"code": self.code, "message": self.message, "field": self.field, "hint": self.hint}
        if self.data is not None:
            error["data"] = self.data
        return {"error": error}


class Outcome:
    """How a command ended: its exit code, and the code, message and hint said about it."""

    __slots__ = ("code", "exit_code", "hint", "message")

    def __init__(self, exit_code: int, code: str, message: str, hint: str | None = None) -> None:
        self.exit_code, self.code, self.message, self.hint = exit_code, code, message, hint

    @property
    def internal(self) -> bool:
        return self.exit_code == EXIT_INTERNAL

    def lines(self) -> list[str]:
        """What stderr says: ``error[code]: message`` and a ``hint:`` line; a bug or an interrupt
        is its message alone, an ``Exit`` nothing."""
        if self.code == "exit":
            return []
        if self.code in ("internal", "aborted"):
            return [self.message]
        return [f"error[{self.code}]: {self.message}", *([f"hint: {self.hint}"] if self.hint else [])]

    def __repr__(self) -> str:
        return f"Outcome({self.exit_code}, {self.code!r}, {self.message!r}, hint={self.hint!r})"


def outcome(exc: BaseException) -> Outcome:
    """The one mapping of an error to an exit code: a refusal (``LoopxError``) is its own code and
        exit code, an ``Exit`` its code, a usage error 2, an interrupted command 1 (as click ends one:
    nothing was written that the command did not finish), and anything else is a bug
        (3), said by its type and text, never as a traceback."""
    if isinstance(exc, LoopxError):
        return Outcome(exc.exit_code, exc.code, exc.message, exc.hint)
    if isinstance(exc, Exit):
        return Outcome(exc.exit_code, "exit", "")
    if isinstance(exc, BadParameter):
        return Outcome(EXIT_USAGE, "usage", exc.message)
    if isinstance(exc, (KeyboardInterrupt, EOFError)):
        return Outcome(EXIT_REFUSED, "aborted", "aborted")
    return Outcome(
        EXIT_INTERNAL,
        "internal",
        f"internal error: {type(exc).__name__}: {exc} (exit 3 is always a bug in loopx; please report it "
        "with the command that caused it)",
    )


MAX_WORD, MAX_MESSAGE = 4096, 16000
"""A word longer than any path (PATH_MAX) is a quoted value; a message longer than this quotes one."""


def clipped(message: str) -> str:
    """A message quoting a 10 MB value is not 10 MB long: an overlong word (the quoted value) keeps
    its start and end and says how much was cut, and a message still too long keeps its start (the
    code and field) and its end (the rule)."""
    import re

    def cut(match: re.Match[str]) -> str:
        word = match.group()
        return f"{word[:120]}...[{len(word) - 140} characters cut]...{word[-20:]}"

    message = re.sub(rf"\S{{{MAX_WORD + 1},}}", cut, message)
    if len(message) > MAX_MESSAGE:
        cut_out = len(message) - MAX_MESSAGE
        message = f"{message[: MAX_MESSAGE // 2]}...[{cut_out} characters cut]...{message[-MAX_MESSAGE // 2 :]}"
    return message


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

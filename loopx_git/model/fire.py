"""A bounded headless fire: the unit a scheduler runs. Its policy (what a scheduled run may
approve) and its record (one mechanical terminal status, always) are pure data here.

Terminal statuses and exit codes: ``ok`` 0, ``error`` 1, ``needs_attention`` 4, ``cancelled`` 130.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Final, Literal

from pydantic import Field, StringConstraints

from loopx_git.errors import EXIT_ATTENTION, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED
from loopx_git.model.ids import Id
from loopx_git.model.ledger import EntryStatus, Evidence, Next, Verdict
from loopx_git.model.record import Line, Record, Token

FIRE_SCHEMA: Final = "loopx_fire_record_v0"
RESULT_SCHEMA = "loopx_fire_result_v0"


class Level(str, Enum):
    """What a requested action would do, in increasing reach."""

    read_only = "read_only"
    workspace_write = "workspace_write"
    repo_push = "repo_push"


LEVEL_ORDER = {Level.read_only.value: 0, Level.workspace_write.value: 1, Level.repo_push.value: 2}

DANGEROUS_KINDS = frozenset(
    {"history_rewrite", "force_push", "delete_branch", "deploy", "publish", "credential_access"}
)
"""Denied to every scheduled run, whatever its ceiling: they need a person."""


class Terminal(str, Enum):
    ok = "ok"
    error = "error"
    cancelled = "cancelled"
    needs_attention = "needs_attention"


EXIT_CODES = {
    Terminal.ok.value: EXIT_OK,
    Terminal.error.value: EXIT_REFUSED,
    Terminal.needs_attention.value: EXIT_ATTENTION,
    Terminal.cancelled.value: EXIT_INTERRUPTED,
}


class RequestedAction(Record):
    kind: Token
    level: Level


class IterationResult(Record):
    """What COMMAND prints on stdout: one JSON object."""

    status: Literal["done", "blocked", "pending"]
    verdict: Verdict
    next: Next
    evidence: list[Evidence] = Field(default_factory=list)
    requested_actions: list[RequestedAction] = Field(default_factory=list)
    question: Line | None = None


class Denial(Record):
    kind: Token
    level: Level
    reason: Literal["dangerous_action", "policy_denied"]


def judge(actions: list[RequestedAction], ceiling: str) -> list[Denial]:
    """The requested actions a scheduled run must deny: dangerous kinds always, others above the ceiling."""
    out = []
    for action in actions:
        if action.kind in DANGEROUS_KINDS:
            out.append(Denial(kind=action.kind, level=action.level, reason="dangerous_action"))
        elif LEVEL_ORDER[action.level] > LEVEL_ORDER[ceiling]:
            out.append(Denial(kind=action.kind, level=action.level, reason="policy_denied"))
    return out


class IterationRow(Record):
    entry_id: Id
    outcome: Annotated[str, StringConstraints(max_length=40)]
    """``written_back`` or what went wrong: ``timeout``, ``command_failed``, ``bad_output``, ``denied``..."""
    status: EntryStatus
    verdict: Verdict | None = None
    next: Next | None = None


ReasonKind = Literal["refused", "command_failed", "timeout", "cannot_start", "bad_output"]

STDERR_TAIL_LINES = 20
STDERR_TAIL_BYTES = 2048
"""How much of COMMAND's stderr a fire record keeps: its last lines, within this many bytes."""


class FireReason(Record):
    """Why a fire ended in ``error``: the refusal that stopped it (its code, the field and the rule),
    or how COMMAND failed (its exit status and the last lines of its stderr). Every string passed the
    safety redaction before it was recorded: a secret in stderr becomes ``[REDACTED:<rule>]``."""

    kind: ReasonKind
    message: Line
    """One line for people: what went wrong."""
    code: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,63}$")] | None = None
    """A refusal's code (``evidence_missing``, ``invalid-field``...)."""
    field: Line | None = None
    """The field a refusal or a bad answer names (``evidence``, ``status``)."""
    rule: Line | None = None
    """The rule it broke."""
    exit_status: int | None = None
    """COMMAND's exit status; negative when a signal ended it (-9: SIGKILL)."""
    stderr_tail: list[Line] = Field(default_factory=list, max_length=STDERR_TAIL_LINES)
    """The last lines COMMAND wrote to stderr (at most 20 lines, 2 KiB), redacted."""

    def one_line(self, limit: int = 1000) -> str:
        """The reason as one line of at most ``limit`` characters: the message, then as much of the end
        of the stderr tail as fits (the last lines say most)."""
        head = self.message if not self.rule or self.rule in self.message else f"{self.message}; rule: {self.rule}"
        tail = " | ".join(self.stderr_tail)
        whole = f"{head}; stderr: {tail}" if tail else head
        if len(whole) <= limit:
            return whole
        room = limit - len(head) - len("; stderr: ...")
        return f"{head}; stderr: ...{tail[-room:]}" if tail and room >= 20 else head[:limit]


class FireSummary(Record):
    """The fire record written to the state branch when a fire ends, whatever the ending."""

    schema_version: Literal["loopx_fire_record_v0"] = FIRE_SCHEMA
    fire_id: Id
    terminal_status: Terminal
    stop_condition: Token
    reason: FireReason | None = None
    """Why the fire ended in ``error`` (None for every other terminal status)."""
    iterations_run: int
    max_iterations: int
    timeout_seconds: float
    iteration_timeout_seconds: float
    approver_ceiling: Level
    command: Line
    """The program's name only: arguments may hold private material."""
    duration_seconds: float
    entries: list[IterationRow] = Field(default_factory=list)
    denials: list[Denial] = Field(default_factory=list)
    started_at: str
    ended_at: str

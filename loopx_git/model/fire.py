"""A bounded headless fire: the unit a scheduler runs. Its policy (what a scheduled run may
approve) and its record (one mechanical terminal status, always) are pure data here.

Terminal statuses and exit codes: ``ok`` 0, ``error`` 1, ``needs_attention`` 4, ``cancelled`` 130.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from loopx_git.model.ids import Id
from loopx_git.model.ledger import EntryStatus, Evidence, Next, Verdict
from loopx_git.model.record import Line, Record, Token

FIRE_SCHEMA = "loopx_fire_record_v0"
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
    Terminal.ok.value: 0,
    Terminal.error.value: 1,
    Terminal.needs_attention.value: 4,
    Terminal.cancelled.value: 130,
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


class FireSummary(Record):
    """The fire record written to the state branch when a fire ends, whatever the ending."""

    schema_version: Literal["loopx_fire_record_v0"] = FIRE_SCHEMA
    fire_id: Id
    terminal_status: Terminal
    stop_condition: Token
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

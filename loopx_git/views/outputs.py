"""The JSON outputs that are not records themselves: the write envelope, sync, connect, check,
doctor, gc, a rollback's dry run, the ledger's action contract... One model each, strict (an extra
or a missing key fails), so ``loopx schema NAME`` describes exactly what the command prints and a
test holds every command's real output to it. Records inside them are the records' own models, so
a field added to a record flows into every output that carries it."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from loopx_git.model.event import RolloutEvent
from loopx_git.model.explore import ExploreEdge, ExploreFinding, ExploreNode
from loopx_git.model.gate import OperatorGate
from loopx_git.model.goal import Agent, Goal
from loopx_git.model.handoff import AgentHandoff
from loopx_git.model.ledger import LedgerEntry
from loopx_git.model.research import ObserveReceipt
from loopx_git.model.reward import HumanReward
from loopx_git.model.rollback import RollbackPacket
from loopx_git.model.run import RunRecord
from loopx_git.model.state import Conflict
from loopx_git.model.todo import SuggestedTodo, TodoItem

Sha = Annotated[str, Field(pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")]  # SHA-1 or SHA-256 repositories


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


# -- the write envelope --------------------------------------------------------------------------


class SafetyNote(Output):
    """A safety finding on a written field: replaced (``redacted``) or written as a warning."""

    field: str
    rule: str
    severity: Literal["block", "warn"]
    fingerprint: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]


class Notice(Output):
    """A notice beside a write: ``evidence-path-missing``, ``upkeep`` (the write stands)."""

    code: str
    field: str | None
    message: str


class Repaired(Output):
    """What ``loopx repair`` did."""

    rederived: list[str]
    removed: list[str]


WrittenRecord = Union[  # noqa: UP007 - a union of models, read as a JSON Schema anyOf
    TodoItem,
    SuggestedTodo,
    Goal,
    Agent,
    RunRecord,
    RollbackPacket,
    LedgerEntry,
    OperatorGate,
    HumanReward,
    AgentHandoff,
    ExploreNode,
    ExploreEdge,
    ExploreFinding,
    ObserveReceipt,
    Repaired,
    RolloutEvent,
]


class WriteResult(Output):
    schema_version: Literal["loopx_write_result_v0"]
    changed: bool
    commit: Sha | None
    """The commit on the state branch; null when nothing changed."""
    event_ids: list[str]
    record: WrittenRecord | None
    """The todo, goal, agent, event, run, packet, ledger entry, gate or explore node (edge, finding,
    observation receipt) as it is after the write."""
    redacted: list[SafetyNote]
    warnings: list[SafetyNote | Notice]


# -- many clones ---------------------------------------------------------------------------------


class SyncResult(Output):
    schema_version: Literal["loopx_sync_result_v0"]
    remote: str
    action: Literal["up-to-date", "ahead", "fast-forward", "merged", "no-remote-branch"]
    remote_tip: Sha | None
    local_tip: Sha | None
    events_from_remote: int
    pushed: bool
    attempts: int
    conflicts: list[Conflict]
    warnings: list[Notice]
    """``remote-rewritten``: the remote dropped commits this clone had (merged back, nothing lost)."""


class PushResult(Output):
    remote: str
    pushed: bool
    tip: Sha | None


class ProposeResult(Output):
    remote: str
    branch: str
    tip: Sha
    state_branch: str


# -- connect, check, doctor, gc ------------------------------------------------------------------


class ConnectResult(Output):
    state_ref: str
    created: bool
    tip: Sha | None
    goal_created: str | None
    hooks: dict[str, str]
    """hook name (``pre-commit``, ``pre-push``) -> what was done"""
    ignore_block: str | None
    pre_commit_framework: bool
    framework_snippet: str | None
    remote: str | None
    refspec_added: bool | None
    adopted_from: str | None
    """``<remote>/loopx/state`` when the branch started from the remote's shared history."""


class DisconnectResult(Output):
    hooks: dict[str, str]


class Finding(Output):
    rule: str
    severity: Literal["block", "warn"]
    path: str | None
    line: int
    column: int
    fingerprint: str
    where: str | None = None
    """The commit a pushed blob came from."""
    note: str | None = None
    """The local-state pattern a path matched."""


class CheckReport(Output):
    ok: bool
    files_scanned: int
    commits_walked: int
    blocking: int
    warnings: int
    findings: list[Finding]
    refused: list[str]


class CheckRule(Output):
    rule: str
    severity: Literal["block", "warn"]
    finds: str
    allowlist: str


class SafetyRule(Output):
    rule: str
    severity: Literal["block", "warn"]
    family: str
    """The catalog family (``keys``, ``cloud``, …), ``custom`` for a team's rule, ``boundary``
    for local-state, ``record`` for the structural record rules."""
    description: str
    reference: str
    """Where the format is documented; for a team's rule, the file it came from."""
    allowlist: str


class RemoteCopy(Output):
    remote: str
    ref: str
    remote_tip: Sha
    relation: Literal["pushed", "ahead", "behind", "diverged"]


class RemoteState(Output):
    remote: str
    has_state_branch: bool | None
    """null when the remote cannot be reached (``error`` says why)."""
    remote_tip: Sha | None
    error: str | None


class HookState(Output):
    hook: str
    path: str
    installed: bool
    current: bool
    version: int | None
    chained: str | None
    target: str | None
    target_missing: bool | None


class GcLog(Output):
    path: str
    age_seconds: int
    says: str


class DoctorReport(Output):
    state_ref: str
    tip: Sha | None
    remote_copies: list[RemoteCopy]
    remotes: list[RemoteState]
    """Empty with ``--offline``."""
    goals: list[str]
    events: int
    loopx_version: str
    loopx_executable: str
    pre_commit_framework: bool
    hooks: list[HookState]
    ignore_block_present: bool
    loose_objects: int
    loose_bytes: int
    packs: int
    pack_bytes: int
    unreachable_objects: int
    prune_expire: str
    gc_log: GcLog | None
    bytes_per_event: int | None
    problems: list[str]


class GcResult(Output):
    before_bytes: int
    after_bytes: int
    loose_objects: int
    packs: int
    unreachable_before: int
    unreachable_pruned: int
    unreachable_kept: int
    prune_expire: str
    gc_log_removed: bool


# -- rollback and the ledger ---------------------------------------------------------------------


class Change(Output):
    field: str
    from_: Any = Field(alias="from")
    to: Any


class Transition(Output):
    event_kind: str
    todo_id: str | None
    compensates: str | None
    changes: list[Change]


class RollbackDryRun(Output):
    dry_run: Literal[True]
    packet: RollbackPacket
    transitions: list[Transition]


class LedgerAction(Output):
    """What ``ledger next`` hands an iteration: the one entry and the rule it runs under."""

    schema_version: Literal["loopx_ledger_action_v0"]
    ledger_schema: str
    goal_id: str
    entry: LedgerEntry
    iteration: int
    rule: str


class NothingSelected(Output):
    """``ledger next`` when nothing is runnable."""

    selected: None


class ConformanceReport(Output):
    ok: bool
    schema_: str = Field(alias="schema")
    cases: dict[str, list[str]]
    """case name -> the seed's failure codes it shows (empty: passes)"""
    failure_codes: list[str]


# -- the commands about loopx itself -------------------------------------------------------------


class SchemaListing(Output):
    """One row of ``loopx schema --list``."""

    name: str
    emitted_by: str


class DemoStep(Output):
    title: str
    said: list[str]


class DemoReport(Output):
    schema_version: Literal["loopx_demo_v0"] = "loopx_demo_v0"
    ok: bool
    steps: list[DemoStep]
    kept: str | None
    """The demo repository's path with ``--keep``, else null (it was removed)."""

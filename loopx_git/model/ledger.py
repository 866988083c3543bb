"""The loop ledger (project-telos.loop-ledger/v1): the durable memory of a loop of fresh-context
agent iterations. The conversation is never the authority; the ledger is. An iteration reads it,
takes exactly one entry's action, verifies with evidence, and writes the result back before
anything else is selected.

An entry: ``id``, ``status`` (pending|active|blocked|done), ``claim``, ``action``, ``evidence[]``
(typed, public-safe), ``verdict`` (MATCH|DRIFT|UNVERIFIABLE), ``next`` (resume|ask_user|retry|stop),
``updated_at``. Entries live as events on the state branch, one YAML document each under
``goals/<goal>/ledger/``.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Literal,
)

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    StringConstraints,
    ValidationInfo,
    model_serializer,
    model_validator,
)

from loopx_git.model.event_head import EventBase
from loopx_git.model.ids import (
    Id,
    UtcTimestamp,
)
from loopx_git.model.record import WRITE_CONTEXT, Line, Record, control_free, exact, writing

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

LEDGER_SCHEMA = "project-telos.loop-ledger/v1"

Action = Annotated[str, StringConstraints(min_length=1, max_length=200)]
"""The one action an iteration takes for the entry: a slug or a short imperative line."""


class EntryStatus(str, Enum):
    pending = "pending"
    active = "active"
    blocked = "blocked"
    done = "done"


class Verdict(str, Enum):
    MATCH = "MATCH"
    DRIFT = "DRIFT"
    UNVERIFIABLE = "UNVERIFIABLE"


class Next(str, Enum):
    resume = "resume"
    ask_user = "ask_user"
    retry = "retry"
    stop = "stop"


class EvidenceKind(str, Enum):
    test_path = "test_path"
    diff_ref = "diff_ref"
    command_output = "command_output"
    url = "url"
    artifact_id = "artifact_id"
    receipt_hash = "receipt_hash"


_DIGEST = re.compile(r"(?:sha256|sha512|blake2b):[0-9a-f]{32,128}")  # matched whole (record.exact)
_URL = re.compile(r"https?://[^\s]+")


class Evidence(Record):
    """One piece of evidence. ``command_output`` is a digest of the output plus a short public-safe
    summary, never the output itself."""

    kind: EvidenceKind
    ref: Line
    summary: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None

    @model_validator(mode="after")
    def _shape(self, info: ValidationInfo) -> Evidence:
        kind, ref, lenient = self.kind, self.ref, not writing(info)
        digest_kinds = (EvidenceKind.command_output.value, EvidenceKind.receipt_hash.value)
        if kind in digest_kinds and not exact(_DIGEST, ref, lenient=lenient):
            raise ValueError(f"{kind} evidence is a digest like sha256:<hex>, never raw output")
        if kind == EvidenceKind.url.value and not exact(_URL, ref, lenient=lenient):
            raise ValueError("url evidence is an http(s) URL")
        if kind == EvidenceKind.test_path.value and (
            ref.startswith(("/", "~")) or ".." in ref.split("/") or not (lenient or control_free(ref))
        ):
            raise ValueError(
                "test_path evidence is a path relative to the repository, with no '..' and no control characters"
            )
        return self

    @classmethod
    def parse(cls, text: str) -> Evidence:
        """``KIND:REF`` as given on the command line (``test_path:tests/test_x.py``)."""
        kind, sep, ref = text.partition(":")
        if not sep or kind not in {k.value for k in EvidenceKind}:
            raise ValueError(f"{text!r} is not KIND:REF with KIND one of {', '.join(k.value for k in EvidenceKind)}")
        return cls.model_validate({"kind": kind, "ref": ref}, context=WRITE_CONTEXT)  # a new value: today's rules

    def label(self) -> str:
        return f"{self.kind}:{self.ref}" + (f" ({self.summary})" if self.summary else "")


class LedgerEntry(Record):
    id: Id
    status: EntryStatus = EntryStatus.pending
    claim: Line
    action: Action
    evidence: list[Evidence] = Field(default_factory=list)
    verdict: Verdict | None = None
    """None until the first write-back."""
    next: Next | None = None
    updated_at: UtcTimestamp
    created_at: UtcTimestamp
    selected_by: Id | None = None
    """The agent whose iteration holds the entry (while ``active``)."""
    iterations: int = 0
    """How many times an iteration selected it."""
    question: Line | None = None
    """What a person must answer, while ``next`` is ask_user."""
    failure: Line | None = None
    """Why the last write-back was a failure (a fire's error: the refusal, or COMMAND's exit status and
    the end of its stderr, redacted), until the next write-back. Left out of the record when None."""

    @model_serializer(mode="wrap")
    def _without_empty_failure(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        # `failure` came after entries were on branches: a document is compared byte for byte with the
        # fold (`loopx verify`), so an entry that never failed renders exactly as it did before.
        # (No return annotation: pydantic would take it as the serialized shape and lose the fields'.)
        data: dict[str, Any] = handler(self)
        if data.get("failure") is None:
            data.pop("failure", None)
        return data

    @property
    def runnable(self) -> bool:
        """Pending, or written back with next=resume|retry and not done or waiting for the user."""
        if self.status == EntryStatus.pending.value:
            return True
        return (
            self.status != EntryStatus.done.value
            and self.status != EntryStatus.active.value
            and self.next in (Next.resume.value, Next.retry.value)
            and self.verdict != Verdict.UNVERIFIABLE.value
        )

    @property
    def stops_the_loop(self) -> bool:
        """UNVERIFIABLE and ask_user halt a loop until a person answers."""
        return self.status != EntryStatus.done.value and (
            self.next == Next.ask_user.value or self.verdict == Verdict.UNVERIFIABLE.value
        )


# --- the events of this family: the fold below applies them --------------------


class LedgerEvent(EventBase):
    entry_id: Id


class LedgerAdd(LedgerEvent):
    event_kind: Literal["ledger_add"] = "ledger_add"


class LedgerSelect(LedgerEvent):
    """An iteration took the entry: it is active for ``agent_id`` until written back."""

    event_kind: Literal["ledger_select"] = "ledger_select"


class LedgerRecord(LedgerEvent):
    """The write-back: status, verdict, next, and the evidence it adds."""

    event_kind: Literal["ledger_record"] = "ledger_record"
    evidence: list[Evidence] = Field(default_factory=list)


FOLDS: Final[tuple[str, ...]] = (
    "ledger_add",
    "ledger_select",
    "ledger_record",
)
"""The event kinds ``apply`` folds (``model/state.FOLD`` maps each to it)."""


def apply(state: GoalState, event: LedgerEvent) -> None:
    """Fold a ledger_* event: an entry added, selected, or written back (its field changes, and
    the evidence the write-back adds to what the entry had)."""
    after = {c.field: c.after for c in event.changes}
    entry_id = event.entry_id
    current = state.ledger.get(entry_id)
    if event.event_kind == "ledger_add":
        if current is not None:
            state.record_conflict(event, "duplicate_entry", f"ledger entry {entry_id} was added twice")
            return
        state.ledger[entry_id] = LedgerEntry.model_validate({"id": entry_id, **after})
        return
    if current is None:
        state.record_conflict(event, "unknown_entry", f"{event.event_kind} names ledger entry {entry_id}, never added")
        return
    if event.event_kind == "ledger_select" and current.status == EntryStatus.active.value:
        state.record_conflict(
            event,
            "selection_conflict",
            f"{event.agent_id} selected {entry_id}, already active for {current.selected_by}",
        )
        return
    state.check_before(event, current)
    added = [e for e in getattr(event, "evidence", []) if e not in current.evidence]
    state.ledger[entry_id] = current.model_copy(update={**after, "evidence": current.evidence + added})

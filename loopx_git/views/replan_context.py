"""replan_context_v0 (seed 000): what an agent with an open replan obligation has already tried, in
one read — its own evidence, deterministic and bounded — beside what is still uncovered.

- ``core_goal`` first (the objective, its source, a missing flag), the acceptance contract apart;
- evidence rows from the agent's own run records only (other agents and unattributed runs never
  supply proof), sorted by time, exact replays dropped, repeated observations collapsed with their
  count and first and latest time; at most 24, chosen by one per observed result class, then one per
  distinct (surface, hypothesis, probe) route, then the most recent; full text kept (an output, never
  committed);
- a coverage ledger of the distinct typed observations, linked to the rows by fingerprint;
- what was left out (counts, time bounds, the scoped history read), ``from_full_index: true``;
- a delivery receipt (what was delivered and its digest: a receipt is never progress).

The same history gives a byte-identical context. Every row has a content-bound ``evidence_ref``
that ``loopx history --evidence-ref`` resolves to exactly that run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from loopx_git.model.record import Record
from loopx_git.model.run import RunRecord
from loopx_git.model.state import GoalState
from loopx_git.views.budget import BUDGET, printed_size
from loopx_git.views.evidence_index import AgentEvidence, MissingRuns, Observation, Row, Selection, select
from loopx_git.views.replan import ReplanActionPacket, UncoveredFrontier

CONTEXT_SCHEMA: Final = "replan_context_v0"
RECEIPT_SCHEMA: Final = "replan_context_delivery_receipt_v0"
ROWS: Final = 24
LEDGER: Final = 24
READ_TEMPLATE: Final = "loopx --format json history --goal-id {goal} --agent-id {agent} --evidence-ref {{evidence_ref}}"


def evidence_ref(run: RunRecord) -> str:
    """``evr:<run id>:<16 hex>``: the run, and a digest over its stored content, goal and agent (a run
    whose content is not what the ref was made from is told apart from an unknown one)."""
    content = json.dumps(run.model_dump(mode="json", exclude_none=True), sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(f"{run.goal_id}\n{run.agent_id}\n{content}".encode()).hexdigest()[:16]
    return f"evr:{run.run_id}:{digest}"


class CoreGoal(Record):
    objective: str | None
    source: Literal["goal", "registered"]
    """Where the objective comes from: the goal's current document (``goal``), or, upstream, the
    objective registered for it when the active state has none (``registered``). A loopx goal always
    has a current objective (``goal update`` replaces it, never clears it), so this is ``goal`` here;
    the other value is kept so the schema reads upstream contexts too."""
    missing: bool


class AcceptanceContract(Record):
    criteria: list[str]
    non_goals: list[str]
    revision: str | None
    """When the goal was last changed (its ``updated_at``)."""
    status: str


class EvidenceRow(Record):
    evidence_ref: str
    run_id: str
    """The latest run of a collapsed observation (the one its ref resolves)."""
    first_at: str
    latest_at: str
    count: int
    """Runs that made this same observation (exact replays not counted)."""
    classification: str
    recommended_action: str | None = None
    evidence: list[str]
    delivery_outcome: str | None = None
    todo_id: str | None = None
    fingerprint: str | None = None
    result_class: str | None = None
    surface_id: str | None = None
    hypothesis_id: str | None = None
    probe_kind: str | None = None
    blocker_id: str | None = None


class LedgerEntry(Record):
    fingerprint: str
    result_class: str
    work_item_id: str | None = None
    surface_id: str | None = None
    hypothesis_id: str | None = None
    probe_kind: str | None = None
    blocker_id: str | None = None
    coverage_scope_id: str | None = None
    coverage_complete: bool = False
    evidence_ids: list[str]
    count: int
    rows: list[str]
    """The evidence refs of the rows that carry it."""


class Omitted(Record):
    rows: int
    first_at: str | None = None
    latest_at: str | None = None
    ledger_entries: int = 0
    read: str
    """The scoped history read that lists everything (``loopx history``)."""


class DeliveryReceipt(Record):
    schema_version: Literal["replan_context_delivery_receipt_v0"] = RECEIPT_SCHEMA
    obligation_id: str
    agent_id: str
    delivered_rows: int
    delivered_ledger_entries: int
    digest: str
    """sha256 of the delivered core goal, rows and ledger (first 16 hex): what this context said."""
    is_progress: Literal[False] = False


class ReplanContext(Record):
    schema_version: Literal["replan_context_v0"] = CONTEXT_SCHEMA
    obligation_id: str
    goal_id: str
    agent_id: str
    core_goal: CoreGoal
    acceptance_contract: AcceptanceContract
    from_full_index: bool = True
    evidence: list[EvidenceRow]
    evidence_read_action_template: str | None = None
    """For a multi-row view: replace {evidence_ref} with a row's ref."""
    read_action: str | None = None
    """For a single-row view: the exact read of that row."""
    coverage_ledger: list[LedgerEntry]
    uncovered_frontier: UncoveredFrontier
    omitted: Omitted
    delivery_receipt: DeliveryReceipt


def _row(row: Row, latest: RunRecord) -> EvidenceRow:
    p = latest.progress
    return EvidenceRow(
        evidence_ref=evidence_ref(latest),
        run_id=latest.run_id,
        first_at=row.first_at,
        latest_at=row.latest_at,
        count=row.times,
        classification=latest.classification,
        recommended_action=latest.recommended_action,
        evidence=list(latest.evidence),
        delivery_outcome=latest.delivery_outcome,
        todo_id=latest.todo_id,
        fingerprint=p.fingerprint if p else None,
        result_class=p.result_class if p else None,
        surface_id=p.surface_id if p else None,
        hypothesis_id=p.hypothesis_id if p else None,
        probe_kind=p.probe_kind if p else None,
        blocker_id=p.blocker_id if p else None,
    )


def _ledger(
    observations: Sequence[Observation], runs: dict[str, RunRecord], rows: Sequence[EvidenceRow]
) -> list[LedgerEntry]:
    """The coverage ledger, each entry linked to the rows that carry its fingerprint."""
    entries = []
    for seen in observations:
        p = runs[seen.latest_id].progress
        assert p is not None and p.fingerprint == seen.fingerprint
        entries.append(
            LedgerEntry(
                fingerprint=seen.fingerprint,
                result_class=p.result_class,
                work_item_id=p.work_item_id,
                surface_id=p.surface_id,
                hypothesis_id=p.hypothesis_id,
                probe_kind=p.probe_kind,
                blocker_id=p.blocker_id,
                coverage_scope_id=p.coverage_scope_id,
                coverage_complete=p.coverage_complete,
                evidence_ids=sorted(p.evidence_ids),
                count=seen.times,
                rows=[r.evidence_ref for r in rows if r.fingerprint == seen.fingerprint],
            )
        )
    return entries


@dataclass(frozen=True)
class _Source:
    """What a context is cut from, read once however often the budget has it built: the selection
    and the runs its rows and ledger entries show."""

    selection: Selection
    runs: dict[str, RunRecord]


def _source(gs: GoalState, agent: str, evidence: AgentEvidence) -> _Source:
    if (evidence.index.goal_id, evidence.index.agent_id) != (gs.goal_id, agent):
        raise ValueError(
            f"the evidence of {evidence.index.agent_id!r} on {evidence.index.goal_id!r} is not {agent!r}'s"
        )
    selection = select(evidence.index, ROWS, LEDGER)
    # the runs the rows and ledger entries may show: the few dozen read, of all the agent's runs
    wanted = [(r.latest_at, r.latest_id) for r in selection.rows]
    wanted += [(o.latest_at, o.latest_id) for o in selection.observations]
    runs = evidence.load(wanted)
    missing = sorted({run_id for _, run_id in wanted} - runs.keys())
    if missing:  # the index names runs the branch does not hold: it was not built from this tip
        raise MissingRuns(f"the evidence index names runs that are not on the branch: {', '.join(missing[:3])}")
    return _Source(selection, runs)


def _fitted(gs: GoalState, packet: ReplanActionPacket, source: _Source, budget: int) -> ReplanContext:
    """The context of ``packet``'s obligation from what the agent's evidence index selected (its own
    runs on this goal only: other agents' and unattributed runs never supply proof), cut to ``budget``."""
    agent = packet.agent_id
    goal = gs.goal
    objective = goal.objective if goal is not None else None
    selection, runs = source.selection, source.runs
    read = f"loopx --format json history --goal-id {gs.goal_id} --agent-id {agent}"
    template = READ_TEMPLATE.format(goal=gs.goal_id, agent=agent)

    def build(count: int, ledger_size: int) -> ReplanContext:
        chosen = sorted(selection.rows[:count], key=lambda r: (r.latest_at, r.latest_id))  # shown in time order
        rows = [_row(row, runs[row.latest_id]) for row in chosen]
        ledger = _ledger(selection.observations[:ledger_size], runs, rows)
        first, latest = selection.omitted_bounds({row.latest_id for row in chosen})
        core = CoreGoal(objective=objective, source="goal", missing=objective is None)
        digest_body = json.dumps(
            {
                "core_goal": core.model_dump(mode="json"),
                "rows": [r.model_dump(mode="json") for r in rows],
                "ledger": [e.model_dump(mode="json") for e in ledger],
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return ReplanContext(
            obligation_id=packet.obligation_id,
            goal_id=gs.goal_id,
            agent_id=agent,
            core_goal=core,
            acceptance_contract=AcceptanceContract(
                criteria=list(goal.acceptance_criteria) if goal is not None else [],
                non_goals=list(goal.non_goals) if goal is not None else [],
                revision=goal.updated_at if goal is not None else None,
                status=goal.status if goal is not None else "missing",
            ),
            evidence=rows,
            evidence_read_action_template=template if len(rows) > 1 else None,
            read_action=template.replace("{evidence_ref}", rows[0].evidence_ref) if len(rows) == 1 else None,
            coverage_ledger=ledger,
            uncovered_frontier=packet.uncovered_frontier,
            omitted=Omitted(
                rows=selection.total_rows - len(rows),
                first_at=first,
                latest_at=latest,
                ledger_entries=selection.total_observations - len(ledger),
                read=read,
            ),
            delivery_receipt=DeliveryReceipt(
                obligation_id=packet.obligation_id,
                agent_id=agent,
                delivered_rows=len(rows),
                delivered_ledger_entries=len(ledger),
                digest=hashlib.sha256(digest_body.encode()).hexdigest()[:16],
            ),
        )

    # the budget: rows (the lowest in the selection first) and ledger entries (the oldest first) leave
    # in turn, the ledger kept no longer than the rows, until it fits
    count, ledger_size = len(selection.rows), len(selection.observations)
    context = build(count, ledger_size)
    while (size := printed_size(context.model_dump(mode="json"))) > budget and (count or ledger_size):
        # several at once when far over: what one row or entry costs on average, against the overshoot
        per_item = max(1, (size - 2048) // max(1, count + ledger_size))
        for _ in range(max(1, (size - budget) // per_item // 2)):
            if ledger_size > max(1, count) or (ledger_size and count <= 1):
                ledger_size -= 1
            elif count:
                count -= 1
        context = build(count, ledger_size)
    return context


R = TypeVar("R", bound=Record)
CONTEXT_MARGIN: Final = 256
"""Bytes kept free beside the context: its key and the indentation it is printed with."""
CONTEXT_FLOOR: Final = 2048


def with_context(answer: R, gs: GoalState, packet: ReplanActionPacket, evidence: AgentEvidence) -> R:
    """``answer`` (should-run or a review packet) with the replan context in its ``replan_context``,
    given what the rest leaves of the 16 KiB. Measured in place: nested one level deeper, the context
    prints a little longer than alone."""
    spare = BUDGET - printed_size(answer.model_dump(mode="json")) - CONTEXT_MARGIN
    source = _source(gs, packet.agent_id, evidence)
    while True:
        context = _fitted(gs, packet, source, max(spare, CONTEXT_FLOOR))
        whole = answer.model_copy(update={"replan_context": context})
        over = printed_size(whole.model_dump(mode="json")) - BUDGET
        if over <= 0 or spare <= CONTEXT_FLOOR:
            return whole
        spare -= over + CONTEXT_MARGIN

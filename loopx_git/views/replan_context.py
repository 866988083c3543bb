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
from typing import Final, Literal, TypeVar

from loopx_git.model.record import Record
from loopx_git.model.run import RunRecord, run_order_key
from loopx_git.model.state import GoalState
from loopx_git.views.budget import BUDGET, printed_size
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


def _observation(run: RunRecord) -> tuple:
    """What a run observed, apart from when and under which id: runs alike in it collapse."""
    p = run.progress
    return (
        run.classification,
        run.recommended_action,
        tuple(run.evidence),
        run.delivery_outcome,
        run.todo_id,
        p.fingerprint if p is not None else None,
    )


def collapse(runs: Sequence[RunRecord], *, ordered: bool = False) -> list[tuple[RunRecord, RunRecord, int]]:
    """(first, latest, count) per distinct observation, by time of the latest: exact replays (the same
    observation at the same time) dropped, repeats counted. ``ordered``: ``runs`` are in time order."""
    groups: dict[tuple, list] = {}  # observation -> [first, latest, count, latest time]
    for run in runs if ordered else sorted(runs, key=run_order_key):
        key = _observation(run)
        group = groups.get(key)
        if group is None:
            groups[key] = [run, run, 1]
        elif group[1].generated_at != run.generated_at:  # the same time again: an exact replay
            group[1], group[2] = run, group[2] + 1
    rows = [(first, latest, count) for first, latest, count in groups.values()]
    return sorted(rows, key=lambda r: run_order_key(r[1]))


def select(rows: Sequence[tuple[RunRecord, RunRecord, int]], limit: int = ROWS) -> list[int]:
    """Indexes into ``rows`` (time order), best first: one per observed result class (its latest), then
    one per distinct (surface, hypothesis, probe) route (its latest), then the most recent."""
    chosen: list[int] = []
    taken: set[int] = set()
    classes: set[str] = set()
    routes: set[tuple] = set()
    newest_first = range(len(rows) - 1, -1, -1)

    def take(i: int) -> None:
        if i not in taken and len(chosen) < limit:
            taken.add(i)
            chosen.append(i)

    for i in newest_first:
        p = rows[i][1].progress
        if p is not None and p.result_class not in classes:
            classes.add(p.result_class)
            take(i)
    for i in newest_first:
        if len(chosen) >= limit:
            break
        p = rows[i][1].progress
        route = (p.surface_id, p.hypothesis_id, p.probe_kind) if p is not None else None
        if route is not None and route not in routes and any(route):
            routes.add(route)
            take(i)
    for i in newest_first:
        if len(chosen) >= limit:
            break
        take(i)
    return chosen


def _row(first: RunRecord, latest: RunRecord, count: int) -> EvidenceRow:
    p = latest.progress
    return EvidenceRow(
        evidence_ref=evidence_ref(latest),
        run_id=latest.run_id,
        first_at=first.generated_at,
        latest_at=latest.generated_at,
        count=count,
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


def _observations(runs: Sequence[RunRecord]) -> list[tuple[str, RunRecord, int]]:
    """(fingerprint, its latest run, count) of every distinct typed observation, the most recent first
    (``runs`` in time order)."""
    by_fp: dict[str, tuple[RunRecord, int]] = {}
    for run in runs:
        if run.progress is not None:
            _, count = by_fp.get(run.progress.fingerprint, (run, 0))
            by_fp[run.progress.fingerprint] = (run, count + 1)
    ranked = sorted(by_fp.items(), key=lambda item: run_order_key(item[1][0]), reverse=True)
    return [(fp, run, count) for fp, (run, count) in ranked]


def _ledger(observations: Sequence[tuple[str, RunRecord, int]], rows: Sequence[EvidenceRow]) -> list[LedgerEntry]:
    """The coverage ledger, each entry linked to the rows that carry its fingerprint."""
    entries = []
    for fp, run, count in observations:
        p = run.progress
        assert p is not None
        entries.append(
            LedgerEntry(
                fingerprint=fp,
                result_class=p.result_class,
                work_item_id=p.work_item_id,
                surface_id=p.surface_id,
                hypothesis_id=p.hypothesis_id,
                probe_kind=p.probe_kind,
                blocker_id=p.blocker_id,
                coverage_scope_id=p.coverage_scope_id,
                coverage_complete=p.coverage_complete,
                evidence_ids=sorted(p.evidence_ids),
                count=count,
                rows=[r.evidence_ref for r in rows if r.fingerprint == fp],
            )
        )
    return entries


def replan_context(
    gs: GoalState, packet: ReplanActionPacket, runs: Sequence[RunRecord], *, budget: int = BUDGET
) -> ReplanContext:
    """The context of ``packet``'s obligation from ``runs`` (the goal's run records: those of other
    agents, or of none, are left out here, whatever the caller passed)."""
    agent = packet.agent_id
    own = sorted((r for r in runs if r.agent_id == agent and r.goal_id == gs.goal_id), key=run_order_key)
    goal = gs.goal
    objective = goal.objective if goal is not None else None
    collapsed = collapse(own, ordered=True)
    order = select(collapsed)
    observations = _observations(own)
    # the omitted rows' time bounds: the earliest first and the latest latest not shown (few are)
    by_first = sorted(range(len(collapsed)), key=lambda i: collapsed[i][0].generated_at)
    by_latest = sorted(range(len(collapsed)), key=lambda i: collapsed[i][1].generated_at, reverse=True)
    read = f"loopx --format json history --goal-id {gs.goal_id} --agent-id {agent}"
    template = READ_TEMPLATE.format(goal=gs.goal_id, agent=agent)

    def build(indexes: list[int], ledger_size: int) -> ReplanContext:
        rows = [_row(*collapsed[i]) for i in sorted(indexes)]  # shown in time order
        ledger = _ledger(observations[:ledger_size], rows)
        shown = set(indexes)
        first = next((collapsed[i][0].generated_at for i in by_first if i not in shown), None)
        latest = next((collapsed[i][1].generated_at for i in by_latest if i not in shown), None)
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
                rows=len(collapsed) - len(shown),
                first_at=first,
                latest_at=latest,
                ledger_entries=len(observations) - len(ledger),
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
    indexes, ledger_size = list(order), min(LEDGER, len(observations))
    context = build(indexes, ledger_size)
    while (size := printed_size(context.model_dump(mode="json"))) > budget and (indexes or ledger_size):
        # several at once when far over: what one row or entry costs on average, against the overshoot
        per_item = max(1, (size - 2048) // max(1, len(indexes) + ledger_size))
        for _ in range(max(1, (size - budget) // per_item // 2)):
            if ledger_size > max(1, len(indexes)) or (ledger_size and len(indexes) <= 1):
                ledger_size -= 1
            elif indexes:
                indexes.pop()
        context = build(indexes, ledger_size)
    return context


R = TypeVar("R", bound=Record)
CONTEXT_MARGIN: Final = 256
"""Bytes kept free beside the context: its key and the indentation it is printed with."""
CONTEXT_FLOOR: Final = 2048


def with_context(answer: R, gs: GoalState, packet: ReplanActionPacket, runs: Sequence[RunRecord]) -> R:
    """``answer`` (should-run or a review packet) with the replan context in its ``replan_context``,
    given what the rest leaves of the 16 KiB. Measured in place: nested one level deeper, the context
    prints a little longer than alone."""
    spare = BUDGET - printed_size(answer.model_dump(mode="json")) - CONTEXT_MARGIN
    while True:
        context = replan_context(gs, packet, runs, budget=max(spare, CONTEXT_FLOOR))
        whole = answer.model_copy(update={"replan_context": context})
        over = printed_size(whole.model_dump(mode="json")) - BUDGET
        if over <= 0 or spare <= CONTEXT_FLOOR:
            return whole
        spare -= over + CONTEXT_MARGIN

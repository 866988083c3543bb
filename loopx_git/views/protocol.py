"""``loopx protocol check``: the acceptance checks of seed 003 (long_horizon_agent_state_protocol_v0),
run against the state branch, each with pass or fail and its evidence. Read-only: it writes nothing
and moves no ref."""

from __future__ import annotations

from typing import Final, Literal

from loopx_git.model.record import Record
from loopx_git.model.state import GoalState, State, require_goal
from loopx_git.views.quota import should_run
from loopx_git.views.status import goal_card
from loopx_git.views.verify import VerifyReport

PROTOCOL_SCHEMA: Final = "loopx_protocol_check_v0"
SEED: Final = "long_horizon_agent_state_protocol_v0"
EXAMPLES = 5
"""Offending ids a failed check names at most (then how many more)."""


class Check(Record):
    check_id: str
    statement: str
    """The seed's acceptance check, as it words it."""
    ok: bool
    applicable: bool = True
    """False when the branch holds nothing the check is about (no registered agent, no runnable
    todo): it passes then without having shown anything, and says so."""
    evidence: str


class ProtocolReport(Record):
    schema_version: Literal["loopx_protocol_check_v0"] = PROTOCOL_SCHEMA
    seed: Literal["long_horizon_agent_state_protocol_v0"] = SEED
    ok: bool
    tip: str | None
    goal_ids: list[str]
    checks: list[Check]


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:EXAMPLES])
    return shown + (f" and {len(ids) - EXAMPLES} more" if len(ids) > EXAMPLES else "")


def _check(
    check_id: str, statement: str, failures: list[str], passed: str, failed: str, applicable: bool = True
) -> Check:
    return Check(
        check_id=check_id,
        statement=statement,
        ok=not failures,
        applicable=applicable,
        evidence=passed if not failures else f"{failed}: {_named(failures)}",
    )


def _goal_checks(gs: GoalState, state: State) -> list[tuple[str, str, list[str], str, str, bool]]:
    """(id, statement, failures, evidence when passed, what failed, applicable) for one goal."""
    g = gs.goal_id
    promoted_without = [
        t for t, s in gs.suggested.items() if not s.promoted and t in gs.todos
    ]  # a candidate that became a todo without todo_promote
    runnable_lanes = []
    for agent_id in sorted(gs.agents):
        lane = should_run(state, g, agent_id).agent_lane_next_action
        if lane.basis != "none":
            runnable_lanes.append(f"{agent_id} -> {lane.todo_id or lane.handoff_id} ({lane.basis})")
    runnable = [t.todo_id for t in gs.live_todos() if t.role == "agent" and gs.is_runnable(t)]
    lane_failures = (
        [] if runnable_lanes or not gs.agents or not runnable else [f"goal {g}: runnable todos no lane selects"]
    )
    lane_applicable = bool(gs.agents and runnable)
    if not gs.agents:
        lane_evidence = f"goal {g}: not applicable, no registered agent yet (nothing to select for)"
    elif not runnable:
        lane_evidence = f"goal {g}: not applicable, no agent todo is runnable (held or none)"
    else:
        lane_evidence = f"goal {g}: " + ("; ".join(runnable_lanes) or "no agent todo is runnable (held or none)")
    unspendable = [
        run_id for run_id in gs.spends if not gs.writebacks.get(run_id, (None, False))[1]
    ]  # a slot spent after a run that is not a compact write-back
    vague_gates = [gid for gid, gate in gs.gates.items() if not gate.blocks and not gate.scope]
    unresolved = [
        gid
        for gid, gate in gs.gates.items()
        if gate.status == "approved" and not gate.unblocks and not gate.next_safe_action and not gate.blocks
    ]
    vague_handoffs = [
        h.handoff_id
        for h in gs.handoffs.values()
        if not h.from_agent_id or not h.to_agent_id or not (h.todo_ids or h.scope) or not h.stop_condition
    ]
    card = goal_card(state, g)
    return [
        (
            "candidates-not-promoted-silently",
            "candidate todos are not silently promoted",
            promoted_without,
            f"goal {g}: {len(gs.suggested)} candidate(s), "
            f"{sum(1 for s in gs.suggested.values() if s.promoted)} promoted by todo_promote",
            "candidates that became todos without todo_promote",
            True,
        ),
        (
            "lane-next-action",
            "at least one lane-aware next action can be selected for a registered agent",
            lane_failures,
            lane_evidence,
            "no next action",
            lane_applicable,
        ),
        (
            "writeback-before-spend",
            "validation and writeback precede quota spend",
            unspendable,
            f"goal {g}: {len(gs.spends)} slot(s) spent, each after a compact write-back",
            "slots spent after runs without a compact write-back",
            True,
        ),
        (
            "gates-name-block-and-unblock",
            "human gates name what they block and unblock",
            vague_gates + unresolved,
            f"goal {g}: {len(gs.gates)} gate(s), each naming what it blocks"
            + (f" ({sum(1 for x in gs.gates.values() if x.status == 'approved')} approved)" if gs.gates else ""),
            "gates naming nothing",
            True,
        ),
        (
            "handoffs-named",
            "handoffs name source agent, target agent, todo scope, and stop condition",
            vague_handoffs,
            f"goal {g}: {len(gs.handoffs)} handoff(s), each with source, target, todos or scope, stop condition",
            "handoffs missing a part",
            True,
        ),
        (
            "projections-read-only",
            "projections are explicitly read-only",
            [] if card.projection_is_writable is False else [f"goal {g}: status"],
            f"goal {g}: status and quota should-run say projection_is_writable: false",
            "writable projections",
            True,
        ),
    ]


def protocol_check(state: State, report: VerifyReport, goal_id: str | None = None) -> ProtocolReport:
    """The seed's acceptance checks over ``goal_id`` (or every goal), given the branch's ``verify``."""
    goal_ids = [goal_id] if goal_id else sorted(g for g, gs in state.goals.items() if gs.goal is not None)
    goals = [require_goal(state, g) for g in goal_ids]
    problems = [f"{p.code} {p.path or ''}".strip() for p in report.problems]
    damage = [p for p in problems if not p.startswith("safety")]
    unsafe = [p for p in problems if p.startswith("safety")]
    rows: list[Check] = [
        _check(
            "source-projection-separated",
            "source and projection state are separated",
            damage,
            f"{report.records_checked} source records (events, runs) and {report.documents_checked} derived "
            "documents; every document equals the fold of the records (verify)",
            "verify problems",
        ),
        _check(
            "rollback-compensates",
            "rollback is represented as a future compensating action, not as hidden deletion",
            damage,
            f"{report.commits_checked} commits checked append-only (no record changed or deleted); "
            f"{sum(len(gs.rollbacks) for gs in goals)} rollback packet(s) on the branch",
            "history problems",
        ),
        _check(
            "public-safe",
            "public fixtures contain no raw logs, raw transcripts, credentials, or local absolute paths",
            unsafe,
            f"{report.records_checked} records scanned with the safety rules and the record rules",
            "records with findings",
        ),
        _check(
            "steps-map-to-source",
            "every formal execution step maps to a todo, gate, run, event, or reward",
            [
                f"{g.goal_id}: {r}"
                for g in goals
                for r in (x for x in g.spends if x not in g.run_ids)  # a spend names a run that exists
            ],
            f"{sum(g.event_count for g in goals)} events, {sum(g.run_count for g in goals)} runs, "
            f"{sum(len(g.gates) for g in goals)} gates, {sum(len(g.rewards) for g in goals)} rewards on one "
            "event stream per goal; references are checked on every write",
            "steps naming records that do not exist",
        ),
    ]
    merged: dict[str, tuple[str, str, list[str], list[str], list[bool]]] = {}  # check -> (statement, ...)
    for gs in goals:
        for check_id, statement, failures, passed, failed, applicable in _goal_checks(gs, state):
            _, _, all_failures, all_passed, applies = merged.setdefault(check_id, (statement, failed, [], [], []))
            all_failures.extend(failures)
            all_passed.append(passed)
            applies.append(applicable)
    for check_id, (statement, what_failed, found, evidence, applies) in merged.items():
        rows.append(_check(check_id, statement, found, "; ".join(evidence) or "no goal yet", what_failed, any(applies)))
    return ProtocolReport(ok=all(c.ok for c in rows), tip=report.tip, goal_ids=goal_ids, checks=rows)

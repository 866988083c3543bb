"""``quota spend-slot``: compute is spent only after the run's result is written back. The run must
exist, be the agent's own, and be a compact write-back (a delivery outcome and evidence); one slot
per run. A run that retired a capability duty spends nothing: the answer is its no-debit closeout."""

from __future__ import annotations

from loopx_git.domain.write import EventMaker, Write, check_actor, given
from loopx_git.errors import RuleError
from loopx_git.model.capability import DutyCloseout
from loopx_git.model.event import QuotaSpend
from loopx_git.model.state import State, require_goal, require_run


def spend_slot(state: State, *, goal_id: str, agent_id: str, run_id: str, now: str) -> Write:
    gs = require_goal(state, goal_id)
    given(agent_id=agent_id, run_id=run_id)
    check_actor(gs, agent_id)
    require_run(gs, run_id)
    run_agent, compact = gs.writebacks.get(run_id, (None, False))
    if run_agent != agent_id:
        owner = f"{run_agent}'s" if run_agent else "no agent's"
        raise RuleError(
            f"field 'run_id': run '{run_id}' is {owner}, not {agent_id}'s; rule: an agent spends a slot after its own run",
            code="not-own-run",
        )
    retired = gs.retiring_runs.get(run_id)
    if retired is not None:  # a duty retired without spend: the same closeout every time, nothing appended
        closeout = DutyCloseout(run_id=run_id, obligation_id=retired.obligation_id)
        return Write("quota spend-slot", f"after {run_id} (no spend)", goal_id, agent_id, result=closeout)
    if not compact:
        raise RuleError(
            f"field 'run_id': run '{run_id}' has no compact write-back; rule: validation and write-back precede "
            "quota spend (the run records a delivery outcome and at least one evidence ref)",
            code="writeback-required",
            hint=f"write it back first: loopx refresh-state -g {goal_id} -a {agent_id} --classification <c> "
            "--delivery-outcome <tier> --evidence <ref>",
        )
    if run_id in gs.spends:
        raise RuleError(
            f"field 'run_id': a slot was already spent after run '{run_id}' (at {gs.spends[run_id][1]}); "
            "rule: one slot per run",
            code="slot-spent",
        )
    event = EventMaker(gs, now).make(
        QuotaSpend,
        goal_id=goal_id,
        agent_id=agent_id,
        run_id=run_id,
        summary=f"slot spent after run {run_id}",
    )
    return Write("quota spend-slot", f"after {run_id}", goal_id, agent_id, [event], result=event)

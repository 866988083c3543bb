"""``loopx prime``: the one thing an agent reads at the start of a turn, in at most 4 KiB.

The goal, this agent's decision and next action with its contract (``quota should-run``'s), what
waits for it (a gate it owns, gates holding its work, handoffs to adopt), the goal's open gates and
the person's todos, and the commands that write back. Without an agent: every agent's next action.
Built from the fold alone (no clock, no work tree), so the same tip gives the same brief; every
line is cut to a length and every list to a count, and sections are dropped from the least needed
until the whole fits.
"""

from __future__ import annotations

from typing import Final

from loopx_git.model.record import Record
from loopx_git.model.state import State, require_goal
from loopx_git.views.status import gate_cards, handoff_cards, next_actions, todo_order

PRIME_SCHEMA: Final = "loopx_prime_v0"
LIMIT = 4096
"""Bytes of the brief (UTF-8)."""
LINE = 240
"""Characters a line of the brief keeps of one text from the branch."""
SHOWN = 5
"""Items a list of the brief shows before it says how many more there are."""


class Prime(Record):
    schema_version: str = PRIME_SCHEMA
    goal_id: str
    agent_id: str | None = None
    decision: str | None = None
    """``quota should-run``'s decision for the agent: run, wait_for_user, idle or replan_required."""
    todo_id: str | None = None
    """The todo of the agent's next action, if it has one."""
    brief: str
    """Markdown, at most 4 KiB."""
    brief_bytes: int
    sections_dropped: list[str]
    """Sections left out to stay within 4 KiB (the least needed first)."""


class AgentsMd(Record):
    schema_version: str = "loopx_agents_md_v0"
    markdown: str
    """The section to add to an AGENTS.md or CLAUDE.md."""


def _cut(text: object, limit: int = LINE) -> str:
    """One line of text from the branch: a secret on it redacted (before the cut, which would leave
    too little of it for a rule to know, and too much to show), control characters shown escaped,
    cut at ``limit``."""
    from loopx_git.safety.scan import redact

    one = " ".join(redact(str(text))[0].split())
    one = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in one)
    return one if len(one) <= limit else one[: limit - 1] + "…"


COMMAND = 2048
"""A command line loopx wrote is never cut (it must run as printed): only one past all reason is."""


def _action(action: str) -> str:
    """The primary action: a command line in it whole (``…: loopx refresh-state …``), its prose cut."""
    at = action.find("loopx ")
    if at < 0:
        return _cut(action, 2 * LINE)
    prose = _cut(action[:at], 2 * LINE)
    return (prose + " " if prose else "") + _cut(action[at:], COMMAND)


def _items(lines: list[str]) -> list[str]:
    shown = [f"- {line}" for line in lines[:SHOWN]]
    if len(lines) > SHOWN:
        shown.append(f"- and {len(lines) - SHOWN} more")
    return shown


def prime(state: State, goal_id: str, agent_id: str | None = None, branch: str | None = None) -> Prime:
    from loopx_git.views.quota import should_run

    gs = require_goal(state, goal_id)
    assert gs.goal is not None
    goal = gs.goal
    sections: list[tuple[str, list[str]]] = []  # (name, lines), most needed first
    head = [f"# loopx brief: goal {goal_id} ({goal.status})", f"Objective: {_cut(goal.objective)}"]
    if gs.latest_outcome_run is not None:
        run = gs.latest_outcome_run
        head.append(f"Latest delivery outcome: {run.delivery_outcome} (run {run.run_id})")
    sections.append(("goal", head))
    decision = todo_id = None
    answer = None
    if agent_id is not None:
        answer = should_run(state, goal_id, agent_id, branch=branch)
        lane, contract = answer.agent_lane_next_action, answer.interaction_contract
        decision, todo_id = answer.decision, lane.todo_id
        agent = gs.agents[agent_id]
        you = [
            f"## You: {agent_id}" + (f" (lane {agent.lane})" if agent.lane else ""),
            f"Decision: {answer.decision}. {_action(contract.agent_channel.primary_action)}",
            f"Why: {_cut(lane.basis_detail)}",
            f"Contract: mode {contract.mode}; must attempt: {'yes' if contract.agent_channel.must_attempt else 'no'}; "
            f"quiet no-op allowed: {'yes' if contract.agent_channel.quiet_noop_allowed else 'no'}",
        ]
        if not contract.agent_channel.delivery_allowed:
            you.append(f"Delivery blocked: {_cut(contract.agent_channel.delivery_blocked_reason or '')}")
        sections.append(("you", you))
        waiting = [
            f"gate {g.gate_id} ({g.status}, owner {g.owner_class}) holds your work: {_cut(g.question, 120)}"
            for g in lane.held_by_gates
        ] + [
            f"handoff {h.handoff_id} from {h.from_agent_id}: {', '.join(h.todo_ids) or h.scope}; stop when "
            f"{_cut(h.stop_condition, 120)}"
            for h in handoff_cards(gs, agent_id)
            if h.to_agent_id == agent_id
        ]
        if waiting:
            sections.append(("waiting for you", ["## Waiting for you", *_items(waiting)]))
    else:
        live = sorted(gs.live_todos(), key=todo_order)
        actions = [
            f"{a.agent_id}: " + (f"{a.todo_id} — {_cut(a.text, 120)} ({a.basis})" if a.todo_id else "nothing runnable")
            for a in next_actions(gs, sorted(gs.agents), live)
        ]
        sections.append(("agents", ["## Next action per agent", *(_items(actions) or ["- no agent registered"])]))
    gates = [
        f"{g.gate_id} ({g.status}, owner {g.owner_class}): {_cut(g.question, 120)} — blocks "
        f"{', '.join(g.blocks) or g.scope or 'nothing'}"
        for g in gate_cards(gs)
    ]
    if gates:
        sections.append(("gates", [f"## Open gates ({len(gates)})", *_items(gates)]))
    people = [
        f"{t.todo_id} ({t.status}): {_cut(t.text, 120)}"
        for t in sorted(gs.live_todos(), key=todo_order)
        if t.role == "user"
    ]
    if people:
        sections.append(("person", [f"## Waiting for a person ({len(people)} user todos)", *_items(people)]))
    writeback = answer.interaction_contract.cli_channel.writeback_command if answer is not None else None
    sections.append(("write back", _write_back(goal_id, agent_id, todo_id, writeback)))
    return _fit(goal_id, agent_id, decision, todo_id, sections)


def _write_back(goal_id: str, agent_id: str | None, todo_id: str | None, writeback: str | None) -> list[str]:
    a = f" -a {agent_id}" if agent_id else " -a AGENT"
    t = todo_id or "TODO"
    lines = ["## Write back (one commit each; add --format json for scripts)"]
    lines.append(f"- claim: loopx todo claim -g {goal_id} -t {t}{a} --sync")
    lines.append(f"- done: loopx todo complete -g {goal_id} -t {t}{a} --evidence PATH")
    if writeback is not None:
        lines.append(f"- end of turn: {_cut(writeback, COMMAND)}")
    lines.append(f"- a note: loopx event append -g {goal_id}{a} --kind note --summary TEXT")
    lines.append(f"- the full card: loopx --format json status -g {goal_id}{a}")
    lines.append("- meet the other clones: loopx sync")
    return lines


def _fit(
    goal_id: str, agent_id: str | None, decision: str | None, todo_id: str | None, sections: list[tuple[str, list[str]]]
) -> Prime:
    """The brief, dropping sections from the least needed (the person's todos, then the open gates)
    until it fits; the goal, the agent's own section and how to write back are always kept."""
    dropped: list[str] = []
    droppable = ["person", "gates", "agents", "waiting for you"]
    while True:
        brief = "\n\n".join("\n".join(lines) for _, lines in sections) + "\n"
        if len(brief.encode()) <= LIMIT or not any(name in droppable for name, _ in sections):
            break
        name = next(n for n in droppable if any(s == n for s, _ in sections))
        sections = [(s, lines) for s, lines in sections if s != name]
        dropped.append(name)
    data = brief.encode()
    if len(data) > LIMIT:  # the kept sections alone: cut, on a character boundary
        brief = data[: LIMIT - 16].decode("utf-8", "ignore") + "\n…(cut at 4 KiB)\n"
    return Prime(
        goal_id=goal_id,
        agent_id=agent_id,
        decision=decision,
        todo_id=todo_id,
        brief=brief,
        brief_bytes=len(brief.encode()),
        sections_dropped=dropped,
    )

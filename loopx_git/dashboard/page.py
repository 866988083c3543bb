"""The dashboard's HTML: the goal card, the lanes as an SVG drawn here, and the frames the page's
script fills from the data files (todos, each todo's history). Every text is escaped; every
element names its source event and commit."""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import Any

from loopx_git.views.dashboard import seconds
from loopx_git.views.dashboard_model import NO_AGENT, Dashboard, Lanes

LANE_HEIGHT = 56
LABEL_WIDTH = 140
PLOT_WIDTH = 1000
TOP = 28
GATES = "(gates)"
"""The track above the lanes where gates sit, from their opening to their decision."""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def source(event_id: str | None, commit: str | None, commit_url: str | None) -> str:
    """The source of an element: its event id and commit, a link to the commit when a URL is known."""
    if not event_id:
        return '<span class="src">no source event</span>'
    label = f"{_e(event_id)}" + (f" · {_e(commit[:12])}" if commit else "")
    attrs = f'class="src" data-event="{_e(event_id)}" data-commit="{_e(commit)}"'
    if commit and commit_url:
        return f'<a {attrs} href="{_e(commit_url.replace("{commit}", commit))}">{label}</a>'
    return f"<span {attrs}>{label}</span>"


def _linked(element: str, commit: str | None, commit_url: str | None) -> str:
    """An SVG element wrapped in a link to its commit, when the commit and a URL for it are known."""
    if not (commit and commit_url):
        return element
    return f'<a href="{_e(commit_url.replace("{commit}", commit))}">{element}</a>'


class _Axis:
    def __init__(self, lanes: Lanes):
        self.names = ([GATES] if lanes.gates else []) + lanes.lanes + ([NO_AGENT] if lanes.unattributed else [])
        self.t0 = seconds(lanes.start) if lanes.start else 0.0
        t1 = seconds(lanes.end) if lanes.end else self.t0
        self.span = max(t1 - self.t0, 1.0)

    def x(self, at: str | None) -> float:
        if at is None:
            return LABEL_WIDTH + PLOT_WIDTH
        return round(LABEL_WIDTH + (seconds(at) - self.t0) / self.span * PLOT_WIDTH, 1)

    def y(self, lane: str) -> float:
        index = self.names.index(lane) if lane in self.names else len(self.names) - 1
        return TOP + index * LANE_HEIGHT + LANE_HEIGHT / 2


TICKS = 5


def _ticks(axis: _Axis, start: str, height: float) -> list[str]:
    """Times along the top, with faint rules down through the lanes."""
    out = []
    for i in range(TICKS + 1):
        seconds = axis.t0 + axis.span * i / TICKS
        label = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%d %H:%M")
        x = round(LABEL_WIDTH + PLOT_WIDTH * i / TICKS, 1)
        anchor = "start" if i == 0 else "end" if i == TICKS else "middle"
        out.append(
            f'<line class="tick" x1="{x}" y1="18" x2="{x}" y2="{height - 8}"/>'
            f'<text class="axis" x="{x}" y="14" text-anchor="{anchor}">{label}</text>'
        )
    return out


def lanes_svg(lanes: Lanes, commit_url: str | None) -> str:
    axis = _Axis(lanes)
    height = TOP + max(len(axis.names), 1) * LANE_HEIGHT + 8
    width = LABEL_WIDTH + PLOT_WIDTH + 20
    out = [
        f'<svg id="lanes-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="lanes over time">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrow-head"/></marker></defs>',
    ]
    if lanes.start:
        out.extend(_ticks(axis, lanes.start, height))
    for name in axis.names:
        y = axis.y(name)
        kind = {NO_AGENT: "track unattributed", GATES: "track gates"}.get(name, "lane")
        out.append(
            f'<g class="{kind}" data-lane="{_e(name)}"><line class="lane-rule" x1="{LABEL_WIDTH}" y1="{y}" '
            f'x2="{LABEL_WIDTH + PLOT_WIDTH}" y2="{y}"/><text class="lane-label" x="6" y="{y + 4}">{_e(name)}</text></g>'
        )
    for bar in lanes.claims:
        x1, x2, y = axis.x(bar.start), axis.x(bar.end), axis.y(bar.agent_id)
        rect = (
            f'<rect class="claim ended-{_e(bar.ended_by)}" data-todo="{_e(bar.todo_id)}" '
            f'data-event="{_e(bar.source_event_id)}" data-commit="{_e(bar.commit)}" x="{x1}" y="{y - 9}" '
            f'width="{max(x2 - x1, 2)}" height="18" rx="3"><title>claim of {_e(bar.todo_id)} by '
            f"{_e(bar.agent_id)}: {_e(bar.start)} to {_e(bar.end or 'now')} ({_e(bar.ended_by)}); "
            f"event {_e(bar.source_event_id)}, commit {_e((bar.commit or '')[:12])}</title></rect>"
        )
        out.append(_linked(rect, bar.commit, commit_url))
    for mark in lanes.marks:
        x, y = axis.x(mark.at), axis.y(mark.lane)
        radius = 4 if mark.count == 1 else min(4 + mark.count**0.5, 12)
        title = f"{mark.kind} {mark.event_id}" + (f" ({mark.summary})" if mark.summary else "")
        circle = (
            f'<circle class="mark kind-{_e(mark.kind)}" data-event="{_e(mark.event_id)}" data-commit="{_e(mark.commit)}" '
            f'data-count="{mark.count}" cx="{x}" cy="{y}" r="{round(radius, 1)}"><title>{_e(title)}; commit '
            f"{_e((mark.commit or '')[:12])}</title></circle>"
        )
        out.append(_linked(circle, mark.commit, commit_url))
    for arrow in lanes.handoffs:
        x, y1, y2 = axis.x(arrow.adopted_at or arrow.at), axis.y(arrow.from_agent_id), axis.y(arrow.to_agent_id)
        step = 8 if y2 > y1 else -8
        line = (
            f'<line class="handoff status-{_e(arrow.status)}" data-handoff="{_e(arrow.handoff_id)}" '
            f'data-event="{_e(arrow.source_event_id)}" data-commit="{_e(arrow.commit)}" x1="{x}" y1="{y1 + step}" '
            f'x2="{x}" y2="{y2 - step}" marker-end="url(#arrow)"><title>handoff {_e(arrow.handoff_id)}: '
            f"{_e(arrow.from_agent_id)} → {_e(arrow.to_agent_id)} ({_e(', '.join(arrow.todo_ids))}), "
            f"{_e(arrow.status)}</title></line>"
        )
        out.append(_linked(line, arrow.commit, commit_url))
    for gate in lanes.gates:
        x1, x2, y = axis.x(gate.at), axis.x(gate.decided_at), axis.y(GATES)
        held = ", ".join([*gate.blocks, *([f"scope {gate.scope}"] if gate.scope else [])]) or "nothing"
        node = (
            f'<g class="gate-node status-{_e(gate.status)}{" holds" if gate.holds else ""}" '
            f'data-gate="{_e(gate.gate_id)}" data-event="{_e(gate.source_event_id)}" data-commit="{_e(gate.commit)}">'
            f'<line class="gate-span" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>'
            f'<path class="gate-mark" d="M{x1},{y - 7} L{x1 + 7},{y} L{x1},{y + 7} L{x1 - 7},{y} z"/>'
            f'<text class="gate-label" x="{x1 + 10}" y="{y - 9}">{_e(gate.gate_id)}: blocks {_e(held)}</text>'
            f"<title>gate {_e(gate.gate_id)} ({_e(gate.status)}, owner {_e(gate.owner_class)}): {_e(gate.question)}; "
            f"blocks {_e(held)}; approval unblocks {_e(', '.join(gate.unblocks) or 'nothing')}</title></g>"
        )
        out.append(_linked(node, gate.commit, commit_url))
    for bridge in lanes.bridges:
        x1, y1 = axis.x(bridge.from_at), axis.y(bridge.from_lane)
        x2, y2 = axis.x(bridge.to_at), axis.y(bridge.to_lane)
        label = f"{bridge.confidence}: {bridge.relation}" + (f" ({bridge.reason})" if bridge.reason else "")
        out.append(
            f'<g class="bridge {_e(bridge.confidence)}" data-from="{_e(bridge.from_event_id)}" '
            f'data-to="{_e(bridge.to_event_id)}"><path d="M{x1},{y1} C{x1 + 30},{y1} {x2 - 30},{y2} {x2},{y2}"'
            + (' stroke-dasharray="5 4"' if bridge.confidence == "inferred" else "")
            + f'/><text class="bridge-label" x="{round((x1 + x2) / 2, 1)}" y="{round((y1 + y2) / 2 - 4, 1)}">'
            f"{_e(bridge.confidence)}</text><title>{_e(label)}</title></g>"
        )
    out.append("</svg>")
    return "".join(out)


def _list(items: list[str], empty: str, omitted: int = 0) -> str:
    """A list of rendered items; ``omitted``: how many more a bounded section left out."""
    if not items:
        return f'<p class="empty">{_e(empty)}</p>'
    more = f'<li class="omitted">and {omitted} more</li>' if omitted else ""
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + more + "</ul>"


def card_html(d: Dashboard, commit_url: str | None) -> str:
    card = d.card
    tiers = []
    if card.latest_delivery_outcome is not None:
        run = card.latest_delivery_outcome
        tiers.append(
            f'<p class="tier">latest delivery outcome: <strong>{_e(run.delivery_outcome)}</strong> '
            f"(run {_e(run.run_id)})</p>"
        )
    if card.latest_completion_outcome is not None:
        done = card.latest_completion_outcome
        tiers.append(
            f'<p class="tier">latest completion: <strong>{_e(done.delivery_outcome)}</strong> '
            f"({_e(done.todo_id)}) {source(done.source_event_id, d.card_commits.get(done.source_event_id or ''), commit_url)}</p>"
        )
    gates = [
        f'<span class="gate" data-gate="{_e(g.gate_id)}"><strong>{_e(g.gate_id)}</strong> ({_e(g.status)}, '
        f"owner {_e(g.owner_class)}{' ' + _e(g.owner_agent_id) if g.owner_agent_id else ''}): {_e(g.question)}"
        f' — <span class="blocks">blocks {_e(", ".join(g.blocks) or "nothing")}</span>'
        f"{'; scope ' + _e(g.scope) if g.scope else ''}"
        f' — <span class="unblocks">approval unblocks {_e(", ".join(g.unblocks) or "nothing")}</span> '
        f"{source(g.source_event_id, d.card_commits.get(g.source_event_id or ''), commit_url)}</span>"
        for g in card.open_gates
    ]
    handoffs = [
        f'<span class="waiting-handoff" data-handoff="{_e(h.handoff_id)}"><strong>{_e(h.handoff_id)}</strong>: '
        f"{_e(h.from_agent_id)} → {_e(h.to_agent_id)} ({_e(', '.join(h.todo_ids))}) until {_e(h.stop_condition)} "
        f"{source(h.source_event_id, d.card_commits.get(h.source_event_id or ''), commit_url)}</span>"
        for h in card.waiting_handoffs
    ]
    users = [
        f"<strong>{_e(t.todo_id)}</strong> ({_e(t.status)}, {_e(t.priority)}): {_e(t.text)}" for t in card.user_todos
    ]
    actions = [
        f'<span class="next-action" data-agent="{_e(a.agent_id)}"><strong>{_e(a.agent_id)}</strong>: '
        + (f"{_e(a.todo_id)} — {_e(a.text)} ({_e(a.basis)})" if a.todo_id else "nothing runnable")
        + "</span>"
        for a in card.next_actions
    ]
    return (
        f'<section id="card"><h2>Goal {_e(d.goal_id)}</h2>{"".join(tiers)}'
        f'<p class="objective">{_e(card.goal.objective)}</p>'
        f'<div class="grid"><div><h3>Open gates</h3>{_list(gates, "no open gate", card.open_gates_omitted)}'
        f"</div><div><h3>User todos</h3>{_list(users, 'no user todo', card.user_todos_omitted)}</div>"
        f"<div><h3>Handoffs waiting</h3>{_list(handoffs, 'none waiting', card.waiting_handoffs_omitted)}</div>"
        f"<div><h3>Next action per agent</h3>{_list(actions, 'no agent registered')}</div></div>"
        f'<p class="counts">{_e(", ".join(f"{n} {k}" for k, n in card.counts.model_dump().items() if n))}</p>'
        "</section>"
    )


def evidence_html(d: Dashboard, commit_url: str | None) -> str:
    ev, card = d.evidence, d.card
    validations = [
        f"{_e(v.at)} {_e(v.agent_id or 'a person')}: {_e(v.summary or v.kind)} {source(v.event_id, v.commit, commit_url)}"
        for v in ev.validations
    ]
    runs = [
        f'<span class="run" data-run="{_e(r.run_id)}">{_e(r.at)} <strong>{_e(r.run_id)}</strong> '
        f"({_e(r.agent_id or 'no agent')}): {_e(r.classification or '')} {_e(r.delivery_outcome or '')}"
        + "".join(
            f' <span class="reward {_e(w["polarity"])}">{_e(w["polarity"])}: {_e(w["label"])}</span>' for w in r.rewards
        )
        + "</span>"
        for r in ev.runs
    ]
    rollbacks = [
        f'<span class="rollback" data-packet="{_e(p.packet_id)}"><strong>{_e(p.packet_id)}</strong> '
        f"({_e(p.trigger)}{', open' if p.open else ''}): {_e(p.summary)}<ol>"
        + "".join(
            f'<li class="{"waits" if s["waits"] else "auto"}">{_e(s["step_id"])} ({_e(s["kind"])})'
            f"{' — waits for a gate or a person' if s['waits'] else ''}</li>"
            for s in p.steps
        )
        + "</ol></span>"
        for p in ev.rollbacks
    ]
    ledger = [
        f"<strong>{_e(e.entry_id)}</strong>: {_e(e.question or e.next or e.verdict or '')}"
        for e in card.ledger_attention
    ]
    obligations = [
        f'<span class="obligation" data-obligation="{_e(o.obligation_id)}"><strong>{_e(o.obligation_id)}</strong> '
        f"({_e(o.agent_id)}): {_e(', '.join(t.kind for t in o.triggers))}; settle with one of "
        f"{_e(', '.join(o.uncovered_frontier.required_any_of))}</span>"
        for o in card.replan_obligations
    ]
    research = []
    frontier = card.bounded_research_frontier
    if frontier is not None:
        counts = ", ".join(f"{n} {state}" for state, n in sorted(frontier.gaps_by_state.items()) if n)
        research = [f"{_e(frontier.agent_id)}: {_e(counts or 'no live gap')}"] + [
            f'<span class="gap" data-gap="{_e(g.gap_id)}"><strong>{_e(g.gap_id)}</strong> ({_e(g.state)}): '
            f"{_e(g.detail)}</span>"
            for g in frontier.gaps
        ]
    return (
        '<section id="evidence"><h2>Evidence and runs</h2><div class="grid">'
        f"<div><h3>Recent validations</h3>{_list(validations, 'no validation yet')}</div>"
        f"<div><h3>Runs and their rewards</h3>{_list(runs, 'no run yet')}</div>"
        f"<div><h3>Rollback plans</h3>{_list(rollbacks, 'no rollback plan', ev.rollbacks_omitted)}</div>"
        f"<div><h3>Ledger entries waiting for a person</h3>"
        f"{_list(ledger, 'none waiting', card.ledger_attention_omitted)}</div>"
        + (
            f"<div><h3>Replan obligations</h3>{_list(obligations, '', card.replan_obligations_omitted)}</div>"
            if obligations
            else ""
        )
        + (f"<div><h3>Research gaps</h3>{_list(research, '')}</div>" if research else "")
        + "</div></section>"
    )


def page(d: Dashboard, commit_url: str | None) -> str:
    built = f"built from commit {_e(d.tip or 'none')} of {_e(d.ref)}" + (f", {_e(d.tip_time)}" if d.tip_time else "")
    lanes = d.lanes
    notes = []
    if lanes.bucketed:
        notes.append("events counted per time bucket (the history is long)")
    if lanes.claims_omitted:
        notes.append(f"{lanes.claims_omitted} older claims not drawn")
    if lanes.bridges_omitted:
        notes.append(f"{lanes.bridges_omitted} older bridges not drawn")
    if lanes.handoffs_omitted:
        notes.append(f"{lanes.handoffs_omitted} older handoffs not drawn")
    if lanes.gates_omitted:
        notes.append(f"{lanes.gates_omitted} older gates not drawn")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>loopx · {_e(d.goal_id)}</title>"
        '<link rel="stylesheet" href="dashboard.css"></head><body>'
        f'<header><h1>loopx · {_e(d.goal_id)}</h1><p class="built" data-commit="{_e(d.tip)}">{built}</p></header>'
        f"<main>{card_html(d, commit_url)}"
        '<section id="lanes"><h2>Lanes over time</h2>'
        '<p class="legend"><span class="key claim"></span> claim <span class="key handoff"></span> handoff '
        '<span class="key bridge observed"></span> observed bridge <span class="key bridge inferred"></span> '
        "inferred bridge (an event without a join key)</p>"
        + (f'<p class="omitted">{_e("; ".join(notes))}</p>' if notes else "")
        + f'<div class="scroll">{lanes_svg(lanes, commit_url)}</div></section>'
        '<section id="todos"><h2>Todos</h2><form id="filters">'
        + "".join(
            f'<label>{label} <select name="{name}" id="filter-{name}"><option value="">all</option></select></label>'
            for name, label in (("state", "state"), ("agent", "agent"), ("priority", "priority"), ("class", "class"))
        )
        + f'</form><p id="todo-count">{d.todo_count} todos</p><table id="todo-table"><thead><tr><th>todo</th>'
        "<th>state</th><th>agent</th><th>priority</th><th>class</th><th>text</th><th>source</th></tr></thead>"
        '<tbody></tbody></table><p><button id="more" type="button" hidden>show more</button></p>'
        '<div id="history" hidden><h3 id="history-title"></h3><ol id="history-list"></ol></div></section>'
        f"{evidence_html(d, commit_url)}</main>"
        '<script src="data/dashboard.js"></script><script src="dashboard.js"></script></body></html>\n'
    )

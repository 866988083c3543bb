"""Read models of the explore graph: ``explore summary`` (research_frontier_v0, the cold projection)
and ``explore graph`` (mermaid, dot or JSON).

The summary counts everything and shows at most three gap cards, saying how many it projected and
how many it left out: it makes no claim about which gaps matter most (pending first, then observed,
then ineligible, each by id), and leaving a card out erases nothing — ``explore node show`` reads
every observation of a node.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final, Literal

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from loopx_git.model.capability import CapabilityGuard, PolicySettings
from loopx_git.model.composition import Gap, gaps
from loopx_git.model.goal import explore_policy
from loopx_git.model.record import Record, without_none
from loopx_git.model.research_gate import LIVE_ORDER, LiveGap, LiveState, duty_todos, invalidation, live_gaps, owed
from loopx_git.model.state import GoalState, State, require_agent, require_goal

FRONTIER_SCHEMA: Final = "research_frontier_v0"
CARDS: Final = 3
_ORDER = {"pending": 0, "observed": 1, "ineligible": 2}


class InputCard(Record):
    node_id: str
    fingerprint: str | None
    """Its current observation: what an experiment over the gap carries in ``input_observations``."""


class GapCard(Record):
    gap_id: str
    state: Literal["pending", "ineligible", "observed"]
    inputs: list[str]
    interaction_kinds: list[str]
    input_observations: list[InputCard]
    reasons: list[str] = Field(default_factory=list)
    """Why it is ineligible, one rule each."""
    experiments: list[str] = Field(default_factory=list)
    """Experiment nodes over exactly these two inputs."""
    observed_by: InputCard | None = None
    """The experiment (and its observation) that observed the gap."""
    declarations: int
    """Observations that declared it (from either side; historical ones included)."""


class ResearchTotals(Record):
    nodes: int
    nodes_by_status: dict[str, int]
    nodes_by_kind: dict[str, int]
    edges: int
    findings: int
    observations: int
    gaps: int
    gaps_by_state: dict[str, int]


class LiveGapCard(Record):
    gap_id: str
    state: LiveState
    inputs: list[str]
    input_observations: list[InputCard]
    experiments: list[str] = Field(default_factory=list)
    successor_todo_ids: list[str] = Field(default_factory=list)
    """Runnable joint_probe todos admitted for it (a scheduled gap)."""
    detail: str
    """Why this live state, in one line."""


class DutyCard(Record):
    obligation_id: str
    gap_id: str
    todo_ids: list[str]
    state: Literal["open", "stale", "retired"]
    invalidated_by: list[str] = Field(default_factory=list)


class BoundedResearchFrontier(Record):
    """bounded_research_frontier_v0: the live research gate's counts and at most three gap cards, for
    one agent (``status --agent-id``). Compaction is presentation only: the gate uses every gap."""

    schema_version: Literal["bounded_research_frontier_v0"] = "bounded_research_frontier_v0"
    goal_id: str
    agent_id: str
    policy: PolicySettings
    gaps_by_state: dict[str, int]
    gaps: list[LiveGapCard]
    projected_count: int
    omitted_count: int
    owed_obligation: CapabilityGuard | None = None
    """The capability obligation the agent owes when it has nothing before it (``quota should-run``
    raises it only after gates, runnable work and handoffs)."""


class ResearchExecutionFrontier(BoundedResearchFrontier):
    """research_execution_frontier_v0 (``explore summary --agent-id``): the bounded frontier and the
    agent's admitted capability duties."""

    schema_version: Literal["research_execution_frontier_v0"] = "research_execution_frontier_v0"  # type: ignore[assignment]
    duties: list[DutyCard] = Field(default_factory=list)
    duties_omitted: int = 0


class ResearchFrontier(Record):
    schema_version: Literal["research_frontier_v0"] = FRONTIER_SCHEMA
    goal_id: str
    totals: ResearchTotals
    gaps: list[GapCard]
    projected_count: int
    omitted_count: int
    inspect: str
    """Where the left-out gaps' sources are: the nodes and their observations."""
    research_execution_frontier: ResearchExecutionFrontier | None = None
    """With the live gate on and an agent selected (``--agent-id``, or the goal's only agent); left
    out otherwise, so an inactive policy leaves the projection exactly as it was."""

    @model_serializer(mode="wrap")
    def _without_inactive(self, handler: SerializerFunctionWrapHandler):
        return without_none(handler(self), "research_execution_frontier")


def _card(gap: Gap) -> GapCard:
    observed = gap.observed_by
    return GapCard(
        gap_id=gap.gap_id,
        state=gap.state,
        inputs=list(gap.inputs),
        interaction_kinds=gap.interaction_kinds,
        input_observations=[InputCard(node_id=n, fingerprint=f) for n, f in gap.input_observations],
        reasons=gap.reasons,
        experiments=gap.experiments,
        observed_by=InputCard(node_id=observed[0], fingerprint=observed[1]) if observed else None,
        declarations=len(gap.declared_by),
    )


def totals(gs: GoalState, found: list[Gap]) -> ResearchTotals:
    nodes = list(gs.explore.values())
    return ResearchTotals(
        nodes=len(nodes),
        nodes_by_status=dict(sorted(Counter(n.status for n in nodes).items())),
        nodes_by_kind=dict(sorted(Counter(n.kind for n in nodes).items())),
        edges=sum(len(n.edges) for n in nodes),
        findings=sum(len(n.findings) for n in nodes),
        observations=sum(len(n.observations) for n in nodes),
        gaps=len(found),
        gaps_by_state=dict(sorted(Counter(g.state for g in found).items())),
    )


def summary(state: State, goal_id: str, agent_id: str | None = None) -> ResearchFrontier:
    gs = require_goal(state, goal_id)
    found = gaps(gs)
    shown = sorted(found, key=lambda g: (_ORDER[g.state], g.gap_id))[:CARDS]
    selected = _selected(gs, agent_id)
    return ResearchFrontier(
        goal_id=goal_id,
        totals=totals(gs, found),
        gaps=[_card(g) for g in shown],
        projected_count=len(shown),
        omitted_count=len(found) - len(shown),
        inspect=f"loopx explore node list --goal-id {goal_id}; loopx explore node show --goal-id {goal_id} --node-id N",
        research_execution_frontier=execution_frontier(gs, selected) if selected is not None else None,
    )


def _selected(gs: GoalState, agent_id: str | None) -> str | None:
    """The agent a live frontier is shown for: the one named, else the goal's only agent (for
    presentation only); None with the gate off, which leaves the projections as they were."""
    if agent_id is not None:
        require_agent(gs, agent_id, rule="a research frontier is scoped to an agent registered on the goal")
    if not explore_policy(gs.goal).active:
        return None
    if agent_id is None and len(gs.agents) == 1:
        return next(iter(gs.agents))
    return agent_id


def bounded_frontier(gs: GoalState, agent_id: str | None) -> BoundedResearchFrontier | None:
    """``status``'s bounded_research_frontier (None with the gate off or no agent selected)."""
    selected = _selected(gs, agent_id)
    if selected is None:
        return None
    return BoundedResearchFrontier(**_bounded(gs, selected, live_gaps(gs)))


def execution_frontier(gs: GoalState, agent_id: str) -> ResearchExecutionFrontier:
    live = live_gaps(gs)
    duties = _duties(gs, agent_id, live)
    return ResearchExecutionFrontier(
        **_bounded(gs, agent_id, live), duties=duties[:CARDS], duties_omitted=max(0, len(duties) - CARDS)
    )


def _bounded(gs: GoalState, agent_id: str, live: list[LiveGap]) -> dict[str, Any]:
    shown = sorted(live, key=lambda g: (LIVE_ORDER.index(g.state), g.gap.gap_id))[:CARDS]
    counts = Counter(g.state for g in live)
    return {
        "goal_id": gs.goal_id,
        "agent_id": agent_id,
        "policy": PolicySettings.of(explore_policy(gs.goal)),
        "gaps_by_state": {state: counts[state] for state in LIVE_ORDER},
        "gaps": [_live_card(g) for g in shown],
        "projected_count": len(shown),
        "omitted_count": len(live) - len(shown),
        "owed_obligation": owed(gs, agent_id, live),
    }


def _live_card(g: LiveGap) -> LiveGapCard:
    return LiveGapCard(
        gap_id=g.gap.gap_id,
        state=g.state,
        inputs=list(g.gap.inputs),
        input_observations=[InputCard(node_id=n, fingerprint=f) for n, f in g.gap.input_observations],
        experiments=g.gap.experiments,
        successor_todo_ids=g.successors,
        detail=g.detail,
    )


def _duties(gs: GoalState, agent_id: str, live: list[LiveGap]) -> list[DutyCard]:
    """The agent's admitted capability duties held by live todos, by obligation id."""
    held = {
        obligation: [t.todo_id for t in duty_todos(gs, obligation)]
        for obligation, guard in gs.duties.items()
        if guard.agent_id == agent_id
    }
    cards = []
    for obligation in sorted(o for o, ids in held.items() if ids):
        guard = gs.duties[obligation]
        stale = invalidation(gs, guard, live)
        state: Literal["open", "stale", "retired"] = (
            "retired" if obligation in gs.retirements else "stale" if stale else "open"
        )
        cards.append(
            DutyCard(
                obligation_id=obligation,
                gap_id=guard.gap_id,
                todo_ids=held[obligation],
                state=state,
                invalidated_by=stale,
            )
        )
    return cards


# --- the graph as text --------------------------------------------------------------------------------


class GraphNode(Record):
    node_id: str
    kind: str
    status: str
    title: str
    parent_id: str | None


class GraphEdge(Record):
    model_config = ConfigDict(**Record.model_config, populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    edge_type: str


class ExploreGraph(Record):
    schema_version: Literal["explore_graph_v0"] = "explore_graph_v0"
    goal_id: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]


def graph(state: State, goal_id: str, graph_format: str) -> str:
    gs = require_goal(state, goal_id)
    nodes = sorted(gs.explore.values(), key=lambda n: n.node_id)
    edges = [(n.node_id, e.to_node_id, e.edge_type) for n in nodes for e in n.edges]
    parents = [(n.node_id, n.parent_id) for n in nodes if n.parent_id is not None]
    if graph_format == "json":
        return json.dumps(
            {
                "schema_version": "explore_graph_v0",
                "goal_id": goal_id,
                "nodes": [
                    {
                        "node_id": n.node_id,
                        "kind": n.kind,
                        "status": n.status,
                        "title": n.title,
                        "parent_id": n.parent_id,
                    }
                    for n in nodes
                ],
                "edges": [{"from": a, "to": b, "edge_type": t} for a, b, t in edges],
            },
            indent=2,
            ensure_ascii=False,
        )
    if graph_format == "dot":
        lines = [f"digraph {_dot(goal_id)} {{"]
        lines += [f"  {_dot(n.node_id)} [label={_dot(f'{n.kind}: {n.title} ({n.status})')}];" for n in nodes]
        lines += [f"  {_dot(a)} -> {_dot(b)} [label={_dot(t)}];" for a, b, t in edges]
        lines += [f"  {_dot(a)} -> {_dot(p)} [style=dashed, label=parent];" for a, p in parents]
        return "\n".join([*lines, "}"])
    if graph_format == "mermaid":
        # mermaid ids are plain words: nodes are numbered, their ids and titles go in the labels
        number = {n.node_id: f"n{i}" for i, n in enumerate(nodes)}
        lines = ["flowchart TD"]
        lines += [
            f'  {number[n.node_id]}["{_mermaid(f"{n.node_id} · {n.kind}: {n.title} ({n.status})")}"]' for n in nodes
        ]
        lines += [f"  {number[a]} -->|{t}| {number[b]}" for a, b, t in edges if b in number]
        lines += [f"  {number[a]} -.->|parent| {number[p]}" for a, p in parents if p in number]
        return "\n".join(lines)
    raise ValueError(f"no graph format {graph_format!r}")


def _dot(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _mermaid(text: str) -> str:
    # mermaid reads #name; as an entity and a newline as the end of the label
    return " ".join(text.replace("#", "#35;").replace('"', "#quot;").split())

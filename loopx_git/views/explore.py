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
from typing import Final, Literal

from pydantic import ConfigDict, Field

from loopx_git.model.composition import Gap, gaps
from loopx_git.model.record import Record
from loopx_git.model.state import GoalState, State, require_goal

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


class ResearchFrontier(Record):
    schema_version: Literal["research_frontier_v0"] = FRONTIER_SCHEMA
    goal_id: str
    totals: ResearchTotals
    gaps: list[GapCard]
    projected_count: int
    omitted_count: int
    inspect: str
    """Where the left-out gaps' sources are: the nodes and their observations."""


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


def summary(state: State, goal_id: str) -> ResearchFrontier:
    gs = require_goal(state, goal_id)
    found = gaps(gs)
    shown = sorted(found, key=lambda g: (_ORDER[g.state], g.gap_id))[:CARDS]
    return ResearchFrontier(
        goal_id=goal_id,
        totals=totals(gs, found),
        gaps=[_card(g) for g in shown],
        projected_count=len(shown),
        omitted_count=len(found) - len(shown),
        inspect=f"loopx explore node list --goal-id {goal_id}; loopx explore node show --goal-id {goal_id} --node-id N",
    )


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

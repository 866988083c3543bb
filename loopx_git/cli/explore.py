"""``loopx explore``: the explore graph of a goal — nodes, edges, findings — and the typed research
observations recorded on its nodes (seed 002), with the composition gaps they open between them."""

from __future__ import annotations

import sys

from loopx_git.cli import context, render
from loopx_git.cli.choices import EdgeType, FindingState, GraphFormat, NodeKind, NodeStatus
from loopx_git.cli.context import AGENT_ID, GOAL_ID
from loopx_git.cli.params import Context, Group, Option, id_list

app = Group(
    help="The explore graph: questions, areas, hypotheses, experiments and artifacts of an investigation, "
    "and the typed research observations that say which results may be combined.",
    no_args_is_help=True,
)
node_app = Group(help="Nodes of the graph: add, update (a new revision), show, list.", no_args_is_help=True)
edge_app = Group(help="Edges between nodes.", no_args_is_help=True)
finding_app = Group(help="Findings on a node, each with its evidence.", no_args_is_help=True)
app.add_typer(node_app, name="node")
app.add_typer(edge_app, name="edge")
app.add_typer(finding_app, name="finding")

NODE_ID = Option(..., "--node-id", help="Node id.")
EVIDENCE = Option([], "--evidence-id", help="An evidence id (repeatable, or comma-separated; at most 12).")


def _rows(nodes) -> None:
    render.table(
        ["node", "kind", "status", "revision", "observations", "title"],
        [(n.node_id, n.kind, n.status, n.revision, len(n.observations), n.title) for n in nodes],
    )


@node_app.command("add")
def node_add(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    node_id: str = NODE_ID,
    kind: NodeKind = Option(..., "--kind", help="What the node is."),
    title: str = Option(..., "--title", help="A public-safe line saying what it is about."),
    parent_id: str | None = Option(None, "--parent-id", help="The node it is grouped under."),
    evidence_ids: list[str] = EVIDENCE,
    status: NodeStatus | None = Option(None, "--status", help="Its status (default open)."),
    reason: str | None = Option(None, "--reason", help="Why (required with --status blocked)."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Add a node to the goal's explore graph.

    Example: loopx explore node add -g research-demo --node-id node-a --kind hypothesis --title 'Cache keys collide' --evidence-id ev-a
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.explore_node_add(
            goal_id,
            node_id,
            kind=kind,
            title=title,
            parent_id=parent_id,
            evidence_ids=id_list(evidence_ids),
            status=status,
            reason=reason,
            actor=c.actor(repo, goal_id, agent_id),
        )
    render.write_result(c, result, lambda r: render.line(f"added explore node {r.write.summary}"))


@node_app.command("update")
def node_update(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    node_id: str = NODE_ID,
    status: NodeStatus | None = Option(None, "--status", help="A new status."),
    reason: str | None = Option(None, "--reason", help="Why the status changes (required for blocked)."),
    evidence_ids: list[str] = EVIDENCE,
    title: str | None = Option(None, "--title", help="A new title."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Record a new revision of a node: a status, more evidence, a new title.

    Anything but closing it (resolved or dead_end) makes its current observation stale: it is no
    input to a joint experiment until a fresh observation is recorded.

    Example: loopx explore node update -g research-demo --node-id node-a --status resolved --reason 'both probes agree'
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.explore_node_update(
            goal_id,
            node_id,
            status=status,
            reason=reason,
            evidence_ids=id_list(evidence_ids),
            title=title,
            actor=c.actor(repo, goal_id, agent_id),
        )
    render.write_result(c, result, lambda r: render.line(f"explore node {r.write.summary}"))


@node_app.command("show")
def node_show(ctx: Context, goal_id: str | None = GOAL_ID, node_id: str = NODE_ID) -> None:
    """One node: its revision, edges, findings and observations. Example: loopx explore node show -g research-demo --node-id node-a"""
    c = context.get(ctx)
    with c.session() as repo:
        node = repo.explore_node(c.goal(repo, goal_id), node_id)
    render.emit(c, node, lambda n: render.fields(n.model_dump(mode="json")))


@node_app.command("list")
def node_list(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    kind: NodeKind | None = Option(None, "--kind", help="Only nodes of this kind."),
    status: NodeStatus | None = Option(None, "--status", help="Only nodes in this status."),
) -> None:
    """The goal's explore nodes, by id. Example: loopx explore node list -g research-demo --status resolved"""
    c = context.get(ctx)
    with c.session() as repo:
        nodes = repo.explore_nodes(c.goal(repo, goal_id), kind=kind, status=status)
    render.emit(c, nodes, _rows)


@edge_app.command("add")
def edge_add(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    from_node_id: str = Option(..., "--from-node-id", help="The node the edge leaves."),
    to_node_id: str = Option(..., "--to-node-id", help="The node it reaches."),
    edge_type: EdgeType = Option(..., "--edge-type", help="What the edge says."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Add an edge. An experiment's two depends_on edges name the inputs it combines.

    Example: loopx explore edge add -g research-demo --from-node-id exp-ab --to-node-id node-a --edge-type depends_on
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.explore_edge_add(
            goal_id, from_node_id, to_node_id, edge_type, actor=c.actor(repo, goal_id, agent_id)
        )
    render.write_result(c, result, lambda r: render.line(f"added edge {r.write.summary}"))


@finding_app.command("add")
def finding_add(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    node_id: str = NODE_ID,
    finding_id: str = Option(..., "--finding-id", help="Finding id (again, to record a new state of it)."),
    state: FindingState = Option(..., "--state", help="How firm it is."),
    evidence_ids: list[str] = Option(..., "--evidence-id", help="Its evidence (repeatable, or comma-separated)."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Record a finding on a node, or a new state of one.

    Example: loopx explore finding add -g research-demo --node-id node-a --finding-id f1 --state confirmed --evidence-id ev-a
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.explore_finding_add(
            goal_id,
            node_id,
            finding_id,
            state=state,
            evidence_ids=id_list(evidence_ids),
            actor=c.actor(repo, goal_id, agent_id),
        )
    render.write_result(c, result, lambda r: render.line(f"finding {r.write.summary}"))


@app.command("observe")
def observe(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    observation_json: str = Option(
        ..., "--observation-json", help="A file holding one typed_research_observation_v0 envelope ('-': stdin)."
    ),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Record a typed research observation on its node (explore_node_id in the envelope).

    Prints replayed, written, the fingerprint and the node revision. The same envelope again is a
    replay: nothing is written, even if the graph changed since.

    Example: loopx explore observe --goal-id research-demo --observation-json observation.json
    """
    c = context.get(ctx)
    data = _read(observation_json)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.explore_observe(goal_id, data, agent_id=c.actor(repo, goal_id, agent_id))
    render.write_result(c, result, _said)


def _said(result) -> None:
    r = result.record
    what = "replayed (nothing written)" if r.replayed else "recorded"
    render.line(f"{what}: observation {r.fingerprint} on {r.node_id}, revision {r.revision}")


def _read(path: str) -> bytes:
    from loopx_git.errors import ValidationError

    if path == "-":
        data = sys.stdin.buffer.read(context.MAX_INPUT_BYTES + 1)
        if len(data) > context.MAX_INPUT_BYTES:
            raise ValidationError(
                f"field 'observation_json': stdin holds more than {context.MAX_INPUT_BYTES >> 20} MiB; rule: an "
                f"observation is at most {context.MAX_INPUT_BYTES >> 20} MiB",
                code="invalid-field",
            )
        return data
    return context.read_input(path, field="observation_json", source=f"{path!r}")  # bounded: not /dev/zero


@app.command("summary")
def summary(ctx: Context, goal_id: str | None = GOAL_ID, agent_id: str | None = context.AGENT_FILTER) -> None:
    """Totals and at most three composition-gap cards (research_frontier_v0): which results may be
    combined, which are pending, observed or ineligible, and why. With the live research gate on
    (configure-goal), also the agent's research_execution_frontier: live gap states and its duties.

    Examples:
      loopx explore summary --goal-id research-demo --format json
      loopx explore summary --goal-id research-demo --agent-id research-agent
    """
    c = context.get(ctx)
    with c.session() as repo:
        frontier = repo.explore_summary_data(c.goal(repo, goal_id), agent_id)
    render.emit(c, frontier, lambda data: _frontier(render.attributes(data)))


def _frontier(f) -> None:
    t = f.totals
    by_state = ", ".join(f"{n} {s}" for s, n in vars(t.gaps_by_state).items()) or "none"
    render.line(
        f"{t.nodes} nodes, {t.edges} edges, {t.findings} findings, {t.observations} observations; "
        f"{t.gaps} gaps ({by_state})"
    )
    if f.gaps:
        render.table(
            ["gap", "state", "inputs", "why"],
            [(g.gap_id, g.state, " + ".join(g.inputs), "; ".join(g.reasons)) for g in f.gaps],
        )
    if f.omitted_count:
        render.line(f"{f.omitted_count} more gaps not shown: {f.inspect}")
    live = getattr(f, "research_execution_frontier", None)  # left out with the gate off
    if live is not None:
        live_frontier(live)


def live_frontier(live) -> None:
    """The live research gate's frontier for one agent (explore summary, status)."""
    counts = ", ".join(f"{n} {s}" for s, n in vars(live.gaps_by_state).items() if n) or "no gaps"
    render.line(f"live research gate for {live.agent_id} (scope {live.policy.coverage_scope_id}): {counts}")
    if live.gaps:
        render.table(
            ["gap", "live state", "inputs", "detail"],
            [(g.gap_id, g.state, " + ".join(g.inputs), g.detail) for g in live.gaps],
        )
    if live.omitted_count:
        render.line(f"{live.omitted_count} more live gaps counted above, not shown")
    if live.owed_obligation is not None:
        o = live.owed_obligation
        render.line(f"owed when idle: {o.obligation_id} for gap {o.gap_id}")
    for d in getattr(live, "duties", None) or []:
        why = f": {'; '.join(d.invalidated_by)}" if d.invalidated_by else ""
        render.line(f"duty {d.obligation_id} ({d.state}) gap {d.gap_id}, todos {', '.join(d.todo_ids)}{why}")


@app.command("graph")
def graph(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    graph_format: GraphFormat = Option(..., "--graph-format", help="mermaid, json or dot."),
) -> None:
    """The goal's explore graph as text to render elsewhere. Example: loopx explore graph -g research-demo --graph-format mermaid"""
    from loopx_git.model.canonical import visible

    c = context.get(ctx)
    with c.session() as repo:
        text = repo.explore_graph(c.goal(repo, goal_id), graph_format)
    sys.stdout.write(visible(text) + "\n")  # whole lines, never wrapped: it is read by another tool

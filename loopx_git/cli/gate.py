"""``loopx gate`` (also ``loopx operator-gate``, the seed's name): open a gate on the work it blocks,
let its owner decide it, and list or show gates."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import GateDecision, GateOwnerClass, GateStatus
from loopx_git.cli.context import AGENT_ID, GOAL_ID
from loopx_git.cli.params import Context, Group, Option, id_list

app = Group(
    help="Operator gates: decisions a person, a controller, an agent or an external system owes before "
    "the work they block may run.",
    no_args_is_help=True,
)

GATE_ID = Option(..., "--gate-id", help="Gate id.")


def _rows(gates) -> None:
    render.table(
        ["gate", "status", "owner", "blocks", "unblocks", "question"],
        [
            (
                g.gate_id,
                g.status,
                g.owner_class + (f":{g.owner_agent_id}" if g.owner_agent_id else ""),
                ", ".join([*g.blocks, *([f"scope {g.scope}"] if g.scope else [])]),
                ", ".join(g.unblocks),
                g.question,
            )
            for g in gates
        ],
    )


@app.command("open")
def open_(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    gate_id: str = GATE_ID,
    owner_class: GateOwnerClass = Option(..., "--owner-class", help="Who decides it."),
    owner_agent_id: str | None = Option(
        None, "--owner-agent-id", help="The registered agent, for --owner-class agent."
    ),
    blocks: list[str] = Option([], "--blocks", help="A todo it blocks (repeatable, or comma-separated)."),
    scope: str | None = Option(
        None, "--scope", help="A scope it blocks: every todo whose --action-kind is this (deploy, ...)."
    ),
    question: str = Option(..., "--question", help="The decision the owner is asked for."),
    unblocks: list[str] = Option([], "--unblocks", help="A todo an approval wakes (repeatable, or comma-separated)."),
    next_safe_action: str | None = Option(None, "--next-safe-action", help="What is safe to do meanwhile."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Open a gate on the todos (and/or scope) it blocks, until its owner approves it.

    Blocked todos stay out of every agent's next action; the goal card shows the gate first.

    Example: loopx gate open -g parser --gate-id release --owner-class user --blocks ship --question 'Release 1.0 now?' --unblocks tag
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.gate_open(
            goal_id,
            gate_id,
            owner_class=owner_class,
            owner_agent_id=owner_agent_id,
            blocks=id_list(blocks),
            scope=scope,
            question=question,
            unblocks=id_list(unblocks),
            next_safe_action=next_safe_action,
            actor=c.actor(repo, goal_id, agent_id),
        )
    render.write_result(c, result, lambda r: render.line(f"opened gate {r.record.gate_id}: {r.write.summary}"))


@app.command("decide")
def decide(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    gate_id: str = GATE_ID,
    decision: GateDecision = Option(
        ..., "--decision", help="approve wakes what it unblocks; reject and defer keep it blocked."
    ),
    reason: str = Option(..., "--reason", help="Why (public-safe)."),
    follow_up: str | None = Option(None, "--follow-up", help="What happens next."),
    handoff_command: str | None = Option(None, "--handoff-command", help="The command that hands the work on."),
    next_safe_action: str | None = Option(None, "--next-safe-action", help="What is safe to do now."),
    decided_by_class: GateOwnerClass = Option(..., "--decided-by-class", help="The deciding class: the gate's owner."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Decide a gate as its owner class: approve, reject or defer.

    An agent-owned gate is decided by its owner agent (--agent-id). A decision is final, except a
    deferral, which may be decided again; an approval wakes what the gate unblocks in the same commit.

    Example: loopx gate decide -g parser --gate-id release --decision approve --reason 'notes reviewed' --decided-by-class user
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.gate_decide(
            goal_id,
            gate_id,
            decision=decision,
            reason=reason,
            follow_up=follow_up,
            handoff_command=handoff_command,
            next_safe_action=next_safe_action,
            decided_by_class=decided_by_class,
            agent_id=c.actor(repo, goal_id, agent_id),
        )
    render.write_result(c, result, lambda r: render.line(f"gate {r.write.summary}"))


@app.command("list")
def list_gates(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    status: GateStatus | None = Option(None, "--status", help="Only gates in this status."),
) -> None:
    """The goal's gates, oldest first. Example: loopx gate list -g parser --status open"""
    c = context.get(ctx)
    with c.session() as repo:
        gates = repo.gates(c.goal(repo, goal_id), status=status)
    render.emit(c, gates, _rows)


@app.command("show")
def show(ctx: Context, goal_id: str | None = GOAL_ID, gate_id: str = GATE_ID) -> None:
    """One gate. Example: loopx gate show -g parser --gate-id release"""
    c = context.get(ctx)
    with c.session() as repo:
        gate = repo.gate(c.goal(repo, goal_id), gate_id)
    render.emit(c, gate, lambda g: render.fields(g.model_dump(mode="json")))

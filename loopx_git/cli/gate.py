"""``loopx gate`` (also ``loopx operator-gate``, the seed's name): open a gate on the work it blocks,
let its owner decide it, and list or show gates."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import GateStatus
from loopx_git.cli.context import GOAL_ID
from loopx_git.cli.declared import family
from loopx_git.cli.params import Context, Group, Option

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


def _family():
    from loopx_git.domain import gate

    return gate


family(app, ("gate",), _family)


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

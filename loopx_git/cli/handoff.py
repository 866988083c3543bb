"""``loopx handoff``: move work between registered agents — prepare (the source), adopt (the target,
which moves the claims in one commit), cancel, list, show."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.context import AGENT_ID, GOAL_ID
from loopx_git.cli.declared import family
from loopx_git.cli.params import Context, Group, Option, id_list
from loopx_git.errors import BadParameter

app = Group(
    help="Handoffs: work moved from one registered agent to another, with its stop condition and evidence.",
    no_args_is_help=True,
)

HANDOFF_ID = Option(..., "--handoff-id", help="Handoff id.")


def _rows(handoffs) -> None:
    render.table(
        ["handoff", "status", "from", "to", "todos", "stop condition", "review"],
        [
            (
                h.handoff_id,
                h.status,
                h.from_agent_id,
                h.to_agent_id,
                ", ".join([*h.todo_ids, *([f"scope {h.scope}"] if h.scope else [])]),
                h.stop_condition,
                "required" if h.review_required else "self-merge",
            )
            for h in handoffs
        ],
    )


@app.command("prepare")
def prepare(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    handoff_id: str = HANDOFF_ID,
    from_agent_id: str = Option(..., "--from-agent-id", help="The source agent: it holds the todos."),
    to_agent_id: str = Option(..., "--to-agent-id", help="The target agent (registered)."),
    todo_ids: list[str] = Option([], "--todo-id", "-t", help="A todo the source holds, to move (repeatable)."),
    scope: str | None = Option(None, "--scope", help="A named scope moved too (or instead)."),
    stop_condition: str = Option(..., "--stop-condition", help="When the target stops."),
    evidence_refs: list[str] = Option([], "--evidence-ref", help="What the target needs (repeatable)."),
    review_required: bool = Option(False, "--review-required", help="The target's result needs a review (default)."),
    self_merge_allowed: bool = Option(False, "--self-merge-allowed", help="The target may merge its own result."),
    agent_id: str | None = Option(
        None, "--agent-id", "-a", help="The agent this is done as: it must be the source (default: this clone's agent)."
    ),
    as_operator: bool = Option(
        False, "--as-operator", help="A person prepares it for the source (recorded in the event), not an agent."
    ),
    redact: bool = context.REDACT,
) -> None:
    """Offer the todos the source holds to another agent, until it adopts them. Only the source
    prepares a handoff of its work, or a person who says so with --as-operator.

    Example: loopx handoff prepare -g parser --handoff-id h1 --from-agent-id alice --to-agent-id bob \\
      -t todo-tok --stop-condition 'tests pass' --evidence-ref docs/parser.md
    """
    if review_required and self_merge_allowed:
        raise BadParameter(
            "give one of --review-required and --self-merge-allowed", param_hint="'--self-merge-allowed'"
        )
    if as_operator and agent_id is not None:
        raise BadParameter("give one of --agent-id and --as-operator", param_hint="'--as-operator'")
    c = context.get(ctx)
    if as_operator and c.agent_env:
        from loopx_git.errors import ValidationError

        raise ValidationError(
            f"field 'as_operator': this process acts as agent {c.agent_env!r} (LOOPX_AGENT_ID); rule: an operator is "
            "a person, and an agent's process never prepares a handoff as one",
            code="not-holder",
            hint="unset LOOPX_AGENT_ID to act as a person, or run it as the source agent",
        )
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.handoff_prepare(
            goal_id,
            handoff_id,
            from_agent_id=from_agent_id,
            to_agent_id=to_agent_id,
            todo_ids=id_list(todo_ids),
            scope=scope,
            stop_condition=stop_condition,
            evidence_refs=evidence_refs,
            review_required=not self_merge_allowed,
            actor=None if as_operator else c.actor(repo, goal_id, agent_id),
            as_operator=as_operator,
        )
    render.write_result(c, result, lambda r: render.line(f"prepared handoff {r.write.summary}"))


@app.command("adopt")
def adopt(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    handoff_id: str = HANDOFF_ID,
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Adopt a handoff as its target: every claim moves to you in one commit.

    Example: loopx handoff adopt -g parser --handoff-id h1 --agent-id bob
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent = c.actor(repo, goal_id, agent_id)
        if agent is None:
            raise BadParameter("the adopting agent is needed (the handoff's target)", param_hint="'--agent-id'")
        result = repo.handoff_adopt(goal_id, handoff_id, agent)
    render.write_result(c, result, lambda r: render.line(f"adopted handoff {r.write.summary}"))


def _family():
    from loopx_git.domain import handoff

    return handoff


family(app, ("handoff",), _family)  # handoff cancel (domain/handoff.py)


@app.command("list")
def list_handoffs(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    agent_id: str | None = context.AGENT_FILTER,
    status: str | None = Option(None, "--status", help="prepared, adopted or cancelled."),
) -> None:
    """The goal's handoffs, oldest first. Example: loopx handoff list -g parser -a bob --status prepared"""
    c = context.get(ctx)
    with c.session() as repo:
        handoffs = repo.handoffs(c.goal(repo, goal_id), agent_id=agent_id, status=status)
    render.emit(c, handoffs, _rows)


@app.command("show")
def show(ctx: Context, goal_id: str | None = GOAL_ID, handoff_id: str = HANDOFF_ID) -> None:
    """One handoff. Example: loopx handoff show -g parser --handoff-id h1"""
    c = context.get(ctx)
    with c.session() as repo:
        handoff = repo.handoff(c.goal(repo, goal_id), handoff_id)
    render.emit(c, handoff, lambda h: render.fields(h.model_dump(mode="json")))

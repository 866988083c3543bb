"""``loopx quota``: whether an automated turn should run (its interaction contract and this agent's
next action), and spending a compute slot only after the run's write-back."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.context import GOAL_ID
from loopx_git.cli.params import Context, Group, Option

app = Group(help="Turn budget: should this turn run, and spend a slot after the write-back.", no_args_is_help=True)

AGENT = Option(..., "--agent-id", "-a", help="The agent whose turn it is.")


def _text(data) -> None:
    contract, lane = data.interaction_contract, data.agent_lane_next_action
    render.line(f"{data.decision}: {contract.agent_channel.primary_action}", style="bold")
    render.line(f"  basis: {lane.basis} — {lane.basis_detail}")
    user = contract.user_channel
    for todo in user.user_todos:
        render.line(f"  user todo {todo.todo_id}: {todo.text}")
    for question in user.questions:
        render.line(f"  gate {question.gate_id} ({question.owner_class}): {question.question}")
    render.line(
        f"  must attempt: {contract.agent_channel.must_attempt}; quiet no-op allowed: "
        f"{contract.agent_channel.quiet_noop_allowed}; delivery allowed: {contract.agent_channel.delivery_allowed}"
    )
    if contract.agent_channel.delivery_blocked_reason:
        render.line(f"  delivery blocked: {contract.agent_channel.delivery_blocked_reason}")
    render.line(f"  write back: {contract.cli_channel.writeback_command}")


@app.command("should-run")
def should_run(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    agent_id: str = AGENT,
    turn_instance_id: str | None = Option(None, "--turn-instance-id", help="The turn asking (echoed back)."),
) -> None:
    """Whether this agent's turn should run: the interaction contract and its one next action.

    Two agents asking on one goal never get the same todo; with a gate holding the work, the answer
    names the gate and the user todo instead.

    Example: loopx quota should-run -g parser --agent-id alice --format json
    """
    c = context.get(ctx)
    if turn_instance_id is not None:  # it goes into command templates and a guard: an id, or refused
        from loopx_git.model.patterns import require_id

        require_id(turn_instance_id=turn_instance_id)
    with c.session() as repo:
        # answered from the answers kept by tip: an agent loop asks this every turn
        answer = {**repo.should_run_data(c.goal(repo, goal_id), agent_id)}
    answer["turn_instance_id"] = turn_instance_id
    if turn_instance_id is not None and answer.get("replan_action_packet"):
        answer = _with_turn(answer, turn_instance_id)
    render.emit(c, answer, lambda data: _text(render.attributes(data)))


def _with_turn(answer: dict, turn: str) -> dict:
    """The kept answer with the asking turn where a command template names ``<turn-instance-id>``,
    and in a capability guard (the answer is shared data: a copy is changed)."""
    import json

    text = json.dumps(answer).replace("<turn-instance-id>", json.dumps(turn)[1:-1])
    copied = json.loads(text)
    guard = (copied.get("replan_action_packet") or {}).get("capability_guard")
    if guard is not None:
        guard["turn_instance_id"] = turn
    return copied


@app.command("spend-slot")
def spend_slot(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    agent_id: str = AGENT,
    run_id: str = Option(..., "--run-id", help="The run written back (refresh-state) before this spend."),
) -> None:
    """Spend a compute slot after run R: refused unless R is this agent's compact write-back.

    Example: loopx quota spend-slot -g parser --agent-id alice --run-id run_01
    """
    c = context.get(ctx)
    with c.session() as repo:
        result = repo.spend_slot(c.goal(repo, goal_id), agent_id, run_id)
    render.write_result(c, result, _spent)


def _spent(result) -> None:
    record = result.record
    if getattr(record, "closeout_kind", None) is not None:
        render.line(
            f"no slot spent: run {record.run_id} retired capability duty {record.obligation_id} "
            f"({record.closeout_kind})"
        )
    else:
        render.line(f"slot spent {result.write.summary}")

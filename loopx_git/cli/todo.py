"""``loopx todo ...``: the todo lifecycle."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import (
    DeliveryOutcome,
    Priority,
    TaskClass,
    TodoDecisionOutcome,
    TodoListStatus,
    TodoRole,
    TodoUpdateStatus,
)
from loopx_git.cli.context import AGENT_ID, GOAL_ID, NEW_TODO_ID, REMOTE, TODO_ID
from loopx_git.cli.declared import family
from loopx_git.cli.params import Context, Group, Option
from loopx_git.errors import BadParameter

app = Group(
    help="Formal todos: add, claim, update, complete, supersede; and candidate todos: suggest, promote.",
    no_args_is_help=True,
)


def todo_rows(todos) -> None:
    render.table(
        ["todo", "pri", "role", "status", "claimed by", "text"],
        [(t.todo_id, t.priority, t.role, _status(t), t.claimed_by, t.text) for t in todos],
    )


def _status(todo) -> str:
    if todo.superseded_by:
        return f"superseded by {todo.superseded_by}"
    if todo.resume_when and todo.status in ("deferred", "blocked"):
        return f"{todo.status} until {todo.resume_when}"
    return todo.status


def show_todo(todo) -> None:
    render.fields(todo)


def _said(verb: str):
    def text(result) -> None:
        todo = result.record
        render.line(f"{verb} {todo.todo_id}: {todo.text} [{_status(todo)}]")
        for event in result.write.events[1:]:
            if event.event_kind == "todo_resume":
                render.line(f"  woke {event.todo_id} ({event.summary})")

    return text


@app.command("add")
def add(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    text: str = Option(..., "--text", help="What is to be done."),
    role: TodoRole = Option("agent", "--role", help="Who does it."),
    task_class: TaskClass = Option("advancement_task", "--task-class", help="What kind of task it is."),
    action_kind: str | None = Option(None, "--action-kind", help="A slug naming the kind of action."),
    priority: Priority = Option("P2", "--priority", help="P0 is the highest."),
    claimed_by: str | None = Option(None, "--claimed-by", help="Claim it for a registered agent at once."),
    resume_when: str | None = Option(
        None, "--resume-when", help="todo_done:<id> | pr_merged:#N | pr_merged:owner/repo#N | capacity_available:<cap>"
    ),
    unblocks_todo_id: str | None = Option(None, "--unblocks-todo-id", help="The todo this one unblocks."),
    task_repository: str | None = Option(None, "--task-repository", help="owner/repo or its GitHub URL."),
    todo_id: str | None = NEW_TODO_ID,
    replan_obligation_id: str | None = Option(
        None,
        "--replan-obligation-id",
        help="Add it as the successor for your open replan obligation (runnable now, by that agent), or for "
        "a pending research gap's capability obligation (with --action-kind joint_probe).",
    ),
    explore_result_node_ref: list[str] = Option(
        [],
        "--explore-result-node-ref",
        help="An explore node this todo's result is recorded on (repeatable); a joint_probe names its experiment.",
    ),
    turn_instance_id: str | None = Option(
        None, "--turn-instance-id", help="The turn that admits it (with --replan-obligation-id): kept in its guard."
    ),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Add a formal todo.

    Examples:
      loopx todo add -g parser --text 'Write the tokenizer' --priority P1
      loopx todo add -g parser --text 'Document it' --resume-when todo_done:todo-tok
      loopx todo add -g parser -a alice --text 'Probe the lexer' --replan-obligation-id replan-0123456789abcdef
      loopx todo add -g research-demo -a research-agent --text 'Run the joint probe' --action-kind joint_probe \\
        --explore-result-node-ref node-ab --replan-obligation-id replan-0123456789abcdef
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.todo_add(
            goal_id,
            text,
            role=role,
            task_class=task_class,
            action_kind=action_kind,
            priority=priority,
            claimed_by=claimed_by,
            resume_when=resume_when,
            unblocks_todo_id=unblocks_todo_id,
            task_repository=task_repository,
            todo_id=todo_id,
            replan_obligation_id=replan_obligation_id,
            explore_result_node_refs=explore_result_node_ref,
            turn_instance_id=turn_instance_id,
            actor=agent_id,
        )
    render.write_result(c, result, _said("added"))


@app.command("claim")
def claim(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    todo_id: str = TODO_ID,
    agent_id: str | None = context.CLAIMANT,
    sync: bool = Option(False, "--sync", help="Fetch, claim and push as one step (one winner across clones)."),
    remote: str = REMOTE,
    redact: bool = context.REDACT,
) -> None:
    """Claim an open, unclaimed todo (claiming your own again changes nothing).

    With --sync the claim is published at once: of several machines racing for the todo through one
    remote, exactly one wins and the others are told who holds it.

    Examples:
      loopx todo claim -g parser -t todo-tok -a alice
      loopx todo claim -t todo-tok              # the default goal and agent (docs/cli.md)
      loopx todo claim -g parser -t todo-tok -a alice --sync --remote origin
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        # with --sync the claim is checked after the pull: a default naming a goal or an agent this
        # clone has not pulled yet is passed on like the same value given as a flag
        goal_id = c.goal(repo, goal_id, check=not sync)
        agent_id = c.agent(repo, goal_id, agent_id, check=not sync)
        if sync:
            result = repo.todo_claim_synced(goal_id, todo_id, agent_id, remote=remote)
        else:
            result = repo.todo_claim(goal_id, todo_id, agent_id)
    render.write_result(c, result, _said("claimed"))


def _claims():
    from loopx_git.domain import claim

    return claim


family(app, ("todo",), _claims)  # todo release, and the next claim operations (domain/claim.py)


@app.command("update")
def update(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    todo_id: str = TODO_ID,
    status: TodoUpdateStatus = Option(..., "--status", help="The new status."),
    reason: str | None = Option(None, "--reason", help="Why (required for blocked and deferred)."),
    resume_when: str | None = Option(None, "--resume-when", help="When a deferred/blocked todo may resume."),
    clear_claim: bool = Option(False, "--clear-claim", help="Release the claim."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Block, defer or reopen a todo.

    Example: loopx todo update -g parser -t todo-doc --status deferred --reason 'after the API settles' --resume-when todo_done:todo-api
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.todo_update(
            goal_id, todo_id, status, reason=reason, resume_when=resume_when, clear_claim=clear_claim, actor=agent_id
        )
    render.write_result(c, result, _said("updated"))


@app.command("complete")
def complete(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    todo_id: str = TODO_ID,
    evidence: list[str] = Option([], "--evidence", help="A public-safe evidence ref (repeatable)."),
    no_follow_up: bool = Option(False, "--no-follow-up", help="Complete without evidence (needs --reason)."),
    reason: str | None = Option(None, "--reason", help="Why nothing follows."),
    successor: list[str] = Option([], "--successor-todo-id", help="A todo that continues this one (repeatable)."),
    decision_outcome: TodoDecisionOutcome | None = Option(
        None,
        "--decision-outcome",
        help="A user_gate todo: the decision, recorded on its gate (only approve wakes what waits for it).",
    ),
    delivery_outcome: DeliveryOutcome | None = Option(
        None, "--delivery-outcome", help="What the completion delivered (its result tier)."
    ),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Mark a todo done, with evidence; wakes the todos waiting for it.

    Example: loopx todo complete -g parser -t todo-tok --evidence tests/test_tokenizer.py -a alice
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.todo_complete(
            goal_id,
            todo_id,
            evidence=evidence,
            no_follow_up=no_follow_up,
            reason=reason,
            successor_todo_ids=successor,
            decision_outcome=decision_outcome,
            delivery_outcome=delivery_outcome,
            actor=agent_id,
        )
    render.write_result(c, result, _said("completed"))


@app.command("supersede")
def supersede(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    todo_id: str = TODO_ID,
    by: str = Option(..., "--by", help="The todo that replaces it."),
    reason: str = Option(..., "--reason", help="Why."),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Replace a todo with another; both keep the link, nothing is deleted.

    Example: loopx todo supersede -g parser -t todo-old --by todo-new --reason 'split in two'
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.todo_supersede(goal_id, todo_id, by, reason, actor=agent_id)
    render.write_result(c, result, _said("superseded"))


@app.command("suggest")
def suggest(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    text: str | None = Option(None, "--text", help="What is to be done (required unless --prompt)."),
    role: TodoRole = Option("agent", "--role", help="Who would do it."),
    task_class: TaskClass = Option("advancement_task", "--task-class", help="What kind of task it is."),
    priority: Priority = Option("P2", "--priority", help="P0 is the highest."),
    reason: str | None = Option(None, "--reason", help="Why it is suggested."),
    todo_id: str | None = NEW_TODO_ID,
    prompt: bool = Option(
        False, "--prompt", help="Print the packet an agent fills to propose candidates (writes nothing)."
    ),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Suggest a candidate todo: visible for a decision, never runnable until promoted.

    Examples:
      loopx todo suggest -g parser --text 'Fuzz the tokenizer' -a alice
      loopx todo suggest -g parser --prompt --format json   # todo_suggestion_prompt_v0 for an agent to fill
    """
    c = context.get(ctx)
    if prompt:
        if text is not None:
            raise BadParameter("--prompt prints a packet to fill; give it without --text", param_hint="'--text'")
        with c.session() as repo:
            packet = repo.suggestion_prompt(c.goal(repo, goal_id))
        render.emit(c, packet, lambda p: render.fields(p.model_dump(mode="json")))
        return
    if text is None:
        raise BadParameter("missing: what is to be done", param_hint="'--text'")
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.todo_suggest(
            goal_id,
            text,
            role=role,
            task_class=task_class,
            priority=priority,
            reason=reason,
            todo_id=todo_id,
            actor=agent_id,
        )
    render.write_result(c, result, lambda r: render.line(f"suggested {r.record.todo_id}: {r.record.text}"))


@app.command("index")
def index(ctx: Context) -> None:
    """The live todos of every goal, best first, with what holds each (todo_index_v0; bounded).

    Example: loopx todo index --format json
    """
    c = context.get(ctx)
    with c.session() as repo:
        found = repo.projection_data("todo-index")

    def text(data) -> None:
        for goal in data.goals:
            render.table(
                ["todo", "pri", "status", "claimed by", "held by", "text"],
                [
                    (t.todo_id, t.priority, t.status, t.claimed_by, ", ".join(t.held_by_gates), t.text)
                    for t in goal.todos
                ],
                title=f"{goal.goal_id}: {goal.open} open, {goal.blocked} blocked, {goal.deferred} deferred, "
                f"{goal.done} done" + (f" ({goal.todos_omitted} more not shown)" if goal.todos_omitted else ""),
            )

    render.emit(c, found, lambda data: text(render.attributes(data)))


def _suggestions():
    from loopx_git.domain import todo_suggest

    return todo_suggest


family(app, ("todo",), _suggestions)  # todo promote (domain/todo_suggest.py)


@app.command("list")
def list_todos(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    status: TodoListStatus | None = Option(None, "--status", help="Only todos with this status."),
    role: TodoRole | None = Option(None, "--role", help="Only todos for this role."),
    claimed_by: str | None = Option(None, "--claimed-by", help="Only todos this agent holds."),
    all_: bool = Option(False, "--all", help="Include done and superseded todos."),
    suggested: bool = Option(False, "--suggested", help="List candidate (suggested) todos instead."),
) -> None:
    """List todos, best first (priority, then age).

    Without --status: the live todos (open, blocked, deferred; --all adds done and superseded ones).
    --status superseded lists the replaced todos; --status open, blocked or deferred never does.

    Examples:
      loopx todo list -g parser --status open
      loopx todo list -g parser --status superseded
    """
    c = context.get(ctx)
    hidden = None
    with c.session() as repo:
        goal_id = c.goal(repo, goal_id)
        if suggested:
            items = repo.suggestions(goal_id)
        elif not (all_ or status) and c.format == context.OutputFormat.text:
            # one listing, split: the live todos shown, the closed ones counted (a second fold of a
            # large goal's todos cost a text listing as much as the table)
            everything = repo.todos(goal_id, role=role, claimed_by=claimed_by, include_closed=True)
            items = [t for t in everything if not (t.superseded_by or t.is_closed)]
            hidden = ["superseded" if t.superseded_by else "done" for t in everything if t.superseded_by or t.is_closed]
        else:
            items = repo.todos(goal_id, status=status, role=role, claimed_by=claimed_by, include_closed=all_)
    if suggested:
        render.emit(
            c,
            items,
            lambda xs: render.table(
                ["todo", "pri", "role", "suggested by", "text"],
                [(s.todo_id, s.priority, s.role, s.suggested_by, s.text) for s in xs],
            ),
        )
    else:
        render.emit(c, items, todo_rows)
        if hidden:
            counts = ", ".join(f"{hidden.count(s)} {s}" for s in ("done", "superseded") if hidden.count(s))
            render.note(f"not listed: {counts} (--all lists them too)")


@app.command("show")
def show(ctx: Context, goal_id: str | None = GOAL_ID, todo_id: str = TODO_ID) -> None:
    """Show one todo. Example: loopx todo show -g parser -t todo-tok --format json"""
    c = context.get(ctx)
    with c.session() as repo:
        todo = repo.todo(c.goal(repo, goal_id), todo_id)
    render.emit(c, todo, show_todo)

"""``loopx goal ...`` and ``loopx agent ...``."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.choices import AgentRole, CompositionMode, GoalStatus
from loopx_git.cli.context import AGENT_ID, CREATOR, GOAL_ID, NAMED_AGENT, NEW_GOAL_ID
from loopx_git.cli.params import Context, Group, Option

goal_app = Group(help="Create, show and change goals.", no_args_is_help=True)
agent_app = Group(help="Register the agents that work on a goal.", no_args_is_help=True)


def _show_goal(goal) -> None:
    render.kv(
        [
            ("goal", goal.goal_id),
            ("objective", goal.objective),
            ("status", goal.status),
            ("acceptance", goal.acceptance_criteria),
            ("non-goals", goal.non_goals),
            ("created", goal.created_at),
            ("updated", goal.updated_at),
        ]
    )
    mode = getattr(goal, "explore_composition_mode", None)
    if mode is not None or getattr(goal, "explore_harness_enabled", None) is not None:
        render.kv(
            [
                ("explore harness", "enabled" if goal.explore_harness_enabled else "disabled"),
                ("composition", mode or "unset"),
                ("coverage scope", goal.explore_composition_scope_id or "unset"),
            ]
        )


@goal_app.command("create")
def create(
    ctx: Context,
    goal_id: str = NEW_GOAL_ID,
    objective: str = Option(..., help="What the goal achieves."),
    acceptance: list[str] = Option([], "--acceptance", help="An acceptance criterion (repeatable)."),
    non_goal: list[str] = Option([], "--non-goal", help="Something out of scope (repeatable)."),
    agent_id: str | None = CREATOR,
    redact: bool = context.REDACT,
) -> None:
    """Create a goal.

    Example: loopx goal create --goal-id parser --objective 'A streaming JSON parser' --acceptance 'passes the suite'
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        result = repo.goal_create(
            goal_id, objective, acceptance_criteria=acceptance, non_goals=non_goal, actor=agent_id
        )
    render.write_result(c, result, lambda r: render.line(f"created goal {r.record.goal_id}: {r.record.objective}"))


@goal_app.command("update")
def update(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    objective: str | None = Option(None, help="New objective."),
    add_acceptance: list[str] = Option([], "--add-acceptance", help="Add an acceptance criterion."),
    add_non_goal: list[str] = Option([], "--add-non-goal", help="Add a non-goal."),
    status: GoalStatus | None = Option(None, "--status", help="The new status."),
    delivery_branch_pattern: str | None = Option(
        None,
        "--delivery-branch-pattern",
        help="Agents deliver only from branches matching this glob ({agent_id} stands for the agent).",
    ),
    agent_id: str | None = AGENT_ID,
    redact: bool = context.REDACT,
) -> None:
    """Change a goal's objective, criteria, status or delivery branch policy.

    Example: loopx goal update -g parser --status paused
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        agent_id = c.actor(repo, goal_id, agent_id)
        result = repo.goal_update(
            goal_id,
            objective=objective,
            add_acceptance=add_acceptance,
            add_non_goals=add_non_goal,
            status=status,
            delivery_branch_pattern=delivery_branch_pattern,
            actor=agent_id,
        )
    render.write_result(c, result, lambda r: _show_goal(r.record))


def register_configure(root: Group) -> None:
    @root.command("configure-goal")
    def configure_goal(
        ctx: Context,
        goal_id: str | None = GOAL_ID,
        explore_harness_enabled: bool | None = Option(
            None,
            "--explore-harness-enabled/--explore-harness-disabled",
            help="Turn the explore harness on (or off); the live research gate needs it on.",
        ),
        explore_composition_mode: CompositionMode | None = Option(
            None,
            "--explore-composition-mode",
            help="explicit_only: idle agents owe the pending composition gaps (with the harness on); disabled: off.",
        ),
        explore_composition_scope_id: str | None = Option(
            None,
            "--explore-composition-scope-id",
            help="The coverage scope a joint experiment's result must name to count as live observed.",
        ),
        execute: bool = Option(False, "--execute", help="Write the change; without it, only a preview is shown."),
        agent_id: str | None = AGENT_ID,
        redact: bool = context.REDACT,
    ) -> None:
        """Preview or apply a goal's explore policy: the explicit-only live research gate (seed 002).

        Settings left out keep their values. Without --execute nothing is written.

        Examples:
          loopx configure-goal --goal-id research-demo --explore-harness-enabled \\
            --explore-composition-mode explicit_only --explore-composition-scope-id joint-scope
          loopx configure-goal --goal-id research-demo --explore-harness-enabled \\
            --explore-composition-mode explicit_only --explore-composition-scope-id joint-scope --execute
          loopx configure-goal --goal-id research-demo --explore-composition-mode disabled --execute
        """
        c = context.get(ctx)
        with c.session(redact=redact) as repo:
            goal_id = c.goal(repo, goal_id)
            agent_id = c.actor(repo, goal_id, agent_id)
            result = repo.goal_configure(
                goal_id,
                execute=execute,
                explore_harness_enabled=explore_harness_enabled,
                explore_composition_mode=explore_composition_mode,
                explore_composition_scope_id=explore_composition_scope_id,
                actor=agent_id,
            )
        render.emit(c, result.record, _show_policy_change)


def _settings(s) -> str:
    state = "on" if s.active else "off"
    return (
        f"live gate {state} (harness {'enabled' if s.harness_enabled else 'disabled'}, composition "
        f"{s.composition_mode or 'unset'}, scope {s.coverage_scope_id or 'unset'}; {s.revision})"
    )


def _show_policy_change(change) -> None:
    render.line(f"goal {change.goal_id} explore policy")
    render.line(f"  before: {_settings(change.before)}")
    render.line(f"  after:  {_settings(change.after)}")
    if not change.changed:
        render.note("nothing to change")
    elif change.executed:
        render.note(f"written: commit {change.commit[:12]}")
    else:
        render.note("preview only: nothing written; add --execute to apply")


@goal_app.command("show")
def show(ctx: Context, goal_id: str | None = GOAL_ID) -> None:
    """Show a goal. Example: loopx goal show -g parser"""
    c = context.get(ctx)
    with c.session() as repo:
        goal = repo.goal(c.goal(repo, goal_id))
    render.emit(c, goal, _show_goal)


@goal_app.command("list")
def list_goals(ctx: Context) -> None:
    """List the goals on the state branch."""
    c = context.get(ctx)
    with c.session() as repo:
        goals = repo.goals()
    render.emit(
        c,
        goals,
        lambda gs: render.table(["goal", "status", "objective"], [(g.goal_id, g.status, g.objective) for g in gs]),
    )


@agent_app.command("register")
def register(
    ctx: Context,
    goal_id: str | None = GOAL_ID,
    agent_id: str = NAMED_AGENT,
    lane: str | None = Option(None, "--lane", help="The lane the agent works in."),
    role: AgentRole = Option("worker", "--role", help="What the agent does."),
    default: bool = Option(
        False, "--default", help="Also make it this clone's default agent (git config loopx.agent)."
    ),
    redact: bool = context.REDACT,
) -> None:
    """Register (or re-register) an agent on a goal.

    With --default, commands run in this clone act as this agent when they name none (docs/cli.md).

    Examples:
      loopx agent register -g parser -a alice --lane core
      loopx agent register -g parser -a alice --default && loopx todo claim -t todo-tok
    """
    c = context.get(ctx)
    with c.session(redact=redact) as repo:
        goal_id = c.goal(repo, goal_id)
        result = repo.agent_register(goal_id, agent_id, lane=lane, role=role)
        if default:  # after the registration: the default never names an agent that is not registered
            repo.set_default_agent(goal_id, agent_id)
    render.write_result(
        c,
        result,
        lambda r: render.line(
            f"agent {r.record.agent_id} registered on {goal_id}" + (f" (lane {r.record.lane})" if r.record.lane else "")
        ),
    )
    if default and c.format == context.OutputFormat.text:
        render.note(f"default agent of this clone: {agent_id} (git config loopx.agent)")


@agent_app.command("list")
def list_agents(ctx: Context, goal_id: str | None = GOAL_ID) -> None:
    """List a goal's registered agents."""
    c = context.get(ctx)
    with c.session() as repo:
        agents = repo.agents(c.goal(repo, goal_id))
    render.emit(
        c,
        agents,
        lambda items: render.table(
            ["agent", "lane", "role", "registered"], [(a.agent_id, a.lane, a.role, a.registered_at) for a in items]
        ),
    )

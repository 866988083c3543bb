"""``loopx mcp`` (also the ``loopx-mcp`` executable): the Model Context Protocol server over stdio."""

from __future__ import annotations

from loopx_git.cli import context
from loopx_git.cli.params import Context, Group, Option

REPO = Option(
    None,
    "--repo",
    help="The repository to serve (any folder inside it; default: the one given before the command, or here).",
    metavar="PATH",
)
GOAL = Option(
    None,
    "--goal-id",
    "-g",
    help="The goal a call means when it names none (default: LOOPX_GOAL_ID, git config loopx.goal, the only goal).",
)
AGENT = Option(
    None,
    "--agent-id",
    "-a",
    help="The agent a call acts as when it names none, typically one server per agent (default: LOOPX_AGENT_ID; "
    "without either, git config loopx.agent applies per call, as in the CLI).",
)


def register(root: Group) -> None:
    @root.command("mcp")
    def mcp(ctx: Context, repo: str | None = REPO, goal_id: str | None = GOAL, agent_id: str | None = AGENT) -> None:
        """Serve this repository's loopx state to an agent over the Model Context Protocol (stdio).

        One tool per operation (loopx_status, loopx_todo_claim, ...; docs/mcp.md lists them), each
        taking the same options as its command and returning the JSON its `--format json` prints; a
        refusal is a tool error with the same code, field and hint. Resources: a goal's status and
        ledger, each todo, an agent's replan context and brief. Several servers (one per agent) and CLI
        writers share one repository: every write is one compare-and-swap commit.

        Needs the optional extra mcp: pip install 'loopx-git\\[mcp]'.

        Examples:
          loopx mcp -a alice                       # what an MCP client starts, in the project
          loopx-mcp --repo path/to/project -g parser -a alice
          claude mcp add loopx -- loopx-mcp -a alice
        """
        from dataclasses import replace

        from loopx_git.errors import LoopxError

        c = context.get(ctx)
        if repo is not None:
            c = replace(c, repo=repo)
        agent = agent_id or c.agent_env  # as LOOPX_AGENT_ID is for one command, for every call
        with c.session() as state:  # refuse a bad repository, goal or agent before serving anything
            goal = _checked_goal(state, goal_id)
            if agent is not None:
                _check_agent(
                    state, agent, goal or _default_goal(c, state), "agent_id" if agent_id else "LOOPX_AGENT_ID"
                )
        try:
            from loopx_git.mcp.server import serve
        except ImportError as exc:
            if (exc.name or "").split(".")[0] not in ("mcp", "anyio"):
                raise
            raise LoopxError(
                "the MCP server needs the `mcp` package, which is not installed",
                code="missing-extra",
                hint="pip install 'loopx-git[mcp]'",
            ) from None
        from loopx_git.mcp.calls import Defaults

        serve(Defaults(c.commands, repo=c.repo, state_branch=c.state_branch, goal_id=goal, agent_id=agent))


def _checked_goal(state, goal_id: str | None) -> str | None:
    from loopx_git.errors import NotFoundError

    if goal_id is not None and not state.goal_exists(goal_id):
        raise NotFoundError(
            f"field 'goal_id': there is no goal {goal_id[:100]!r}; rule: a server's goal exists",
            code="unknown-goal",
            hint="loopx goal list shows the goals",
        )
    return goal_id


def _default_goal(c, state) -> str | None:
    """The goal a call naming none would mean, or None when that is not settled (several goals and
    no default: each call names its goal)."""
    from loopx_git.errors import LoopxError

    try:
        return c.goal(state, None)
    except LoopxError:
        return None


def _check_agent(state, agent: str, goal: str | None, given_as: str) -> None:
    """The server's agent is registered on its goal, or, with no goal settled, on some goal."""
    from loopx_git.errors import NotFoundError

    goals = [goal] if goal is not None else [g.goal_id for g in state.goals()]
    if any(agent in (state.agent_ids(g) or ()) for g in goals):
        return
    where = f"goal '{goal}'" if goal is not None else "any goal"
    raise NotFoundError(
        f"field '{given_as}': {agent[:100]!r} is not a registered agent of {where}; rule: the agent a server "
        "acts as is registered on its goal",
        code="unknown-agent",
        hint="loopx agent register -g GOAL -a AGENT, or start the server with the goal's agent",
    )

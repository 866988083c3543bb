"""Which goal and which agent a command means when it does not name them.

One order, for both: the value given (the CLI's ``-g``/``-a`` flag, an API argument), then the
caller's environment value (the CLI passes ``LOOPX_GOAL_ID`` / ``LOOPX_AGENT_ID``; nothing below the
CLI reads the environment), then the repository's git config (``loopx.goal`` / ``loopx.agent``, set by
``loopx connect -g`` and ``loopx agent register --default``), then, for the goal only, the only goal
there is. A goal that cannot be resolved is refused with the goals listed; a default (environment or
config) naming a goal that does not exist, or an agent not registered on the goal, is refused like the
same value given as a flag, saying where it came from. What is written is the resolved value in the
record's normal field: the source is never recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from loopx_git.errors import NotFoundError, ValidationError

if TYPE_CHECKING:
    from loopx_git.api import StateRepo

# the model (pydantic) is imported inside the functions: the CLI imports this module's names for every
# command, `--help` included, which must stay light

GOAL_KEY = "loopx.goal"
AGENT_KEY = "loopx.agent"
GOAL_ENV = "LOOPX_GOAL_ID"
AGENT_ENV = "LOOPX_AGENT_ID"

FLAG, ENV, GIT_CONFIG, ONLY_GOAL = "flag", "env", "git-config", "only-goal"

GOAL_RULE = (
    f"rule: name the goal with -g/--goal-id, set {GOAL_ENV}, or `git config {GOAL_KEY} <id>` "
    "(`loopx connect -g <id>` sets it), unless the repository has exactly one goal"
)
AGENT_RULE = (
    f"rule: name the agent with -a/--agent-id, set {AGENT_ENV}, or `git config {AGENT_KEY} <id>` "
    "(`loopx agent register --default` sets it)"
)


@dataclass(frozen=True)
class Resolved:
    """A resolved id and where it came from: ``flag``, ``env``, ``git-config`` or ``only-goal``."""

    value: str
    source: str


def resolve_goal(repo: StateRepo, goal_id: str | None = None, *, env: str | None = None) -> Resolved:
    """The goal a caller means. A given ``goal_id`` is returned as it is (the command refuses one that
    does not exist, as before); a default is checked here, so its refusal can say where it came from."""
    from loopx_git.model.state import listed

    if goal_id is not None:
        return Resolved(goal_id, FLAG)
    for value, source in ((env, ENV), (repo.git.config_get(GOAL_KEY), GIT_CONFIG)):
        if value:  # an empty variable or key is unset, never the goal ''
            _require_goal(repo, value, GOAL_ENV if source == ENV else f"git config {GOAL_KEY}")
            return Resolved(value, source)
    goals = [g.goal_id for g in repo.goals()]
    if len(goals) == 1:
        return Resolved(goals[0], ONLY_GOAL)
    if goals:
        raise ValidationError(
            f"field 'goal_id': no goal named, and the repository has {len(goals)} goals ({listed(goals)}); "
            + GOAL_RULE,
            code="goal-required",
            hint=f"name one (-g {goals[0]}), or make one this clone's default: loopx connect -g {goals[0]}",
        )
    raise ValidationError(
        f"field 'goal_id': no goal named, and the repository has no goals yet; {GOAL_RULE}",
        code="goal-required",
        hint="create one: loopx connect -g <id> --objective TEXT",
    )


def resolve_agent(
    repo: StateRepo, goal_id: str, agent_id: str | None = None, *, env: str | None = None
) -> Resolved | None:
    """The agent a command acts as, or None (a person acts). A given ``agent_id`` is returned as it is;
    a default must be registered on ``goal_id``."""
    from loopx_git.model.state import require_agent, require_goal

    if agent_id is not None:
        return Resolved(agent_id, FLAG)
    for value, source, origin in (
        (env, ENV, AGENT_ENV),
        (repo.git.config_get(AGENT_KEY), GIT_CONFIG, f"git config {AGENT_KEY}"),
    ):
        if value:
            gs = require_goal(repo.state(), goal_id)
            try:
                require_agent(gs, value, field=f"agent_id (from {origin})")
            except NotFoundError as exc:
                exc.hint = (exc.hint or "") + f", or change {origin}"
                raise
            return Resolved(value, source)
    return None


def require_agent_id(resolved: Resolved | None) -> str:
    """The agent of a command that must act as one (``todo claim``): refused when none is named."""
    if resolved is None:
        raise ValidationError(f"field 'agent_id': no agent named; {AGENT_RULE}", code="agent-required")
    return resolved.value


def set_goal(repo: StateRepo, goal_id: str) -> bool:
    """Make ``goal_id`` this clone's default goal (repository-local config); True when it changed."""
    from loopx_git.model.state import require_goal

    require_goal(repo.state(), goal_id)
    if repo.git.config_get(GOAL_KEY) == goal_id:
        return False
    repo.git.config_set(GOAL_KEY, goal_id)
    return True


def set_agent(repo: StateRepo, goal_id: str, agent_id: str) -> bool:
    """Make ``agent_id`` (registered on ``goal_id``) this clone's default agent; True when it changed."""
    from loopx_git.model.state import require_agent, require_goal

    require_agent(require_goal(repo.state(), goal_id), agent_id)
    if repo.git.config_get(AGENT_KEY) == agent_id:
        return False
    repo.git.config_set(AGENT_KEY, agent_id)
    return True


def _require_goal(repo: StateRepo, goal_id: str, origin: str) -> None:
    from loopx_git.model.state import listed

    if not repo.goal_exists(goal_id):
        known = listed(g.goal_id for g in repo.goals())
        raise NotFoundError(
            f"goal '{goal_id}' (from {origin}) does not exist (known goals: {known})",
            code="not-found",
            hint=f"change or unset {origin}, or create the goal with `loopx connect -g {goal_id} --objective TEXT`",
        )

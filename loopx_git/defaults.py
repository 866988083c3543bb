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

import re
import shlex
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
    f"rule: name the goal with -g/--goal-id, set {GOAL_ENV}, or `git config {GOAL_KEY} <goal>` "
    "(`loopx connect -g <goal>` sets it), unless the repository has exactly one goal"
)
AGENT_RULE = (
    f"rule: name the agent with -a/--agent-id, set {AGENT_ENV}, or `git config {AGENT_KEY} <agent>` "
    "(`loopx agent register --agent-id <agent> --default` sets it)"
)


@dataclass(frozen=True)
class Resolved:
    """A resolved id and where it came from: ``flag``, ``env``, ``git-config`` or ``only-goal``."""

    value: str
    source: str


def resolve_goal(
    repo: StateRepo, goal_id: str | None = None, *, env: str | None = None, check: bool = True
) -> Resolved:
    """The goal a caller means. A given ``goal_id`` is returned as it is (the command refuses one that
    does not exist, as before); a default is checked here, so its refusal can say where it came from.
    ``check=False`` passes a named default through like a flag: for a command that pulls before it
    reads (``todo claim --sync``), the goal may exist only on the remote so far."""
    if goal_id is not None:
        return Resolved(goal_id, FLAG)
    for value, source in ((env, ENV), (repo.git.config_get(GOAL_KEY), GIT_CONFIG)):
        if value:  # an empty variable or key is unset, never the goal ''
            if check:
                _require_goal(repo, value, GOAL_ENV if source == ENV else f"git config {GOAL_KEY}")
            return Resolved(value, source)
    goals = repo.goal_ids()
    if len(goals) == 1:
        return Resolved(goals[0], ONLY_GOAL)
    if goals:
        from loopx_git.model.state import listed

        raise ValidationError(
            f"field 'goal_id': no goal named, and the repository has {len(goals)} goals ({listed(goals)}); "
            + GOAL_RULE,
            code="goal-required",
            hint=f"name one (-g {goals[0]}), or make one this clone's default: loopx connect -g {goals[0]}",
        )
    copy = _remote_copy(repo)
    if copy is not None:  # a fresh clone: the goals are on the remote's branch, not here yet
        raise ValidationError(
            f"field 'goal_id': this clone has no state branch yet, but {copy} holds one; rule: a clone joins the "
            "shared state with `loopx connect`, which starts its branch from the remote's",
            code="not-connected",
            hint="run `loopx connect` (it adopts the remote's branch and changes nothing there)",
        )
    raise ValidationError(
        f"field 'goal_id': no goal named, and the repository has no goals yet; {GOAL_RULE}",
        code="goal-required",
        hint="create one: loopx connect -g <id> --objective TEXT",
    )


def _remote_copy(repo: StateRepo) -> str | None:
    """``origin/loopx/state`` when this clone has no state branch and a remote-tracking copy of it
    exists (what `git clone` leaves), else None."""
    if repo.tip is not None:
        return None
    branch = repo.ref.removeprefix("refs/heads/")
    for name, _ in repo.git.refs("refs/remotes/"):
        if name.endswith("/" + branch):
            return name.removeprefix("refs/remotes/")
    return None


def resolve_agent(
    repo: StateRepo,
    goal_id: str,
    agent_id: str | None = None,
    *,
    env: str | None = None,
    check: bool = True,
    required: bool = False,
) -> Resolved | None:
    """The agent a command acts as, or None (a person acts). A given ``agent_id`` is returned as it is.
    ``LOOPX_AGENT_ID`` must be registered on ``goal_id`` (it was set for this call). `git config
    loopx.agent` says who this clone is, across goals: on a goal where that agent is not registered
    it does not apply, and a person acts (with a notice), so one clone's default never blocks work on
    another goal; a command only an agent runs (``required``, e.g. ``todo claim``) is refused there
    instead. ``check=False`` passes a named default through unchecked (see resolve_goal)."""
    from loopx_git.errors import Notice

    if agent_id is not None:
        return Resolved(agent_id, FLAG)
    if env:
        if check:
            _require_registered(repo, goal_id, env, AGENT_ENV)
        return Resolved(env, ENV)
    configured = repo.git.config_get(AGENT_KEY)
    if not configured:
        return None
    if check and required:
        _require_registered(repo, goal_id, configured, f"git config {AGENT_KEY}")
    elif check and configured not in _registered(repo, goal_id):
        repo.note(
            Notice(
                "default-agent-elsewhere",
                f"git config {AGENT_KEY} is '{configured}', who is not registered on goal '{goal_id}': "
                "acting as a person (give -a, or register the agent on this goal)",
                field="agent_id",
            )
        )
        return None
    return Resolved(configured, GIT_CONFIG)


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


def _registered(repo: StateRepo, goal_id: str) -> list[str]:
    """The agents registered on ``goal_id``; NotFoundError when there is no such goal."""
    found = repo.agent_ids(goal_id)
    if found is None:
        from loopx_git.model.state import require_goal

        require_goal(repo.state(), goal_id)  # raises, saying which goals there are
    return found or []


def _require_registered(repo: StateRepo, goal_id: str, agent_id: str, origin: str) -> None:
    from loopx_git.model.state import require_agent, require_goal

    if agent_id in (repo.agent_ids(goal_id) or ()):
        return
    try:
        require_agent(require_goal(repo.state(), goal_id), agent_id, field=f"agent_id (from {origin})")
    except NotFoundError as exc:
        exc.hint = (exc.hint or "") + f", or change {origin}"
        raise


def _require_goal(repo: StateRepo, goal_id: str, origin: str) -> None:
    if not repo.goal_exists(goal_id):
        from loopx_git.model.state import listed

        known = listed(repo.goal_ids())
        raise NotFoundError(
            f"goal '{goal_id}' (from {origin}) does not exist (known goals: {known})",
            code="not-found",
            hint=f"change or unset {origin}, or create the goal with "
            f"`loopx connect -g {shlex.quote(goal_id)} --objective TEXT`",
        )


def check_connect_goal(
    repo: StateRepo, goal_id: str, objective: str | None, *, state_branch: str | None, remote: str | None
) -> None:
    """What ``loopx connect -g G [--objective O]`` asks, checked before connect writes anything (the
    branch, its config, an adopted copy): without an objective G must exist on the branch it connects,
    or on the remote copy a new branch will start from; with one, creating G must pass the checks a
    goal create makes (the safety rules included)."""
    from loopx_git import sync
    from loopx_git.domain import goal as goal_ops
    from loopx_git.domain.guard import guard
    from loopx_git.model.ids import ID_PATTERN, ID_RULE, utc_now
    from loopx_git.model.state import State
    from loopx_git.store import layout

    if not re.fullmatch(ID_PATTERN, goal_id):  # before any advice that could only fail on it
        raise ValidationError(f"field 'goal_id': {goal_id!r} is not {ID_RULE}", code="invalid-field")
    # the same kind of handle on the branch connect will use (this module sits below the API)
    target = type(repo)(repo.git, layout.state_ref(state_branch), redact=repo.redact) if state_branch else repo
    if remote is not None:  # an unknown or malformed remote is refused before anything is fetched
        target.remote(remote)
    sync.fetch_copy(target, remote)  # what connect will adopt, in a clone that never fetched it
    if target.tip is not None:
        exists = target.goal_exists(goal_id)
    else:  # the copy a new branch would adopt is checked by the adoption: here only its paths are read
        found = sync.adoptable(target, remote)
        tree = repo.git.commit(found[1]).tree if found else None
        exists = tree is not None and repo.git.leaf(tree, layout.goal_document(goal_id)) is not None
    if exists:
        return
    if objective is None:
        raise ValidationError(
            f"field 'objective': goal '{goal_id}' does not exist, so connecting to it needs --objective to "
            "create it; rule: connect -g names an existing goal, or creates it with --objective",
            code="invalid-field",
            hint=f"loopx connect -g {shlex.quote(goal_id)} --objective TEXT",
        )
    state = target.state() if target.tip is not None else State()
    write = goal_ops.create_goal(state, goal_id=goal_id, objective=objective, actor=None, now=utc_now())
    guard(write, repo.policy, redact=repo.redact)

"""The explicit-only live research gate (seed 002, M3), worked out from the folded state and never
stored: the live state of every composition gap, the capability obligation an idle agent owes, and
whether an admitted duty's guard still holds.

With the goal's policy active (model/capability.py ``ExplorePolicy``), each gap of the shadow
projection (model/composition.py) is, in this order:

- ``ineligible``: the shadow says so (an input reopened, a lineage broken, a historical declaration);
- ``dismissed``: an experiment over it has a current observation under execution lineage for this
  gap with a ``dismissed`` resolution, and the experiment is dead_end — never counted as observed;
- ``observed``: an experiment's current result is coverage-backed, saw the current inputs, was made
  under execution lineage for this gap and names the configured coverage scope. A shadow-observed
  result without lineage or scope stays diagnostic: it does not discharge the live gap;
- ``deferred``: a ``deferred`` resolution under lineage whose wait still holds: the successor todo
  waits with ``resume_when=todo_done:<blocker>``, and the blocker is a live todo of the same agent
  that names the successor in ``unblocks_todo_id``. A blocker done, archived or unrelated does not
  suppress the gap;
- ``scheduled``: a runnable joint_probe todo admitted for it (it carries the gap's guard) names one of
  its experiments. Scheduling does not observe the gap;
- ``pending`` otherwise: an idle agent's capability obligation.

The full set is always used here: presentation compaction (three cards) never hides a live gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from loopx_git.model.capability import JOINT_PROBE, CapabilityGuard, ExplorePolicy
from loopx_git.model.composition import Gap, gaps
from loopx_git.model.frontier import Trigger, obligation_id
from loopx_git.model.goal import explore_policy
from loopx_git.model.research import InputObservation, ObservationFacts
from loopx_git.model.todo import TodoItem, TodoStatus

if TYPE_CHECKING:
    from loopx_git.model.state import GoalState

LiveState = Literal["pending", "scheduled", "deferred", "ineligible", "observed", "dismissed"]
LIVE_ORDER: Final = ("pending", "scheduled", "deferred", "ineligible", "observed", "dismissed")
CAPABILITY_TRIGGER: Final = "research_composition_gap"


@dataclass
class LiveGap:
    gap: Gap
    state: LiveState
    detail: str
    """Why this state, in one line."""
    experiment: str | None = None
    """The experiment whose result observed, dismissed or deferred it."""
    successors: list[str] = field(default_factory=list)
    """Runnable joint_probe todos admitted for it."""


def live_gaps(gs: GoalState, policy: ExplorePolicy | None = None) -> list[LiveGap]:
    """Every gap of the goal with its live state, by gap id (the policy: the goal's own by default)."""
    policy = policy if policy is not None else explore_policy(gs.goal)
    admitted: dict[str, list[TodoItem]] = {}
    for obligation, guard in gs.duties.items():
        for todo in duty_todos(gs, obligation):
            if todo.action_kind == JOINT_PROBE:
                admitted.setdefault(guard.gap_id, []).append(todo)
    return [_live(gs, gap, policy, admitted.get(gap.gap_id, [])) for gap in gaps(gs)]


def _live(gs: GoalState, gap: Gap, policy: ExplorePolicy, todos: list[TodoItem]) -> LiveGap:
    if gap.state == "ineligible":
        return LiveGap(gap, "ineligible", "; ".join(gap.reasons))
    inputs = dict(gap.input_observations)
    deferred: LiveGap | None = None
    for experiment in gap.experiments:
        fingerprint = gs.explore[experiment].current_observation
        facts = gs.research.get(fingerprint) if fingerprint else None
        if facts is None or facts.lineage is None or facts.lineage.gap_id != gap.gap_id:
            continue
        if facts.lineage.obligation_id in gs.retirements:
            continue  # a retired duty supplies nothing live: not a result, not a dismissal, not a wait
        if dict(facts.inputs) != inputs:
            continue  # it saw inputs that are no longer current
        if facts.resolution == "dismissed" and gs.explore[experiment].status == "dead_end":
            return LiveGap(gap, "dismissed", f"dismissed by {experiment} ({fingerprint})", experiment)
        if facts.resolution is None and facts.coverage_backed and facts.scope_id == policy.scope_id:
            return LiveGap(gap, "observed", f"observed by {experiment} ({fingerprint})", experiment)
        if facts.resolution == "deferred" and deferred is None:
            why = waiting(gs, facts)
            if why is None:
                deferred = LiveGap(gap, "deferred", f"{experiment} waits for blocker {facts.blocker_id}", experiment)
    if deferred is not None:
        return deferred
    runnable = sorted(t.todo_id for t in todos if _schedules(gs, t, gap, policy))
    if runnable:
        return LiveGap(gap, "scheduled", f"scheduled: {', '.join(runnable)}", successors=runnable)
    return LiveGap(gap, "pending", "both inputs are current and no live result, dismissal or deferral covers it")


def _schedules(gs: GoalState, todo: TodoItem, gap: Gap, policy: ExplorePolicy) -> bool:
    """Whether ``todo`` is an exact successor that can still produce the gap's result: its duty not
    retired, runnable, its agent's to take, naming one of the gap's experiments, and admitted under
    the gap's current inputs and the current policy (a stale or retired one suppresses nothing: it can
    neither observe nor close)."""
    guard = todo.capability_guard
    assert guard is not None
    current = {i.node_id: i.fingerprint for i in guard.input_observations} == dict(gap.input_observations)
    return (
        guard.obligation_id not in gs.retirements
        and gs.is_runnable(todo)
        and todo.claimed_by in (None, guard.agent_id)
        and len(todo.explore_result_node_refs) == 1
        and todo.explore_result_node_refs[0] in gap.experiments
        and current
        and guard.policy_revision == policy.revision
    )


def waiting(gs: GoalState, facts: ObservationFacts) -> str | None:
    """Why a deferred resolution does not hold (None: its wait still holds): the successor waits on
    its blocker, and the blocker is a live todo of the same agent that names the successor."""
    lineage = facts.lineage
    assert lineage is not None
    blocker_id = facts.blocker_id
    successor = gs.todos.get(lineage.todo_id)
    blocker = gs.todos.get(blocker_id) if blocker_id else None
    if successor is None:
        return f"successor todo {lineage.todo_id} is missing"
    if successor.status not in (TodoStatus.blocked.value, TodoStatus.deferred.value):
        return f"successor todo {lineage.todo_id} is {successor.status}, not waiting"
    if successor.resume_when != f"todo_done:{blocker_id}":
        return f"successor todo {lineage.todo_id} does not wait for todo_done:{blocker_id}"
    if blocker is None or blocker.superseded_by:
        return f"blocker todo {blocker_id} is missing or superseded"
    if blocker.status == TodoStatus.done.value:
        return f"blocker todo {blocker_id} is done: the prerequisite is resolved"
    if blocker.status != TodoStatus.open.value:
        return f"blocker todo {blocker_id} is {blocker.status}, not active"
    if blocker.unblocks_todo_id != lineage.todo_id:
        return f"blocker todo {blocker_id} does not name {lineage.todo_id} in unblocks_todo_id"
    if blocker.claimed_by != lineage.agent_id:
        return f"blocker todo {blocker_id} is not held by {lineage.agent_id}"
    return None


def guard_for(
    gs: GoalState, gap: Gap, agent_id: str, policy: ExplorePolicy, turn_instance_id: str | None = None
) -> CapabilityGuard:
    """The guard of the capability obligation ``agent_id`` owes for ``gap`` now. Its id is the common
    replan owner's (model/frontier.py), over the agent and a trigger naming the gap, its current
    input observations, the coverage scope and the policy revision: the same facts give the same id on
    every clone, and any change to them gives another; a retired id never comes back, even when its
    facts do (``_unretired``)."""
    assert policy.scope_id is not None  # an active policy names its scope
    current = [(n, f) for n, f in gap.input_observations if f is not None]
    assert len(current) == 2  # a pending gap's inputs are current observations
    facts = (
        gap.gap_id,
        *(f"{node}={fingerprint}" for node, fingerprint in current),
        f"scope={policy.scope_id}",
        f"policy={policy.revision}",
    )
    return CapabilityGuard(
        obligation_id=_unretired(gs, agent_id, facts),
        agent_id=agent_id,
        gap_id=gap.gap_id,
        input_observations=[InputObservation(node_id=n, fingerprint=f) for n, f in current],
        coverage_scope_id=policy.scope_id,
        policy_revision=policy.revision,
        turn_instance_id=turn_instance_id,
    )


def gate_on(gs: GoalState) -> bool:
    """The live gate raises and admits obligations: its policy is active on an active goal."""
    goal = gs.goal
    return goal is not None and goal.status == "active" and explore_policy(goal).active


def owed(gs: GoalState, agent_id: str, live: list[LiveGap] | None = None) -> CapabilityGuard | None:
    """The capability obligation ``agent_id`` owes now: the first pending gap (by id), with the policy
    active; None otherwise. Whether it is raised at all (after gates, runnable work and handoffs) is
    ``quota should-run``'s to say."""
    if not gate_on(gs):
        return None
    policy = explore_policy(gs.goal)
    found = live if live is not None else live_gaps(gs, policy)
    first = next((g for g in found if g.state == "pending"), None)
    return guard_for(gs, first.gap, agent_id, policy) if first is not None else None


def pending_obligations(gs: GoalState, agent_id: str) -> dict[str, LiveGap]:
    """Obligation id -> pending gap, for every pending gap ``agent_id`` could be admitted for now (the
    graph is not read with the gate off)."""
    if not gate_on(gs):
        return {}
    policy = explore_policy(gs.goal)
    live = live_gaps(gs, policy)
    return {guard_for(gs, g.gap, agent_id, policy).obligation_id: g for g in live if g.state == "pending"}


def invalidation(gs: GoalState, guard: CapabilityGuard, live: list[LiveGap] | None = None) -> list[str]:
    """What current source facts contradict in ``guard`` (empty: it still holds), one fact each."""
    policy = explore_policy(gs.goal)
    found: list[str] = []
    if not policy.active:
        found.append("the goal's live research policy is off (configure-goal)")
    elif policy.revision != guard.policy_revision:
        found.append(
            f"the goal's explore policy changed (revision {policy.revision}, admitted {guard.policy_revision})"
        )
    gap = next((g for g in (live if live is not None else live_gaps(gs, policy)) if g.gap.gap_id == guard.gap_id), None)
    if gap is None:
        found.append(f"gap {guard.gap_id} is no longer declared")
        return found
    if gap.state == "ineligible":
        found.append(f"gap {guard.gap_id} is ineligible: {gap.detail}")
    admitted = {i.node_id: i.fingerprint for i in guard.input_observations}
    for node, fingerprint in gap.gap.input_observations:
        if admitted.get(node) != fingerprint:
            found.append(f"input {node} is now observation {fingerprint}, admitted as {admitted.get(node)}")
    return found


def _unretired(gs: GoalState, agent_id: str, facts: tuple[str, ...]) -> str:
    """The obligation id over ``facts``; when exactly these facts were retired before, the next epoch's
    (a retired id never comes back, and a duty still current keeps its id)."""
    epoch = 0
    while True:
        trigger = Trigger(CAPABILITY_TRIGGER, (*facts, f"epoch={epoch}") if epoch else facts)
        found = obligation_id(agent_id, None, (trigger,))
        if found not in gs.retirements:
            return found
        epoch += 1


def duty_todos(gs: GoalState, obligation: str, *, done: bool = False) -> list[TodoItem]:
    """The todos admitted for capability obligation ``obligation``, by id: the live ones (``done``:
    the closed ones too)."""
    ids = sorted(gs.duty_todo_ids.get(obligation, ()))
    return [gs.todos[t] for t in ids if done or t in gs.live]


def retirement_contract(gs: GoalState, guard: CapabilityGuard) -> str:
    """The exact write-back that retires ``guard``'s duty once its source facts changed: pause its
    runnable todos first (they hold the duty), then a blocked write-back with outcome_gap."""
    todos = duty_todos(gs, guard.obligation_id)
    runnable = [t.todo_id for t in todos if gs.is_runnable(t)]
    work = todos[0].todo_id if todos else "<todo-id>"
    pause = "".join(
        f"loopx todo update -g {gs.goal_id} -t {t} --status blocked --reason '<why>' -a {guard.agent_id}; "
        for t in runnable
    )
    return (
        f"{pause}loopx refresh-state -g {gs.goal_id} -a {guard.agent_id} --replan-obligation-id "
        f"{guard.obligation_id} --turn-instance-id {guard.turn_instance_id or '<turn-instance-id>'} "
        "--classification blocked --delivery-outcome outcome_gap --progress-result-class blocked "
        f"--progress-work-item-id {work} --progress-blocker-id <blocker-id> --progress-evidence-id <evidence-id>"
    )

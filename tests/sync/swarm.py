"""Many agents on one server (issue 16, item 2): N clones, each driven by its own process, take seeded
random steps (adds, claims with --sync, completions, notes, syncs) while racing for one shared pool
of todos through a real ``git daemon`` on 127.0.0.1. Every step's outcome is logged; ``check``
then states what must hold afterwards. Used by tests/sync/test_many_agents.py (one seeded run) and
by ``python3 benchmarks/agents.py`` (longer runs, with the figures)."""

from __future__ import annotations

import multiprocessing
import random
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import loopx_git
from loopx_git.errors import ConflictError, LoopxError
from loopx_git.sync import SYNC_ATTEMPTS
from tests.conftest import git
from tests.sync.helpers import GOAL, clone, event_ids, tree_of

STATE = "refs/heads/loopx/state"
KINDS = ("add", "claim", "complete", "note", "sync")
WEIGHTS = (25, 15, 15, 30, 15)
"""Notes and adds are local commits; claims and syncs go to the server (where the contention is)."""


@dataclass
class Step:
    kind: str
    outcome: str
    """``ok``, ``unchanged``, or the refusal's code."""
    seconds: float
    events: list[str] = field(default_factory=list)
    """The events of an acknowledged write."""
    todo: str | None = None
    attempts: int = 1
    """Sync attempts (a sync or claim retried after losing the push race takes more than one)."""


@dataclass
class AgentLog:
    agent: str
    steps: list[Step] = field(default_factory=list)
    crashed: str | None = None


def agent_names(n: int) -> list[str]:
    return [f"agent-{i:02d}" for i in range(n)]


def pool_ids(n: int) -> list[str]:
    return [f"pool-{i:02d}" for i in range(n)]


def seed_clones(folder: Path, url: str, agents: int, pool: int) -> list[Path]:
    """One clone creates the goal, registers the agents and adds the shared pool; the others pull it."""
    first = clone(folder / "clone-00", url)
    with loopx_git.open(first) as repo:
        repo.goal_create(GOAL, "Many agents, one pool")
        for agent in agent_names(agents):
            repo.agent_register(GOAL, agent)
        for todo in pool_ids(pool):
            repo.todo_add(GOAL, f"shared work {todo}", todo_id=todo)
        repo.sync()
    paths = [first]
    for i in range(1, agents):
        path = clone(folder / f"clone-{i:02d}", url, connect=False)
        with loopx_git.open(path) as repo:
            repo.pull()
        paths.append(path)
    return paths


def _step(repo, rng: random.Random, agent: str, n: int) -> Step:
    kind = rng.choices(KINDS, WEIGHTS)[0]
    todos = repo.todos(GOAL)
    mine = [t for t in todos if t.status == "open" and t.claimed_by == agent]
    free = [t for t in todos if t.status == "open" and t.claimed_by is None and t.todo_id.startswith("pool-")]
    if kind == "complete" and not mine:
        kind = "note"
    if kind == "claim" and not free:
        kind = "note"
    started = time.perf_counter()
    todo: str | None = None
    attempts = 1
    try:
        if kind == "add":
            result = repo.todo_add(GOAL, f"{agent} found more work ({n})", todo_id=f"{agent}-{n}", actor=agent)
        elif kind == "claim":
            todo = rng.choice(free).todo_id  # what this clone last saw as free: the race is real
            result = repo.todo_claim_synced(GOAL, todo, agent)
        elif kind == "complete":
            todo = rng.choice(mine).todo_id
            result = repo.todo_complete(GOAL, todo, actor=agent, evidence=[f"tests/test_{agent}_{n}.py"])
        elif kind == "note":
            result = repo.event_append(GOAL, "note", summary=f"{agent} note {n}", agent_id=agent)
        else:
            synced = repo.sync()
            return Step(kind, "ok", time.perf_counter() - started, attempts=synced.attempts)
    except (LoopxError, ConflictError) as exc:
        tries = SYNC_ATTEMPTS if exc.code == "push-lost" else 1  # it gave up after every attempt
        return Step(kind, exc.code, time.perf_counter() - started, todo=todo, attempts=tries)
    outcome = "ok" if result.changed else "unchanged"
    return Step(kind, outcome, time.perf_counter() - started, list(result.event_ids), todo, attempts)


def run_agent(path: str, agent: str, seed: int, steps: int, start, results) -> None:
    """One agent's process: ``steps`` seeded random steps on its own clone, the log sent back."""
    log = AgentLog(agent)
    rng = random.Random(f"{seed}/{agent}")
    try:
        repo = loopx_git.open(path)
        start.wait()
        for n in range(steps):
            log.steps.append(_step(repo, rng, agent, n))
        repo.close()
    except Exception as exc:  # reported, not left to hang the run
        log.crashed = f"{type(exc).__name__}: {exc}"
    results.put(log)


def run_swarm(paths: list[Path], seed: int, steps: int, timeout: float = 1200) -> list[AgentLog]:
    """Every clone's agent at once, as processes started together; their logs, in agent order."""
    ctx = multiprocessing.get_context("spawn")
    names = agent_names(len(paths))
    start, results = ctx.Barrier(len(paths)), ctx.Queue()
    procs = [ctx.Process(target=run_agent, args=(str(p), a, seed, steps, start, results)) for p, a in zip(paths, names)]
    for proc in procs:
        proc.start()
    logs = {log.agent: log for log in (results.get(timeout=timeout) for _ in procs)}
    for proc in procs:
        proc.join(timeout=60)
    return [logs[a] for a in names]


def settle(paths: list[Path]) -> None:
    """Every clone syncs in turn, twice: the last clone's merge reaches the first."""
    for _ in range(2):
        for path in paths:
            with loopx_git.open(path) as repo:
                repo.sync()


@dataclass
class Figures:
    agents: int
    steps: int
    wall: float
    by_kind: dict[str, Counter]
    step_ms: dict[str, tuple[float, float]]
    """Median and 95th percentile of each kind of step, in milliseconds."""
    retries: int
    """Extra sync attempts: pushes that lost to another clone and were merged and tried again."""
    claims_won: int
    claims_refused: int


def figures(logs: list[AgentLog], wall: float) -> Figures:
    by_kind: dict[str, Counter] = {k: Counter() for k in KINDS}
    times: dict[str, list[float]] = {k: [] for k in KINDS}
    for log in logs:
        for s in log.steps:
            by_kind[s.kind][s.outcome] += 1
            times[s.kind].append(s.seconds * 1000)
    step_ms = {
        k: (statistics.median(v), statistics.quantiles(v, n=20)[-1] if len(v) > 1 else v[0])
        for k, v in times.items()
        if v
    }
    steps = [s for log in logs for s in log.steps]
    return Figures(
        agents=len(logs),
        steps=len(steps),
        wall=wall,
        by_kind=by_kind,
        step_ms=step_ms,
        retries=sum(s.attempts - 1 for s in steps),
        claims_won=by_kind["claim"]["ok"],
        claims_refused=sum(n for o, n in by_kind["claim"].items() if o not in ("ok", "unchanged")),
    )


def check(
    server: Path, paths: list[Path], seeded: set[str], logs: list[AgentLog], *, verify_all: bool = False
) -> list[str]:
    """What must hold after the run and a settling sync, as a list of failures (empty: all held).

    Every clone must end on the server's very commit, so ``loopx verify`` (a function of that
    commit's history alone) runs on the server and the first clone; ``verify_all`` runs it in every
    clone as well, the same answer at the cost of a full walk per clone."""
    failures = [f"{log.agent} crashed: {log.crashed}" for log in logs if log.crashed]
    tips = {p.name: git(p, "rev-parse", STATE).strip() for p in [server, *paths]}
    if len(set(tips.values())) != 1:
        failures.append(f"the clones and the server are on {len(set(tips.values()))} different commits")
    trees = {tree_of(p) for p in paths}
    if len(trees) != 1 or tree_of(server) not in trees:
        failures.append(f"the clones and the server hold {len(trees | {tree_of(server)})} different trees")
    final = event_ids(paths[0])
    if len(final) != len(set(final)):
        failures.append(f"duplicated events: {[e for e, n in Counter(final).items() if n > 1]}")
    acked = [e for log in logs for s in log.steps for e in s.events]
    if len(acked) != len(set(acked)):
        failures.append("one event acknowledged twice")
    missing = set(acked) - set(final)
    if missing:
        failures.append(f"{len(missing)} acknowledged events are missing: {sorted(missing)[:5]}")
    unacknowledged = set(final) - set(acked) - seeded
    if unacknowledged:
        failures.append(f"{len(unacknowledged)} events nobody was told about: {sorted(unacknowledged)[:5]}")
    won = {(s.todo, log.agent) for log in logs for s in log.steps if s.kind == "claim" and s.outcome == "ok"}
    lost = [
        (s.todo, log.agent, s.outcome) for log in logs for s in log.steps if s.kind == "claim" and s.outcome != "ok"
    ]
    for path in [server, *paths]:
        with loopx_git.open(path) as repo:
            if verify_all or path in (server, paths[0]):
                report = repo.verify()
                if not report.ok:
                    failures.append(f"{path.name}: verify found {report.problems[:3]}")
            claimers: dict[str, set[str]] = {}
            for event in repo.events(GOAL, kind="todo_claim"):
                claimers.setdefault(event.todo_id, set()).add(event.agent_id)
            for todo, holders in claimers.items():
                if len(holders) > 1:
                    failures.append(f"{path.name}: {todo} was claimed by {sorted(holders)}")
            for todo_id, agent in won:
                if claimers.get(todo_id) != {agent}:
                    failures.append(f"{path.name}: {agent}'s acknowledged claim of {todo_id} is not the only one")
    holder = {todo: agent for todo, agent in won}
    for todo, agent, outcome in lost:
        if outcome == "unchanged":
            failures.append(f"{agent} claimed {todo} again: a claim step only takes free todos")
        elif outcome == "claim-held" and holder.get(todo) in (None, agent):
            failures.append(f"{agent} was told {todo} is held, but nobody else's claim of it was acknowledged")
    return failures


def seeded_events(path: Path) -> set[str]:
    return set(event_ids(path))

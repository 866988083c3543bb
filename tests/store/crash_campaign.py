"""The crash campaign, shared by tests/store/test_crash.py (a short seeded run) and
benchmarks/crash.py (at least 1000 kills, with figures): writers killed with SIGKILL at random
points, and deliberately between the object writes and the ref update, during ``loopx gc`` and
during ``loopx sync`` to a bare remote on disk. After every kill the repository is checked as a
user would rely on it: ``git fsck --strict`` clean (dangling objects are expected: a killed write's
objects that no ref reaches), ``loopx verify`` clean, every acknowledged write present exactly
once, and the next write succeeding (no lock left blocking it).

Acknowledged means the writer printed ``ack ...`` after the write returned (the API call returned,
or the ``loopx`` process exited 0); a write killed after landing but before its line was printed
may be present without being acknowledged, never the other way round.

The window between the object writes and the ref update is hit without a seam in loopx: the
state ref's reflog is swapped for a FIFO, so the writer blocks opening it, which libgit2 (and git)
do after taking the ref's lock file and writing the commit, and before renaming the lock into
place. The driver waits until the lock file is there, kills, and puts the reflog back.

Run a writer by hand: ``python tests/store/crash_campaign.py writer REPO api|cli TAG``.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

GOAL = "crash"
AGENT = "w"
STATE_REF = "refs/heads/loopx/state"
ROOT = Path(__file__).resolve().parents[2]
KINDS = ("api", "cli", "ref-window", "gc", "sync")


# -- the writer: a separate process, killed by the driver -------------------------------------------


def writer(repo: str, mode: str, tag: str, limit: int = 10_000) -> None:
    """Write until killed (or ``limit`` writes), printing ``ack <op> <id>`` after each write returns.
    The ops cycle: a todo added, claimed, completed, a note appended, an agent registered."""
    if mode == "api":  # the models imported before "ready": the kills land in writes, not in imports
        import loopx_git.api
        import loopx_git.model.state
    print("ready", flush=True)
    handle = None
    todos: list[str] = []
    claimed: list[str] = []
    for n in range(limit):
        op = ("todo", "claim", "done", "event", "agent")[n % 5]
        if (op == "claim" and not todos) or (op == "done" and not claimed):
            op = "event"
        name = f"{tag}-{n}"
        if mode == "api":
            import loopx_git

            if handle is None:
                handle = loopx_git.open(repo)
            ident = _api_write(handle, op, name, todos, claimed)
            if n % 25 == 24:  # an agent loop's next turn: caches saved and packing when due, in close()
                handle.close()
                handle = None
        else:
            ident = _cli_write(repo, op, name, todos, claimed)
        if op == "todo":
            todos.append(ident)
        elif op == "claim":
            claimed.append(ident)
        print(f"ack {op} {ident} {name}", flush=True)
    if handle is not None:
        handle.close()


def _api_write(handle, op: str, name: str, todos: list[str], claimed: list[str]) -> str:
    if op == "todo":
        return handle.todo_add(GOAL, name, actor=AGENT).record.todo_id
    if op == "claim":
        todo = todos.pop(0)
        handle.todo_claim(GOAL, todo, AGENT)
        return todo
    if op == "done":
        todo = claimed.pop(0)
        handle.todo_complete(GOAL, todo, actor=AGENT, no_follow_up=True, reason="crash campaign")
        return todo
    if op == "event":
        return handle.event_append(GOAL, "note", agent_id=AGENT, summary=name).event_ids[0]
    agent = "a-" + name.replace("-", ".")
    handle.agent_register(GOAL, agent)
    return agent


def _cli_write(repo: str, op: str, name: str, todos: list[str], claimed: list[str]) -> str:
    base = ["--goal-id", GOAL]
    if op == "todo":
        args = ["todo", "add", *base, "--text", name]
    elif op == "claim":
        args = ["todo", "claim", *base, "--todo-id", todos.pop(0), "--agent-id", AGENT]
    elif op == "done":
        todo = claimed.pop(0)
        args = ["todo", "complete", *base, "--todo-id", todo, "--agent-id", AGENT]
        args += ["--no-follow-up", "--reason", "crash campaign"]
    elif op == "event":
        args = ["event", "append", *base, "--kind", "note", "--agent-id", AGENT, "--summary", name]
    else:
        args = ["agent", "register", *base, "--agent-id", "a-" + name.replace("-", ".")]
    done = subprocess.run(loopx_argv(repo, "--format", "json", *args), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    out = json.loads(done.stdout)
    if op in ("claim", "done"):
        return args[args.index("--todo-id") + 1]
    if op == "todo":
        return out["record"]["todo_id"]
    return out["event_ids"][0] if op == "event" else args[-1]


# -- the driver ----------------------------------------------------------------------------------


def loopx_argv(repo: str | Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "loopx_git", "--repo", str(repo), *args]


def child_env() -> dict[str, str]:
    """The driver's environment (a test's hermetic git), with this checkout's loopx first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def git(path: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True, check=check)


def make_repo(path: Path) -> tuple[Path, Path]:
    """A connected project with goal ``crash``, agent ``w`` and ``origin``, a bare remote on disk."""
    import loopx_git

    remote = path.with_name(path.name + "-remote.git")
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, capture_output=True)
    path.mkdir(parents=True)
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.name", "Crash Test"),
        ("config", "user.email", "crash@example.invalid"),
        ("commit", "-q", "--allow-empty", "-m", "init"),
        ("remote", "add", "origin", str(remote)),
    ):
        git(path, *args)
    with loopx_git.open(path) as repo:
        repo.connect()
        repo.goal_create(GOAL, "survive kill -9")
        repo.agent_register(GOAL, AGENT)
    return path, remote


@dataclass
class Acked:
    """What the writers acknowledged: the ids a check looks for, by op."""

    todos: set[str] = field(default_factory=set)
    claimed: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)
    events: dict[str, str] = field(default_factory=dict)  # event id -> its unique summary
    agents: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)

    def add(self, line: str) -> None:
        _, op, ident, name = line.split()
        {"todo": self.todos, "claim": self.claimed, "done": self.done, "agent": self.agents}.get(op, set()).add(ident)
        if op == "event":
            self.events[ident] = name
        self.names.add(name)

    def count(self) -> int:
        return len(self.todos) + len(self.claimed) + len(self.done) + len(self.events) + len(self.agents)


@dataclass
class Kill:
    kind: str
    how: str  # "group" (the process and its git children) or "process" (git children finish)
    phase: str  # what was running: "python", a child's command name, "ref-lock held", "finished"
    acks: int
    leftovers: dict[str, int]
    healed: dict[str, int]
    next_write_seconds: float
    problems: list[str]


@dataclass
class Campaign:
    kills: list[Kill] = field(default_factory=list)
    acked: int = 0
    checked: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    repos: int = 0

    @property
    def problems(self) -> list[str]:
        return [f"kill {n} ({k.kind}): {p}" for n, k in enumerate(self.kills) for p in k.problems]


def run(
    workdir: Path,
    kills: int,
    *,
    seed: int = 0,
    weights: dict[str, float] | None = None,
    per_repo: int = 200,
    cli_verify_every: int = 1,
    window: float = 3.0,
    progress=None,
) -> Campaign:
    """``kills`` kills of seeded random kinds; a fresh repository every ``per_repo`` kills keeps the
    checks (a whole-branch verify, a fold) from growing with the campaign. ``loopx verify`` runs as
    a process every ``cli_verify_every`` kills, through the API (the same check) otherwise. A writer
    is killed within ``window`` seconds of being ready."""
    rng = random.Random(seed)
    weights = weights or {"api": 0.4, "cli": 0.2, "ref-window": 0.1, "gc": 0.15, "sync": 0.15}
    kinds = [rng.choices(list(weights), list(weights.values()))[0] for _ in range(kills)]
    # every kind at least once in a short run, whatever the draw
    for n, kind in enumerate(k for k in KINDS if weights.get(k) and k not in kinds):
        kinds[n * 2 % kills] = kind
    campaign = Campaign()
    began, cpu = time.monotonic(), _cpu()
    acked, path, remote, timings = Acked(), Path(), Path(), {"gc": 1.5, "sync": 2.0}
    for n, kind in enumerate(kinds):
        if n % per_repo == 0:
            campaign.repos += 1
            path, remote = make_repo(workdir / f"repo{campaign.repos}")
            acked = Acked()
        before, there, remote_there = acked.count(), leftovers(path), leftovers(remote)
        kill = _one_kill(kind, rng, path, remote, acked, f"s{seed}k{n}", timings, window)
        kill.acks = acked.count() - before
        left = {p: what for p, what in leftovers(path).items() if p not in there}
        kill.leftovers = _by_kind(left)
        kill.problems += check(path, acked, verify_cli=n % cli_verify_every == 0)
        campaign.checked += acked.count()
        kill.next_write_seconds = _next_write(path, acked, f"s{seed}k{n}-next", kill.problems)
        kill.healed = _by_kind({p: what for p, what in leftovers(path).items() if p in left})
        if kind == "gc":
            _next_gc(path, kill.problems)
        if kind == "sync":
            remote_left = {p: f"remote: {what}" for p, what in leftovers(remote).items() if p not in remote_there}
            kill.leftovers.update(_by_kind(remote_left))
            _after_sync(path, remote, kill.problems)
            kill.healed.update(_by_kind({p: what for p, what in remote_left.items() if p in leftovers(remote)}))
        campaign.kills.append(kill)
        if progress is not None:
            progress(n + 1, kill)
    campaign.acked = sum(k.acks for k in campaign.kills)
    campaign.seconds, campaign.cpu_seconds = time.monotonic() - began, _cpu() - cpu
    return campaign


def _one_kill(
    kind: str, rng: random.Random, path: Path, remote: Path, acked: Acked, tag: str, timings, window: float
) -> Kill:
    how = "group"
    if kind in ("api", "cli"):
        proc = _start([sys.executable, __file__, "writer", str(path), kind, tag])
        _ready(proc)
        time.sleep(rng.uniform(0.0, window))
        phase = _phase(proc.pid)
    elif kind == "ref-window":
        proc = _start([sys.executable, __file__, "writer", str(path), rng.choice(["api", "cli"]), tag])
        _ready(proc)
        phase = _kill_in_ref_window(proc, path, rng.uniform(0.0, window / 3))
    else:
        if kind == "sync":  # something to push: writes of the driver's own, acknowledged when they return
            _driver_writes(path, acked, f"{tag}-pre", rng.randint(1, 4))
        args = ("gc",) if kind == "gc" else ("sync",)
        proc = _start(loopx_argv(path, *args))
        time.sleep(rng.uniform(0.0, 1.3 * timings[kind]))
        phase = _phase(proc.pid)
        how = rng.choice(["group", "process"])
    _kill(proc, how)
    out = proc.stdout.read() if proc.stdout else ""
    proc.wait()
    _wait_group_gone(proc.pid)
    if phase == "finished" and kind in timings:  # it ran to the end: kill sooner next time
        timings[kind] *= 0.9
    elif kind in timings:
        timings[kind] *= 1.1
    for line in out.splitlines():
        if line.startswith("ack "):
            acked.add(line)
    return Kill(kind, how, phase, 0, {}, {}, 0.0, [])


def _start(argv: list[str]) -> subprocess.Popen[str]:
    # a session of its own: the kill can take the writer's git children with it
    return subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=child_env(), start_new_session=True
    )


def _ready(proc: subprocess.Popen[str]) -> None:
    if proc.stdout is not None:
        proc.stdout.readline()


def _phase(pid: int) -> str:
    """What the process is doing at the kill: still Python, or waiting on a child (git)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return "finished"
    if status.rsplit(")", 1)[1].split()[0] == "Z":
        return "finished"
    names = []
    for child in children:
        with contextlib.suppress(OSError):  # ended meanwhile
            names.append(Path(f"/proc/{child}/comm").read_text().strip())
    return "+".join(sorted(set(names))) or "python"


def _kill_in_ref_window(proc: subprocess.Popen[str], path: Path, after: float) -> str:
    """Swap the state ref's reflog for a FIFO: the next ref update blocks opening it, holding the
    ref's lock file with its commit written; kill it there."""
    reflog = path / ".git" / "logs" / STATE_REF
    lock = path / ".git" / f"{STATE_REF}.lock"
    time.sleep(after)  # a few writes acknowledged first, some of the time
    aside = reflog.with_name("state.crash-aside")
    os.replace(reflog, aside)
    os.mkfifo(reflog)
    try:
        deadline = time.monotonic() + 20
        while proc.poll() is None and time.monotonic() < deadline:
            # held: still there a moment later (the writer blocked opening the FIFO); seen once on a
            # loaded machine, a lock that came and went before the kill left none behind
            if lock.exists():
                time.sleep(0.05)
                if lock.exists():
                    break
            time.sleep(0.005)
        phase = "ref-lock held" if lock.exists() else "missed"
        _kill(proc, "group")
        proc.wait()
    finally:
        reflog.unlink()
        os.replace(aside, reflog)
    return phase


def _kill(proc: subprocess.Popen[str], how: str) -> None:
    try:
        if how == "group":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _wait_group_gone(pgid: int, timeout: float = 120) -> None:
    """A killed process's git children (killed alone, the process leaves them running) end first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)


def _driver_writes(path: Path, acked: Acked, tag: str, count: int) -> None:
    import loopx_git

    with loopx_git.open(path) as repo:
        for i in range(count):
            name = f"{tag}-{i}"
            acked.add(f"ack event {repo.event_append(GOAL, 'note', agent_id=AGENT, summary=name).event_ids[0]} {name}")


def _next_write(path: Path, acked: Acked, tag: str, problems: list[str]) -> float:
    from loopx_git.errors import LoopxError

    began = time.monotonic()
    try:
        _driver_writes(path, acked, tag, 1)
    except LoopxError as exc:
        problems.append(f"the next write failed: error[{exc.code}]: {exc.message}")
    return time.monotonic() - began


def _next_gc(path: Path, problems: list[str]) -> None:
    import loopx_git
    from loopx_git.errors import LoopxError

    try:
        with loopx_git.open(path) as repo:
            repo.gc()
    except LoopxError as exc:
        problems.append(f"the next gc failed: error[{exc.code}]: {exc.message}")


def _after_sync(path: Path, remote: Path, problems: list[str]) -> None:
    """The next sync succeeds, the remote then holds the local tip, and is itself intact."""
    import loopx_git
    from loopx_git.errors import LoopxError

    try:
        with loopx_git.open(path) as repo:
            repo.sync()
    except LoopxError as exc:
        problems.append(f"the next sync failed: error[{exc.code}]: {exc.message}")
    local = git(path, "rev-parse", STATE_REF).stdout.strip()
    there = git(remote, "rev-parse", STATE_REF, check=False).stdout.strip()
    if there != local:
        problems.append(f"after the next sync the remote is at {there[:12]}, not {local[:12]}")
    _must(problems, "git fsck of the remote", git(remote, "fsck", "--strict", "--no-dangling", check=False))
    # a lock would refuse every later push; a killed receive-pack's quarantine (objects/tmp_objdir-*)
    # is only garbage, counted as a leftover, which git's prune removes after its grace period
    for name, what in leftovers(remote).items():
        if what.startswith("lock file"):
            problems.append(f"the remote keeps {name} after a sync")


def _quiet() -> dict:
    return {"capture_output": True, "text": True, "env": child_env()}


def _must(problems: list[str], what: str, done: subprocess.CompletedProcess[str]) -> None:
    if done.returncode != 0 or "Traceback" in done.stderr:
        problems.append(f"{what} exited {done.returncode}: {done.stderr.strip()[-400:]}")


def check(path: Path, acked: Acked, *, verify_cli: bool = True) -> list[str]:
    """What must hold after any kill, before anything else touches the repository."""
    import loopx_git

    problems: list[str] = []
    _must(problems, "git fsck --strict", git(path, "fsck", "--strict", "--no-dangling", "--no-progress", check=False))
    if verify_cli:
        _must(problems, "loopx verify", subprocess.run(loopx_argv(path, "verify"), **_quiet()))
    with loopx_git.open(path) as repo:
        if not verify_cli:
            report = repo.verify()
            if not report.ok:
                problems.append(f"verify: {report.problems[:3]}")
        todos = {t.todo_id: t for t in repo.todos(GOAL, include_closed=True)}
        events = repo.events(GOAL, kind="note")
        agents = {a.agent_id for a in repo.agents(GOAL)}
    problems += [f"acknowledged todo {t} is missing" for t in acked.todos - todos.keys()]
    for todo in acked.claimed:
        if todo in todos and todos[todo].claimed_by != AGENT and todos[todo].status != "done":
            problems.append(f"acknowledged claim of {todo} is missing")
    problems += [
        f"acknowledged completion of {t} is missing" for t in acked.done if t in todos and todos[t].status != "done"
    ]
    have = {e.event_id for e in events}
    problems += [f"acknowledged event {e} is missing" for e in acked.events.keys() - have]
    problems += [f"acknowledged agent {a} is missing" for a in acked.agents - agents]
    twice = [s for s, n in collections.Counter(e.summary for e in events).items() if n > 1]
    twice += [s for s, n in collections.Counter(t.text for t in todos.values()).items() if n > 1]
    problems += [f"{s} was written twice" for s in twice]
    return problems


def leftovers(path: Path) -> dict[str, str]:
    """Files a killed process can leave under the git dir (path -> what it is)."""
    git_dir = path / ".git" if (path / ".git").is_dir() else path
    found: dict[str, str] = {}
    for root, _, files in os.walk(git_dir):
        rel = os.path.relpath(root, git_dir)
        for name in files:
            what = None
            if rel.startswith("loopx"):
                if name.startswith("."):
                    what = "cache temporary file (.git/loopx/.*)"
            elif name.endswith(".lock"):
                what = f"lock file {os.path.join(rel, name)}"
            elif rel.startswith("objects") and ("tmp_" in rel or "tmp_" in name or name.startswith(".tmp-")):
                where = "objects/tmp_objdir-incoming-*/" if "tmp_objdir" in rel else rel + "/"
                prefixes = ("tmp_object", "tmp_pack", "tmp_idx", ".tmp-")
                stem = next((t for t in prefixes if name.startswith(t)), "")  # a quarantined object: by folder
                what = f"temporary object or pack file ({where}{stem}*)"
            elif name == "gc.pid":
                what = "gc.pid"
            if what is not None:
                found[os.path.join(rel, name)] = what
    return found


def _by_kind(found: dict[str, str]) -> dict[str, int]:
    return dict(collections.Counter(found.values()))


def _cpu() -> float:
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


if __name__ == "__main__" and sys.argv[1:2] == ["writer"]:
    writer(*sys.argv[2:5])

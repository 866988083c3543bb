"""Scale: one goal from 1k to 1M events (issue 16, item 6), as whole processes against plain git.

    python benchmarks/scale.py [--sizes 1000,10000,100000,1000000] [--samples N] [--batch 5000]
                               [--work DIR] [--build-in /dev/shm] [--keep] [--build-only]
                               [--append-only | --pull-only]

For each size, one goal of N events (one todo for every ten events, half of them done, the rest
notes; 100 events an hour of past time) is built through loopx's own write path
(``StateRepo.apply``: the same event files, paths, derived documents, commit messages and trailers
as any write), ``--batch`` events to a commit, then packed once with ``loopx gc`` (see ``build``
for the two shortcuts it takes; a build stopped part-way is taken up where it stopped). Then, per
size:

- append: one more write as a whole ``python -m loopx_git`` process (``event append`` of a note,
  ``todo add``) and through a long-lived API handle (``event_append``, ``todo_add``), interleaved
  over the sizes, medians; the ratio is to the smallest size in the same run (flat = 1);
- warm ``status`` (the tip unchanged, the cache present) and cold ``status`` (everything under
  ``.git/loopx/`` but the verified mark removed: every event read and folded), whole processes;
- ``loopx verify`` against ``git fsck`` of the same repository;
- ``loopx gc`` against ``git gc`` of a bare copy holding the same objects (the state branch alone);
- clone: ``loopx connect`` in an empty clone whose origin is the built repository (fetch of the
  state branch, then every commit and record checked) against ``git fetch`` of the same branch into
  an empty repository;
- fetch: 100 new events in 10 commits on the origin, then ``loopx pull`` (fast-forward, checks what
  arrives) against ``git fetch`` of the same new objects in a plain clone (new objects every sample);
- the cache under ``.git/loopx/`` against the state branch's pack.

``--append-only`` measures the appends alone. ``--pull-only`` measures the fetch alone, into a copy
of each built repository (its verified mark and fold cache with it, as a clone that has been at
work has them) instead of a clone ``loopx connect`` made, which at 1M events takes ten minutes.

Every figure is a median of interleaved samples: wall time, CPU time (user + system of the child
process, from ``os.wait4``) and, for the big operations, the child's peak memory (``ru_maxrss``).
Repositories go under ``--work`` (default: a new folder in the system's temporary folder) and are
removed at the end unless ``--keep``; with ``--keep`` a later run reuses the built histories.
Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

GOAL = "scale"
STATE = "refs/heads/loopx/state"
START = datetime(2024, 1, 1, tzinfo=timezone.utc)
PER_HOUR = 100
TODO_EVERY = 10
PY = sys.executable


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def init(path: Path, *, bare: bool = False) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git("init", "-q", *(["--bare"] if bare else []), str(path))
    git("-C", str(path), "config", "user.name", "scale")
    git("-C", str(path), "config", "user.email", "scale@example.invalid")
    return path


# -- building ----------------------------------------------------------------------------------


def build(path: Path, events: int, batch: int, build_in: Path | None = None) -> dict:
    """One goal of ``events`` events (a todo every TODO_EVERY, notes between) through
    ``StateRepo.apply``, ``batch`` to a commit; packed once at the end with ``loopx gc``. Built in
    ``build_in`` (a faster file system: loose objects are written one file each) when given, then
    moved to ``path``.

    Two shortcuts that leave the same bytes on the branch: the public-safety gate of each write is
    skipped (the seeded texts are fixed and public-safe; ``loopx verify``, measured below, scans
    every record again), and full gcs run every 32 packs instead of 8."""
    import loopx_git
    from loopx_git.domain import guard
    from loopx_git.domain.write import EventMaker, Write, changes
    from loopx_git.model.event import Note
    from loopx_git.model.ids import format_utc
    from loopx_git.model.todo import TodoAdd, TodoItem
    from loopx_git.store import hygiene

    final, path = path, (build_in / path.name if build_in else path)
    resume = (path / ".git").is_dir() and not (path / ".git" / "scale-built.json").exists()
    if not resume:  # a build stopped part-way (each of its commits complete) is taken up where it stopped
        shutil.rmtree(final, ignore_errors=True)
        init(path)
    guard.guard = lambda write, policy, redact=False: guard.Guarded(write)
    # packing during the build: loopx's own (a repack every 2000 loose objects), but a full gc only
    # every 32 packs instead of 8, so that a 1M build does not spend its time re-packing; one
    # `loopx gc` at the end leaves one pack whatever happened before
    hygiene.MAX_PACKS = 32
    t0 = time.perf_counter()
    repo = loopx_git.open(path)
    if resume and repo.tip is not None and GOAL in repo.state().goals:
        written = repo.state().goals[GOAL].event_count
        todos = len(repo.state().goals[GOAL].todos)
        commits = int(git("-C", str(path), "rev-list", "--count", STATE))
        print(f"#   {path.name}: taken up at {written} events", file=sys.stderr, flush=True)
        taken_up = written
    else:
        init(path)
        repo = loopx_git.open(path)
        repo.connect()
        repo.goal_create(GOAL, "scale benchmark goal")
        written = 1  # goal_create is the first event
        todos = 0
        commits = 2
        taken_up = 0
    while written < events:
        size = min(batch, events - written)

        def make(state, size=size, first=written):
            nonlocal todos
            gs = state.goals[GOAL]
            out = []
            maker = None
            for n in range(first, first + size):
                if maker is None or n % PER_HOUR == 0:
                    now = format_utc(START + timedelta(hours=n // PER_HOUR))
                    maker = EventMaker(gs, now)
                    maker._lamport = gs.lamport + len(out)
                if n % TODO_EVERY == 0:
                    todo = TodoItem(
                        todo_id=f"todo-{todos}",
                        text=f"scale todo {todos}",
                        created_at=now,
                        updated_at=now,
                        priority=f"P{todos % 5}",
                        status="done" if todos % 2 else "open",
                    )
                    out.append(
                        maker.make(
                            TodoAdd,
                            goal_id=GOAL,
                            todo_id=todo.todo_id,
                            changes=changes(None, todo, skip=("todo_id", "schema_version")),
                        )
                    )
                    todos += 1
                else:
                    out.append(maker.make(Note, goal_id=GOAL, summary=f"scale note {n}", agent_id="bench"))
            return Write("scale seed", f"{size} events", GOAL, None, out)

        repo.apply(make)
        written += size
        commits += 1
        if commits % 20 == 0:
            print(f"#   {path.name}: {written} events, {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    repo.close()
    hygiene.MAX_PACKS = 8
    repo.gc()
    info = {
        "events": written,
        "todos": todos,
        "commits": commits,
        "batch": batch,
        "build_seconds": round(time.perf_counter() - t0, 1),
        "tip": repo.tip,
    }
    if taken_up:
        info["taken_up_at"] = taken_up  # build_seconds counts this process's part only
    (path / ".git" / "scale-built.json").write_text(json.dumps(info))
    if path != final:
        shutil.move(path, final)
    return info


def built(path: Path, events: int, batch: int, build_in: Path | None) -> dict:
    """The history of ``events`` events at ``path``, built now unless a kept one is there."""
    marker = path / ".git" / "scale-built.json"
    if marker.exists():
        info = json.loads(marker.read_text())
        if info["events"] == events and info["batch"] == batch:
            info["reused"] = True
            return info
    return build(path, events, batch, build_in)


# -- timing ------------------------------------------------------------------------------------


LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, use = os.wait4(pid, 0)
wall = (time.perf_counter() - start) * 1000
cpu = (use.ru_utime + use.ru_stime) * 1000
with open(sys.argv[1], "w") as out:
    out.write(f"{wall} {cpu} {use.ru_maxrss / 1024} {os.waitstatus_to_exitcode(status)}")
"""
"""Starts the measured process and reports its wall time, CPU and peak RSS. A small process of its
own: a child's ``ru_maxrss`` counts the memory of the process it was forked from (this one, which
holds the API handles), so the measured process is forked from this launcher instead."""


def run(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, float, str]:
    """(wall ms, CPU ms, peak RSS MB, stdout) of one whole process (its own user + system time and
    ``ru_maxrss``, from ``os.wait4`` in the launcher), its output read from a file as a script would."""
    env = {**os.environ, "NO_COLOR": "1", "LOOPX_GOAL_ID": GOAL}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as usage:
        subprocess.run([PY, "-S", "-c", LAUNCHER, usage.name, *cmd], cwd=cwd, stdout=out, stderr=err, env=env)
        wall, cpu, rss, code = usage.read().decode().split()
        out.seek(0)
        err.seek(0)
        text = out.read().decode(errors="replace")
        if code != "0":
            raise SystemExit(
                f"{' '.join(cmd)} (in {cwd}) failed ({code}):\n{text}\n{err.read().decode(errors='replace')}"
            )
    return float(wall), float(cpu), float(rss), text


def loopx(*args: str) -> list[str]:
    return [PY, "-m", "loopx_git", *args]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000,1000000", help="events per goal, comma-separated")
    parser.add_argument("--samples", type=int, default=7, help="samples of the cheap figures (append, warm status)")
    parser.add_argument("--batch", type=int, default=5000, help="events per commit while building")
    parser.add_argument("--work", type=Path, help="where the repositories go (default: a new temporary folder)")
    parser.add_argument("--build-in", type=Path, help="build in this folder (e.g. /dev/shm), then move")
    parser.add_argument("--keep", action="store_true", help="keep the repositories (a later run reuses them)")
    parser.add_argument("--build-only", action="store_true", help="build the histories and stop")
    parser.add_argument("--append-only", action="store_true", help="measure the appends only (a few minutes)")
    parser.add_argument(
        "--pull-only",
        action="store_true",
        help="measure `loopx pull` only, into a copy of each history (no `loopx connect` first: minutes, not an hour)",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="loopx-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        infos = {}
        for n in sizes:
            infos[n] = built(work / f"goal-{n}", n, args.batch, args.build_in)
            print(f"# {n} events: {json.dumps(infos[n])}", file=sys.stderr, flush=True)
        if args.build_only:
            return
        if args.pull_only:
            measure_pulls(work, sizes)
        else:
            measure(work, sizes, infos, args.samples, append_only=args.append_only)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def cpu_now() -> float:
    """CPU seconds of this process and of every child it has waited for (git repack, say)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def sample(cases: dict, n: int) -> dict:
    """Median (wall ms, CPU ms, peak RSS MB) of each case, sampled interleaved (a, b, a, b, ...).
    A case is (argv, cwd) for a whole process, or a function (timed in this process, with its
    children's CPU); before each sample of a case, its ``prepare`` function when it has one."""
    got: dict = {name: [] for name in cases}
    for i in range(n):
        for name, case in cases.items():
            prepare, what = case if isinstance(case, tuple) and callable(case[0]) else (None, case)
            if prepare is not None:
                prepare()
            if callable(what):
                cpu, start = cpu_now(), time.perf_counter()
                what(i)
                got[name].append(((time.perf_counter() - start) * 1000, (cpu_now() - cpu) * 1000, 0.0))
            else:
                argv, cwd = what
                got[name].append(run([a.replace("{i}", str(i)) for a in argv], cwd)[:3])
    return {name: tuple(statistics.median(x[k] for x in got[name]) for k in range(3)) for name in cases}


CACHE_GLOBS = ("fold-*", "answers-*", "evidence-*")


def drop_cache(repo: Path) -> None:
    """Every cached fold and answer (the verified mark stays: ``status`` never verifies)."""
    for pattern in CACHE_GLOBS:
        for f in (repo / ".git" / "loopx").glob(pattern):
            f.unlink()


def du(paths) -> int:
    return sum(p.stat().st_size for p in paths if p.is_file())


def pack_bytes(git_dir: Path) -> int:
    return du((git_dir / "objects" / "pack").glob("*.pack"))


def notes_on(repo, count: int, per_commit: int, label: str) -> None:
    """``count`` notes on the goal in commits of ``per_commit`` through the API (the origin's new work)."""
    from loopx_git.domain.write import EventMaker, Write
    from loopx_git.model.event import Note
    from loopx_git.model.ids import utc_now

    for start in range(0, count, per_commit):

        def make(state, start=start):
            maker = EventMaker(state.goals[GOAL], utc_now())
            out = [
                maker.make(Note, goal_id=GOAL, agent_id="bench", summary=f"{label} {start + k}")
                for k in range(min(per_commit, count - start))
            ]
            return Write("scale notes", f"{len(out)} notes", GOAL, None, out)

        repo.apply(make)


def ms(wall: float, cpu: float) -> str:
    return f"{wall:,.0f} / {cpu:,.0f}"


def measure(work: Path, sizes: list[int], infos: dict, samples: int, *, append_only: bool = False) -> None:
    import loopx_git

    repos = {n: work / f"goal-{n}" for n in sizes}
    heavy = {n: 3 if n <= 100_000 else 1 for n in sizes}
    rows: dict = {n: {} for n in sizes}
    for n, repo in repos.items():
        rows[n]["pack"] = pack_bytes(repo / ".git")
        run(loopx("status"), repo)  # the card kept for this tip
    say = lambda what: print(f"# {what}", file=sys.stderr, flush=True)

    say("warm status")
    got = sample({n: (loopx("status"), repo) for n, repo in repos.items()}, samples)
    for n in sizes:
        rows[n]["warm"] = got[n]

    say("append, whole processes")
    cases = {}
    for n, repo in repos.items():
        cases[(n, "note")] = (loopx("event", "append", "--kind", "note", "--summary", "scale append {i}"), repo)
        cases[(n, "todo")] = (loopx("todo", "add", "--text", "scale added todo {i}"), repo)
    got = sample(cases, samples)
    for (n, kind), value in got.items():
        rows[n][f"proc_{kind}"] = value

    say("append, API")
    handles = {n: loopx_git.open(repo) for n, repo in repos.items()}
    for handle in handles.values():
        handle.event_append(GOAL, "note", summary="warm-up")
        handle.todo_add(GOAL, "warm-up")
    cases = {}
    for n, handle in handles.items():
        cases[(n, "note")] = lambda i, h=handle: h.event_append(GOAL, "note", summary=f"api append {i}")
        cases[(n, "todo")] = lambda i, h=handle: h.todo_add(GOAL, f"api todo {i}")
    got = sample(cases, samples * 3)
    for (n, kind), value in got.items():
        rows[n][f"api_{kind}"] = value
    for handle in handles.values():
        handle.close()
    if append_only:
        append_table(sizes, rows)
        return

    for n, repo in repos.items():
        say(f"{n}: cold status")
        rows[n]["cold"] = sample({"cold": (lambda r=repo: drop_cache(r), (loopx("status"), repo))}, heavy[n])["cold"]
        folder = repo / ".git" / "loopx"
        rows[n]["cache"] = {p.name.split("-")[0]: p.stat().st_size for p in folder.iterdir() if p.is_file()}
        rows[n]["cache_total"] = du(folder.iterdir())

        say(f"{n}: verify, git fsck")
        got = sample({"verify": (loopx("verify"), repo), "fsck": (["git", "fsck", "--no-progress"], repo)}, heavy[n])
        rows[n].update(got)

        say(f"{n}: gc, git gc")
        plain = work / f"plain-{n}.git"
        shutil.rmtree(plain, ignore_errors=True)
        git("clone", "-q", "--bare", "--single-branch", "--branch", "loopx/state", str(repo), str(plain))
        got = sample({"gc": (loopx("gc"), repo), "git_gc": (["git", "gc", "--quiet"], plain)}, heavy[n])
        rows[n].update(got)
        shutil.rmtree(plain)

        say(f"{n}: clone")
        lx, gt = work / f"clone-loopx-{n}", work / f"clone-git-{n}"

        def fresh(path: Path, origin: Path = repo) -> None:
            init(path)
            git("-C", str(path), "remote", "add", "origin", str(origin))

        got = sample(
            {
                "clone": (lambda lx=lx: fresh(lx), (loopx("connect", "--no-hooks"), lx)),
                "git_clone": (
                    lambda gt=gt: fresh(gt),
                    (["git", "fetch", "-q", "origin", f"+{STATE}:refs/remotes/origin/loopx/state"], gt),
                ),
            },
            heavy[n],
        )
        rows[n].update(got)

        say(f"{n}: fetch")
        rows[n].update(pulls(repo, lx, gt, max(3, heavy[n])))
        shutil.rmtree(lx)
        shutil.rmtree(gt)
    report(sizes, infos, rows, samples, heavy)


def pulls(origin_path: Path, lx: Path, gt: Path, samples: int) -> dict:
    """``loopx pull`` in ``lx`` of 100 new events (10 commits) made on the origin before each
    sample, against ``git fetch`` of the same new objects into ``gt``; both have the origin's
    state branch already."""
    import loopx_git

    origin = loopx_git.open(origin_path)
    try:
        return sample(
            {
                "pull": (lambda: notes_on(origin, 100, 10, "fetched"), (loopx("pull"), lx)),
                "git_fetch": (["git", "fetch", "-q", "origin", f"+{STATE}:refs/remotes/origin/loopx/state"], gt),
            },
            samples,
        )
    finally:
        origin.close()


def measure_pulls(work: Path, sizes: list[int], samples: int = 5) -> None:
    """The pull figures alone, into a copy of each built repository (its verified mark and fold
    cache with it: a clone that has been working) rather than a clone ``loopx connect`` made."""
    say = lambda what: print(f"# {what}", file=sys.stderr, flush=True)
    rows = {}
    for n in sizes:
        repo = work / f"goal-{n}"
        origin = work / f"origin-{n}"  # a copy: the built history itself stays as it was built
        lx, gt = work / f"pull-loopx-{n}", work / f"pull-git-{n}"
        say(f"{n}: copies")
        for path in (origin, lx):
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(repo, path, symlinks=True)
        git("-C", str(lx), "remote", "add", "origin", str(origin))
        run(loopx("status"), lx)  # as a working clone: its fold cached at its tip
        init(gt)
        git("-C", str(gt), "remote", "add", "origin", str(origin))
        git("-C", str(gt), "fetch", "-q", "origin", f"+{STATE}:refs/remotes/origin/loopx/state")
        say(f"{n}: pull")
        rows[n] = pulls(origin, lx, gt, samples)
        for path in (origin, lx, gt):
            shutil.rmtree(path)
    print(
        f"\n### `loopx pull` of 100 new events (10 commits) into a working clone (wall / CPU ms, medians of {samples})\n"
    )
    print("| events | `loopx pull` | RSS | `git fetch` of the same | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for n in sizes:
        r = rows[n]
        print(
            f"| {n:,} | {ms(*r['pull'][:2])} | {r['pull'][2]:,.0f} MB | {ms(*r['git_fetch'][:2])} "
            f"| {r['pull'][1] / r['git_fetch'][1]:.1f} |"
        )


def append_table(sizes: list[int], rows: dict) -> None:
    base = sizes[0]
    print(f"\n### Append (wall / CPU ms; x = CPU ÷ CPU at {base:,} events)\n")
    print(
        "| events | `event append` process | x | `todo add` process | x | API `event_append` | x | API `todo_add` | x |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        row, b = rows[n], rows[base]
        cells = [f"{n:,}"]
        for key in ("proc_note", "proc_todo", "api_note", "api_todo"):
            cells += [ms(*row[key][:2]), f"{row[key][1] / b[key][1]:.2f}"]
        print("| " + " | ".join(cells) + " |")


def report(sizes: list[int], infos: dict, rows: dict, samples: int, heavy: dict) -> None:
    print(f"\n### History and cache (median of interleaved samples; {samples} of the cheap ones)\n")
    print("| events | todos | commits | built in | state pack | cache under .git/loopx | of it: fold | cache ÷ pack |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        info, row = infos[n], rows[n]
        print(
            f"| {info['events']:,} | {info['todos']:,} | {info['commits']:,} | {info['build_seconds']:,.0f} s "
            f"| {row['pack'] / 1e6:,.1f} MB | {row['cache_total'] / 1e6:,.1f} MB | {row['cache'].get('fold', 0) / 1e6:,.1f} MB "
            f"| {row['cache_total'] / max(row['pack'], 1):.2f} |"
        )
    append_table(sizes, rows)
    print("\n### Reads, checks and packing (wall / CPU ms, peak RSS of the process; ratio = CPU ÷ plain git's)\n")
    print(
        "| events | warm `status` | cold `status` | RSS | `verify` | RSS | `git fsck` | ratio "
        "| `loopx gc` | RSS | `git gc` (bare copy) | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        r = rows[n]
        print(
            f"| {n:,} | {ms(*r['warm'][:2])} | {ms(*r['cold'][:2])} | {r['cold'][2]:,.0f} MB "
            f"| {ms(*r['verify'][:2])} | {r['verify'][2]:,.0f} MB | {ms(*r['fsck'][:2])} | {r['verify'][1] / r['fsck'][1]:.1f} "
            f"| {ms(*r['gc'][:2])} | {r['gc'][2]:,.0f} MB | {ms(*r['git_gc'][:2])} | {r['gc'][1] / r['git_gc'][1]:.2f} |"
        )
    print("\n### Clone and fetch of the state branch (wall / CPU ms of the process; ratio = CPU ÷ plain git's)\n")
    print(
        "| events | `loopx connect` in an empty clone | RSS | `git fetch` of the branch into an empty repo | ratio "
        "| `loopx pull` of 100 new events (10 commits) | `git fetch` of the same | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        r = rows[n]
        print(
            f"| {n:,} | {ms(*r['clone'][:2])} | {r['clone'][2]:,.0f} MB | {ms(*r['git_clone'][:2])} "
            f"| {r['clone'][1] / r['git_clone'][1]:.1f} | {ms(*r['pull'][:2])} | {ms(*r['git_fetch'][:2])} "
            f"| {r['pull'][1] / r['git_fetch'][1]:.1f} |"
        )
    print(
        f"\nSamples: cheap figures {samples} (API appends {samples * 3}); heavy ones per size: "
        + ", ".join(f"{n:,}: {heavy[n]}" for n in sizes)
        + " (fetch at least 3)."
    )
    print("\n```json\n" + json.dumps({str(n): {**infos[n], **rows[n]} for n in sizes}, default=str) + "\n```")


if __name__ == "__main__":
    main()

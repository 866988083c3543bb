"""loopx-git benchmarks: every figure is a ratio (or a time) measured in this one run.

    python benchmarks/bench.py [--quick]

Seeds real repositories under benchmarks/.work/ (ignored by git), then prints medians.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pygit2

import loopx_git
from loopx_git.domain.write import EventMaker, Write, changes
from loopx_git.model.event import Note
from loopx_git.model.ids import format_utc
from loopx_git.model.todo import TodoAdd, TodoItem

START = datetime(2024, 1, 1, tzinfo=timezone.utc)

WORK = Path(__file__).resolve().parent / ".work"
GOAL = "bench"


def median_ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def interleaved_ms(fns: dict, n: int) -> dict:
    """Median ms of each function, sampled in turn (a, b, a, b, ...) so that the machine's drift
    (shared, noisy disks and CPUs) falls on every side of a ratio alike."""
    samples: dict = {name: [] for name in fns}
    for _ in range(n):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(times) for name, times in samples.items()}


def fresh_repo(name: str) -> Path:
    path = WORK / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.name", "bench"], check=True)
    subprocess.run(["git", "-C", str(path), "config", "user.email", "bench@example.invalid"], check=True)
    return path


def seed(path: Path, *, todos: int, events: int, batch: int = 2000, per_hour: int = 100) -> None:
    """``todos`` todo_add events plus notes up to ``events`` in all, written in commits of ``batch``
    events through the real write path (one transaction per batch, so seeding stays fast). The
    history is spread over past hours, ``per_hour`` events an hour, as a long-running goal's is."""
    repo = loopx_git.open(path)
    repo.connect()
    repo.goal_create(GOAL, "benchmark goal")
    written = 2  # goal_create counts as one; leave room for it
    todo_n = 0
    while written < events:
        size = min(batch, events - written)

        def build(state, size=size, written=written):
            nonlocal todo_n
            gs = state.goals[GOAL]
            out = []
            for i in range(size):
                if i % per_hour == 0:
                    now = format_utc(START + timedelta(hours=(written + i) // per_hour))
                    maker = EventMaker(gs, now)
                    maker._lamport = gs.lamport + len(out)
                if todo_n < todos:
                    todo = TodoItem(
                        todo_id=f"todo-{todo_n}",
                        text=f"benchmark todo {todo_n}",
                        created_at=now,
                        updated_at=now,
                        priority=f"P{todo_n % 5}",
                        status="done" if todo_n % 2 else "open",
                    )
                    out.append(
                        maker.make(
                            TodoAdd,
                            goal_id=GOAL,
                            todo_id=todo.todo_id,
                            changes=changes(None, todo, skip=("todo_id", "schema_version")),
                        )
                    )
                    todo_n += 1
                else:
                    out.append(maker.make(Note, goal_id=GOAL, summary="benchmark note", agent_id="bench"))
            return Write("bench seed", f"{size} events", GOAL, None, out)

        repo.apply(build)
        written += size
    repo.close()
    repo.gc()


def bench_append(quick: bool) -> dict:
    n = 15 if quick else 40
    small, large = fresh_repo("append-1k"), fresh_repo("append-100k")
    seed(small, todos=500, events=1_000)
    seed(large, todos=500, events=10_000 if quick else 100_000)
    repos = {"1k": loopx_git.open(small), "100k": loopx_git.open(large)}
    counter = iter(range(10**6))
    for repo in repos.values():
        repo.todo_add(GOAL, "warm-up")
    out = interleaved_ms(
        {name: (lambda r=repo: r.todo_add(GOAL, f"measured {next(counter)}")) for name, repo in repos.items()}, n
    )
    for repo in repos.values():
        repo.close()
    return {"todo_add_ms_1k": out["1k"], "todo_add_ms_100k": out["100k"], "ratio": out["100k"] / out["1k"]}


def bench_overhead(quick: bool) -> dict:
    n = 30 if quick else 100
    path = fresh_repo("overhead")
    seed(path, todos=100, events=2_000)
    repo = loopx_git.open(path)
    repo.agent_register(GOAL, "bench")  # the measured appends name it: an agent must be registered
    repo.event_append(GOAL, "note", summary="warm-up")
    raw = pygit2.Repository(str(path))
    # the bare commits go on a branch of their own that starts from the same tree
    ref = "refs/heads/bench-bare"
    raw.references.create(ref, raw.references["refs/heads/loopx/state"].target, force=True)
    sig = pygit2.Signature("bench", "bench@example.invalid")
    data = json.dumps({"event_id": "x", "summary": "benchmark note"}, indent=2).encode()
    counter = iter(range(10**6))

    def bare_commit() -> None:
        parent = raw.references[ref].peel(pygit2.Commit)
        shard = "goals/bench/events/2026/01/01/00"
        parts = shard.split("/")
        # rebuild the spine of one hour shard: what any one-file commit must do
        trees = [parent.tree]
        for part in parts:
            node = trees[-1]
            trees.append(raw[node[part].id] if node is not None and part in node else None)
        blob = raw.create_blob(data + str(next(counter)).encode())
        builder = raw.TreeBuilder(trees[-1]) if trees[-1] is not None else raw.TreeBuilder()
        builder.insert(f"evt_{next(counter)}.json", blob, pygit2.GIT_FILEMODE_BLOB)
        child = builder.write()
        for depth in range(len(parts) - 1, -1, -1):
            up = raw.TreeBuilder(trees[depth]) if trees[depth] is not None else raw.TreeBuilder()
            up.insert(parts[depth], child, pygit2.GIT_FILEMODE_TREE)
            child = up.write()
        raw.create_commit(ref, sig, sig, "bare", child, [parent.id])

    bare_commit()
    timed = interleaved_ms(
        {
            "api": lambda: repo.event_append(GOAL, "note", summary="benchmark note", agent_id="bench"),
            "bare": bare_commit,
        },
        n,
    )
    api, bare = timed["api"], timed["bare"]
    repo.close()
    return {"event_append_ms": api, "bare_pygit2_commit_ms": bare, "ratio": api / bare}


def bench_status(quick: bool) -> dict:
    events, todos = (20_000, 2_000) if quick else (100_000, 10_000)
    path = fresh_repo("status")
    seed(path, todos=todos, events=events)
    repo = loopx_git.open(path)
    repo.status(GOAL)
    repo.close()  # writes the on-disk cache

    def cached() -> None:
        loopx_git.open(path).status(GOAL)  # a new handle: no in-memory fold, reads the disk cache

    cached_ms = median_ms(cached, 15)
    cache_files = list((path / ".git" / "loopx").glob("fold-*.pickle"))

    def cold() -> None:
        for f in cache_files:
            f.unlink(missing_ok=True)
        loopx_git.open(path).status(GOAL)

    cold_ms = median_ms(cold, 3)
    git = pygit2.Repository(str(path))
    tree = git.references["refs/heads/loopx/state"].peel(pygit2.Commit).tree

    def read_blobs() -> None:
        def walk(t):
            for e in t:
                if e.type_str == "tree":
                    walk(git[e.id])
                else:
                    _ = git[e.id].data

        walk(git[tree["goals/bench/events"].id])

    read_ms = median_ms(read_blobs, 3)
    return {
        "events": events,
        "todos": todos,
        "cached_status_ms": cached_ms,
        "cold_status_ms": cold_ms,
        "read_blobs_only_ms": read_ms,
    }


def bench_push_verify(quick: bool) -> dict:
    """What the pre-push hook checks on a push of the state branch: the commits after the remote's
    tip (incremental), against a full `loopx verify` of the same branch."""
    from loopx_git.views.verify import verify, verify_since

    path = fresh_repo("push-verify")
    seed(path, todos=2_000 if quick else 10_000, events=20_000 if quick else 100_000)
    repo = loopx_git.open(path)
    repo.status(GOAL)
    base = repo.tip
    repo.todo_add(GOAL, "one more todo to push")
    repo.close()
    repo = loopx_git.open(path)
    since_ms = median_ms(lambda: verify_since(repo.git, repo.ref, repo.tip, base), 5)
    full_ms = median_ms(lambda: verify(repo.git, repo.ref), 1)
    return {"incremental_ms": since_ms, "full_verify_ms": full_ms, "ratio": since_ms / full_ms}


def notes(repo, count: int, label: str, per_commit: int = 10) -> None:
    """``count`` note events through the real write path, ``per_commit`` to a commit."""
    for start in range(0, count, per_commit):

        def build(state, start=start):
            maker = EventMaker(state.goals[GOAL], format_utc(datetime.now(timezone.utc)))
            events = [
                maker.make(Note, goal_id=GOAL, agent_id="bench", summary=f"{label} {start + i}")
                for i in range(min(per_commit, count - start))
            ]
            return Write("bench notes", f"{len(events)} notes", GOAL, None, events)

        repo.apply(build)


def bench_sync(quick: bool) -> dict:
    """Two clones that each added 1000 events since they last met: `loopx pull` (fetch, check the
    incoming records, merge with re-derived documents) ÷ plain git doing the merge of the same
    branches without a work tree (`git fetch` + `git merge-tree --write-tree` + `git commit-tree`)."""
    added = 200 if quick else 1000
    remote = WORK / "sync-remote.git"
    shutil.rmtree(remote, ignore_errors=True)
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    a, b = fresh_repo("sync-a"), fresh_repo("sync-b")
    for path in (a, b):
        subprocess.run(["git", "-C", str(path), "remote", "add", "origin", str(remote)], check=True)
    ra = loopx_git.open(a)
    ra.connect()
    ra.goal_create(GOAL, "benchmark goal")
    notes(ra, 1000, "base")
    ra.sync()
    rb = loopx_git.open(b)
    rb.pull()
    notes(ra, added, "from a")
    ra.sync()
    notes(rb, added, "from b")
    ra.close()
    rb.close()
    b_tip = rb.tip
    cache_dir = b / ".git" / "loopx"
    saved = {f: f.read_bytes() for f in cache_dir.glob("*.pickle")}
    tracking = "refs/remotes/origin/loopx/state"

    def reset() -> None:
        subprocess.run(["git", "-C", str(b), "update-ref", "refs/heads/loopx/state", b_tip], check=True)
        subprocess.run(["git", "-C", str(b), "update-ref", "-d", tracking], check=True)
        for f, data in saved.items():
            f.write_bytes(data)

    def loopx_pull() -> None:
        repo = loopx_git.open(b)
        assert repo.pull().action == "merged"
        repo.close()

    def git_merge() -> None:
        run = lambda *args: (
            subprocess.run(["git", "-C", str(b), *args], check=True, capture_output=True, text=True).stdout
        )
        run("fetch", "-q", "origin", f"+refs/heads/loopx/state:{tracking}")
        tree = run("merge-tree", "--write-tree", "refs/heads/loopx/state", tracking).split()[0]
        run("commit-tree", tree, "-p", "refs/heads/loopx/state", "-p", tracking, "-m", "merge")

    samples: dict = {"loopx": [], "git": []}
    for _ in range(5 if quick else 9):
        for name, fn in (("loopx", loopx_pull), ("git", git_merge)):
            reset()
            start = time.perf_counter()
            fn()
            samples[name].append((time.perf_counter() - start) * 1000)
    lx, gm = statistics.median(samples["loopx"]), statistics.median(samples["git"])
    return {"events_each_side": added, "loopx_pull_ms": lx, "git_fetch_merge_tree_ms": gm, "ratio": lx / gm}


def bench_review(quick: bool) -> dict:
    """`review-diff` over 1000 commits (todos added, claimed, completed, notes) ÷ `git log -p` of the
    same range, the plain-git way to read what changed."""
    commits = 200 if quick else 1000
    path = fresh_repo("review")
    repo = loopx_git.open(path)
    repo.connect()
    repo.goal_create(GOAL, "benchmark goal")
    repo.agent_register(GOAL, "alice")
    base = repo.tip
    for i in range(commits // 4):
        repo.todo_add(GOAL, f"todo {i}", todo_id=f"t{i}")
        repo.todo_claim(GOAL, f"t{i}", "alice")
        repo.todo_complete(GOAL, f"t{i}", evidence=[f"tests/test_{i}.py"], actor="alice")
        repo.event_append(GOAL, "note", summary=f"note {i}", agent_id="alice")
    tip = repo.tip
    repo.close()
    from loopx_git.views.review_diff import review

    def loopx_review() -> None:
        fresh = loopx_git.open(path)
        assert len(review(fresh.git, fresh.ref, base, tip).commits) == commits

    def git_log() -> None:
        subprocess.run(["git", "-C", str(path), "log", "-p", f"{base}..{tip}"], check=True, capture_output=True)

    timed = interleaved_ms({"loopx": loopx_review, "git": git_log}, 3 if quick else 5)
    return {
        "commits": commits,
        "review_diff_ms": timed["loopx"],
        "git_log_p_ms": timed["git"],
        "ratio": timed["loopx"] / timed["git"],
    }


def bench_startup() -> dict:
    def run(*cmd: str) -> None:
        subprocess.run(cmd, check=True, capture_output=True)

    loopx = shutil.which("loopx") or "loopx"
    run(loopx, "--version")
    timed = interleaved_ms(
        {"version": lambda: run(loopx, "--version"), "pygit2": lambda: run(sys.executable, "-c", "import pygit2")}, 15
    )
    version, pygit2_import = timed["version"], timed["pygit2"]
    return {"loopx_version_ms": version, "import_pygit2_ms": pygit2_import, "ratio": version / pygit2_import}


SENTENCES = [
    "Rotate the API key for the staging bucket after the token refresh lands",
    "Fix the password reset flow; see https://example.com/issues/42 for the report",
    "Tokenizer handles escaped quotes in keys and values",
    "Ask ops@acme-corp.io whether the 10.0 release can ship on Friday",
    "Document the secret-free configuration in docs/config.md",
    "Benchmark the parser on the 100k corpus and record the median",
]


def scan_records(count: int) -> list[str]:
    """Event files as the store writes them, with text of the kind agents write (keywords such as
    token, key, password and URLs included, so the prefilter lets rules run)."""
    from loopx_git.model.event import Note, Validation
    from loopx_git.store.records import encode

    out = []
    for i in range(count):
        cls = Note if i % 3 else Validation
        event = cls(
            event_id=f"evt_{i:026d}",
            goal_id=GOAL,
            recorded_at="2026-03-01T10:00:00Z",
            lamport=i + 1,
            agent_id="alice",
            todo_id=f"todo-{i % 500}",
            summary=SENTENCES[i % len(SENTENCES)],
            artifact_refs=[f"tests/test_{i % 40}.py", "docs/guide.md"],
            details={"attempt": i % 7, "outcome": "pass"},
        )
        out.append(encode(event).decode())
    return out


def bench_scan(quick: bool) -> dict:
    """Public-safety scan throughput on JSON event records, against json.loads of the same bytes."""
    from loopx_git.safety.scan import scan

    records = scan_records(5_000 if quick else 20_000)
    size = sum(len(r.encode()) for r in records)
    timed = interleaved_ms(
        {"scan": lambda: [scan(r) for r in records], "json": lambda: [json.loads(r) for r in records]},
        5 if quick else 9,
    )
    return {
        "records": len(records),
        "megabytes": size / 1e6,
        "scan_mb_per_s": size / 1e6 / (timed["scan"] / 1000),
        "json_loads_mb_per_s": size / 1e6 / (timed["json"] / 1000),
        "scan_over_json_loads": timed["scan"] / timed["json"],
    }


def _hook_repo(name: str, files: int, hooks: bool) -> Path:
    path = fresh_repo(name)
    for i in range(files):
        folder = path / ("src" if i % 2 else "docs")
        folder.mkdir(exist_ok=True)
        body = (
            f"def handler_{i}(request):\n    return {{'status': 'ok', 'n': {i}}}\n" * 20
            if i % 2
            else f"# Page {i}\n\nHow to run the parser on the sample corpus.\n" * 20
        )
        (folder / (f"mod_{i}.py" if i % 2 else f"page_{i}.md")).write_text(body)
    subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(path), "commit", "-q", "--no-verify", "-m", "seed"], check=True)
    if hooks:
        subprocess.run(
            [sys.executable, "-m", "loopx_git.cli", "--repo", str(path), "connect"], check=True, capture_output=True
        )
        subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(path), "commit", "-q", "-m", "connect"], check=True)
    return path


def bench_hook(quick: bool) -> dict:
    """`git commit` of 100 changed ordinary files with loopx's pre-commit hook ÷ without hooks."""
    n = 9 if quick else 25
    repos = {"hook": _hook_repo("hook-on", 100, True), "plain": _hook_repo("hook-off", 100, False)}
    samples: dict = {name: [] for name in repos}
    cpu: dict = {name: [] for name in repos}
    for k in range(n):
        for name, path in repos.items():
            for f in sorted(path.glob("*/*.*")):
                with f.open("a") as fh:
                    fh.write(f"# edit {k}\n")
            subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(
                ["git", "-C", str(path), "commit", "-q", "-m", f"edit {k}"], capture_output=True, text=True
            )
            samples[name].append((time.perf_counter() - start) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # git and every hook process it waited for
            cpu[name].append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
            assert proc.returncode == 0, proc.stderr
    hook, plain = statistics.median(samples["hook"]), statistics.median(samples["plain"])
    hook_cpu, plain_cpu = statistics.median(cpu["hook"]), statistics.median(cpu["plain"])
    return {
        "commit_ms_with_hook": hook,
        "commit_ms_without": plain,
        "added_ms": hook - plain,
        "ratio": hook / plain,
        "commit_cpu_ms_with_hook": hook_cpu,
        "commit_cpu_ms_without": plain_cpu,
        "added_cpu_ms": hook_cpu - plain_cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller histories, for a smoke run")
    parser.add_argument(
        "--only", choices=["append", "overhead", "status", "startup", "scan", "hook", "push-verify", "sync", "review"]
    )
    args = parser.parse_args()
    benches = {
        "startup": lambda: bench_startup(),
        "overhead": lambda: bench_overhead(args.quick),
        "append": lambda: bench_append(args.quick),
        "status": lambda: bench_status(args.quick),
        "scan": lambda: bench_scan(args.quick),
        "hook": lambda: bench_hook(args.quick),
        "push-verify": lambda: bench_push_verify(args.quick),
        "sync": lambda: bench_sync(args.quick),
        "review": lambda: bench_review(args.quick),
    }
    for name, fn in benches.items():
        if args.only and name != args.only:
            continue
        result = fn()
        print(name, json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()

"""`loopx sync` as a whole process against plain git doing the same with plain files (issue 11, item 4).

    python benchmarks/sync_speed.py [--quick] [--samples N] [--shape batched|single] [--no-hooks] [--no-profile]

Two shapes, each a base history both clones share, then new events on each side since they met:
- ``batched``: a 1000-event base, then 1000 new events on each side in commits of 10;
- ``single``: the same base, then 300 single-event commits on each side.

loopx: clone A has pushed its side to a bare remote; in clone B (connected as ``loopx connect`` leaves
it: the pre-push hook installed, unless ``--no-hooks``) the installed ``loopx`` console script runs
``loopx sync`` (fetch, check the incoming records, merge with re-derived documents, push).

plain git: the same shape of history as small JSON files in the same kind of folders, the same commit
counts, two worktree clones of a bare remote; in clone B ``git fetch``, ``git merge --no-edit`` and
``git push``, each a whole process.

Before every sample both sides are reset to the same starting point (the local branch, the
remote-tracking ref, the remote's branch, and the fold cache and verified mark under ``.git/loopx/``);
samples are interleaved (loopx, git, api, loopx, git, api, ...). Wall time and CPU time (this
process's children: every git process, the pre-push hook) are medians. ``api`` is the same sync through
the Python API in this process (``loopx_git.open(B).sync()`` and ``close()``), its CPU counted with its
children: what loopx itself does, without the CLI process's start-up. Last, a cProfile of the API sync.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from bench import notes  # benchmarks/ is on the path: python benchmarks/sync_speed.py

import loopx_git

WORK = Path(__file__).resolve().parent / ".work" / "sync-speed"
GOAL = "bench"
STATE = "refs/heads/loopx/state"
TRACKING = "refs/remotes/origin/loopx/state"
SHAPES = {
    # name: (base events, new events on each side, events per commit)
    "batched": (1000, 1000, 10),
    "single": (1000, 300, 1),
}
QUICK = {"batched": (300, 200, 10), "single": (300, 60, 1)}


def git(*args: str, cwd: Path | None = None, input: str | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, check=True, capture_output=True, text=True)
    return proc.stdout.strip()


def loopx_bin() -> str:
    """The installed console script beside this interpreter (a venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "loopx"
    found = str(beside) if beside.exists() else shutil.which("loopx")
    if not found:
        sys.exit("no `loopx` console script found: install the package (pip install -e .) first")
    return found


def init(path: Path, *, bare: bool = False) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", *(["--bare"] if bare else []), str(path))
    if not bare:
        git("-C", str(path), "config", "user.name", "bench")
        git("-C", str(path), "config", "user.email", "bench@example.invalid")
    return path


class LoopxSide:
    """Clones A and B of a bare remote, with loopx state branches of the shape asked for."""

    def __init__(self, root: Path, base: int, added: int, per_commit: int, hooks: bool):
        self.remote = init(root / "loopx-remote.git", bare=True)
        self.a, self.b = init(root / "loopx-a"), init(root / "loopx-b")
        for path in (self.a, self.b):
            git("-C", str(path), "remote", "add", "origin", str(self.remote))
        ra = loopx_git.open(self.a)
        ra.connect()
        ra.goal_create(GOAL, "benchmark goal")
        ra.agent_register(GOAL, "bench")
        notes(ra, base, "base", 10)
        ra.sync()
        rb = loopx_git.open(self.b)
        rb.connect()  # adopts origin's copy, as `loopx connect` in a fresh clone does
        if hooks:
            rb.connect_worktree(hooks=True, ignore=False)
        notes(ra, added, "from a", per_commit)
        ra.sync()
        notes(rb, added, "from b", per_commit)
        ra.close()
        rb.close()
        for path in (self.remote, self.a, self.b):
            git("-C", str(path), "repack", "-adq")
        self.b_tip = git("-C", str(self.b), "rev-parse", STATE)
        self.b_tracking = git("-C", str(self.b), "rev-parse", TRACKING)
        self.a_tip = git("-C", str(self.remote), "rev-parse", STATE)
        cache = self.b / ".git" / "loopx"
        self.saved = {f: f.read_bytes() for f in cache.iterdir() if f.is_file() and not f.name.endswith(".lock")}

    def reset(self) -> None:
        git("-C", str(self.b), "update-ref", STATE, self.b_tip)
        git("-C", str(self.b), "update-ref", TRACKING, self.b_tracking)
        git("-C", str(self.remote), "update-ref", STATE, self.a_tip)
        for f, data in self.saved.items():
            f.write_bytes(data)

    def check(self) -> None:
        merged = git("-C", str(self.b), "rev-parse", STATE)
        assert git("-C", str(self.remote), "rev-parse", STATE) == merged, "loopx sync did not push the merge"
        assert git("-C", str(self.b), "rev-parse", f"{merged}^2") == self.a_tip, "loopx sync did not merge A"


class GitSide:
    """The same shape as plain files: two worktree clones of a bare remote."""

    def __init__(self, root: Path, base: int, added: int, per_commit: int):
        self.remote = init(root / "git-remote.git", bare=True)
        self.a = init(root / "git-a")
        git("-C", str(self.a), "remote", "add", "origin", str(self.remote))
        self._commits(self.a, "base", base, 10, None)
        git("-C", str(self.a), "push", "-q", "origin", "main")
        self.b = root / "git-b"
        shutil.rmtree(self.b, ignore_errors=True)
        git("clone", "-q", str(self.remote), str(self.b))
        git("-C", str(self.b), "config", "user.name", "bench")
        git("-C", str(self.b), "config", "user.email", "bench@example.invalid")
        self._commits(self.a, "from-a", added, per_commit, "main")
        git("-C", str(self.a), "push", "-q", "origin", "main")
        self._commits(self.b, "from-b", added, per_commit, "main")
        for path in (self.remote, self.a, self.b):
            git("-C", str(path), "repack", "-adq")
        self.b_tip = git("-C", str(self.b), "rev-parse", "main")
        self.b_tracking = git("-C", str(self.b), "rev-parse", "origin/main")
        self.a_tip = git("-C", str(self.remote), "rev-parse", "main")

    @staticmethod
    def _commits(path: Path, label: str, count: int, per_commit: int, parent: str | None) -> None:
        """``count`` small JSON files, ``per_commit`` to a commit, through ``git fast-import`` (quick
        to seed; the result is ordinary history), then checked out."""
        hour = datetime.now(timezone.utc).strftime("%Y/%m/%d/%H")
        stream = io.StringIO()
        stamp = int(time.time())
        for n, start in enumerate(range(0, count, per_commit)):
            message = f"notes {label} {start}"
            stream.write(f"commit refs/heads/main\ncommitter bench <bench@example.invalid> {stamp} +0000\n")
            stream.write(f"data {len(message)}\n{message}\n")
            if n == 0 and parent is not None:
                stream.write(f"from {git('-C', str(path), 'rev-parse', parent)}\n")
            for i in range(start, min(start + per_commit, count)):
                event_id = f"evt_{label}_{i:06d}"
                body = json.dumps(
                    {
                        "agent_id": "bench",
                        "event_id": event_id,
                        "event_kind": "note",
                        "goal_id": GOAL,
                        "lamport": i + 1,
                        "recorded_at": "2026-01-01T00:00:00Z",
                        "schema_version": "loopx_rollout_event_v0",
                        "summary": f"{label} {i}",
                    },
                    indent=2,
                    sort_keys=True,
                )
                body += "\n"
                stream.write(f"M 100644 inline goals/{GOAL}/events/{hour}/{event_id}.json\n")
                stream.write(f"data {len(body.encode())}\n{body}\n")
        git("-C", str(path), "fast-import", "--quiet", input=stream.getvalue())
        git("-C", str(path), "reset", "-q", "--hard", "main")

    def reset(self) -> None:
        git("-C", str(self.b), "reset", "-q", "--hard", self.b_tip)
        git("-C", str(self.b), "update-ref", "refs/remotes/origin/main", self.b_tracking)
        git("-C", str(self.remote), "update-ref", "refs/heads/main", self.a_tip)


def timed(fn) -> tuple[float, float]:
    """(wall ms, CPU ms) of ``fn``: this process's CPU plus that of every child it waited for."""
    before_self, before_kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    fn()
    wall = (time.perf_counter() - start) * 1000
    after_self, after_kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = sum(
        (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        for before, after in ((before_self, after_self), (before_kids, after_kids))
    )
    return wall, cpu * 1000


def run(*cmd: str, cwd: Path | None = None) -> None:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"})
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


def bench_shape(
    name: str, sizes: tuple[int, int, int], samples: int, hooks: bool, profile: bool, work: Path = WORK
) -> dict:
    base, added, per_commit = sizes
    root = work / name
    root.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    lx = LoopxSide(root, base, added, per_commit, hooks)
    gs = GitSide(root, base, added, per_commit)
    print(f"# {name}: seeded in {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    loopx = loopx_bin()

    def loopx_sync() -> None:
        run(loopx, "--repo", str(lx.b), "sync")

    def git_sync() -> None:
        run("git", "-C", str(gs.b), "fetch", "-q", "origin")
        run("git", "-C", str(gs.b), "merge", "-q", "--no-edit", "origin/main")
        run("git", "-C", str(gs.b), "push", "-q", "origin", "main")

    def api_sync() -> None:
        repo = loopx_git.open(lx.b)
        assert repo.sync().pull.action == "merged"
        repo.close()

    contestants = {"loopx": (lx, loopx_sync), "git": (gs, git_sync), "api": (lx, api_sync)}
    wall: dict[str, list[float]] = {k: [] for k in contestants}
    cpu: dict[str, list[float]] = {k: [] for k in contestants}
    for _ in range(samples):
        for key, (side, fn) in contestants.items():
            side.reset()
            w, c = timed(fn)
            if side is lx:
                lx.check()
            wall[key].append(w)
            cpu[key].append(c)
    med = {k: (statistics.median(wall[k]), statistics.median(cpu[k])) for k in contestants}
    out = {
        "shape": name,
        "base_events": base,
        "events_each_side": added,
        "events_per_commit": per_commit,
        "pre_push_hook": hooks,
        "samples": samples,
    }
    for key, (w, c) in med.items():
        out[f"{key}_wall_ms"], out[f"{key}_cpu_ms"] = w, c
    out["ratio_wall"] = med["loopx"][0] / med["git"][0]
    out["ratio_cpu"] = med["loopx"][1] / med["git"][1]
    out["api_ratio_wall"] = med["api"][0] / med["git"][0]
    out["api_ratio_cpu"] = med["api"][1] / med["git"][1]
    if profile:
        lx.reset()
        profiler = cProfile.Profile()
        profiler.enable()
        api_sync()
        profiler.disable()
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("cumulative").print_stats(35)
        stats.sort_stats("tottime").print_stats(20)
        print(f"# where the API sync's time goes ({name}):", file=sys.stderr)
        print(text.getvalue(), file=sys.stderr, flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller histories, for a smoke run")
    parser.add_argument("--samples", type=int, default=None, help="samples of each (default 7, quick 3)")
    parser.add_argument("--shape", choices=sorted(SHAPES), help="one shape only")
    parser.add_argument("--no-hooks", action="store_true", help="clone B without loopx's pre-push hook")
    parser.add_argument("--no-profile", action="store_true", help="skip the cProfile of the API sync")
    parser.add_argument("--work", type=Path, default=WORK, help=f"where the repositories go (default {WORK})")
    parser.add_argument(
        "--layout", type=int, help="seed the loopx histories in this event layout (1: as loopx wrote before layout 2)"
    )
    args = parser.parse_args()
    samples = args.samples or (3 if args.quick else 7)
    if args.layout is not None:  # the sync itself writes no event: the seeded history's layout is what counts
        from loopx_git.store import layout

        if not hasattr(layout, "WRITE_LAYOUT"):
            sys.exit("--layout: this loopx writes one layout only")
        layout.WRITE_LAYOUT = args.layout
    for name in SHAPES:
        if args.shape and name != args.shape:
            continue
        sizes = (QUICK if args.quick else SHAPES)[name]
        result = bench_shape(name, sizes, samples, not args.no_hooks, not args.no_profile, args.work)
        print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in result.items()}), flush=True)


if __name__ == "__main__":
    main()

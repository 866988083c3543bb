"""Burst growth: many appends within one hour through one API handle (issue 11, item 2), or many
todos on one goal (issue 16, item 6).

    python benchmarks/burst.py [--quick] [--appends N] [--layout 1|2|3] [--baseline-appends N] [--todos]

Writes ``--appends`` notes (10k; 2k with ``--quick``) into one hour shard of a fresh repository
through one ``loopx_git.open`` handle, then the same for the old layout (``--baseline-appends``,
fewer by default: layout 1 writes hundreds of KB per append near the end). With ``--todos``, each
append is a ``todo_add`` (ids ``t0``, ``t1``, ...: numbered as a person would) instead, against
layout 2, the last one with every todo document in one folder. For each append it
measures the bytes of the loose objects that append wrote (commit, trees, blob: each one's loose
file, or its zlib size where a pack during use already took it), and samples the repository's
size on disk every ``SAMPLE_EVERY`` appends. Prints medians of the first and last thousand (or
tenth, for short runs), their ratio (issue 11: <= 1.5) and the largest size seen (<= 100 MB).
Repositories live under benchmarks/.work/ (ignored by git).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
import zlib
from pathlib import Path

import pygit2
from bench import fresh_repo  # benchmarks/ is on the path: python benchmarks/burst.py

import loopx_git
from loopx_git.store import hygiene, layout

WORK = Path(__file__).resolve().parent / ".work"
GOAL = "burst"
HOUR = "2026-03-01T10"
SAMPLE_EVERY = 50
MAX_RATIO = 1.5
MAX_BYTES = 100 << 20


def disk_bytes(git_dir: Path) -> int:
    total = 0
    for folder, _, files in os.walk(git_dir / "objects"):
        for name in files:
            with contextlib.suppress(OSError):  # a pack replaced it while we looked
                total += os.stat(os.path.join(folder, name)).st_size
    return total


def new_objects(repo: pygit2.Repository, commit: pygit2.Commit) -> list[pygit2.Oid]:
    """The objects a commit adds to its parent's: itself, and the trees and blobs on changed paths."""
    out = [commit.id]
    old = commit.parents[0].tree if commit.parents else None
    stack = [(old, commit.tree)]
    while stack:
        before, after = stack.pop()
        if before is not None and before.id == after.id:
            continue
        out.append(after.id)
        for entry in after:
            previous = before[entry.name] if before is not None and entry.name in before else None
            if previous is not None and previous.id == entry.id:
                continue
            if entry.type_str == "tree":
                before_tree = repo[previous.id] if previous is not None and previous.type_str == "tree" else None
                stack.append((before_tree, repo[entry.id]))
            else:
                out.append(entry.id)
    return out


def loose_size(repo: pygit2.Repository, git_dir: Path, oid: pygit2.Oid) -> tuple[int, bool]:
    """The loose file's size, or (when a pack during use took it already) what zlib makes of it at
    libgit2's level (the second value says which)."""
    hexid = str(oid)
    try:
        return (git_dir / "objects" / hexid[:2] / hexid[2:]).stat().st_size, True
    except FileNotFoundError:
        kind, raw = repo.odb.read(oid)
        header = {pygit2.GIT_OBJECT_COMMIT: b"commit", pygit2.GIT_OBJECT_TREE: b"tree", pygit2.GIT_OBJECT_BLOB: b"blob"}
        data = header[kind] + b" %d\0" % len(raw) + raw
        return len(zlib.compress(data, 1)), False


def run(version: int, appends: int, todos: bool = False) -> dict:
    path = fresh_repo(f"burst-{'todos-' if todos else ''}layout{version}")
    layout.WRITE_LAYOUT = version
    try:
        handle = loopx_git.open(path)
        handle.connect()
        handle.goal_create(GOAL, "a burst of notes", now=f"{HOUR}:00:00Z")
        git_dir = Path(handle.git.common_dir)
        repo = pygit2.Repository(str(git_dir))
        per_append: list[int] = []
        sizes: list[int] = []
        estimated = 0
        packs_before = hygiene.count_packs(git_dir)
        started = time.perf_counter()
        for n in range(appends):
            second = n * 3600 // appends
            now = f"{HOUR}:{second // 60:02d}:{second % 60:02d}Z"
            if todos:
                result = handle.todo_add(GOAL, f"todo {n}", todo_id=f"t{n}", now=now)
            else:
                result = handle.event_append(GOAL, "note", summary=f"note {n}", now=now)
            commit = repo[result.commit]
            written = 0
            for oid in new_objects(repo, commit):
                size, on_disk = loose_size(repo, git_dir, oid)
                written += size
                estimated += not on_disk
            per_append.append(written)
            if n % SAMPLE_EVERY == 0 or n == appends - 1:
                sizes.append(disk_bytes(git_dir))
        elapsed = time.perf_counter() - started
        during = hygiene.count_packs(git_dir) - packs_before
        before_close = disk_bytes(git_dir)
        started_close = time.perf_counter()
        handle.close()
        close_s = time.perf_counter() - started_close
        hour = f"goals/{GOAL}/events/{HOUR[:4]}/{HOUR[5:7]}/{HOUR[8:10]}/{HOUR[11:13]}"
        widest = widest_tree(repo, repo.revparse_single(handle.ref).tree, f"goals/{GOAL}/todos" if todos else hour)
    finally:
        layout.WRITE_LAYOUT = layout.LAYOUT_VERSION
    window = min(1000, max(1, appends // 3))
    first, last = statistics.median(per_append[:window]), statistics.median(per_append[-window:])
    return {
        "layout": version,
        "what": "todo_add" if todos else "note",
        "appends": appends,
        "window": window,
        "first": first,
        "last": last,
        "ratio": last / first,
        "mean_first": statistics.fmean(per_append[:window]),
        "mean_last": statistics.fmean(per_append[-window:]),
        "total_written": sum(per_append),
        "max_disk": max(sizes),
        "disk_before_close": before_close,
        "disk_after_close": disk_bytes(git_dir),
        "close_s": close_s,
        "ms_per_append": elapsed * 1000 / appends,
        "packs_during_use": during,
        "estimated": estimated,
        "widest": widest,
    }


def widest_tree(repo: pygit2.Repository, root: pygit2.Tree, folder: str) -> tuple[int, int]:
    """(entries of the tree at ``folder`` (the hour shard, or the todo folder), entries of the widest
    tree below it)."""
    shard = repo[root[folder].id]
    widest, stack = 0, [shard]
    while stack:
        tree = stack.pop()
        widest = max(widest, len(tree))
        stack.extend(repo[e.id] for e in tree if e.type_str == "tree")
    return len(shard), widest


def show(r: dict) -> None:
    kb = 1024
    print(
        f"layout {r['layout']}: {r['appends']} {r['what']} in one hour, {r['ms_per_append']:.1f} ms each; "
        f"loose bytes per append, median of the first/last {r['window']}: {r['first'] / kb:.2f} KB / "
        f"{r['last'] / kb:.2f} KB = {r['ratio']:.2f}x (means {r['mean_first'] / kb:.2f} / {r['mean_last'] / kb:.2f} KB)"
    )
    print(
        f"  written loose in all {r['total_written'] / (1 << 20):.1f} MB; on disk at most {r['max_disk'] / (1 << 20):.1f} MB "
        f"during the run ({r['packs_during_use']} packs during use), {r['disk_before_close'] / (1 << 20):.1f} MB "
        f"before close(), {r['disk_after_close'] / (1 << 20):.1f} MB after; close() {r['close_s']:.2f} s"
    )
    print(
        f"  {'todo folder' if r['what'] == 'todo_add' else 'hour shard'} tree: {r['widest'][0]} entries, "
        f"widest tree below it: {r['widest'][1]} entries; "
        f"{r['estimated']} objects sized by zlib (packed before they were looked at)"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2k appends, 1k for the old layout")
    parser.add_argument("--appends", type=int, help="appends for the layout under test (default 10000)")
    parser.add_argument("--layout", type=int, choices=layout.LAYOUTS, help="measure only this layout")
    parser.add_argument("--baseline-appends", type=int, help="appends for the old layout (default 3000)")
    parser.add_argument("--todos", action="store_true", help="todo_add instead of notes; the old layout is 2")
    args = parser.parse_args(argv)
    appends = args.appends or (2000 if args.quick else 10_000)
    baseline = args.baseline_appends or (1000 if args.quick else 3000)
    old_layout = 2 if args.todos else 1
    versions = [args.layout] if args.layout else [layout.LAYOUT_VERSION, old_layout]
    results = [run(v, appends if v == layout.LAYOUT_VERSION else baseline, args.todos) for v in versions]
    for r in results:
        show(r)
    current = next((r for r in results if r["layout"] == layout.LAYOUT_VERSION), None)
    if current is None:
        return 0
    ok = current["ratio"] <= MAX_RATIO and current["max_disk"] <= MAX_BYTES
    print(
        f"layout {layout.LAYOUT_VERSION}: last/first {current['ratio']:.2f} (<= {MAX_RATIO}), largest on disk "
        f"{current['max_disk'] / (1 << 20):.1f} MB (<= {MAX_BYTES >> 20} MB): {'ok' if ok else 'FAILED'}"
    )
    old = next((r for r in results if r["layout"] == old_layout), None)
    if old is not None:
        print(
            f"layout {old_layout} over {old['appends']} appends: last/first {old['ratio']:.2f}; per append at the end "
            f"{old['last'] / current['last']:.0f}x layout {layout.LAYOUT_VERSION}'s"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

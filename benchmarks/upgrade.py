"""The one-time cost of moving a branch to layout 3 (issue 16): the first write of this loopx on a
branch an older loopx wrote, and the pull that brings that commit to another clone.

    python benchmarks/upgrade.py [--events 100000] [--samples 3] [--work DIR] [--build-in /dev/shm]

Builds one goal of ``--events`` events (a todo every ten, as ``scale.py`` does) in layout 2, every
todo document in one folder, with ``scale.build`` and ``layout.WRITE_LAYOUT`` set to 2. Then, per
sample, on a fresh copy of it, as whole processes:

- ``loopx todo add``, the first write: it moves every document to its layout-3 path in the same
  commit; then the same command again, an ordinary write on the upgraded branch (the baseline);
- in a copy of a clone connected before the upgrade: ``loopx pull`` of that upgrade commit (its
  check renders every moved document once), against ``loopx pull`` of the next ordinary commit.

Wall / CPU ms and peak RSS of each process, medians; Markdown on stdout.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from scale import GOAL, build, git, loopx, ms, run  # benchmarks/ is on the path: python benchmarks/upgrade.py

from loopx_git.store import layout


def copy(source: Path, target: Path) -> Path:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, symlinks=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--build-in", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="loopx-upgrade-"))
    work.mkdir(parents=True, exist_ok=True)
    original = work / "layout-2"
    layout.WRITE_LAYOUT = 2
    info = build(original, args.events, args.batch, args.build_in)
    layout.WRITE_LAYOUT = layout.LAYOUT_VERSION
    print(f"# built: {info}", file=sys.stderr, flush=True)
    declared = layout.declared_layout(git("-C", str(original), "show", "refs/heads/loopx/state:loopx.yaml").encode())
    assert declared == 2, declared
    connected = work / "clone"
    shutil.rmtree(connected, ignore_errors=True)
    git("clone", "-q", "--no-checkout", str(original), str(connected))
    run(loopx("connect", "--no-hooks"), connected)
    got: dict[str, list] = {"first": [], "second": [], "pull_upgrade": [], "pull_next": []}
    for i in range(args.samples):
        upgraded = copy(original, work / "upgraded")
        clone = copy(connected, work / "pulling")
        git("-C", str(clone), "remote", "set-url", "origin", str(upgraded))
        got["first"].append(run(loopx("todo", "add", "--text", f"first write {i}"), upgraded))
        diff = git("-C", str(upgraded), "diff", "--name-status", "-M", "loopx/state^", "loopx/state")
        moved = sum(line.startswith("R") for line in diff.splitlines())
        got["pull_upgrade"].append(run(loopx("pull"), clone))
        got["second"].append(run(loopx("todo", "add", "--text", f"second write {i}"), upgraded))
        got["pull_next"].append(run(loopx("pull"), clone))
        print(f"# sample {i}: {moved} documents moved", file=sys.stderr, flush=True)
    median = {k: tuple(statistics.median(s[j] for s in v) for j in range(3)) for k, v in got.items()}
    print(
        f"\n{info['events']:,} events, {info['todos']:,} todos, {moved:,} documents moved; medians of {args.samples}\n"
    )
    print("| | wall / CPU ms | peak RSS |")
    print("| --- | --- | --- |")
    for key, label in (
        ("first", "`todo add`, the first write (moves every document)"),
        ("second", "`todo add`, the next write"),
        ("pull_upgrade", "`loopx pull` of the upgrade commit in another clone"),
        ("pull_next", "`loopx pull` of the next write"),
    ):
        wall, cpu, rss = median[key]
        print(f"| {label} | {ms(wall, cpu)} | {rss:,.0f} MB |")
    print(f"\nGOAL {GOAL}; work in {work}")


if __name__ == "__main__":
    main()

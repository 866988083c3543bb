"""``loopx prime`` at 10k todos / 100k events (issue 18): the brief's size (target ≤ 4 KiB), that it
is deterministic, and its time beside ``status``, as whole processes.

    python benchmarks/prime.py [--events 100000] [--samples 5] [--work DIR] [--keep]

The history is scale.py's (built or reused under ``--work``), with two agents registered and 30
gates opened on it the first time (each gate's question a few hundred characters), so the brief has
plenty to leave out.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale  # noqa: E402 - the histories of scale.py, from this folder


def seed(repo: Path) -> None:
    import loopx_git

    with loopx_git.open(repo) as handle:
        gs = handle.state().goals[scale.GOAL]
        if "bench-a" in gs.agents:
            return
        handle.agent_register(scale.GOAL, "bench-a", lane="core")
        handle.agent_register(scale.GOAL, "bench-b")
        first = sorted(gs.live)[0]
        handle.todo_claim(scale.GOAL, first, "bench-a")
        for i in range(30):
            handle.gate_open(
                scale.GOAL, f"gate-{i}", owner_class="user", question=f"Decide {i}: " + "context " * 40, blocks=[first]
            )


def drop_answers(repo: Path) -> None:
    """The answers kept per tip (the brief among them), not the fold: as after a write."""
    for kept in (repo / ".git" / "loopx").glob("answers-*"):
        kept.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="loopx-prime-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        repo = work / f"goal-{args.events}"
        info = scale.built(repo, args.events, 5000, None)
        seed(repo)
        scale.run(scale.loopx("status"), repo)  # the fold cached at the tip, as after any command
        briefs = [scale.run(scale.loopx("--format", "json", "prime", "-a", "bench-a"), repo)[3] for _ in range(2)]
        data = json.loads(briefs[0])
        got = scale.sample(
            {
                "status": (scale.loopx("status"), repo),
                "prime -a bench-a": (scale.loopx("prime", "-a", "bench-a"), repo),
                "prime (every agent)": (scale.loopx("prime"), repo),
            },
            args.samples,
        )
        # the first prime after a write: no answer kept for the tip yet (the fold is); sampled apart,
        # since dropping the answers would make the next status compute its card too
        got |= scale.sample(
            {
                "prime -a bench-a, first at a tip": (
                    lambda: drop_answers(repo),
                    (scale.loopx("prime", "-a", "bench-a"), repo),
                )
            },
            args.samples,
        )
        print(
            f"\n### `loopx prime` at {info['events']:,} events / {info['todos']:,} todos (medians of {args.samples})\n"
        )
        print("| what | wall / CPU ms |")
        print("| --- | --- |")
        for name, (wall, cpu, _) in got.items():
            print(f"| {name} | {wall:,.0f} / {cpu:,.0f} |")
        print(
            f"\nBrief: {data['brief_bytes']:,} bytes (limit 4,096); sections dropped: "
            f"{', '.join(data['sections_dropped']) or 'none'}; two runs identical: {briefs[0] == briefs[1]}."
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

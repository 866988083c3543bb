"""The public-safety scan on the texts that make it work hardest (issue 32), before and after.

    python benchmarks/scan_shapes.py [--before REV] [--samples N] [--megabytes 1,4]

Each sample is one fresh process (``--worker``) that builds one text, warms the scanner on a small
piece of it, and times one ``scan`` of the whole (CPU, ``time.process_time``). With ``--before``,
revision REV of this repository is unpacked into a temporary folder (``git archive``) and measured
in the same run, samples interleaved; the report gives medians, s/MB, the growth from the smallest
size to the largest (4.0 for a 4x larger text is linear) and the ratio after / before.

Texts: a line of ``pass`` repeated (no line break at all), ``pass`` on lines of their own, ``pass ``
repeated on one line, ``password = pass`` lines; and YAML full of block scalars (``key: |``,
``key: >-`` with 5-20 lines of ordinary words and identifiers, or the same with ~10% credential
words), where the folded reading of issue 32 adds a glued view.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORDS = [
    "the",
    "parser",
    "reads",
    "each",
    "input",
    "file",
    "and",
    "writes",
    "a",
    "short",
    "report",
    "for",
    "the",
    "team",
    "while",
    "the",
    "queue",
    "drains",
    "slowly",
    "over",
    "night",
    "because",
    "every",
    "worker",
    "waits",
    "on",
    "its",
    "own",
    "lock",
    "before",
    "it",
    "runs",
    "again",
]
IDENTS = ["parse_input", "config_v2", "handler42", "max_retries", "CamelCaseName", "x86_64", "v1.2.3", "UTF-8"]
CREDENTIAL = ["token", "password", "api_key"]


def _yaml(megabytes: float, credential: bool) -> str:
    rng = random.Random(7)
    out, size, item = [], 0, 0
    while size < megabytes * 1_000_000:
        lines = [f"item_{item}:\n", f"  notes_{item}: {rng.choice(['|', '|-', '>', '>-'])}\n"]
        for _ in range(rng.randint(5, 20)):
            words = [rng.choice(IDENTS) if rng.random() < 0.2 else rng.choice(WORDS) for _ in range(rng.randint(4, 12))]
            if credential:
                words = [rng.choice(CREDENTIAL) if rng.random() < 0.1 else w for w in words]
            lines.append("    " + " ".join(words) + "\n")
        chunk = "".join(lines)
        out.append(chunk)
        size += len(chunk)
        item += 1
    return "".join(out)


TEXTS = {
    "a line of `pass` repeated": lambda mb: "pass" * int(mb * 250_000),
    "`pass` lines": lambda mb: "pass\n" * int(mb * 200_000),
    "`pass ` repeated on one line": lambda mb: "pass " * int(mb * 200_000),
    "`password = pass` lines": lambda mb: "password = pass\n" * int(mb * 62_500),
    "YAML block scalars, prose": lambda mb: _yaml(mb, False),
    "YAML block scalars, ~10% credential words": lambda mb: _yaml(mb, True),
}


def worker(name: str, megabytes: float) -> None:
    from loopx_git.safety.scan import scan

    text = TEXTS[name](megabytes)
    scan(text[:10_000])
    start = time.process_time()
    found = scan(text)
    print(json.dumps({"cpu": time.process_time() - start, "bytes": len(text.encode()), "findings": len(found)}))


def sample(source: Path, name: str, megabytes: float) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--worker", name, str(megabytes)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(source)},
        cwd=source,
    )
    return json.loads(done.stdout)


def unpacked(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "loopx_git"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--megabytes", default="1,4", help="sizes, comma-separated (default 1,4)")
    parser.add_argument("--only", help="one text, by the start of its name")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], float(args.worker[1]))
        return 0
    sizes = [float(m) for m in args.megabytes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"now": ROOT}
        if args.before:
            sides = {"before": unpacked(args.before, Path(tmp)), **sides}
        names = [n for n in TEXTS if not args.only or n.startswith(args.only)]
        print(f"{'text':44} {'MB':>4} " + " ".join(f"{s + ' s/MB':>14}" for s in sides) + "   now/before")
        for name in names:
            per: dict[tuple[str, float], float] = {}
            for mb in sizes:
                cpu: dict[str, list[float]] = {s: [] for s in sides}
                for k in range(args.samples):
                    for side in sides if k % 2 == 0 else reversed(list(sides)):
                        cpu[side].append(sample(sides[side], name, mb)["cpu"])
                for side in sides:
                    per[(side, mb)] = statistics.median(cpu[side]) / mb
                ratio = per[("now", mb)] / per[("before", mb)] if "before" in sides else float("nan")
                cells = " ".join(f"{per[(s, mb)]:14.3f}" for s in sides)
                print(f"{name:44} {mb:4g} {cells}   {ratio:.2f}", flush=True)
            if len(sizes) > 1:
                growth = {s: per[(s, sizes[-1])] * sizes[-1] / (per[(s, sizes[0])] * sizes[0]) for s in sides}
                print(
                    f"{'':44} growth {sizes[0]:g} -> {sizes[-1]:g} MB: "
                    + ", ".join(f"{s} {g:.2f}" for s, g in growth.items())
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

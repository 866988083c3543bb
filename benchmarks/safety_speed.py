"""Public-safety scan speed on any input (issue 12, item 5).

    python benchmarks/safety_speed.py [--megabytes N] [--samples N] [--source project|stdlib]

Builds a text of N MB (default 10) from this project's own source and documentation (code and prose
full of the words rules key on: token, key, password, URLs, e-mail addresses), or from the running
Python's standard library, repeated, with a line of non-ASCII text (accents, CJK, an ``İ`` that
lower-cases to two characters) every 200 lines, and scans it in one process:

- as one file (one ``scan`` call over the whole text);
- as the same bytes split into 100 files at line boundaries (100 calls).

Samples are interleaved (one, split, one, split, ...); medians of wall and CPU time; throughput in
MB/s of the UTF-8 bytes. The pre-commit hook's cost on 100 files is ``bench.py --only hook``.
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NON_ASCII = "# naïve café, Grüße aus Köln — 日本語のテキスト — İstanbul; ünïcödé everywhere ✓\n"


def sources(kind: str) -> list[Path]:
    """``project``: this project's code and docs — about secrets, so the words rules key on are on
    nearly every line (a worst case). ``stdlib``: the running Python's standard library — ordinary
    code and docstrings, the kind of text most large files are."""
    if kind == "project":
        return sorted((ROOT / "loopx_git").rglob("*.py")) + sorted((ROOT / "docs").glob("*.md"))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in stdlib.rglob("*.py") if "test" not in p.parts and "site-packages" not in p.parts)


def corpus(megabytes: float, kind: str = "project") -> str:
    lines: list[str] = []
    for path in sources(kind):
        try:
            lines.extend(path.read_text(encoding="utf-8").splitlines(keepends=True))
        except (UnicodeDecodeError, OSError):
            continue
        if len(lines) > 400_000:
            break
    out: list[str] = []
    size = 0
    target = int(megabytes * 1_000_000)
    i = 0
    while size < target:
        line = NON_ASCII if i % 200 == 199 else lines[i % len(lines)]
        out.append(line)
        size += len(line.encode())
        i += 1
    return "".join(out)


def split(text: str, parts: int) -> list[str]:
    lines = text.splitlines(keepends=True)
    step = -(-len(lines) // parts)
    return ["".join(lines[k : k + step]) for k in range(0, len(lines), step)]


def timed(fn) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--source", choices=("project", "stdlib"), default="project", help="what the text is made of")
    args = parser.parse_args()

    from loopx_git.safety.scan import scan

    text = corpus(args.megabytes, args.source)
    files = split(text, 100)
    assert "".join(files) == text
    size = len(text.encode()) / 1e6
    cases = {"one file": lambda: scan(text), "100 files": lambda: [scan(f) for f in files]}
    scan(files[0])  # compile what the first call compiles, outside the samples
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(args.samples):
        for name, fn in cases.items():
            samples[name].append(timed(fn))
    print(f"{size:.1f} MB of {args.source} text ({len(text):,} characters, not all ASCII), median of {args.samples}")
    result = {}
    for name, runs in samples.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        result[name] = (wall, cpu)
        print(f"  {name:10} wall {wall:6.2f} s  CPU {cpu:6.2f} s   {size / wall:6.1f} MB/s wall, {size / cpu:6.1f} CPU")
    (w1, c1), (w100, c100) = result["one file"], result["100 files"]
    print(f"  one file ÷ 100 files: wall x{w1 / w100:.2f}, CPU x{c1 / c100:.2f}")
    findings = len(scan(text))
    print(f"  findings in the text: {findings} (of the repeated source)")


if __name__ == "__main__":
    main()

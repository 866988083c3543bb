"""Whole-process start-up and long listings (issue 11, items 1 and 3).

    python benchmarks/startup.py [--quick] [--samples N] [--before REV]

Installs loopx-git from this checkout into a fresh virtual environment (``pip install .``, as the
README does: no editable finder on the import path) and, with ``--before``, the revision REV into
a second one, so that "before" and "after" are measured in the same run on the same machine. It
seeds one repository with 10k todos (half of them done) and 100k events (2k / 20k with --quick)
and times whole processes — what a user or an agent loop waits for — interleaved (a, b, a, b, ...),
with the CPU time of each process (user + system, from ``os.wait4``) beside its wall time:

- ``python -c "import pygit2"``: the baseline every ratio is taken against;
- ``loopx --version`` and ``loopx status`` at an unchanged tip (the card answered from the cache);
- ``loopx todo add`` followed each time by ``loopx status`` (the card recomputed at the new tip);
- ``loopx todo list`` of every open todo as text (piped) and as ``--format json``;
- the floor under any write that validates through the models: processes that only import pygit2,
  then pydantic, ruamel.yaml and loopx's model classes on top (what ``todo add`` cannot do without).

Then prints the import profile of ``loopx status`` and ``loopx todo add`` (``python -X importtime``),
summed by package. Repositories and environments live under benchmarks/.work/ (ignored by git).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"
sys.path.insert(0, str(HERE))

import bench  # noqa: E402 - the seeding of bench.py, from this folder


def venv(name: str, source: Path) -> Path:
    """A virtual environment with loopx-git installed from ``source``; its bin folder."""
    path = WORK / name
    shutil.rmtree(path, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    subprocess.run(
        [str(path / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(source)],
        check=True,
    )
    return path / "bin"


def checkout(rev: str) -> Path:
    """The tree of ``rev`` of this repository, exported to a folder."""
    out = WORK / f"src-{rev}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of one whole process (user + system time of the child, waited for), its
    output read through a pipe as a script reads it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed: {proc.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu * 1000


def sample(cases: dict[str, list[str]], cwd: Path, n: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) ms of each command line, sampled interleaved."""
    walls: dict[str, list[float]] = defaultdict(list)
    cpus: dict[str, list[float]] = defaultdict(list)
    for i in range(n):
        for name, cmd in cases.items():
            wall, cpu = timed([c.replace("{i}", str(i)) for c in cmd], cwd)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {name: (statistics.median(walls[name]), statistics.median(cpus[name])) for name in cases}


def import_profile(python: Path, args: list[str], cwd: Path) -> dict[str, float]:
    """Milliseconds of import (self times summed) by top-level package, from ``-X importtime``."""
    proc = subprocess.run(
        [str(python), "-X", "importtime", "-m", "loopx_git", *args], cwd=cwd, capture_output=True, text=True
    )
    totals: dict[str, float] = defaultdict(float)
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        name = name.strip()
        group = name.split(".")[0]
        if group == "loopx_git":
            group = "loopx_git." + (name.split(".")[1] if "." in name else "")
        totals[group] += int(self_us) / 1000
    return dict(totals)


def summarise(profile: dict[str, float]) -> str:
    groups: dict[str, float] = defaultdict(float)
    for name, ms in profile.items():
        key = name if name in ("pygit2", "pydantic", "pydantic_core", "typer", "rich", "ruamel") else None
        if key is None:
            key = "loopx_git" if name.startswith("loopx_git") else "stdlib and other"
        groups[key] += ms
    total = sum(groups.values())
    parts = ", ".join(f"{k} {v:.0f}" for k, v in sorted(groups.items(), key=lambda kv: -kv[1]))
    return f"{total:.0f} ms: {parts}"


FLOORS = {
    "import pygit2": "import pygit2",
    "+ pydantic": "import pygit2; from pydantic import BaseModel, Field, TypeAdapter",
    "+ ruamel.yaml": "import pygit2; from pydantic import BaseModel, Field, TypeAdapter; import ruamel.yaml",
    "+ loopx's model classes": "import pygit2; import ruamel.yaml; import loopx_git.model.state",
}
"""Cumulative imports, each a whole process: what a write pays before it reads or writes anything."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="2k todos / 20k events, fewer samples")
    parser.add_argument("--samples", type=int, default=None, help="samples per command (default 15; 7 quick)")
    parser.add_argument("--before", metavar="REV", help="also measure revision REV of this repository")
    args = parser.parse_args()
    n = args.samples or (7 if args.quick else 15)
    todos, events = (2_000, 20_000) if args.quick else (10_000, 100_000)

    WORK.mkdir(exist_ok=True)
    installs = {"now": venv("venv-now", ROOT)}
    if args.before:
        installs["before"] = venv("venv-before", checkout(args.before))
    repo = bench.fresh_repo("startup")
    bench.seed(repo, todos=todos, events=events)
    print(f"seeded {todos} todos, {events} events", flush=True)

    for label, bin_dir in installs.items():
        loopx, python = str(bin_dir / "loopx"), bin_dir / "python"
        subprocess.run([loopx, "status"], cwd=repo, check=True, capture_output=True)  # the cache, as a user has it
        base_cmd = [str(python), "-c", "import pygit2; print('ok')"]
        reads = {
            "import pygit2": base_cmd,
            "loopx --version": [loopx, "--version"],
            "loopx status": [loopx, "status"],  # the tip does not move between samples: a cached answer
        }
        writes = {  # an agent's loop: a write, then a look at the card the write changed
            "import pygit2": base_cmd,
            "loopx todo add": [loopx, "todo", "add", "--text", "startup benchmark todo {i}"],
            "loopx status after a write": [loopx, "status"],
        }
        print(f"\n[{label}] whole processes, median of {n} (wall / CPU ms); ratios of CPU to `import pygit2`")
        for cases in (reads, writes):
            result = sample(cases, repo, n)
            base = result["import pygit2"][1]
            for name, (wall, cpu) in result.items():
                print(f"  {name:26} {wall:7.0f} / {cpu:6.0f}   x{cpu / base:5.2f}")
        floors = sample({name: [str(python), "-c", code] for name, code in FLOORS.items()}, repo, n)
        base = floors["import pygit2"][1]
        print("  the floor of a validated write (imports only):")
        for name, (wall, cpu) in floors.items():
            print(f"    {name:32} {wall:7.0f} / {cpu:6.0f}   x{cpu / base:5.2f}")
        listing = sample(
            {"text": [loopx, "todo", "list"], "json": [loopx, "todo", "list", "--format", "json"]}, repo, max(3, n // 3)
        )
        (tw, tc), (jw, jc) = listing["text"], listing["json"]
        print(f"  todo list, {todos // 2}+ open todos: text {tw:.0f} / {tc:.0f}, json {jw:.0f} / {jc:.0f}")
        print(f"    text / json: wall x{tw / jw:.2f}, CPU x{tc / jc:.2f}")
        subprocess.run([loopx, "status"], cwd=repo, check=True, capture_output=True)
        for what in (["status"], ["todo", "add", "--text", "profiled"]):
            print(f"  import profile of `loopx {' '.join(what)}`: {summarise(import_profile(python, what, repo))}")


if __name__ == "__main__":
    main()

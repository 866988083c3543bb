"""The dashboard at 100k events / 10k todos (issue 17): its size and its build time against a cold
``status`` of the same repository, as whole processes.

    python benchmarks/dashboard.py [--events 100000] [--samples 3] [--work DIR] [--keep]

The history is scale.py's (one goal, a todo every ten events, half of them done; built or reused
under ``--work``). Interleaved samples, medians of wall and CPU time (user + system of the child):

- cold ``status``: the fold cache removed first, so every event is read and folded;
- ``dashboard`` cold: the same start; it reads every record once, folds what it read (keeping the
  fold as the cache) and builds the page (the commit trailers walked for the sources, the output
  scanned, the files written);
- ``dashboard`` warm: the fold cache present (as after any command): the goal's event heads are
  read for the lanes, then the page is built.

The history has 22 commits; a real one has about a commit per write. The walk of the commits'
trailers is measured apart in benchmarks/README.md ("The dashboard"): 1.2-1.4 s CPU at 100k commits.

The target: a dashboard in at most twice the time of a cold ``status`` in the same run, and a page
under 2 MB when opened (the HTML, its stylesheet and script, and the data loaded at once).
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--work", type=Path, help="where the history goes (scale.py's --work: reused)")
    parser.add_argument("--keep", action="store_true", help="keep the history for a later run")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="loopx-dashboard-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        repo = work / f"goal-{args.events}"
        info = scale.built(repo, args.events, 5000, None)
        print(f"# {json.dumps(info)}", file=sys.stderr)
        out = work / "site"

        def fresh(cold: bool):
            def prepare() -> None:
                shutil.rmtree(out, ignore_errors=True)
                if cold:
                    scale.drop_cache(repo)
                else:
                    scale.run(scale.loopx("status"), repo)

            return prepare

        dashboard = scale.loopx("dashboard", "--out", str(out))
        got = scale.sample(
            {
                "status cold": (lambda: scale.drop_cache(repo), (scale.loopx("status"), repo)),
                "dashboard cold": (fresh(True), (dashboard, repo)),
                "dashboard warm": (fresh(False), (dashboard, repo)),
            },
            args.samples,
        )
        shutil.rmtree(out, ignore_errors=True)
        result = json.loads(scale.run(scale.loopx("--format", "json", "dashboard", "--out", str(out)), repo)[3])
        page = result["goals"][0]
        base = got["status cold"][1]
        print(f"\n### Dashboard at {info['events']:,} events / {info['todos']:,} todos (medians of {args.samples})\n")
        print("| what | wall / CPU ms | peak RSS | CPU ÷ cold `status` |")
        print("| --- | --- | --- | --- |")
        for name, (wall, cpu, rss) in got.items():
            print(f"| {name} | {wall:,.0f} / {cpu:,.0f} | {rss:,.0f} MB | {cpu / base:.2f} |")
        print(
            f"\nPage on opening: {page['page_bytes'] / 1e6:.2f} MB; the whole folder: "
            f"{page['total_bytes'] / 1e6:.2f} MB in {page['files']} files."
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

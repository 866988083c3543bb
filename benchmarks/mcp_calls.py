"""A tool call over a warm ``loopx mcp`` server against the same operation as a whole ``loopx``
process (issue 18: target at most 0.2x the wall time), in the same run, interleaved.

    python benchmarks/mcp_calls.py [--events 10000] [--samples 15] [--work DIR] [--keep]

The history is scale.py's (built or reused under ``--work``). The client is the ``mcp`` SDK's own,
over stdio, in this process; a call's wall time is measured at the client (request out, result in:
what an agent waits for), and the server's CPU time is read from ``/proc`` around each batch of calls
(clock ticks are 10 ms, so it is given as the mean over the batch). A CLI sample is a whole process,
as scale.py measures one: its wall time and its own user + system time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale  # noqa: E402 - the histories of scale.py, from this folder

TICK = os.sysconf("SC_CLK_TCK")


def server_pid() -> int:
    """The ``loopx mcp`` child this process started (the SDK does not hand its pid out)."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"mcp" in cmdline:
            return int(entry.name)
    raise SystemExit("the server process was not found")


def cpu_of(pid: int) -> float:
    """User + system seconds of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


CASES = {
    # name: (CLI arguments, tool, tool arguments); {i} is the sample's number
    "status (read)": (["--format", "json", "status"], "loopx_status", {}),
    "todo show (read)": (
        ["--format", "json", "todo", "show", "-t", "{todo}"],
        "loopx_todo_show",
        {"todo_id": "{todo}"},
    ),
    "event append (write)": (
        ["--format", "json", "event", "append", "--kind", "note", "--summary", "bench {i}"],
        "loopx_event_append",
        {"kind": "note", "summary": "bench {i}"},
    ),
    "todo add (write)": (
        ["--format", "json", "todo", "add", "--text", "bench {i}"],
        "loopx_todo_add",
        {"text": "bench {i}"},
    ),
}


def filled(value, **names):
    if isinstance(value, str):
        return value.format(**names)
    if isinstance(value, dict):
        return {k: filled(v, **names) for k, v in value.items()}
    return [filled(v, **names) for v in value]


async def measure(repo: Path, samples: int, todo: str) -> tuple[dict, list[float]]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=scale.PY,
        args=["-m", "loopx_git", "mcp", "-g", scale.GOAL],
        cwd=str(repo),
        env={**os.environ, "NO_COLOR": "1"},
    )
    rows: dict = {}
    starts = []
    for _ in range(3):  # start-up: spawn to initialized, as a client pays it once per session
        begin = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            starts.append((time.perf_counter() - begin) * 1000)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        pid = server_pid()
        for name, (argv, tool, arguments) in CASES.items():
            await session.call_tool(tool, filled(arguments, i="warm", todo=todo))  # warm: first call loads
            cli_wall, cli_cpu, tool_wall, tool_cpu = [], [], [], 0.0
            for i in range(samples):
                wall, cpu, _, _ = scale.run(scale.loopx(*filled(argv, i=f"cli {i}", todo=todo)), repo)
                cli_wall.append(wall)
                cli_cpu.append(cpu)
                before, begin = cpu_of(pid), time.perf_counter()
                result = await session.call_tool(tool, filled(arguments, i=f"mcp {i}", todo=todo))
                tool_wall.append((time.perf_counter() - begin) * 1000)
                tool_cpu += cpu_of(pid) - before
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.structured_content}")
            rows[name] = (
                statistics.median(cli_wall),
                statistics.median(cli_cpu),
                statistics.median(tool_wall),
                tool_cpu * 1000 / samples,
            )
    return rows, starts


def main() -> None:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="loopx-mcp-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        repo = work / f"goal-{args.events}"
        info = scale.built(repo, args.events, 5000, None)
        import loopx_git

        with loopx_git.open(repo) as handle:
            todo = sorted(handle.state().goals[scale.GOAL].live)[0]
        scale.run(scale.loopx("status"), repo)  # the fold cached at the tip, as after any command
        rows, starts = anyio.run(measure, repo, args.samples, todo)
        print(
            f"\n### A warm `loopx mcp` tool call against a whole `loopx` process, {info['events']:,} events "
            f"(medians of {args.samples}, interleaved)\n"
        )
        print("| operation | CLI process wall / CPU ms | tool call wall ms / server CPU ms | wall ratio |")
        print("| --- | --- | --- | --- |")
        for name, (cli_wall, cli_cpu, tool_wall, tool_cpu) in rows.items():
            print(
                f"| {name} | {cli_wall:,.0f} / {cli_cpu:,.0f} | {tool_wall:,.1f} / {tool_cpu:,.1f} | "
                f"{tool_wall / cli_wall:.3f}x |"
            )
        print(
            f"\nServer start-up (spawn to initialized, paid once per session): median {statistics.median(starts):,.0f} ms "
            f"of {', '.join(f'{s:,.0f}' for s in starts)}."
        )
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

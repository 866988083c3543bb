"""``loopx verify``, ``doctor``, ``gc``, ``schema`` and ``demo``."""
from __future__ import annotations

from typing import Optional

import typer

from loopx_git.cli import context, render


def register(root: typer.Typer) -> None:
    @root.command("verify")
    def verify(ctx: typer.Context) -> None:
        """Walk the whole state branch and report every broken invariant (exit 1 if any).

        Checks: no event or run file changed or deleted after its commit, every record valid, event ids unique,
        every YAML document equal to the fold of the events.
        """
        c = context.get(ctx)
        with c.session() as repo, render.Progress() as progress:
            report = repo.verify(progress)

        def text(r) -> None:
            for p in r.problems:
                where = f"{p.commit[:12]}:" if p.commit else ""
                render.line(f"{where}{p.path}: {p.code}: {p.message}", style="red")
            for conflict in r.conflicts:
                render.line(f"conflict {conflict.kind} ({conflict.event_id}): {conflict.message}", style="yellow")
            verdict = "ok" if r.ok else f"{len(r.problems)} problem(s)"
            render.line(f"{verdict}: {r.commits_checked} commits, {r.records_checked} records, "
                        f"{r.documents_checked} documents checked on {r.ref}", style="green" if r.ok else "red")

        render.emit(c, report, text)
        if not report.ok:
            raise typer.Exit(1)

    @root.command("doctor")
    def doctor(ctx: typer.Context, remotes: bool = typer.Option(True, "--remotes/--offline",
               help="Ask each remote whether it has the state branch (git ls-remote).")) -> None:  # fmt: skip
        """Check the set-up: hooks, ignore block, state branch, remote copies, object store.

        Reports the installation, the hooks (present and current), the .gitignore block, the state branch
        (present, pushed or not) and the object store. Exit 1 when something needs `loopx connect`.

        Example: loopx doctor
        """
        c = context.get(ctx)
        with c.session() as repo:
            stats = repo.object_stats()
            state = repo.state()
            health = repo.health()
            events = sum(g.event_count for g in state.goals.values())
            data = {
                "state_ref": repo.ref, "tip": repo.tip, "remote_copies": repo.remote_copies(),
                "remotes": repo.remote_status() if remotes else [],
                "goals": sorted(state.goals), "events": events, **health.to_json(),
                "loose_objects": stats.loose_objects, "loose_bytes": stats.loose_bytes, "packs": stats.packs,
                "pack_bytes": stats.pack_bytes,
                "bytes_per_event": round(stats.total_bytes / events) if events else None,
            }  # fmt: skip
        advice = _advice(data, bare=repo.git.workdir is None)
        data["problems"] = advice

        def text(d: dict) -> None:
            render.kv([("loopx", f"{d['loopx_version']} at {d['loopx_executable']}"), ("state branch", f"{d['state_ref']} at {(d['tip'] or 'missing')[:12]}")])
            for copy in d["remote_copies"] or [{"ref": "(no remote-tracking copy; nothing pushed or fetched yet)", "relation": "-"}]:
                render.kv([("remote copy", f"{copy['ref']}: {copy['relation']}")])
            for r in d["remotes"]:
                has = {True: "has the state branch", False: "has no state branch (loopx sync creates it)",
                       None: f"unreachable: {r['error']}"}[r["has_state_branch"]]  # fmt: skip
                render.kv([(f"remote {r['remote']}", has)])
            for hook in d["hooks"]:
                said = ("current" if hook["current"] else f"outdated (v{hook['version']})") if hook["installed"] else "missing"
                render.kv([(f"{hook['hook']} hook", said + (f", chained with {hook['chained']}" if hook["chained"] else ""))])
            render.kv([("pre-commit framework", "yes" if d["pre_commit_framework"] else "no"),
                       (".gitignore block", "present" if d["ignore_block_present"] else "missing"),
                       ("goals", d["goals"]), ("events", d["events"]), ("loose objects", d["loose_objects"]),
                       ("packs", d["packs"]), ("bytes per event", d["bytes_per_event"])])  # fmt: skip
            for problem in d["problems"]:
                render.line(f"problem: {problem}", style="yellow")

        render.emit(c, data, text)
        if advice:
            raise typer.Exit(1)

    @root.command("gc")
    def gc(ctx: typer.Context) -> None:
        """Pack the repository's objects now (git gc); loopx also packs by itself past a threshold."""
        c = context.get(ctx)
        with c.session() as repo:
            before = repo.object_stats()
            after = repo.gc()
        data = {"before_bytes": before.total_bytes, "after_bytes": after.total_bytes,
                "loose_objects": after.loose_objects, "packs": after.packs}  # fmt: skip
        render.emit(c, data, lambda d: render.line(f"packed: {d['before_bytes']} -> {d['after_bytes']} bytes"))

    def _advice(d: dict, *, bare: bool) -> list[str]:
        out = []
        if d["tip"] is None:
            out.append("no state branch: run `loopx connect`")
        if bare:
            return out
        if not d["pre_commit_framework"]:
            for hook in d["hooks"]:
                if not hook["installed"] or not hook["current"]:
                    out.append(f"{hook['hook']} hook {'outdated' if hook['installed'] else 'missing'}: run `loopx connect`")
        if not d["ignore_block_present"]:
            out.append(".gitignore has no current local-state block: run `loopx connect`")
        return out

    @root.command("schema")
    def schema(ctx: typer.Context, name: Optional[str] = typer.Argument(None, help="Record name; leave out to list.")) -> None:
        """Print the JSON Schema of a record. Example: loopx schema todo_item_v0"""
        import json

        from loopx_git.views.schema import SCHEMAS, schema as get_schema

        if name is None:
            for known in sorted(SCHEMAS):
                typer.echo(known)
            return
        typer.echo(json.dumps(get_schema(name), indent=2))

    @root.command("demo")
    def demo(keep: bool = typer.Option(False, "--keep", help="Keep the demo repository and print its path.")) -> None:
        """A scripted walk through a temporary repository: connect, a goal, two agents, todos, a claim race,
        a deferred todo woken by its dependency, a PR-merge wake-up, status and verify."""
        from loopx_git.cli.demo import run_demo

        raise typer.Exit(run_demo(keep=keep))

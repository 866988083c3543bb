"""``loopx verify``, ``doctor``, ``gc``, ``schema`` and ``demo``."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.params import Argument, Context, Group, Option
from loopx_git.errors import Exit

MANY_PACKS = 50
"""Past this many packs doctor suggests `loopx gc` (loopx's own packing keeps far fewer)."""


def register(root: Group) -> None:
    @root.command("verify")
    def verify(
        ctx: Context,
        policy_from: str | None = Option(
            None,
            "--policy-from",
            metavar="REF",
            help="Scan records with the safety "
            "policy committed at REF (a trusted branch, e.g. origin/main) instead "
            "of the work tree's.",
        ),
    ) -> None:
        """Walk the whole state branch and report every broken invariant (exit 1 if any).

        Checks: only the paths the layout defines, regular files no larger than 1 MiB, no name git's fsck refuses;
        no event or run file changed or deleted after its commit, every record valid and free of secrets, event
        ids unique; every YAML document equal to the fold of the events. A state ref that names no commit is a
        finding too. Writes run the same checks on what changed since the last verified tip.

        The safety policy is the work tree's (what writes use), except in a checkout of a state branch (CI
        checking out a pull request), which never supplies its own: there the defaults, or --policy-from.

        Examples:
          loopx verify
          loopx --state-branch refs/remotes/origin/proposal verify --policy-from origin/main
        """
        context.check_revision(policy_from, field="policy_from")
        c = context.get(ctx)
        with c.session() as repo, render.Progress() as progress:
            report = repo.verify(progress, policy_from=policy_from)

        def text(r) -> None:
            for p in r.problems:
                where = f"{p.commit[:12]}:" if p.commit else ""
                render.line(render.one_line(f"{where}{p.path}: {p.code}: {p.message}"), style="red")
            for conflict in r.conflicts:
                render.line(f"conflict {conflict.kind} ({conflict.event_id}): {conflict.message}", style="yellow")
            verdict = "ok" if r.ok else f"{len(r.problems)} problem(s)"
            render.line(
                f"{verdict}: {r.commits_checked} commits, {r.records_checked} records, "
                f"{r.documents_checked} documents checked on {r.ref}",
                style="green" if r.ok else "red",
            )

        render.emit(c, report, text)
        if not report.ok:
            raise Exit(1)

    @root.command("doctor")
    def doctor(
        ctx: Context,
        remotes: bool = Option(
            True, "--remotes/--offline", help="Ask each remote whether it has the state branch (git ls-remote)."
        ),
    ) -> None:
        """Check the set-up: hooks, ignore block, state branch, remote copies, object store.

        Reports the installation, the hooks (present, current, and whether the loopx they run is there), the
        .gitignore block, the state branch (present, pushed or not) and the object store. Exit 1 when something needs `loopx connect`.

        Example: loopx doctor
        """
        c = context.get(ctx)
        with c.session() as repo:
            store = repo.store_health()
            state = repo.state()
            health = repo.health()
            events = sum(g.event_count for g in state.goals.values())
            data = {
                "state_ref": repo.ref,
                "tip": repo.tip,
                "remote_copies": repo.remote_copies(),
                "remotes": repo.remote_status() if remotes else [],
                "goals": sorted(state.goals),
                "events": events,
                **health.to_json(),
                **store,
                "bytes_per_event": round((store["loose_bytes"] + store["pack_bytes"]) / events) if events else None,
            }
        advice = _advice(data, bare=repo.git.workdir is None)
        data["problems"] = advice

        def text(d: dict) -> None:
            render.kv(
                [
                    ("loopx", f"{d['loopx_version']} at {d['loopx_executable']}"),
                    ("state branch", f"{d['state_ref']} at {(d['tip'] or 'missing')[:12]}"),
                ]
            )
            for copy in d["remote_copies"] or [
                {"ref": "(no remote-tracking copy; nothing pushed or fetched yet)", "relation": "-"}
            ]:
                render.kv([("remote copy", f"{copy['ref']}: {copy['relation']}")])
            for r in d["remotes"]:
                has = {
                    True: "has the state branch",
                    False: "has no state branch (loopx sync creates it)",
                    None: f"unreachable: {r['error']}",
                }[r["has_state_branch"]]
                render.kv([(f"remote {r['remote']}", has)])
            for hook in d["hooks"]:
                said = (
                    ("current" if hook["current"] else f"outdated (v{hook['version']})")
                    if hook["installed"]
                    else "missing"
                )
                if hook["installed"]:
                    said += f", runs {hook['target']}" + (" (not found)" if hook["target_missing"] else "")
                render.kv(
                    [(f"{hook['hook']} hook", said + (f", chained with {hook['chained']}" if hook["chained"] else ""))]
                )
            render.kv(
                [
                    ("pre-commit framework", "yes" if d["pre_commit_framework"] else "no"),
                    (".gitignore block", "present" if d["ignore_block_present"] else "missing"),
                    ("goals", d["goals"]),
                    ("events", d["events"]),
                    ("loose objects", d["loose_objects"]),
                    (
                        "unreachable objects",
                        f"{d['unreachable_objects']} (left by writes that lost a race; `loopx gc` "
                        f"removes those older than {d['prune_expire']})",
                    ),
                    ("packs", d["packs"]),
                    ("bytes per event", d["bytes_per_event"]),
                ]
            )
            for problem in d["problems"]:
                render.line(f"problem: {problem}", style="yellow")

        render.emit(c, data, text)
        if advice:
            raise Exit(1)

    @root.command("gc")
    def gc(ctx: Context) -> None:
        """Pack the repository's objects now (git gc) and remove the objects of lost races.

        loopx also packs by itself, a bounded number of packs, once enough loose objects pile up. Writes that
        lose a race to another writer leave unreachable loose objects; they are pruned once older than
        `git config loopx.pruneExpire` (default 1.hour.ago: a concurrent writer may still need a just-written
        object). A .git/gc.log left by git's own auto gc is removed.

        Examples:
          loopx gc
          git config loopx.pruneExpire 10.minutes.ago && loopx --format json gc
        """
        c = context.get(ctx)
        with c.session() as repo:
            done = repo.gc()
        from loopx_git.views.outputs import GcResult

        data = GcResult(
            before_bytes=done.before.total_bytes,
            after_bytes=done.after.total_bytes,
            loose_objects=done.after.loose_objects,
            packs=done.after.packs,
            unreachable_before=done.unreachable_before.objects,
            unreachable_pruned=max(0, done.unreachable_before.objects - done.unreachable_after.objects),
            unreachable_kept=done.unreachable_after.objects,
            prune_expire=done.unreachable_after.expire,
            gc_log_removed=done.gc_log_removed,
        ).model_dump(mode="json")

        def text(d: dict) -> None:
            render.line(
                f"packed: {d['before_bytes']} -> {d['after_bytes']} bytes in {d['packs']} pack(s), "
                f"{d['loose_objects']} loose object(s) left"
            )
            render.line(
                f"lost races: {d['unreachable_pruned']} unreachable object(s) pruned, {d['unreachable_kept']} "
                f"kept (younger than {d['prune_expire']})"
            )
            if d["gc_log_removed"]:
                render.line("removed .git/gc.log")

        render.emit(c, data, text)

    def _advice(d: dict, *, bare: bool) -> list[str]:
        out = []
        if d["tip"] is None:
            out.append("no state branch: run `loopx connect`")
        if d["gc_log"]:
            out.append(
                f".git/gc.log from git's auto gc ({d['gc_log']['says'] or 'empty'}) stops git from packing this "
                "repository by itself: run `loopx gc`, which prunes what it complains about and removes it"
            )
        if d["packs"] > MANY_PACKS:
            out.append(f"{d['packs']} packs slow every read: run `loopx gc`")
        if bare:
            return out
        if not d["pre_commit_framework"]:
            for hook in d["hooks"]:
                if hook["installed"] and hook["target_missing"]:  # the shim refuses every commit or push until fixed
                    out.append(
                        f"{hook['hook']} hook runs {hook['target']}, which is not found, so it refuses: install "
                        "loopx-git or activate its environment, then run `loopx connect`"
                    )
                elif not hook["installed"] or not hook["current"]:
                    out.append(
                        f"{hook['hook']} hook {'outdated' if hook['installed'] else 'missing'}: run `loopx connect`"
                    )
        if not d["ignore_block_present"]:
            out.append(".gitignore has no current local-state block: run `loopx connect`")
        return out

    @root.command("schema")
    def schema(
        ctx: Context,
        name: str | None = Argument(None, help="Output or record name; leave out to list them."),
        list_: bool = Option(False, "--list", help="List every schema and the commands that print it."),
    ) -> None:
        """Print the JSON Schema of a command's JSON output or of a record; list them all with --list.

        Examples:
          loopx schema --list
          loopx schema loopx_write_result_v0
        """
        import json

        from loopx_git.views.schema import listing
        from loopx_git.views.schema import schema as get_schema

        c = context.get(ctx)
        if name is None or list_:
            rows = listing()
            render.emit(
                c,
                rows,
                lambda rs: render.table(
                    ["schema", "printed by"], [(r["name"], r["emitted_by"]) for r in rs], ids=["schema"]
                ),
            )
            return
        render.emit(c, get_schema(name), lambda s: print(json.dumps(s, indent=2)))

    @root.command("demo")
    def demo(
        ctx: Context,
        keep: bool = Option(False, "--keep", help="Keep the demo repository and print its path."),
    ) -> None:
        """A scripted walk through a temporary repository: connect, a goal, two agents, todos, a claim race,
        a deferred todo woken by its dependency, a PR-merge wake-up, status and verify.

        With --format json, one report: each step's title and what it showed."""
        from loopx_git.cli.demo import run_demo

        c = context.get(ctx)
        report = run_demo(keep=keep, live=c.format == context.OutputFormat.text)
        render.emit(c, report, lambda r: None)  # text was printed as it went
        raise Exit(0 if report.ok else 1)

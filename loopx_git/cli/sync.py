"""``loopx sync``, ``pull``, ``push`` and ``repair``: the state branch across clones."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from loopx_git.cli import context, render
from loopx_git.cli.context import REMOTE
from loopx_git.cli.params import Context, Group


def _pulled(d: dict) -> None:
    said = {
        "up-to-date": "already up to date",
        "ahead": "local is ahead of the remote",
        "fast-forward": "fast-forwarded",
        "merged": f"merged {d['events_from_remote']} record(s) from the remote",
        "no-remote-branch": "the remote has no state branch yet",
    }[d["action"]]
    render.line(f"{d['remote']}: {said}" + (f"; pushed {(d['local_tip'] or '')[:12]}" if d.get("pushed") else ""))
    for conflict in d.get("conflicts", []):
        render.line(f"conflict {conflict['kind']} ({conflict['event_id']}): {conflict['message']}", style="yellow")


@contextmanager
def _refusals(c) -> Iterator[None]:
    """A refused push is an error (exit 1, ``error[push-refused]`` on stderr); in JSON or YAML it also
    prints its facts on stdout as ``{"error": {...}}``: who refused and the lines it printed, redacted."""
    from loopx_git.errors import PushRefused

    try:
        yield
    except PushRefused as exc:
        if c.format != context.OutputFormat.text:
            render.emit(c, {"error": exc.to_json()}, lambda _: None)
        raise


def register(root: Group) -> None:
    @root.command("sync")
    def sync_cmd(ctx: Context, remote: str = REMOTE) -> None:
        """Pull the remote state branch (fast-forward or merge), then push; retried if another clone pushed first.

        Merges union both sides' events and re-derive the documents; conflicting facts (two claims of one todo)
        are kept as recorded conflicts, shown here and in `status`. Never a force push; the work tree is not touched.

        Example: loopx sync --remote origin
        """
        c = context.get(ctx)
        with _refusals(c), c.session() as repo, render.Progress() as progress:
            result = repo.sync(remote, progress=progress)
        render.emit(c, result.to_json(), _pulled)

    @root.command("pull")
    def pull_cmd(ctx: Context, remote: str = REMOTE) -> None:
        """Fetch the remote state branch and fast-forward or merge into the local one (never pushes).

        Example: loopx pull
        """
        from loopx_git.sync import SyncResult

        c = context.get(ctx)
        with c.session() as repo, render.Progress() as progress:
            result = SyncResult(remote, repo.pull(remote, progress=progress))
        render.emit(c, result.to_json(), _pulled)

    @root.command("push")
    def push_cmd(ctx: Context, remote: str = REMOTE) -> None:
        """Push local state commits to the remote; refused if the remote moved since the last pull.

        Example: loopx push
        """
        c = context.get(ctx)
        with _refusals(c), c.session() as repo:
            outcome = repo.push(remote)
            data = {"remote": remote, "pushed": outcome.pushed, "tip": repo.tip}
        if not outcome.ok:
            from loopx_git.errors import ConflictError

            raise ConflictError(
                f"the remote moved since the last pull ({outcome.reason})",
                code="push-lost",
                hint="run `loopx sync` to merge and push",
            )
        render.emit(
            c, data, lambda d: render.line(f"{d['remote']}: " + ("pushed" if d["pushed"] else "nothing to push"))
        )

    @root.command("repair")
    def repair_cmd(ctx: Context) -> None:
        """Re-derive every document from the events in one commit (after a plain-git merge left them drifted).

        Example: loopx repair && loopx verify
        """
        c = context.get(ctx)
        with c.session() as repo:
            result = repo.repair()
        render.write_result(
            c,
            result,
            lambda r: render.line(
                f"repaired: {r.write.summary}" if r.changed else "documents agree with the events; nothing to repair"
            ),
        )

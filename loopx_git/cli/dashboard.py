"""``loopx dashboard``: a static page of a goal's lanes, gates, todos and evidence."""

from __future__ import annotations

from loopx_git.cli import context, render
from loopx_git.cli.params import Context, Group, Option
from loopx_git.errors import BadParameter


def register(root: Group) -> None:
    @root.command("dashboard")
    def dashboard(
        ctx: Context,
        out: str = Option(..., "--out", "-o", metavar="DIR", help="The folder to write the site into."),
        goal_id: str | None = context.GOAL_ID,
        all_goals: bool = Option(False, "--all-goals", help="Every goal: a folder each, and an index of them."),
        commit_url: str | None = Option(
            None,
            "--commit-url",
            metavar="URL",
            help="Link each source commit, e.g. 'https://github.com/OWNER/REPO/commit/{commit}'.",
        ),
        open_: bool = Option(False, "--open", help="Open the page in the default browser when written."),
    ) -> None:
        """Write a static dashboard of the goal: lanes over time, the goal card, todos, evidence and runs.

        Built from the state branch alone and checked with the public-safety rules before anything is
        written (a finding refuses it all). The folder is self-contained: open index.html from disk or
        publish the folder (templates/github/ has a GitHub Pages workflow). Every element names its
        source event and commit; the page says which commit it was built from.

        Examples:
          loopx dashboard -g parser --out site --open
          loopx dashboard --all-goals --out public --commit-url 'https://github.com/OWNER/REPO/commit/{commit}'
        """
        from pathlib import Path

        if all_goals and goal_id is not None:
            raise BadParameter("takes either --goal-id or --all-goals, not both", param_hint="'--all-goals'")
        c = context.get(ctx)
        with c.session() as repo:
            # unchecked here: the build checks it against the state it reads anyway (a check now
            # would fold a cold history once more)
            goals = None if all_goals else [c.goal(repo, goal_id, check=False)]
            result = repo.dashboard(goals, Path(out), commit_url=commit_url)

        def text(r) -> None:
            for page in r.goals:
                render.line(
                    f"{page.goal_id}: {Path(r.out) / page.path} ({page.events} events, {page.todos} todos; "
                    f"{page.page_bytes / 1024:,.0f} KiB on opening, {page.total_bytes / 1024:,.0f} KiB in "
                    f"{page.files} files)"
                )
            render.line(f"built from commit {(r.tip or 'none')[:12]} of {r.ref}", style="green")

        render.emit(c, result, text)
        if open_:
            import webbrowser

            index = Path(result.out) / ("index.html" if all_goals else result.goals[0].path)
            webbrowser.open(index.resolve().as_uri())

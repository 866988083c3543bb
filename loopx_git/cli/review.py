"""``loopx review-diff BASE..HEAD`` and ``loopx propose``: state changes reviewed as pull requests."""

from __future__ import annotations

import re
import sys
from enum import Enum

from loopx_git.cli import context, render
from loopx_git.cli.params import Argument, Context, Group, Option
from loopx_git.errors import BadParameter, Exit

SECTION_TITLES = {
    "todos": "Todos",
    "goal": "Goal edits",
    "gates": "Gates and rewards",
    "handoffs": "Handoffs",
    "rollbacks": "Rollbacks",
    "runs": "Run records",
    "facts": "Other facts",
}
TODO_COUNTS = (
    "added",
    "claimed",
    "completed",
    "blocked",
    "deferred",
    "superseded",
    "released",
    "reopened",
    "compensated",
)


class ReviewFormat(str, Enum):
    text = "text"
    markdown = "markdown"
    json = "json"


def commit_url_template(remote_url: str | None) -> str | None:
    """``https://host/owner/repo/commit/{sha}`` for GitHub-, GitLab- or Gitea-style remotes."""
    if not remote_url:
        return None
    m = re.match(
        r"^(?:https?://(?:[^@/]+@)?|ssh://git@|git@)(?P<host>[^/:]+)[:/](?P<path>.+?)(?:\.git)?/?$", remote_url
    )
    if m is None:
        return None
    separator = "/-/commit/" if "gitlab" in m.group("host") else "/commit/"
    return f"https://{m.group('host')}/{m.group('path')}{separator}{{sha}}"


_MENTION = re.compile(r"(?<![A-Za-z0-9_])@(?=[A-Za-z0-9_-])")
"""An ``@`` GitHub may read as a mention (``@everyone``, ``-@octocat``, ``@org/team``), not the one
inside an address (``ops@example.org``: a letter or digit before it)."""
_LINK = re.compile(r"\]\(\s*(?!https?://)")
"""Where a Markdown link or image ends its text and opens a target that is not http(s):
``[x](javascript:…)``, ``[a[b]c](data:…)`` — found at the ``](``, however the text nests brackets."""


def _cell(text: str | None) -> str:
    """State text as a pull-request comment shows it, never as markup it brings: on one line, HTML
    escaped (no ``<img onerror>``, no ``</details>`` closing ours, no ``<javascript:…>`` autolink),
    mentions neutralised (nobody is pinged by a todo), only http(s) links kept, and the table's
    ``|`` escaped (a backslash of the text's own cannot undo that)."""
    text = (text or "").replace("\r", " ").replace("\n", " ")
    text = text.replace("<", "&lt;").replace("\\", "&#92;")  # no tag can open: `->`, `a > b`, `R&D` stay
    text = _MENTION.sub("@&#8203;", text)
    text = _LINK.sub("\\]\\(", text)
    return text.replace("|", "\\|")


def _code(text: str | None) -> str:
    """Text inside a code span: a backtick would end it early, a line break or ``|`` the table row."""
    return (text or "").replace("`", "'").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _commit(sha: str | None, url: str | None) -> str:
    if not sha:
        return ""
    return f"[`{sha[:7]}`]({url.format(sha=sha)})" if url else f"`{sha[:7]}`"


def _policy_source(review, url: str | None = None, *, plain: bool = False) -> str:
    """Where the review's safety policy came from: the ref named and its commit."""
    commit = f"[{review.policy_commit[:7]}]" if plain else _commit(review.policy_commit, url)
    if review.policy_from == review.policy_commit:
        return commit
    return f"{review.policy_from} {commit}" if plain else f"`{_code(review.policy_from)}` {commit}"


def markdown(review, url: str | None = None) -> str:
    """The review as a pull-request comment: a summary, then per goal a section per kind of change
    and a per-agent count, then what failed verification or the safety rules."""
    out = [f"## loopx state review: `{_code(review.base)}`..`{_code(review.head)}`", ""]
    verdict = "verify ok, no safety findings" if review.ok else f"**{len(review.issues)} issue(s)** (see below)"
    out += [
        f"{len(review.commits)} commit(s), {len(review.changes)} change(s); {verdict}.",
        "",
        f"Safety policy: as committed at {_policy_source(review, url)}; flagged values show as "
        "`[REDACTED:<rule>] fp=<fingerprint>`.",
        "",
    ]
    for goal in review.goals():
        rows = [c for c in review.changes if c.goal_id == goal]
        out += [f"### Goal `{goal}`", ""]
        for section in SECTION_TITLES:
            items = [c for c in rows if c.section == section]
            if not items:
                continue
            out += [
                f"#### {SECTION_TITLES[section]}",
                "",
                "| change | todo | agent | details | commit |",
                "| --- | --- | --- | --- | --- |",
            ]
            out += [
                f"| {c.change} | {_cell(c.todo_id)} | {_cell(c.agent_id)} | {_cell(c.detail)} | {_commit(c.commit, url)} |"
                for c in items
            ]
            out.append("")
        agents = sorted({c.agent_id or "(person)" for c in rows if c.section == "todos"})
        if agents:
            out += [
                "#### By agent",
                "",
                "| agent | " + " | ".join(TODO_COUNTS) + " |",
                "| --- |" + " --- |" * len(TODO_COUNTS),
            ]
            for agent in agents:
                mine = [c.change for c in rows if c.section == "todos" and (c.agent_id or "(person)") == agent]
                out.append(f"| {agent} | " + " | ".join(str(mine.count(k)) for k in TODO_COUNTS) + " |")
            out.append("")
    if review.issues:
        out += ["### Issues", "", "| code | path | commit | message |", "| --- | --- | --- | --- |"]
        out += [
            f"| {i.code} | `{_code(i.path)}` | {_commit(i.commit, url)} | {_cell(i.message)} |" for i in review.issues
        ]
        out.append("")
    out += ["<details><summary>Commits</summary>", ""]
    out += [f"- {_commit(c.sha, url)} {_cell(c.subject)}" for c in review.commits]
    out += ["", "</details>", ""]
    return "\n".join(out)


def _text(review) -> None:
    render.line(
        f"{review.base}..{review.head}: {len(review.commits)} commit(s), {len(review.changes)} change(s), "
        + ("ok" if review.ok else f"{len(review.issues)} issue(s)")
        + f"; safety policy of {_policy_source(review, plain=True)}"
    )
    for goal in review.goals():
        render.line(f"goal {goal}", style="bold")
        for section in SECTION_TITLES:
            for c in (c for c in review.changes if c.goal_id == goal and c.section == section):
                who = f" by {c.agent_id}" if c.agent_id else ""
                render.line(
                    f"  {section:9} {c.change:12} {c.todo_id or '':16}{who}: {c.detail}  [{(c.commit or '')[:7]}]"
                )
    for issue in review.issues:
        render.line(
            render.one_line(f"issue {issue.code} {issue.path} [{(issue.commit or '')[:7]}]: {issue.message}"),
            style="red",
        )


def register(root: Group) -> None:
    @root.command("review-diff")
    def review_diff(
        ctx: Context,
        range_: str = Argument(..., metavar="BASE..HEAD", help="Two commits of state branches (see below)."),
        fmt: ReviewFormat | None = Option(
            None, "--format", "-f", help="text | markdown | json (default: the global --format)."
        ),
        commit_url: str | None = Option(
            None, "--commit-url", help="Link template with {sha} (default: from the origin remote for GitHub/GitLab)."
        ),
        policy_from: str | None = Option(
            None,
            "--policy-from",
            metavar="REF",
            help="Take the safety policy "
            "(pyproject.toml [tool.loopx.safety], .publicsafe-allow) committed at this "
            "trusted ref, e.g. origin/main (default: BASE). Never a ref the change controls.",
        ),
    ) -> None:
        """What changed in the state between two commits, as people review it; exit 1 if anything fails
        verification or the safety rules, or if a commit in the range changes a safety policy file.

        The safety policy comes from the base side only (BASE, or --policy-from), never from the change
        under review or the work tree; flagged values print as [REDACTED:<rule>] fp=<fingerprint>.

        BASE is a commit of the state branch's history: loopx/state, a remote's copy such as
        origin/loopx/state, or an earlier commit of either; the range's HEAD side is a state commit
        that shares history with it (the other side, a proposal). git's HEAD, main and the other
        project branches are code, not state: a range on them is refused.

        Examples:
          loopx review-diff loopx/state..origin/loopx/state   # what a sync would bring in, after git fetch
          loopx review-diff origin/loopx/state..origin/loopx/proposals/agent-a --format markdown > comment.md
          loopx review-diff origin/loopx/state..origin/loopx/proposals/agent-a --policy-from origin/main
        """
        from loopx_git.safety.mask import masked
        from loopx_git.views.review_diff import review

        if "..." in range_:  # git's symmetric difference: a review is of what HEAD adds to BASE
            raise BadParameter(
                f"{masked(range_)!r} uses '...'; give the two-dot form BASE..HEAD "
                "(for example loopx/state..origin/loopx/state)",
                param_hint="'BASE..HEAD'",
            )
        base, sep, head = range_.partition("..")
        if not sep or not base or not head:
            raise BadParameter(
                f"{masked(range_)!r} is not BASE..HEAD (for example loopx/state..origin/loopx/state)",
                param_hint="'BASE..HEAD'",
            )
        for side, spec in (("base", base), ("head", head), ("policy_from", policy_from)):
            context.check_revision(spec, field=side)
        c = context.get(ctx)
        with c.session() as repo:
            result = review(repo.git, repo.ref, base, head, policy_from=policy_from)
            url = commit_url or commit_url_template(repo.git.config_get("remote.origin.url"))
        chosen = fmt.value if fmt else c.format.value
        if chosen == "markdown":
            sys.stdout.write(markdown(result, url and masked(url)))  # the review is masked already
        elif chosen == "text":
            _text(result)
        else:
            from dataclasses import replace

            render.emit(replace(c, format=context.OutputFormat(chosen)), result, _text)
        if not result.ok:
            raise Exit(1)

    @root.command("propose")
    def propose(
        ctx: Context,
        branch: str | None = Option(None, "--branch", help="Proposal branch (default loopx/proposals/<tip>)."),
        remote: str = context.REMOTE,
    ) -> None:
        """Push the local state commits to a proposal branch for pull-request review; the remote state branch
        is left alone.

        Example: loopx propose --branch loopx/proposals/agent-a
        """
        c = context.get(ctx)
        with c.session() as repo:
            data = repo.propose(branch, remote=remote)
        render.emit(
            c,
            data,
            lambda d: render.line(
                f"pushed {d['tip'][:12]} to {d['remote']} {d['branch']}; open a pull request into {d['state_branch']}"
            ),
        )

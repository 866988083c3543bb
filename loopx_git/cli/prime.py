"""``loopx prime`` (the brief a fresh agent context reads first) and ``loopx agents-md`` (the section
of an AGENTS.md or CLAUDE.md that tells an agent to keep its state with loopx)."""

from __future__ import annotations

import sys

from loopx_git.cli import context, render
from loopx_git.cli.params import Context, Group

AGENTS_MD = """\
## Agent state: loopx

This project keeps its agents' state — the goal, todos and their claims, gates, handoffs, run
history and notes — on the git branch `loopx/state`, through the `loopx` command. Use it; never
edit that branch or its files by hand, and keep private notes out of tracked files (the git hooks
refuse them).

- Start of every turn: `loopx prime -a AGENT` — a brief of at most 4 KiB: the goal, your next
  action and contract, what waits for you, how to write back.
- Before working: `loopx quota should-run -a AGENT --format json` says whether to run and on what.
- Take work: `loopx todo claim -t TODO -a AGENT --sync` (a claim another clone won is refused).
- Finish it: `loopx todo complete -t TODO -a AGENT --evidence PATH`.
- End of the turn: `loopx refresh-state -a AGENT --classification progress --delivery-outcome TIER --evidence REF`.
- A fact worth keeping: `loopx event append -a AGENT --kind note --summary TEXT`.
- Meet the other clones: `loopx sync`.

Add `--format json` for output a script or an agent parses. Exit 1 is a refusal: the message names
the field and the rule, and nothing was written. Exit 3 is a bug in loopx.

An MCP client can call the same operations as tools instead (`loopx_prime`, `loopx_todo_claim`, ...):
start `loopx mcp -a AGENT` in the project (docs/mcp.md); a refusal is a tool error with the same code.
"""
"""Every ``loopx`` command named here exists (tests/cli/test_prime.py runs each one's --help)."""


def _print(text: str) -> None:
    sys.stdout.write(text)


def register(root: Group) -> None:
    @root.command("prime")
    def prime(
        ctx: Context,
        goal_id: str | None = context.GOAL_ID,
        agent_id: str | None = context.AGENT_ID,
    ) -> None:
        """The brief a fresh agent context reads first, at most 4 KiB: the goal, this agent's next action
        and contract, gates and handoffs waiting for it, the person's todos, how to write back.

        Without an agent (-a, LOOPX_AGENT_ID or git config loopx.agent) it gives every agent's next
        action instead. The same state gives the same brief.

        Examples:
          loopx prime -a alice
          loopx prime --format json      # the brief and the decision, for a script
        """
        c = context.get(ctx)
        with c.session() as repo:  # answered from the answers kept by tip: asked at every turn's start
            goal = c.goal(repo, goal_id)
            brief = repo.prime_data(goal, c.actor(repo, goal, agent_id))
        render.emit(c, brief, lambda b: _print(b["brief"]))

    @root.command("agents-md")
    def agents_md(ctx: Context) -> None:
        """Print a short AGENTS.md / CLAUDE.md section that tells an agent to keep its state with loopx.

        Examples:
          loopx agents-md >> AGENTS.md
        """
        from loopx_git.views.prime import AgentsMd

        render.emit(context.get(ctx), AgentsMd(markdown=AGENTS_MD), lambda d: _print(d.markdown))

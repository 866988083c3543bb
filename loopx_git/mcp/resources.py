"""The MCP resources: read-only documents an agent can attach to its context, each read through the
tool (and so the command) that prints it. ``loopx://goal/<goal>/status`` is ``loopx status -g <goal>
--format json``; ids in a URI are percent-encoded (``team%3Aparser``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from loopx_git.cli import fast
from loopx_git.mcp.calls import Defaults, call, refusal, run_command, shown
from loopx_git.mcp.tools import command, tool

PAGE = 500
"""Resources listed per page (a goal of 10k todos is listed in pages, with a cursor)."""


@dataclass(frozen=True)
class Template:
    template: str
    name: str
    description: str
    tool: str
    pick: Callable[[Any], Any] | None = None
    """The part of the tool's answer the resource is (all of it when None)."""

    def uri(self, **ids: str) -> str:
        return self.template.format(**{key: quote(value, safe="") for key, value in ids.items()})

    def match(self, uri: str) -> dict[str, str] | None:
        want, got = self.template.split("/"), uri.split("/")
        if len(want) != len(got):
            return None
        ids = {}
        for pattern, part in zip(want, got):
            if pattern.startswith("{") and pattern.endswith("}"):
                if not part:
                    return None
                ids[pattern[1:-1]] = unquote(part)
            elif pattern != part:
                return None
        return ids


def _replan_context(packet: Any) -> Any:
    return packet.get("replan_context") if isinstance(packet, dict) else None


TEMPLATES: tuple[Template, ...] = (
    Template(
        "loopx://goal/{goal_id}/status",
        "goal-status",
        "The goal's card (loopx status --format json): todos by state, agents, gates, handoffs, conflicts.",
        "loopx_status",
    ),
    Template(
        "loopx://goal/{goal_id}/ledger",
        "goal-ledger",
        "The goal's loop ledger (loopx ledger list --format json).",
        "loopx_ledger_list",
    ),
    Template(
        "loopx://goal/{goal_id}/todo/{todo_id}",
        "todo",
        "One todo in full (loopx todo show --format json).",
        "loopx_todo_show",
    ),
    Template(
        "loopx://goal/{goal_id}/agent/{agent_id}/replan-context",
        "replan-context",
        "What an agent with an open replan obligation has already tried (replan_context_v0, as review-packet "
        "embeds it); null when the agent has none open.",
        "loopx_review_packet",
        _replan_context,
    ),
    Template(
        "loopx://goal/{goal_id}/agent/{agent_id}/prime",
        "prime",
        "The agent's brief for a fresh context (loopx prime --format json).",
        "loopx_prime",
    ),
)


@dataclass(frozen=True)
class Listed:
    uri: str
    name: str
    description: str


def read(uri: str, defaults: Defaults) -> str:
    """The resource at ``uri`` as JSON text; a Refusal for a URI no template matches, or one whose
    goal, todo or agent does not exist."""
    for template in TEMPLATES:
        ids = template.match(uri)
        if ids is None:
            continue
        answer = call(tool(template.tool, defaults.commands), ids, defaults)
        if template.pick is None:
            return answer.text
        return json.dumps(template.pick(answer.data), indent=2, ensure_ascii=False)
    raise refusal(
        "not-found",
        f"field 'uri': no resource {shown(uri)[:200]!r}; rule: a URI of one of the templates (resources/templates/list)",
        field="uri",
    )


def listing(defaults: Defaults, cursor: str | None) -> tuple[list[Listed], str | None]:
    """One page of the concrete resources: each goal's status and ledger, the agent's (when the
    server has one) replan context and brief, and every live todo."""
    start = _offset(cursor)
    everything = _all(defaults)
    page = everything[start : start + PAGE]
    more = start + PAGE < len(everything)
    return page, str(start + PAGE) if more else None


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not re.fullmatch(r"[0-9]{1,12}", cursor):
        raise refusal(
            "invalid-field",
            "field 'cursor': is not a cursor this server gave; rule: pass it back as given",
            field="cursor",
        )
    return int(cursor)


def _all(defaults: Defaults) -> list[Listed]:
    goals = _goals(defaults)
    found: list[Listed] = []
    by_name = {t.name: t for t in TEMPLATES}
    for goal_id in goals:
        found.append(_listed(by_name["goal-status"], f"status of {goal_id}", goal_id=goal_id))
        found.append(_listed(by_name["goal-ledger"], f"ledger of {goal_id}", goal_id=goal_id))
        if defaults.agent_id and defaults.agent_id in _agents(goal_id, defaults):
            for name in ("replan-context", "prime"):
                found.append(
                    _listed(
                        by_name[name], f"{name} of {defaults.agent_id}", goal_id=goal_id, agent_id=defaults.agent_id
                    )
                )
        todos = call(tool("loopx_todo_list", defaults.commands), {"goal_id": goal_id}, defaults).data or []
        for todo in todos:
            found.append(
                _listed(
                    by_name["todo"], f"{todo['todo_id']}: {todo['text'][:80]}", goal_id=goal_id, todo_id=todo["todo_id"]
                )
            )
    return found


def _goals(defaults: Defaults) -> list[str]:
    """Every goal's id, from ``loopx goal list`` (not a tool itself: ``status`` is how a goal is read)."""
    return [goal["goal_id"] for goal in _listing(("goal", "list"), defaults)]


def _agents(goal_id: str, defaults: Defaults) -> set[str]:
    return {agent["agent_id"] for agent in _listing(("agent", "list"), defaults, goal_id=goal_id)}


def _listing(words: tuple[str, ...], defaults: Defaults, **given: str) -> list[dict[str, Any]]:
    listed = command(words, defaults.commands)
    _, params = fast.options(listed.func)
    kwargs = {name: list(p.default or []) if p.kind == "list" else p.default for name, p in params.items()}
    return run_command(listed.func, {**kwargs, **given}, defaults).data or []


def _listed(template: Template, name: str, **ids: str) -> Listed:
    return Listed(template.uri(**ids), name, template.description)

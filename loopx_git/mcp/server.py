"""The MCP server over stdio, on the ``mcp`` SDK's low-level ``Server``: the tools of ``tools.py``,
the resources of ``resources.py``, each call run by ``calls.py`` in a worker thread (one at a time, so
long work can report progress while the event loop keeps serving the protocol).

The SDK is the optional extra ``loopx-git[mcp]``; ``loopx mcp`` says how to install it when it is missing.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from loopx_git.errors import Refusal
from loopx_git.mcp import resources, tools
from loopx_git.mcp.calls import Answer, Defaults, call, internal, refusal, shown

log = logging.getLogger("loopx.mcp")

INSTRUCTIONS = """\
loopx keeps this project's agent state (goal, todos and claims, gates, handoffs, runs, notes) on the \
git branch loopx/state; every write is one commit. Start each turn with loopx_prime (your brief), then \
loopx_quota_should_run. Claim a todo before working on it (loopx_todo_claim; a todo another agent \
holds is refused), close it with evidence (loopx_todo_complete), and end the turn with \
loopx_refresh_state. A refusal is a tool error whose structured content is {"error": {code, message, \
field, hint}}: nothing was written. Results are the JSON `loopx ... --format json` prints."""

PROGRESS_EVERY = 0.2
"""Seconds between progress notifications of one call (a sync reports per object otherwise)."""


def build(defaults: Defaults) -> Server:
    from loopx_git.version import __version__

    lock = anyio.Lock()  # a call captures the process's stdout: one at a time

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_described(tool) for tool in tools.tools(defaults.commands)])

    async def call_tool(ctx: ServerRequestContext, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = tools.BY_NAME.get(params.name)
        if spec is None:
            return _error(
                refusal(
                    "unknown-tool",
                    f"field 'name': there is no tool {shown(params.name)[:100]!r}; rule: a tool tools/list names",
                    field="name",
                    hint="list the tools (tools/list)",
                )
            )
        report = _progress_reporter(ctx)
        try:
            async with lock:
                answer = await anyio.to_thread.run_sync(
                    partial(call, tools.tool(spec.name, defaults.commands), params.arguments, defaults, report)
                )
        except Refusal as refused:
            return _error(refused)
        except Exception as exc:  # never a traceback, nor an exception's text as the SDK would send it
            log.exception("tool %s failed", spec.name)
            return _error(internal(exc))
        return _result(answer)

    async def list_resources(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        async with lock:
            page, next_cursor = await _read_only(partial(resources.listing, defaults, cursor))
        return types.ListResourcesResult(
            resources=[
                types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type="application/json")
                for r in page
            ],
            next_cursor=next_cursor,
        )

    async def list_templates(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=t.template, name=t.name, description=t.description, mime_type="application/json"
                )
                for t in resources.TEMPLATES
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        async with lock:
            text = await _read_only(partial(resources.read, uri, defaults))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    return Server(
        "loopx",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


async def _read_only(work: Callable[[], Any]) -> Any:
    """A resource listing or read in the worker thread. It has no tool-error form: a refusal is a
    protocol error carrying the same ``{"error": ...}`` facts (a bug: INTERNAL_ERROR)."""
    from mcp.shared.exceptions import MCPError

    try:
        return await anyio.to_thread.run_sync(work)
    except Refusal as refused:
        failed = refused
    except Exception as exc:
        log.exception("resource request failed")
        failed = internal(exc)
    code = types.INTERNAL_ERROR if failed.code == "internal" else types.INVALID_PARAMS
    raise MCPError(code=code, message=failed.message, data=failed.to_json())


def _described(tool: tools.Tool) -> types.Tool:
    read_only = tool.spec.read_only
    return types.Tool(
        name=tool.spec.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=read_only,
            destructive_hint=False,  # a write is a new commit; nothing on the branch is ever lost
            open_world_hint=tool.spec.words == ("sync",),
        ),
    )


def _result(answer: Answer) -> types.CallToolResult:
    # structured content is an object on the 2025 protocols: a listing (a JSON array) goes in "items"
    data = answer.data if isinstance(answer.data, dict) else {"items": answer.data}
    content: list[Any] = [types.TextContent(type="text", text=answer.text)]
    content += [types.TextContent(type="text", text=warning) for warning in answer.warnings]
    return types.CallToolResult(content=content, structured_content=data)


def _error(refusal: Refusal) -> types.CallToolResult:
    body = refusal.to_json()
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )


def _progress_reporter(ctx: ServerRequestContext):
    """``(stage, done, total)`` from the worker thread, sent as progress notifications at most every
    PROGRESS_EVERY seconds (and always the last step of a stage). MCP's progress only ever grows, and
    a verification counts each stage from zero: the stages are laid end to end, each finished one's
    total an offset for the next."""
    sent: dict[str, Any] = {"at": 0.0, "progress": -1, "offset": 0, "stage": None, "total": 0}

    def report(stage: str, done: int, total: int) -> None:
        if stage != sent["stage"]:
            if sent["stage"] is not None:
                sent["offset"] += sent["total"]
            sent["stage"] = stage
        sent["total"] = total
        progress, now = sent["offset"] + done, time.monotonic()
        if progress <= sent["progress"] or (done < total and now - sent["at"] < PROGRESS_EVERY):
            return
        sent["at"], sent["progress"] = now, progress
        try:
            anyio.from_thread.run(
                partial(
                    ctx.session.report_progress, progress, total=sent["offset"] + total, message=f"checking {stage}"
                )
            )
        except Exception:  # a notification the client cannot take must not fail the work itself
            log.debug("progress notification not sent", exc_info=True)

    return report


async def _serve(defaults: Defaults) -> None:
    server = build(defaults)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(defaults: Defaults) -> None:
    """Serve ``defaults.repo`` over stdin/stdout until the client closes the stream."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)  # stdout is the protocol
    anyio.run(_serve, defaults)

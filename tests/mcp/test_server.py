"""``loopx mcp``: the server started as a subprocess (``python -m loopx_git mcp``) and driven over
stdio by the ``mcp`` SDK's own client, against real repositories."""

from __future__ import annotations

import itertools
import json
import os
import random
import string
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP server's tests need the mcp extra (pip install '.[test]')")

import anyio  # noqa: E402  # after the skip: both come with the mcp extra
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import INVALID_PARAMS, PaginatedRequestParams  # noqa: E402

import loopx_git  # noqa: E402
from loopx_git.mcp.tools import TOOLS  # noqa: E402
from tests.conftest import GOAL, NOW, Cli, git, state_tip  # noqa: E402


def params(repo: Path, *args: str, cwd: Path | None = None) -> StdioServerParameters:
    """The server as an MCP client starts it, with the test's hermetic environment (the SDK passes
    only HOME and PATH on by default) and this interpreter, so the venv's bin need not be on PATH."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "loopx_git", "mcp", *args],
        cwd=str(cwd or repo),
        env=dict(os.environ),
    )


@asynccontextmanager
async def session(repo: Path, *args: str, cwd: Path | None = None) -> AsyncIterator[ClientSession]:
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params(repo, *args, cwd=cwd), errlog=quiet) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def parents(path: Path, commit: str) -> list[str]:
    return git(path, "rev-list", "--parents", "-n", "1", commit).split()[1:]


def token() -> str:
    """A GitHub-token-shaped value, assembled at run time so no secret-shaped literal is in this file."""
    rng = random.Random(7)
    return "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def test_every_tool_is_listed_with_an_input_schema_and_says_when_to_use_it(repo, git_repo):
    async def scenario() -> None:
        async with session(git_repo, "-a", "alice") as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == [spec.name for spec in TOOLS]
            for tool in listed:
                schema = tool.input_schema
                assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
                assert all(p.get("description") for p in schema["properties"].values()), tool.name
                assert tool.description and tool.description.startswith(("Use ", "Call ")), tool.name
            by_name = {t.name: t for t in listed}
            add = by_name["loopx_todo_add"].input_schema
            assert add["required"] == ["text"]
            assert add["properties"]["priority"]["enum"] == ["P0", "P1", "P2", "P3", "P4"]
            assert "evidence_ref" in by_name["loopx_history"].input_schema["properties"]
            assert "progress_result_class" in by_name["loopx_refresh_state"].input_schema["properties"]
            assert by_name["loopx_status"].annotations.read_only_hint is True
            assert by_name["loopx_todo_claim"].annotations.read_only_hint is False

    run(scenario)


def test_an_agent_session_moves_the_state_ref_once_per_write(repo, git_repo, capsys, tmp_path):
    evidence = git_repo / "tokenizer.py"
    evidence.write_text("print('tokens')\n")
    moves: list[tuple[str, str]] = []

    async def scenario() -> None:
        async with session(git_repo, "-g", GOAL, "-a", "alice") as client:
            tip = state_tip(git_repo)

            status = await client.call_tool("loopx_status", {})
            assert not status.is_error and status.structured_content["goal"]["goal_id"] == GOAL
            assert state_tip(git_repo) == tip, "a read writes nothing"

            for name, arguments in (
                ("loopx_todo_add", {"text": "Write the tokenizer", "todo_id": "tok", "priority": "P1"}),
                ("loopx_todo_claim", {"todo_id": "tok"}),
                (
                    "loopx_todo_complete",
                    {"todo_id": "tok", "evidence": ["tokenizer.py"], "no_follow_up": True, "reason": "it is done"},
                ),
            ):
                result = await client.call_tool(name, arguments)
                assert not result.is_error, result.structured_content
                written = result.structured_content
                assert written["schema_version"] == "loopx_write_result_v0" and written["changed"] is True
                new_tip = state_tip(git_repo)
                assert written["commit"] == new_tip and parents(git_repo, new_tip) == [tip], name
                moves.append((name, new_tip))
                tip = new_tip

            todo = (await client.call_tool("loopx_todo_show", {"todo_id": "tok"})).structured_content
            assert todo["status"] == "done" and todo["claimed_by"] == "alice"
            assert todo["evidence"] == ["tokenizer.py"]

    run(scenario)
    assert [name for name, _ in moves] == ["loopx_todo_add", "loopx_todo_claim", "loopx_todo_complete"]


def test_a_tool_answers_with_the_json_its_command_prints(repo, git_repo, capsys):
    cli = Cli(git_repo, capsys)
    cli.json("todo", "add", "-g", GOAL, "--text", "Write the tokenizer", "-t", "tok")
    cli.json("todo", "add", "-g", GOAL, "--text", "Document it", "-t", "doc", "--resume-when", "todo_done:tok")

    async def scenario() -> None:
        async with session(git_repo, "-g", GOAL) as client:
            status = await client.call_tool("loopx_status", {})
            assert status.structured_content == cli.json("status", "-g", GOAL)
            assert json.loads(status.content[0].text) == status.structured_content
            listing = await client.call_tool("loopx_todo_list", {"status": "deferred"})
            assert listing.structured_content == {"items": cli.json("todo", "list", "-g", GOAL, "--status", "deferred")}
            brief = await client.call_tool("loopx_prime", {"agent_id": "bob"})
            assert brief.structured_content == cli.json("prime", "-g", GOAL, "-a", "bob")

    run(scenario)


def test_refused_writes_are_tool_errors_with_the_clis_code_and_the_ref_unmoved(repo, git_repo, capsys):
    cli = Cli(git_repo, capsys)
    cli.json("todo", "add", "-g", GOAL, "--text", "Write the tokenizer", "-t", "tok", "--claimed-by", "bob")
    planted = token()

    async def scenario() -> None:
        async with session(git_repo, "-g", GOAL, "-a", "alice") as client:
            tip = state_tip(git_repo)
            cases = [
                # a lifecycle rule: the todo is bob's
                ("loopx_todo_claim", {"todo_id": "tok"}, "claim-held", "todo_id"),
                # an unknown todo
                ("loopx_todo_complete", {"todo_id": "nope", "evidence": ["x"]}, "not-found", "todo_id"),
                # arguments the schema refuses: a wrong type, a value outside the enum, a missing or extra one
                ("loopx_todo_add", {"text": 5}, "invalid-field", "text"),
                ("loopx_todo_add", {"text": "x", "priority": "P9"}, "invalid-field", "priority"),
                ("loopx_gate_open", {"gate_id": "g"}, "invalid-field", "owner_class"),
                ("loopx_todo_add", {"text": "x", "colour": "red"}, "invalid-field", "colour"),
                ("loopx_todo_add", {"text": "x", "redact": "yes"}, "invalid-field", "redact"),  # no coercion
                ("loopx_todo_complete", {"todo_id": "tok", "evidence": ["ok", 7]}, "invalid-field", "evidence"),
                (
                    "loopx_todo_add",
                    {"text": "x", "explore_result_node_ref": "node"},
                    "invalid-field",
                    "explore_result_node_ref",
                ),
                # a value that makes the message long: cut, as the CLI cuts it
                ("loopx_todo_add", {"text": "x", "todo_id": "y" * 2_000_000}, "invalid-field", "todo_id"),
                # a record's field is given as the argument that filled it
                ("loopx_event_append", {"kind": "note", "lane_id": "a lane"}, "invalid-field", "lane_id"),
                # a usage error of the command: the flag's name as the argument's
                (
                    "loopx_handoff_prepare",
                    {
                        "handoff_id": "h1",
                        "from_agent_id": "alice",
                        "to_agent_id": "bob",
                        "stop_condition": "s",
                        "review_required": True,
                        "self_merge_allowed": True,
                    },
                    "usage",
                    "self_merge_allowed",
                ),
                # a field rule of the command itself, and a NUL no command line could carry
                ("loopx_todo_add", {"text": "x", "todo_id": "no spaces allowed"}, "invalid-field", "todo_id"),
                ("loopx_event_append", {"kind": "note", "summary": "a\x00b"}, "invalid-field", "summary"),
                # a safety rule: the value is never echoed back
                ("loopx_todo_add", {"text": f"use {planted} to deploy"}, None, None),
                # no such tool
                ("loopx_rm_rf", {}, "unknown-tool", "name"),
            ]
            for name, arguments, code, field in cases:
                result = await client.call_tool(name, arguments)
                assert result.is_error, (name, arguments)
                error = result.structured_content["error"]
                assert json.loads(result.content[0].text) == result.structured_content
                if code is not None:
                    assert error["code"] == code, (name, error)
                if field is not None:
                    assert error["field"] == field, (name, error)
                assert error["message"] and "Traceback" not in result.content[0].text
                assert len(result.content[0].text) < 20_000, (name, len(result.content[0].text))
                assert planted not in result.content[0].text
                assert state_tip(git_repo) == tip, (name, "refused, but the ref moved")
            safety = (await client.call_tool("loopx_todo_add", {"text": f"use {planted}"})).structured_content
            assert safety["error"]["code"] == cli("todo", "add", "-g", GOAL, "--text", f"use {planted}").err.split("]")[
                0
            ].removeprefix("error[")

    run(scenario)


def test_two_servers_for_two_agents_race_for_one_todo_and_exactly_one_wins(repo, git_repo, capsys):
    """Round by round, both servers are sent a claim of the same todo at once: their writes overlap
    (either may win a round; compare-and-swap settles it), and each round has exactly one winner."""
    cli = Cli(git_repo, capsys)
    todos = [f"race-{n}" for n in range(8)]
    for todo in todos:
        cli.json("todo", "add", "-g", GOAL, "--text", f"Contested {todo}", "-t", todo)
    won: dict[str, list[str]] = {todo: [] for todo in todos}
    lost: list[dict[str, Any]] = []

    async def claim(agent_id: str, client: ClientSession, todo: str) -> None:
        result = await client.call_tool("loopx_todo_claim", {"todo_id": todo})
        if result.is_error:
            lost.append(result.structured_content["error"])
        else:
            won[todo].append(agent_id)

    async def scenario() -> None:
        async with (
            session(git_repo, "-g", GOAL, "-a", "alice") as alice,
            session(git_repo, "-g", GOAL, "-a", "bob") as bob,
        ):
            await alice.call_tool("loopx_status", {})  # both warm, so each round's claims start together
            await bob.call_tool("loopx_status", {})
            for todo in todos:
                async with anyio.create_task_group() as group:
                    group.start_soon(claim, "alice", alice, todo)
                    group.start_soon(claim, "bob", bob, todo)

    run(scenario)
    assert all(len(winners) == 1 for winners in won.values()), won
    assert len(lost) == len(todos) and {e["code"] for e in lost} == {"claim-held"}, lost
    for todo, [winner] in won.items():
        assert cli.json("todo", "show", "-g", GOAL, "-t", todo)["claimed_by"] == winner
    events = cli.json("events", "-g", GOAL, "--kind", "todo_claim")
    assert sorted(e["todo_id"] for e in events) == sorted(todos), "one claim event per todo"


def test_a_server_sees_what_cli_writers_did_between_its_calls(repo, git_repo, capsys):
    cli = Cli(git_repo, capsys)

    async def scenario() -> None:
        async with session(git_repo, "-g", GOAL, "-a", "alice") as client:
            assert (await client.call_tool("loopx_todo_list", {})).structured_content == {"items": []}
            cli.json("todo", "add", "-g", GOAL, "--text", "From the CLI", "-t", "cli-1", "--claimed-by", "bob")
            listed = (await client.call_tool("loopx_todo_list", {})).structured_content["items"]
            assert [t["todo_id"] for t in listed] == ["cli-1"]
            refused = await client.call_tool("loopx_todo_claim", {"todo_id": "cli-1"})
            assert refused.is_error and refused.structured_content["error"]["code"] == "claim-held"

    run(scenario)


def test_resources_are_the_goal_card_ledger_todos_and_the_agents_context(repo, git_repo, capsys):
    cli = Cli(git_repo, capsys)
    cli.json("todo", "add", "-g", GOAL, "--text", "Write the tokenizer", "-t", "tok")
    cli.json("ledger", "add", "-g", GOAL, "--entry-id", "e1", "--claim", "CI is green", "--action", "run_ci")

    async def scenario() -> None:
        async with session(git_repo, "-a", "alice") as client:
            templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
            assert {
                "loopx://goal/{goal_id}/status",
                "loopx://goal/{goal_id}/ledger",
                "loopx://goal/{goal_id}/todo/{todo_id}",
                "loopx://goal/{goal_id}/agent/{agent_id}/replan-context",
            } <= templates
            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            assert uris == [
                f"loopx://goal/{GOAL}/status",
                f"loopx://goal/{GOAL}/ledger",
                f"loopx://goal/{GOAL}/agent/alice/replan-context",
                f"loopx://goal/{GOAL}/agent/alice/prime",
                f"loopx://goal/{GOAL}/todo/tok",
            ]

            async def read(uri: str) -> Any:
                return json.loads((await client.read_resource(uri)).contents[0].text)

            assert await read(f"loopx://goal/{GOAL}/status") == cli.json("status", "-g", GOAL)
            assert await read(f"loopx://goal/{GOAL}/ledger") == cli.json("ledger", "list", "-g", GOAL)
            assert await read(f"loopx://goal/{GOAL}/todo/tok") == cli.json("todo", "show", "-g", GOAL, "-t", "tok")
            assert await read(f"loopx://goal/{GOAL}/agent/alice/replan-context") is None  # no obligation open
            for uri in (f"loopx://goal/{GOAL}/todo/nope", "loopx://elsewhere", f"loopx://goal/{GOAL}/todo/"):
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                assert refused.value.code == INVALID_PARAMS, uri
                assert refused.value.data["error"]["code"] in ("not-found", "invalid-field"), uri
            for cursor in ("abc", "\u00b2", "9" * 40):  # a cursor this server never gave
                with pytest.raises(MCPError) as refused:
                    await client.list_resources(params=PaginatedRequestParams(cursor=cursor))
                assert refused.value.code == INVALID_PARAMS and refused.value.data["error"]["field"] == "cursor"
            assert len((await client.list_resources()).resources) == 5, "the server still serves"

    run(scenario)


def test_sync_reports_progress_while_it_checks_a_history_it_has_not_seen(repo, git_repo, tmp_path, capsys):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(git_repo, "remote", "add", "origin", str(remote))
    cli = Cli(git_repo, capsys)
    for n in range(30):
        cli.json("event", "append", "-g", GOAL, "--kind", "note", "--summary", f"note {n}")
    assert cli("push").code == 0
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async def scenario() -> None:
        async with session(other) as client:
            result = await client.call_tool("loopx_sync", {}, progress_callback=progress)
            assert not result.is_error, result.structured_content

    run(scenario)
    assert seen and all(total and 0 <= done <= total for done, total, _ in seen), seen
    assert all(a[0] < b[0] for a, b in itertools.pairwise(seen)), f"progress only grows: {seen}"
    assert seen[-1][0] == seen[-1][1] and all((message or "").startswith("checking ") for *_, message in seen)
    assert {message for *_, message in seen} >= {"checking history", "checking records"}
    assert state_tip(other) == state_tip(git_repo)


@pytest.mark.parametrize(
    "args, field",
    [
        (["-a", "nobody"], "agent_id"),
        (["-g", "no-such-goal"], "goal_id"),
        (["-a", "alice\x1b[2J"], "agent_id"),
        (["--repo", "does/not/exist"], None),
    ],
    ids=["unknown-agent", "unknown-goal", "escape-in-agent", "no-repository"],
)
def test_a_server_that_cannot_serve_what_it_was_given_refuses_to_start(repo, git_repo, args, field):
    done = subprocess.run(
        [sys.executable, "-m", "loopx_git", "mcp", *args],
        cwd=git_repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == "", (done.returncode, done.stderr)
    assert done.stderr.startswith("error[") and "Traceback" not in done.stderr
    if field:
        assert f"'{field}'" in done.stderr or f"field '{field}" in done.stderr, done.stderr
    assert "\x1b" not in done.stderr


def test_without_the_mcp_extra_the_command_says_how_to_install_it(repo, git_repo):
    code = (
        "import sys; sys.modules['mcp'] = None; from loopx_git.cli.main import run_cli; "
        f"sys.exit(run_cli(['--repo', {str(git_repo)!r}, 'mcp']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "error[missing-extra]" in done.stderr and "pip install 'loopx-git[mcp]'" in done.stderr


def test_the_loopx_mcp_executable_is_the_same_server(repo, git_repo):
    """The console script ``loopx-mcp`` is ``loopx mcp``; run through its entry function here, since the
    venv's bin may be off PATH."""
    code = "import sys; from loopx_git.cli.entry import mcp; sys.argv = ['loopx-mcp', '-a', 'nobody']; mcp()"
    done = subprocess.run([sys.executable, "-c", code], cwd=git_repo, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "field 'agent_id'" in done.stderr


def test_the_servers_agent_stands_in_for_a_required_agent_and_a_document_can_be_inline(
    repo, git_repo, tmp_path, monkeypatch
):
    temp = tmp_path / "server-tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # where the server writes an inline document for its command

    async def scenario() -> None:
        async with session(git_repo, "-g", GOAL, "-a", "alice") as alice, session(git_repo, "-g", GOAL) as anyone:
            decided = await alice.call_tool("loopx_quota_should_run", {})
            assert not decided.is_error and decided.structured_content["agent_id"] == "alice"
            named = await anyone.call_tool("loopx_quota_should_run", {"agent_id": "bob"})
            assert named.structured_content["agent_id"] == "bob"
            missing = await anyone.call_tool("loopx_quota_should_run", {})
            assert missing.is_error and missing.structured_content["error"]["field"] == "agent_id"
            tip = state_tip(git_repo)
            schema = {t.name: t for t in (await alice.list_tools()).tools}["loopx_explore_observe"].input_schema
            assert schema["required"] == ["observation"] and "observation_json" not in schema["properties"]
            for arguments in ({}, {"observation_json": "/dev/zero"}):  # the server reads no path it is given
                refused = await alice.call_tool("loopx_explore_observe", arguments)
                assert refused.is_error and refused.structured_content["error"]["code"] == "invalid-field", arguments
            bad = await alice.call_tool("loopx_explore_observe", {"observation": {"schema_version": "nonsense"}})
            error = bad.structured_content["error"]  # the command read the document the call carried
            assert (error["code"], error["field"]) == ("invalid-observation", "schema_version"), error
            assert state_tip(git_repo) == tip
            assert list(temp.iterdir()) == [], "the inline document's file is gone"

    run(scenario)


def test_loopx_agent_id_is_the_servers_agent_and_one_agent_may_serve_several_goals(repo, git_repo, monkeypatch):
    loopx = loopx_git.open(git_repo)
    loopx.goal_create("g2", "Another goal", now=NOW)
    loopx.agent_register("g2", "alice", now=NOW)
    loopx.close()
    # two goals and no default (the fixture's repository sets none): each call names its goal
    monkeypatch.setenv("LOOPX_AGENT_ID", "alice")

    async def scenario() -> None:
        async with session(git_repo) as client:
            decided = await client.call_tool("loopx_quota_should_run", {"goal_id": "g2"})
            assert not decided.is_error and decided.structured_content["agent_id"] == "alice"
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            assert {f"loopx://goal/{g}/agent/alice/prime" for g in (GOAL, "g2")} <= uris
            unnamed = await client.call_tool("loopx_status", {})
            assert unnamed.is_error and unnamed.structured_content["error"]["code"] == "goal-required"

    run(scenario)
    monkeypatch.setenv("LOOPX_AGENT_ID", "nobody")
    done = subprocess.run(
        [sys.executable, "-m", "loopx_git", "mcp"],
        cwd=git_repo,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "field 'LOOPX_AGENT_ID'" in done.stderr and "any goal" in done.stderr

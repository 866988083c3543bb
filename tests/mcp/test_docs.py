"""docs/mcp.md's tool reference is the server's own table: regenerated here and compared, so the
documented tools, arguments and defaults cannot drift from what the server lists."""

from __future__ import annotations

from pathlib import Path

from loopx_git.cli.main import app
from loopx_git.mcp import tools

DOC = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def test_the_documented_tool_list_is_the_servers():
    text = DOC.read_text(encoding="utf-8")
    documented = text.split(tools.REFERENCE_START, 1)[1].split(tools.REFERENCE_END, 1)[0]
    assert tools.REFERENCE_START + documented + tools.REFERENCE_END + "\n" == tools.reference(app), (
        "docs/mcp.md is out of date: run `python -m loopx_git.mcp.tools docs/mcp.md`"
    )


def test_every_tool_runs_a_command_that_exists_and_every_name_is_unique():
    names = [spec.name for spec in tools.TOOLS]
    assert len(names) == len(set(names))
    for spec in tools.TOOLS:
        assert tools.command(spec.words, app).func.__doc__, spec.words
        assert f"### `{spec.name}`" in DOC.read_text(encoding="utf-8")


def test_the_issue_s_operations_are_all_served():
    wanted = {
        "status", "todo_add", "todo_claim", "todo_update", "todo_complete", "todo_list", "todo_show",
        "event_append", "refresh_state", "quota_should_run", "quota_spend_slot", "ledger_next", "ledger_record",
        "ledger_list", "gate_open", "gate_decide", "handoff_prepare", "handoff_adopt", "reward_add", "history",
        "explore_observe", "explore_summary", "review_packet", "sync",
    }  # fmt: skip
    assert {f"loopx_{name}" for name in wanted} <= set(tools.BY_NAME)

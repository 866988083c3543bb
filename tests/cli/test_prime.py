"""``loopx prime`` and ``loopx agents-md``: the brief a fresh agent context reads first, bounded and
deterministic, on real repositories; the AGENTS.md section names only commands that exist."""

from __future__ import annotations

import re

import loopx_git
from loopx_git.cli.prime import AGENTS_MD
from loopx_git.views import prime as prime_view
from tests.cli.test_schemas import conforms
from tests.conftest import Cli, state_tip
from tests.dashboard.fixture import GOAL, three_lanes


def test_the_agent_brief_names_its_decision_next_action_and_how_to_write_back(git_repo, capsys):
    three_lanes(git_repo)
    cli = Cli(git_repo, capsys)
    data = cli.json("prime", "-g", GOAL, "-a", "bob")
    conforms("loopx_prime_v0", data)
    brief = data["brief"]
    assert data["decision"] == "run" and data["todo_id"] == "tok" and data["brief_bytes"] == len(brief.encode()) <= 4096
    assert "## You: bob (lane ui)" in brief and "work on tok: Write the tokenizer" in brief
    assert "ship-gate (open, owner user): Deploy to production? — blocks deploy" in brief
    assert f"loopx todo complete -g {GOAL} -t tok -a bob --evidence PATH" in brief
    assert f"loopx refresh-state -g {GOAL} -a bob -t tok" in brief
    assert cli("prime", "-g", GOAL, "-a", "bob").out == brief  # text mode prints the brief itself


def test_without_an_agent_the_brief_gives_each_agents_next_action(git_repo, capsys):
    three_lanes(git_repo)
    brief = Cli(git_repo, capsys)("prime", "-g", GOAL).out
    assert "## Next action per agent" in brief
    assert "- alice: nothing runnable" in brief and "- bob: tok — Write the tokenizer (claimed)" in brief


def test_a_handoff_waiting_for_the_agent_is_in_its_brief(git_repo, capsys):
    three_lanes(git_repo)
    with loopx_git.open(git_repo) as repo:
        repo.handoff_prepare(
            GOAL, "h2", from_agent_id="carol", to_agent_id="alice", stop_condition="docs build", todo_ids=["docs"]
        )
    brief = Cli(git_repo, capsys)("prime", "-g", GOAL, "-a", "alice").out
    assert "## Waiting for you" in brief and "handoff h2 from carol: docs; stop when docs build" in brief
    assert "Decision: run. adopt handoff h2" in brief


def test_the_brief_is_the_same_for_the_same_state_and_reads_nothing_else(git_repo, capsys):
    three_lanes(git_repo)
    cli = Cli(git_repo, capsys)
    tip = state_tip(git_repo)
    first = cli("prime", "-g", GOAL, "-a", "carol").out
    (git_repo / "README.md").write_text("the work tree changed\n")
    assert cli("prime", "-g", GOAL, "-a", "carol").out == first and state_tip(git_repo) == tip


def test_the_brief_stays_within_4_kib_however_much_waits(git_repo, capsys):
    """Forty gates and forty user todos with long texts holding control characters: every line is
    cut, every list shows five and counts the rest, and sections go, the least needed first."""
    three_lanes(git_repo)
    long = "Decide this \x1b[2J now " + "with a long explanation " * 40
    with loopx_git.open(git_repo) as repo:
        for i in range(40):
            repo.todo_add(GOAL, f"user todo {i} {long}", todo_id=f"u{i}", role="user")
            repo.gate_open(GOAL, f"g{i}", owner_class="user", question=f"{i}: {long}", blocks=["deploy"])
    data = Cli(git_repo, capsys).json("prime", "-g", GOAL, "-a", "bob")
    brief = data["brief"]
    assert len(brief.encode()) <= 4096 and data["brief_bytes"] <= 4096
    assert "\x1b" not in brief and "\\x1b" in brief
    assert "## Open gates (41)" in brief and "- and 36 more" in brief
    assert "## Write back" in brief and "## You: bob" in brief
    assert all(len(line) <= 2 * prime_view.LINE + 80 for line in brief.splitlines())


def test_sections_are_dropped_the_least_needed_first_when_the_lines_alone_do_not_fit(git_repo, capsys, monkeypatch):
    monkeypatch.setattr(prime_view, "LIMIT", 1200)
    three_lanes(git_repo)
    with loopx_git.open(git_repo) as repo:
        for i in range(6):
            repo.todo_add(GOAL, f"user todo {i} " + "x" * 150, todo_id=f"u{i}", role="user")
    data = Cli(git_repo, capsys).json("prime", "-g", GOAL, "-a", "bob")
    assert data["sections_dropped"][0] == "person" and data["brief_bytes"] <= 1200
    assert "## You: bob" in data["brief"] and "## Write back" in data["brief"]


def test_an_unknown_agent_is_refused_naming_it(git_repo, capsys):
    three_lanes(git_repo)
    result = Cli(git_repo, capsys)("prime", "-g", GOAL, "-a", "nobody")
    assert result.code == 1 and "nobody" in result.err and "Traceback" not in result.err


def test_agents_md_names_only_commands_that_exist(git_repo, capsys):
    three_lanes(git_repo)
    cli = Cli(git_repo, capsys)
    data = cli.json("agents-md")
    conforms("loopx_agents_md_v0", data)
    assert data["markdown"] == AGENTS_MD == cli("agents-md").out
    commands = re.findall(r"`loopx ([a-z][a-z -]*?)(?= -|`| [A-Z])", AGENTS_MD)
    assert {"prime", "quota should-run", "todo claim", "todo complete", "refresh-state", "event append", "sync"} <= set(
        commands
    )
    for command in commands:
        assert cli(*command.split(), "--help").code == 0, command

"""Goal and agent defaults (issue 10, item 1): -g/-a, then LOOPX_GOAL_ID/LOOPX_AGENT_ID, then
`git config loopx.goal`/`loopx.agent`, then the only goal; through the real CLI on real repositories."""

from __future__ import annotations

import json

import pytest

import loopx_git
from tests.conftest import GOAL, NOW, Cli, git, state_tip


@pytest.fixture
def two_goals(repo, cli):
    """g1 (alice, bob) and g2 (carol), and g3 with no agents: no goal is the only one."""
    repo.goal_create("g2", "Write the docs", now=NOW)
    repo.agent_register("g2", "carol", now=NOW)
    repo.goal_create("g3", "Benchmark it", now=NOW)
    return cli


def card_goal(cli, *args: str) -> str:
    return cli.json("status", *args)["goal"]["goal_id"]


def last_event(cli, goal: str) -> dict:
    return cli.json("events", "-g", goal, "-n", "1")[0]


def refused(cli, git_repo, args, code, *fragments):
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 1, (result.code, result.err)
    assert result.err.startswith(f"error[{code}]: "), result.err
    for fragment in fragments:
        assert fragment in result.err, result.err
    assert result.out == "" and state_tip(git_repo) == tip
    return result


# --- the goal -----------------------------------------------------------------------------------


def test_the_only_goal_needs_no_flag(cli, git_repo):
    data = cli.json("todo", "add", "--text", "Write the parser", "-t", "t1")
    assert data["record"]["todo_id"] == "t1" and data["commit"] == state_tip(git_repo)
    assert cli.json("todo", "show", "-t", "t1")["text"] == "Write the parser"
    assert card_goal(cli) == GOAL


def test_each_source_wins_in_order(two_goals, git_repo, monkeypatch):
    cli = two_goals
    git(git_repo, "config", "loopx.goal", "g2")
    monkeypatch.setenv("LOOPX_GOAL_ID", "g3")
    assert card_goal(cli, "-g", GOAL) == GOAL  # the flag over everything
    assert card_goal(cli) == "g3"  # then the environment
    monkeypatch.delenv("LOOPX_GOAL_ID")
    assert card_goal(cli) == "g2"  # then git config
    monkeypatch.setenv("LOOPX_GOAL_ID", "")  # an empty variable is unset, never the goal ''
    assert card_goal(cli) == "g2"


def test_git_config_wins_over_the_only_goal_and_the_api_says_which_source(repo, git_repo):
    assert (repo.resolve_goal().value, repo.resolve_goal().source) == (GOAL, "only-goal")
    git(git_repo, "config", "loopx.goal", GOAL)
    assert repo.resolve_goal().source == "git-config"
    assert repo.resolve_goal(env=GOAL).source == "env"
    assert (repo.resolve_goal("other", env=GOAL).value, repo.resolve_goal("other").source) == ("other", "flag")


def test_ambiguous_goals_are_refused_with_the_list_and_the_rule(two_goals, git_repo):
    for args in (["todo", "add", "--text", "x"], ["status"], ["ledger", "next", "-a", "alice"]):
        result = refused(two_goals, git_repo, args, "goal-required", "field 'goal_id'", "3 goals (g1, g2, g3)")
        assert "-g/--goal-id" in result.err and "LOOPX_GOAL_ID" in result.err and "loopx.goal" in result.err


def test_no_goal_at_all_is_refused_with_how_to_make_one(git_repo, capsys):
    run = Cli(git_repo, capsys)
    assert run("connect", "--no-hooks").code == 0
    result = refused(run, git_repo, ["todo", "list"], "goal-required", "no goals yet")
    assert "loopx connect -g" in result.err


@pytest.mark.parametrize(
    "where, origin",
    [("env", "from LOOPX_GOAL_ID"), ("config", "from git config loopx.goal")],
)
def test_a_default_naming_a_missing_goal_is_refused_saying_where_it_came_from(
    cli, git_repo, monkeypatch, where, origin
):
    if where == "env":
        monkeypatch.setenv("LOOPX_GOAL_ID", "ghost")
    else:
        git(git_repo, "config", "loopx.goal", "ghost")
    refused(
        cli, git_repo, ["todo", "add", "--text", "x"], "not-found", f"goal 'ghost' ({origin})", f"known goals: {GOAL}"
    )
    assert card_goal(cli, "-g", GOAL) == GOAL  # the flag still wins over the broken default


def test_connect_sets_the_default_goal(git_repo, capsys):
    run = Cli(git_repo, capsys)
    assert run("connect", "-g", "parser", "--objective", "A parser", "--no-hooks").code == 0
    assert git(git_repo, "config", "loopx.goal").strip() == "parser"
    loopx_git.open(git_repo).goal_create("docs", "The docs", now=NOW)
    assert card_goal(run) == "parser"  # two goals, the default picks one
    connected = run("connect", "-g", "docs", "--no-hooks")  # an existing goal: no --objective needed
    assert connected.code == 0 and "default goal of this clone: docs" in connected.err
    assert git(git_repo, "config", "loopx.goal").strip() == "docs" and card_goal(run) == "docs"


def test_connect_to_a_goal_that_does_not_exist_needs_an_objective(git_repo, capsys):
    run = Cli(git_repo, capsys)
    result = run("connect", "-g", "nope", "--no-hooks")
    assert result.code == 1 and "error[invalid-field]: field 'objective'" in result.err and "'nope'" in result.err
    assert git(git_repo, "for-each-ref", "refs/heads/loopx/").strip() == "", "nothing written, not even the branch"
    assert run("connect", "--no-hooks").code == 0
    tip = state_tip(git_repo)
    assert run("connect", "-g", "nope", "--no-hooks").code == 1 and state_tip(git_repo) == tip
    result = run("connect", "--objective", "orphan", "--no-hooks")
    assert result.code == 1 and "field 'goal_id'" in result.err and state_tip(git_repo) == tip
    assert "loopx.goal" not in git(git_repo, "config", "--list")


# --- the agent ----------------------------------------------------------------------------------


def test_agent_register_default_then_claim_acts_as_that_agent(cli, git_repo):
    registered = cli("agent", "register", "-a", "carol", "--default")
    assert registered.code == 0 and "default agent of this clone: carol" in registered.err
    assert git(git_repo, "config", "loopx.agent").strip() == "carol"
    cli("todo", "add", "--text", "x", "-t", "t1")
    data = cli.json("todo", "claim", "-t", "t1")
    assert data["record"]["claimed_by"] == "carol"
    event = last_event(cli, GOAL)
    assert (event["event_kind"], event["agent_id"]) == ("todo_claim", "carol")


def test_the_agent_sources_win_in_order(cli, git_repo, monkeypatch):
    git(git_repo, "config", "loopx.agent", "alice")
    monkeypatch.setenv("LOOPX_AGENT_ID", "bob")
    cli("todo", "add", "--text", "flag", "-a", "alice")
    assert last_event(cli, GOAL)["agent_id"] == "alice"
    cli("todo", "add", "--text", "env")
    assert last_event(cli, GOAL)["agent_id"] == "bob"
    monkeypatch.delenv("LOOPX_AGENT_ID")
    cli("todo", "add", "--text", "config")
    assert last_event(cli, GOAL)["agent_id"] == "alice"
    git(git_repo, "config", "--unset", "loopx.agent")
    cli("todo", "add", "--text", "person")
    assert last_event(cli, GOAL)["agent_id"] is None  # no default: a person acts


def test_a_write_records_the_default_agent_in_its_normal_field_only(cli, monkeypatch):
    cli("event", "append", "--kind", "note", "--summary", "by flag", "-a", "bob")
    given = last_event(cli, GOAL)
    monkeypatch.setenv("LOOPX_AGENT_ID", "bob")
    cli("event", "append", "--kind", "note", "--summary", "by default")
    defaulted = last_event(cli, GOAL)
    assert defaulted["agent_id"] == given["agent_id"] == "bob"
    assert defaulted.keys() == given.keys(), "no field says where the agent came from"
    assert "LOOPX_AGENT_ID" not in json.dumps(defaulted)


def test_reads_are_never_scoped_by_the_default_agent(cli, git_repo, monkeypatch):
    cli("todo", "add", "--text", "x", "-t", "t1", "-a", "bob")
    git(git_repo, "config", "loopx.agent", "alice")
    monkeypatch.setenv("LOOPX_AGENT_ID", "alice")
    card = cli.json("status")
    assert {a["agent_id"] for a in card["next_actions"]} == {"alice", "bob"}
    assert "bob" in {e["agent_id"] for e in cli.json("events")}
    assert {a["agent_id"] for a in cli.json("status", "-a", "bob")["next_actions"]} == {"bob"}


def test_an_unregistered_agent_in_the_environment_is_refused_like_an_unregistered_flag(cli, git_repo, monkeypatch):
    monkeypatch.setenv("LOOPX_AGENT_ID", "ghost")
    cli("todo", "add", "--text", "x", "-t", "t1", "-a", "alice")
    for args in (["todo", "add", "--text", "y"], ["todo", "claim", "-t", "t1"], ["ledger", "next"]):
        refused(cli, git_repo, args, "unknown-agent", "(from LOOPX_AGENT_ID) 'ghost'", "registered: alice, bob")
    refused(cli, git_repo, ["todo", "add", "--text", "y", "-a", "ghost"], "unknown-agent", "agent_id 'ghost'")


def test_the_clone_default_agent_applies_only_on_goals_where_it_is_registered(two_goals, git_repo):
    """`git config loopx.agent` says who this clone is; on a goal where that agent is not registered a
    person acts (with a warning), so one clone's default never blocks work on another goal; a command
    only an agent runs is refused there, saying where the agent came from."""
    cli = two_goals
    git(git_repo, "config", "loopx.agent", "alice")
    done = cli("--format", "json", "todo", "add", "-g", "g2", "--text", "Write the docs", "-t", "d1")
    assert done.code == 0, done.err
    data = json.loads(done.out)
    assert [w["code"] for w in data["warnings"]] == ["default-agent-elsewhere"]
    assert last_event(cli, "g2")["agent_id"] is None
    assert cli("todo", "add", "-g", GOAL, "--text", "x", "-t", "t1").code == 0
    assert last_event(cli, GOAL)["agent_id"] == "alice"  # where alice is registered, alice acts
    refused(
        cli,
        git_repo,
        ["todo", "claim", "-g", "g2", "-t", "d1"],
        "unknown-agent",
        "(from git config loopx.agent) 'alice'",
        "registered: carol",
    )


def test_connect_refuses_before_anything_is_written(git_repo, capsys):
    """A refused connect -g leaves no branch, no config and no hooks: not for a goal missing from the
    branch --state-branch names, nor for an objective the safety rules refuse."""
    cli = Cli(git_repo, capsys)
    home = "/" + "home/alice/notes"  # assembled: the repository's own check must not flag this file
    result = cli("connect", "-g", "g", "--objective", f"see {home}")
    assert result.code == 1 and result.err.startswith("error[unsafe]")
    assert git(git_repo, "for-each-ref", "refs/heads/loopx").strip() == ""
    assert "loopx." not in git(git_repo, "config", "--list")
    assert cli("connect", "-g", GOAL, "--objective", "Ship the parser").code == 0
    before = git(git_repo, "config", "--list")
    result = cli("connect", "--state-branch", "other", "-g", "nope")
    assert result.code == 1 and "goal 'nope' does not exist" in result.err
    assert git(git_repo, "for-each-ref", "refs/heads/other").strip() == ""
    assert git(git_repo, "config", "--list") == before
    assert cli.json("status")["goal"]["goal_id"] == GOAL


def test_claim_with_no_agent_at_all_is_refused(cli, git_repo):
    cli("todo", "add", "--text", "x", "-t", "t1")
    result = refused(cli, git_repo, ["todo", "claim", "-t", "t1"], "agent-required", "field 'agent_id'")
    assert "-a/--agent-id" in result.err and "LOOPX_AGENT_ID" in result.err and "loopx.agent" in result.err


def test_register_default_needs_the_registration_to_succeed(cli, git_repo):
    result = cli("agent", "register", "-a", "bad agent", "--default")
    assert result.code == 1
    assert "loopx.agent" not in git(git_repo, "config", "--list")


def test_the_api_takes_explicit_values_and_reads_no_environment(repo, git_repo, monkeypatch):
    monkeypatch.setenv("LOOPX_AGENT_ID", "bob")
    monkeypatch.setenv("LOOPX_GOAL_ID", "elsewhere")
    assert repo.resolve_agent(GOAL) is None
    assert repo.resolve_goal().source == "only-goal"
    assert repo.resolve_agent(GOAL, env="bob").source == "env"
    assert repo.set_default_agent(GOAL, "alice") is True and repo.set_default_agent(GOAL, "alice") is False
    assert repo.resolve_agent(GOAL).value == "alice"
    assert repo.set_default_goal(GOAL) is True
    assert git(git_repo, "config", "loopx.goal").strip() == GOAL

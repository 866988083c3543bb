"""Output people read: tables that never cut an id, `show` commands that print text (never a Python
repr), a hook summary that reads as a sentence and names each file once, a write's commit line that
ends its line; and `todo list --status` that keeps superseded todos apart."""

from __future__ import annotations

import random
import string

import pytest

from tests.conftest import GOAL, git, state_tip

LONG_AGENT = "alice-with-a-rather-long-agent-identifier"
LONG_TODO = "todo-with-a-rather-long-identifier-0123456789"
LONG_ENTRY = "entry-with-a-rather-long-identifier-0123456789"


def token() -> str:
    """A GitHub-token-shaped value, assembled at run time so no secret-shaped literal is in this file."""
    rng = random.Random(11)
    return "gh" + "p_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


@pytest.fixture
def seeded(cli):
    """Long ids everywhere a table shows one: an agent, todos, a ledger entry, a run, a rollback."""
    assert cli("agent", "register", "--goal-id", GOAL, "--agent-id", LONG_AGENT, "--lane", "core").code == 0
    cli(
        "todo",
        "add",
        "--goal-id",
        GOAL,
        "--todo-id",
        LONG_TODO,
        "--text",
        "Write the tokenizer, a task whose text is long enough that it has to wrap in a narrow terminal",
        "--claimed-by",
        LONG_AGENT,
    )
    generated = cli.json("todo", "add", "--goal-id", GOAL, "--text", "Document the tokenizer API for everyone")
    cli.json("todo", "suggest", "--goal-id", GOAL, "--text", "Fuzz the tokenizer", "--todo-id", "todo-suggested-0001")
    cli.json(
        "refresh-state",
        "--goal-id",
        GOAL,
        "--classification",
        "progress",
        "--agent-id",
        LONG_AGENT,
        "--todo-id",
        LONG_TODO,
    )
    cli.json(
        "ledger", "add", "--goal-id", GOAL, "--entry-id", LONG_ENTRY, "--claim", "CI is green", "--action", "run_ci"
    )
    claim = cli.json(
        "todo", "claim", "--goal-id", GOAL, "--todo-id", generated["record"]["todo_id"], "--agent-id", "bob"
    )
    rollback = cli.json(
        "rollback", "--goal-id", GOAL, "--event", claim["event_ids"][0], "--reason", "claimed by mistake"
    )
    return {
        "todos": [LONG_TODO, generated["record"]["todo_id"]],
        "packet": rollback["record"]["packet_id"],
        "claim_event": claim["event_ids"][0],
    }


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")


def test_tables_print_every_id_whole_in_a_narrow_terminal(cli, seeded, narrow):
    events = cli.json("events", "--goal-id", GOAL)
    runs = cli.json("history", "--goal-id", GOAL)
    tables = {
        ("todo", "list", "--goal-id", GOAL): [*seeded["todos"], LONG_AGENT],
        ("todo", "list", "--goal-id", GOAL, "--suggested"): ["todo-suggested-0001"],
        ("status", "--goal-id", GOAL): [LONG_TODO, LONG_AGENT],
        ("events", "--goal-id", GOAL): [e["event_id"] for e in events] + [LONG_TODO, LONG_AGENT],
        ("history", "--goal-id", GOAL): [r["run_id"] for r in runs] + [LONG_AGENT, LONG_TODO],
        ("rollback", "list", "--goal-id", GOAL): [seeded["packet"]],
        ("ledger", "list", "--goal-id", GOAL): [LONG_ENTRY],
        ("agent", "list", "--goal-id", GOAL): [LONG_AGENT],
        ("goal", "list"): [GOAL],
    }
    for args, ids in tables.items():
        result = cli(*args)
        assert result.code == 0, (args, result.err)
        for wanted in ids:
            assert wanted in result.out, f"{' '.join(args)}: {wanted} is cut or folded:\n{result.out}"
        assert "…" not in result.out, args


def test_free_text_wraps_instead_of_the_ids(cli, seeded, narrow):
    out = cli("todo", "list", "--goal-id", GOAL).out
    text = "Write the tokenizer, a task whose text is long enough that it has to wrap in a narrow terminal"
    assert text not in out and all(word in out for word in text.split())  # wrapped, word by word
    assert LONG_TODO in out and LONG_AGENT in out


NO_REPR = ("{'", "['", "':", "None")


def _readable(out: str) -> None:
    for fragment in NO_REPR:
        assert fragment not in out, f"{fragment!r} in:\n{out}"


def test_show_commands_print_text_not_python_reprs(cli, seeded):
    done = cli.json("todo", "add", "--goal-id", GOAL, "--text", "Ship it", "--todo-id", "todo-ship")
    cli(
        "todo",
        "complete",
        "--goal-id",
        GOAL,
        "--todo-id",
        "todo-ship",
        "--evidence",
        "tests/test_a.py",
        "--evidence",
        "tests/test_b.py",
    )
    assert done["changed"]
    cli("goal", "update", "--goal-id", GOAL, "--add-acceptance", "the suite passes", "--add-non-goal", "a GUI")
    cli.json("ledger", "next", "--goal-id", GOAL)
    cli(
        "ledger",
        "record",
        "--goal-id",
        GOAL,
        "--entry-id",
        LONG_ENTRY,
        "--status",
        "done",
        "--verdict",
        "MATCH",
        "--next",
        "resume",
        "--evidence",
        "test_path:tests/test_ci.py",
    )
    shows = {
        ("todo", "show", "--goal-id", GOAL, "--todo-id", "todo-ship"): ["todo-ship", "tests/test_a.py", "done"],
        ("goal", "show", "--goal-id", GOAL): ["Ship the parser", "the suite passes", "a GUI"],
        ("rollback", "show", "--goal-id", GOAL, "--packet-id", seeded["packet"]): [
            seeded["packet"],
            "mistaken_transition",
            "claimed by mistake",
            "state_compensation",
            "plan:",
            "  - step_id:",
            seeded["claim_event"],
        ],
        ("ledger", "show", "--goal-id", GOAL, "--entry-id", LONG_ENTRY): [
            LONG_ENTRY,
            "test_path:tests/test_ci.py",
            "MATCH",
        ],
    }
    for args, facts in shows.items():
        result = cli(*args)
        assert result.code == 0, (args, result.err)
        _readable(result.out)
        for fact in facts:
            assert fact in result.out, f"{' '.join(args)}: {fact!r} missing:\n{result.out}"


def test_a_rollback_says_its_transitions_without_reprs(cli, seeded):
    claim = cli.json("todo", "claim", "--goal-id", GOAL, "--todo-id", LONG_TODO, "--agent-id", LONG_AGENT)
    assert not claim["changed"]  # already held: nothing to roll back from this one
    complete = cli.json(
        "todo",
        "complete",
        "--goal-id",
        GOAL,
        "--todo-id",
        LONG_TODO,
        "--evidence",
        "tests/test_tok.py",
        "--agent-id",
        LONG_AGENT,
    )
    for extra in (["--dry-run"], []):
        result = cli("rollback", "--goal-id", GOAL, "--event", complete["event_ids"][0], "--reason", "not done", *extra)
        assert result.code == 0, result.err
        _readable(result.out)
        assert "status: done -> open" in result.out
        assert "evidence: [tests/test_tok.py] -> []" in result.out


def test_a_write_ends_its_commit_line_and_counts_events_in_words(cli):
    result = cli("todo", "add", "--goal-id", GOAL, "--text", "first", "--todo-id", "t1")
    assert result.code == 0
    assert result.err.endswith("· 1 event\n"), repr(result.err)
    cli("todo", "add", "--goal-id", GOAL, "--text", "after t1", "--todo-id", "t2", "--resume-when", "todo_done:t1")
    woke = cli("todo", "complete", "--goal-id", GOAL, "--todo-id", "t1", "--evidence", "README.md")
    assert woke.err.endswith("· 2 events\n"), repr(woke.err)  # the completion and t2's resume
    nothing = cli("todo", "claim", "--goal-id", GOAL, "--todo-id", "t2", "--agent-id", "alice")
    again = cli("todo", "claim", "--goal-id", GOAL, "--todo-id", "t2", "--agent-id", "alice")
    assert nothing.code == again.code == 0 and again.err.endswith("nothing changed; no commit\n")


# --- the hook summary ----------------------------------------------------------------------------


def _stage(git_repo, name: str, text: str) -> None:
    (git_repo / name).write_text(text)
    git(git_repo, "add", name)


def test_the_hook_summary_reads_as_a_sentence_and_names_each_file_once(cli, git_repo):
    secret = token()
    _stage(git_repo, "settings.py", f"a = '{secret}'\nb = '{secret}'\n")
    _stage(git_repo, "deploy.sh", f"export GH={secret}\n")
    result = cli("hook", "run", "pre-commit")
    assert result.code == 1
    lines = result.err.splitlines()
    assert sum("settings.py" in line for line in lines) == 1, result.err
    assert "settings.py: 2 findings" in lines
    assert sum(line.startswith("  1:") or line.startswith("  2:") for line in lines) == 2
    assert any(line.startswith("deploy.sh:1:") and "github-token (block)" in line for line in lines)
    summary = next(line for line in lines if line.startswith("loopx pre-commit:"))
    assert summary.split(": ", 1)[1] == "refused — 3 blocking findings, 0 warnings; scanned 2 files", summary
    assert "(s)" not in result.err


def test_one_finding_is_said_in_the_singular(cli, git_repo):
    _stage(git_repo, "deploy.sh", f"export GH={token()}\n")
    result = cli("check")
    assert result.code == 1
    summary = next(line for line in result.out.splitlines() if line.startswith("loopx check:"))
    assert "— 1 blocking finding, 0 warnings;" in summary and "(s)" not in summary, summary


# --- todo list --status ---------------------------------------------------------------------------


@pytest.fixture
def superseded(cli):
    cli("todo", "add", "--goal-id", GOAL, "--text", "old plan", "--todo-id", "t-old")
    cli("todo", "add", "--goal-id", GOAL, "--text", "new plan", "--todo-id", "t-new")
    cli("todo", "add", "--goal-id", GOAL, "--text", "blocked", "--todo-id", "t-blocked")
    cli("todo", "update", "--goal-id", GOAL, "--todo-id", "t-blocked", "--status", "blocked", "--reason", "waiting")
    assert (
        cli("todo", "supersede", "--goal-id", GOAL, "--todo-id", "t-old", "--by", "t-new", "--reason", "split").code
        == 0
    )
    return cli


def _ids(cli, *args: str) -> list[str]:
    return sorted(t["todo_id"] for t in cli.json("todo", "list", "--goal-id", GOAL, *args))


def test_status_open_leaves_superseded_todos_out(superseded):
    assert _ids(superseded, "--status", "open") == ["t-new"]
    assert _ids(superseded) == ["t-blocked", "t-new"]  # the live todos, as before
    assert "t-old" in _ids(superseded, "--all")


def test_status_superseded_lists_them(superseded):
    assert _ids(superseded, "--status", "superseded") == ["t-old"]
    out = superseded("todo", "list", "--goal-id", GOAL, "--status", "superseded").out
    assert "superseded by t-new" in out
    assert _ids(superseded, "--status", "blocked") == ["t-blocked"]


@pytest.mark.parametrize(
    "args, valid",
    [
        (["todo", "list", "--goal-id", GOAL, "--status", "closed"], ["open", "superseded"]),
        (["events", "--goal-id", GOAL, "--kind", "todo_delete"], ["todo_add", "pr_merge"]),
    ],
)
def test_an_unknown_status_or_kind_is_a_usage_error_listing_the_valid_ones(cli, git_repo, args, valid):
    tip = state_tip(git_repo)
    result = cli(*args)
    assert result.code == 2, result.err
    for value in valid:
        assert value in result.err
    assert state_tip(git_repo) == tip


def test_the_python_api_refuses_an_unknown_status_or_kind_naming_the_field(repo):
    from loopx_git.errors import ValidationError

    with pytest.raises(ValidationError, match=r"'status'.*superseded"):
        repo.todos(GOAL, status="closed")
    with pytest.raises(ValidationError, match=r"'kind'.*todo_add"):
        repo.events(GOAL, kind="todo_delete")

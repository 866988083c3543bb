"""The holes a new user found in an hour (issue 32, items 1-10), one test each, as reported. Each
failed on 7714347 (the commit the issue was filed at); the guarantees behind them are proved over
the whole surface in ``tests/surface/`` and ``tests/safety/test_boundaries.py``."""

from __future__ import annotations

import json
import subprocess

import pytest

import loopx_git
from loopx_git.cli.review import _cell
from tests.conftest import GOAL, NOW, Cli, git, state_tip
from tests.hooks.test_hooks import commit, run_git
from tests.safety.parts import cat
from tests.surface.tokens import FAMILY_TOKENS, ONE_LINE_PEM_BODY, Shaped, leaked

BODY = "iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZoL8g"
TOKEN = cat("gh", "p_", BODY)


# -- 1. a word character before a prefixed token hides it ---------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        cat("x_", TOKEN),
        cat("9", TOKEN),
        cat("A", TOKEN),
        cat("a_xo", "xb-", "4132338520-4132338520-aB3dE5fG7hJ9kL1mN3pQ5rS7"),
        cat("x_gl", "pat-", "22ZR88kQ3vT7mNbX1pLwC"),
    ],
    ids=["x_ghp", "9ghp", "Aghp", "a_xoxb", "x_glpat"],
)
def test_1_a_glued_prefix_is_refused_in_todo_text(cli, value):
    tip = state_tip(cli.path)
    result = cli("todo", "add", "-g", GOAL, "--text", f"note {value}")
    assert result.code == 1 and "error[unsafe]" in result.err and state_tip(cli.path) == tip
    assert value[-12:] not in result.err


def test_1_a_glued_prefix_is_refused_staged_named_checked_and_pushed(connected, remote):
    glued = cat("x_", TOKEN)
    head = git(connected, "rev-parse", "HEAD")
    staged = commit(connected, "src/settings.py", f"TOKEN = '{glued}'\n")
    assert staged.returncode == 1 and "(block)" in staged.stderr and BODY not in staged.stderr
    named = commit(connected, cat("key_", TOKEN, ".txt"), "nothing secret inside\n")
    assert named.returncode == 1 and "in the file name" in named.stderr and BODY not in named.stderr
    assert git(connected, "rev-parse", "HEAD") == head
    run_git(connected, "reset", "-q")
    assert commit(connected, "deploy.sh", f"export GH={glued}\n", "--no-verify").returncode == 0
    check = subprocess.run(
        [__import__("sys").executable, "-m", "loopx_git", "--repo", str(connected), "check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 1 and "github-token (block)" in check.stdout + check.stderr
    pushed = run_git(connected, "push", "origin", "main")
    assert pushed.returncode != 0 and "github-token (block)" in pushed.stderr and BODY not in pushed.stderr


# -- 2. a token split over a YAML folded scalar ---------------------------------------------------


def test_2_a_token_cut_over_a_folded_scalar_is_refused_as_todo_text(cli):
    folded = f"token: >-\n  {TOKEN[:20]}\n  {TOKEN[20:]}\n"
    tip = state_tip(cli.path)
    result = cli("todo", "add", "-g", GOAL, "--text", folded)
    assert result.code == 1 and "error[unsafe]" in result.err and state_tip(cli.path) == tip
    assert TOKEN[:20] not in result.err and TOKEN[20:] not in result.err


def test_2_a_folded_token_in_a_staged_file_refuses_the_commit(connected):
    result = commit(connected, "config/ci.yaml", f"token: >-\n  {TOKEN[:20]}\n  {TOKEN[20:]}\n")
    assert result.returncode == 1 and "github-token (block)" in result.stderr
    assert TOKEN[20:] not in result.stderr


# -- 3. refusals echo secret values -------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["todo", "claim", "-t", "{v}", "-a", "alice"],
        ["todo", "claim", "-t", "t1", "-g", "{v}", "-a", "alice"],
        ["todo", "claim", "-t", "t1", "-a", "{v}"],
        ["todo", "add", "--text", "x", "--resume-when", "todo_done:{v}"],
        ["event", "append", "--kind", "pr_merge", "--pr-ref", "{v}"],
        ["event", "append", "--kind", "note", "--commit-ref", "{v}"],
        ["--state-branch", "{v}", "status"],
        ["--repo", "{v}", "status"],
        ["rollback", "--commit", "{v}", "--reason", "r"],
        ["schema", "{v}"],
        ["view", "todo", "{v}"],
        ["todo", "add", "--text", "x", "--priority", "{v}"],
        ["event", "append", "--kind", "note", "--detail", "{v}=1"],
        ["event", "append", "--kind", "note", "--artifact-ref", "{pem}"],
        ["event", "append", "--kind", "note", "--artifact-ref", "/keys/{pem}"],  # refused as a path: quoted
    ],
    ids=lambda a: " ".join(x for x in a if "{" not in x)[:40],
)
def test_3_a_refusal_never_echoes_the_secret_it_was_handed(cli, args):
    value, pem = cat("x_", TOKEN), FAMILY_TOKENS["keys (one-line PEM)"][0]
    line = [a.replace("{v}", value).replace("{pem}", pem) for a in args]
    tip = state_tip(cli.path)
    for fmt in (None, "json"):
        result = cli(*line, fmt=fmt) if line[0] != "--repo" else _bare_run(cli, line, fmt)
        printed = result.out + result.err
        assert result.code in (1, 2), printed
        assert not leaked(Shaped("x", value, (TOKEN,)), printed), printed
        assert ONE_LINE_PEM_BODY not in printed
    assert state_tip(cli.path) == tip


def _bare_run(cli, line, fmt):
    from loopx_git.cli.main import run_cli

    cli._capsys.readouterr()
    code = run_cli([*(["--format", fmt] if fmt else []), *line])
    out, err = cli._capsys.readouterr()
    return type("R", (), {"code": code, "out": out, "err": err})


def test_3_an_agent_default_holding_a_secret_is_not_echoed(cli, monkeypatch):
    monkeypatch.setenv("LOOPX_AGENT_ID", TOKEN)
    result = cli("todo", "claim", "-g", GOAL, "-t", "t1")
    assert result.code == 1 and "LOOPX_AGENT_ID" in result.err and BODY[:8] not in result.err


# -- 4. --state-branch main repair commits onto the code branch -----------------------------------


def test_4_repair_on_the_checked_out_branch_is_refused_and_main_is_untouched(cli, git_repo):
    head, tree = git(git_repo, "rev-parse", "main").strip(), git(git_repo, "ls-files", "--stage")
    for args in (["--state-branch", "main", "repair"], ["--state-branch", "main", "connect"]):
        result = cli(*args)
        assert result.code == 1 and "error[state-branch-is-code]" in result.err, result.err
        assert "repair" not in result.err.split("hint:")[-1]
    assert git(git_repo, "rev-parse", "main").strip() == head and git(git_repo, "ls-files", "--stage") == tree


# -- 5. one agent takes another's claim through a handoff -------------------------------------------


def test_5_bob_cannot_prepare_alices_handoff_to_himself(cli, repo):
    cli("todo", "add", "-g", GOAL, "--text", "alice's", "-t", "ta")
    repo.todo_claim(GOAL, "ta", "alice", now=NOW)
    tip = state_tip(cli.path)
    result = cli(
        "handoff", "prepare", "-g", GOAL, "--handoff-id", "h1", "--from-agent-id", "alice", "--to-agent-id", "bob",
        "-t", "ta", "--stop-condition", "s", "-a", "bob",
    )  # fmt: skip
    assert result.code == 1 and "error[not-holder]" in result.err and state_tip(cli.path) == tip
    assert cli("handoff", "adopt", "-g", GOAL, "--handoff-id", "h1", "-a", "bob").code == 1
    assert repo.todo(GOAL, "ta").claimed_by == "alice"


# -- 6. reads print a secret already on the branch ----------------------------------------------------


def test_6_status_and_events_mask_a_secret_plain_git_wrote(cli, git_repo, tmp_path):
    work = tmp_path / "state"
    git(git_repo, "worktree", "add", "-q", str(work), "loopx/state")
    event = sorted(work.glob("goals/g1/events/**/*.json"))[-1]
    data = json.loads(event.read_text())
    data["summary"] = f"deploy with {TOKEN}"
    event.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    git(work, "commit", "-q", "-am", "by hand")
    git(git_repo, "worktree", "remove", "--force", str(work))
    for args in (["events", "-g", GOAL], ["status", "-g", GOAL]):
        for fmt in (None, "json"):
            result = cli(*args, fmt=fmt)
            assert BODY[:8] not in result.out + result.err, (args, fmt)
    assert "[REDACTED:github-token]" in cli("events", "-g", GOAL).out


# -- 7. unrelated and rewritten remotes: tests/sync/test_sync_history.py ------------------------------

# -- 8. review-diff markdown pastes state text raw ----------------------------------------------------


@pytest.mark.parametrize(
    "text, bad",
    [
        ("<img src=x onerror=alert(1)>", "<img"),
        ("</details><script>x</script>", "</details>"),
        ("ping @everyone now", "@everyone"),
        ("[click](javascript:alert(1))", "](javascript:"),
        ("![p](data:image/png;base64,AAAA)", "](data:"),
        ("[a[b]c](javascript:alert(1))", "](javascript:"),  # brackets nested in the link's text
        ("[a\nb](javascript:alert(2))", "](javascript:"),  # a line break in it
        ("ping -@octocat .@octocat", "-@octocat"),
        ("x\\|y", "\\\\|"),  # the text's own backslash cannot undo the table's escape of `|`
    ],
)
def test_8_markdown_for_a_pull_request_keeps_state_text_inert(text, bad):
    assert bad not in _cell(text)


def test_8_review_diff_markdown_of_hostile_todo_text(cli, repo):
    base = state_tip(cli.path)
    cli(
        "todo",
        "add",
        "-g",
        GOAL,
        "--text",
        "<img src=x onerror=alert(1)> @everyone [x](javascript:alert(1)) </details>",
    )
    out = cli("review-diff", f"{base}..loopx/state", "--format", "markdown").out
    assert "<img" not in out and "@everyone" not in out and "](javascript:" not in out
    assert out.count("</details>") == 1 and "[ok](https://example.com)" not in out
    assert "&lt;img" in out and "@&#8203;everyone" in out


def test_8_a_range_name_cannot_break_out_of_its_code_span(cli, git_repo):
    branch = "p`<img/src=x/onerror=alert(1)>`"
    git(git_repo, "branch", branch, "loopx/state")
    heading = cli("review-diff", f"loopx/state..{branch}", "--format", "markdown").out.splitlines()[0]
    assert heading == "## loopx state review: `loopx/state`..`p'<img/src=x/onerror=alert(1)>'`"  # inert in code


def test_8_http_links_stay_links():
    assert _cell("see [the run](https://ci.example.com/run/1)") == "see [the run](https://ci.example.com/run/1)"


# -- 9. small rules -------------------------------------------------------------------------------------


def test_9_a_todo_added_deferred_cannot_be_claimed_at_once(cli):
    tip = state_tip(cli.path)
    result = cli("todo", "add", "-g", GOAL, "--text", "x", "--resume-when", "todo_done:t1", "--claimed-by", "alice")
    assert result.code == 1 and "error[not-runnable]" in result.err and "field 'claimed_by'" in result.err
    assert state_tip(cli.path) == tip


@pytest.mark.parametrize(
    "ref", ["file:///etc/passwd", " file:///etc/passwd", "git+file:///etc/passwd", "vscode://file/etc/passwd"]
)
def test_9_file_url_evidence_is_an_absolute_path(cli, ref):
    tip = state_tip(cli.path)
    result = cli("todo", "complete", "-g", GOAL, "-t", "t1", "--evidence", ref)
    assert result.code == 1 and "unsafe-ref" in result.err and "field 'evidence[0]'" in result.err
    assert state_tip(cli.path) == tip


def test_9_bidi_and_zero_width_characters_are_shown_escaped_in_text(cli):
    cli("todo", "add", "-g", GOAL, "--text", "abc\u202etxt.exe zero\u200bwidth \U000e0041\u2062\u00adb", "-t", "tb")
    out = cli("todo", "show", "-g", GOAL, "-t", "tb").out
    assert "\u202e" not in out and "\\u202e" in out and "\u200b" not in out and "\\u200b" in out
    assert "\U000e0041" not in out and "\\U000e0041" in out and "\u00ad" not in out  # a tag: smuggled text
    assert json.loads(cli("todo", "show", "-g", GOAL, "-t", "tb", fmt="json").out)["text"].count("\u202e") == 1


def test_9_a_not_found_message_is_one_line(cli):
    result = cli("view", "todo", "-g", GOAL, "t1\nerror[forged]: nothing")
    assert result.code == 1 and result.err.count("\n") <= 2 and "\nerror[forged]" not in result.err


def test_9_a_file_name_on_the_branch_cannot_forge_a_line(cli, git_repo, tmp_path):
    work = tmp_path / "state"
    git(git_repo, "worktree", "add", "-q", str(work), "loopx/state")
    (work / "goals" / "g1" / "x\nerror[forged]: injected").write_text("x\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "a stray by plain git")
    git(git_repo, "worktree", "remove", "--force", str(work))
    for args in (["verify"], ["review-diff", "loopx/state~1..loopx/state"], ["status", "-g", GOAL]):
        result = cli(*args)
        lines = (result.out + result.err).splitlines()
        assert not any(line.startswith("error[forged]") for line in lines), (args, result.out, result.err)


def test_9_an_overlong_dashboard_folder_is_refused_not_an_internal_error(cli):
    result = cli("dashboard", "-g", GOAL, "--out", "a" * 300)
    assert result.code == 1 and "error[invalid-option]" in result.err


@pytest.mark.parametrize("args", [["--json", "--format", "yaml", "status"], ["status", "--json", "--format", "yaml"]])
def test_9_two_formats_at_once_are_a_usage_error(cli, args):
    result = cli(*args)
    assert result.code == 2 and "two formats" in result.err


def test_9_an_empty_state_branch_is_refused(cli):
    result = cli("--state-branch", "", "status")
    assert result.code == 1 and "is empty" in result.err


def test_9_an_option_repeated_thousands_of_times_is_refused_by_name(cli):
    tip = state_tip(cli.path)
    labels = [x for i in range(3000) for x in ("--label", f"l{i}")]
    result = cli("event", "append", "-g", GOAL, "--kind", "note", *labels)
    assert result.code == 1 and "given 3000 times" in result.err and "at most 256" in result.err
    evidence = [x for i in range(300) for x in ("--evidence", f"missing/{i}.txt")]
    assert cli("todo", "complete", "-g", GOAL, "-t", "t1", *evidence).code == 1
    assert state_tip(cli.path) == tip


def test_9_many_warnings_are_summed_up_in_text(cli):
    evidence = [x for i in range(60) for x in ("--evidence", f"missing/{i}.txt")]
    result = cli("todo", "complete", "-g", GOAL, "-t", "t1", *evidence)
    assert result.code == 0 and result.err.count("warning:") <= 21 and "more" in result.err


def test_9_help_never_cuts_an_option_name(git_repo):
    import os
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "loopx_git", "refresh-state", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert "--progress-hypothesis-id" in done.stdout and "--progress-hypothes…" not in done.stdout


def test_9_the_place_column_of_events_never_repeats_after_a_merge(tmp_path, capsys, monkeypatch):
    from tests.sync.helpers import bare, clone

    monkeypatch.setenv("COLUMNS", "400")  # one row a line
    remote = bare(tmp_path / "remote.git")
    alice = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(alice) as a:
        a.goal_create(GOAL, "g")
        a.sync()
    bob = clone(tmp_path / "bob", str(remote))
    with loopx_git.open(alice) as a, loopx_git.open(bob) as b:
        a.todo_add(GOAL, "offline on alice", todo_id="ta")
        b.todo_add(GOAL, "offline on bob", todo_id="tb")  # the same Lamport clock, written apart
        b.sync()
        a.sync()
    rows = Cli(alice, capsys)("events", "-g", GOAL).out.splitlines()[1:]
    places = [row.split()[0] for row in rows]
    assert len(places) == len(set(places)) == len(rows) and places == [str(i) for i in range(1, len(rows) + 1)]


def test_9_rolling_back_a_merge_commit_says_which_commit_to_name(cli, git_repo):
    # a merge commit of the state branch: two parents, as a sync makes one
    parent = git(git_repo, "rev-parse", "loopx/state").strip()
    tree = git(git_repo, "rev-parse", "loopx/state^{tree}").strip()
    other = git(git_repo, "commit-tree", tree, "-m", "other side").strip()
    merge = git(git_repo, "commit-tree", tree, "-p", parent, "-p", other, "-m", "loopx: merge").strip()
    git(git_repo, "update-ref", "refs/heads/loopx/state", merge)
    result = cli("rollback", "-g", GOAL, "--commit", merge, "--reason", "r")
    assert result.code == 1 and "error[merge-commit]" in result.err and "--no-merges" in result.err


def test_9_status_in_an_unconnected_clone_says_connect(tmp_path, capsys):
    from tests.sync.helpers import bare, clone

    remote = bare(tmp_path / "remote.git")
    alice = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(alice) as a:
        a.goal_create(GOAL, "g")
        a.sync()
    fresh = tmp_path / "fresh"
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(remote), str(fresh)], check=True)
    result = Cli(fresh, capsys)("status")
    assert result.code == 1 and "error[not-connected]" in result.err and "origin/loopx/state" in result.err
    assert "no goals yet" not in result.err


def test_9_todo_list_says_how_many_it_does_not_list(cli):
    cli("todo", "complete", "-g", GOAL, "-t", "t1", "--evidence", "e")
    result = cli("todo", "list", "-g", GOAL)
    assert "not listed: 1 done (--all lists them too)" in result.err
    assert "not listed" not in cli("todo", "list", "-g", GOAL, "--all").err


# -- 10. the write-back command loopx projects is refused by loopx --------------------------------------


def test_10_the_projected_writeback_with_a_selected_todo_is_accepted(cli, repo):
    unchanged = [
        "--progress-result-class",
        "unchanged",
        "--progress-surface-id",
        "auth",
        "--progress-evidence-id",
        "e1",
    ]
    for _ in range(2):
        assert cli("refresh-state", "-g", GOAL, "-a", "alice", "--classification", "probe", *unchanged).code == 0
    repo.todo_claim(GOAL, "t1", "alice", now=NOW)
    should = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice", "--turn-instance-id", "turn-1")
    contract = should["interaction_contract"]
    settlement = contract["cli_channel"]["replan_settlement_contract"]
    assert settlement == {**settlement, "settlement_bound": False, "identity_option": "--todo-id t1"}
    primary = contract["agent_channel"]["primary_action"]
    projected = [
        contract["cli_channel"]["writeback_command"],
        primary[primary.index("loopx ") :],
        should["replan_action_packet"]["writeback_contract"]["command_template"],
    ]
    for command in projected:
        assert "--todo-id t1" in command and "--replan-obligation-id" not in command, command
    filled = (
        projected[0].removeprefix("loopx ").split(" <typed-dimension-options")[0]
        .replace("<slug>", "probe").replace("<typed-class>", "advanced").replace("<evidence-id>", "e2")
    )  # fmt: skip
    tip = state_tip(cli.path)
    result = cli(*filled.split(), "--progress-surface-id", "parser")
    assert result.code == 0, result.err
    assert state_tip(cli.path) != tip


@pytest.fixture
def cli(cli, repo):
    """The shared repository of tests/conftest.py, with a todo t1."""
    repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", now=NOW)
    return cli


@pytest.fixture
def connected(git_repo, capsys):
    assert Cli(git_repo, capsys)("connect", "--goal-id", "g1", "--objective", "Ship it").code == 0
    return git_repo


@pytest.fixture
def remote(connected, tmp_path):
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(connected, "remote", "add", "origin", str(bare))
    assert run_git(connected, "push", "-q", "origin", "main", "loopx/state").returncode == 0
    return bare

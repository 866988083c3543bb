"""Every writing command refuses an unsafe value (exit 1, the field, the rule and the fingerprint
named, the state ref unmoved) and with --redact writes the redacted value instead."""

from __future__ import annotations

import json

import pytest

import loopx_git
from loopx_git.safety.scan import fingerprint
from tests.conftest import GOAL, Cli, git, state_tip

TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
HOME = "/home/alice"
UNSAFE = f"use {TOKEN} from {HOME}/run.sh"
REDACTED = "use [REDACTED:github-token] from [REDACTED:home-path]/run.sh"

# (command, the field the unsafe value goes into as the user sees it)
WRITES = [
    (["goal", "create", "-g", "g2", "--objective", UNSAFE], "objective"),
    (["goal", "update", "-g", GOAL, "--objective", UNSAFE], "objective"),
    (["goal", "update", "-g", GOAL, "--add-acceptance", UNSAFE], "acceptance_criteria[0]"),
    (["todo", "add", "-g", GOAL, "--text", UNSAFE], "text"),
    (["todo", "update", "-g", GOAL, "-t", "t0", "--status", "blocked", "--reason", UNSAFE], "reason"),
    (["todo", "complete", "-g", GOAL, "-t", "t0", "--no-follow-up", "--reason", UNSAFE], "reason"),
    (["todo", "supersede", "-g", GOAL, "-t", "t0", "--by", "t1", "--reason", UNSAFE], "reason"),
    (["todo", "suggest", "-g", GOAL, "--text", UNSAFE], "text"),
    (["event", "append", "-g", GOAL, "--kind", "note", "--summary", UNSAFE], "summary"),
    (["event", "append", "-g", GOAL, "--kind", "note", "--detail", f"why={UNSAFE}"], "details.why"),
    (["refresh-state", "-g", GOAL, "--classification", "progress", "--evidence", UNSAFE], "evidence[0]"),
]


@pytest.fixture
def seeded(cli):
    cli("todo", "add", "-g", GOAL, "--text", "seed", "--todo-id", "t0")
    cli("todo", "add", "-g", GOAL, "--text", "successor", "--todo-id", "t1")
    return cli


def _ids(args: list[str]) -> str:
    return " ".join(args[:2])


@pytest.mark.parametrize("args, field", WRITES, ids=[_ids(a) + f" {f}" for a, f in WRITES])
def test_an_unsafe_value_is_refused_and_nothing_is_written(seeded, git_repo, args, field):
    tip = state_tip(git_repo)
    result = seeded(*args)
    assert result.code == 1, result.err
    assert result.err.startswith("error[unsafe]: ")
    assert f"field '{field}'" in result.err, result.err
    assert f"fp={fingerprint(TOKEN)}" in result.err or f"fp={fingerprint(HOME)}" in result.err
    assert "--redact" in result.err and TOKEN not in result.err and HOME not in result.err
    assert result.out == ""
    assert state_tip(git_repo) == tip


@pytest.mark.parametrize("args, field", WRITES, ids=[_ids(a) + f" {f}" for a, f in WRITES])
def test_with_redact_the_redacted_value_is_written(seeded, git_repo, args, field):
    result = seeded(*args, "--redact", fmt="json")
    assert result.code == 0, result.err
    envelope = json.loads(result.out)
    assert {r["rule"] for r in envelope["redacted"]} == {"github-token", "home-path"}
    assert TOKEN not in result.out and HOME not in result.out
    tip = state_tip(git_repo)
    assert tip == envelope["commit"]
    assert REDACTED in git(git_repo, "show", tip) + git(git_repo, "log", "-1", "--format=%B", tip)
    everything = git(git_repo, "log", "-p", "--format=%B", "refs/heads/loopx/state")
    assert TOKEN not in everything and HOME not in everything
    assert loopx_git.open(git_repo).verify().ok


def test_redact_is_reported_in_text(seeded):
    result = seeded("todo", "add", "-g", GOAL, "--text", UNSAFE, "--redact")
    assert result.code == 0 and REDACTED in result.out
    assert f"redacted field 'text': github-token (block) fp={fingerprint(TOKEN)}" in result.err


def test_connect_with_a_goal_refuses_an_unsafe_objective(git_repo, capsys, tmp_path):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q")
    run = Cli(fresh, capsys)
    result = run("connect", "--goal-id", "g", "--objective", UNSAFE, "--no-hooks")
    assert result.code == 1 and "error[unsafe]" in result.err
    assert "field 'objective'" in result.err
    redacted = run.json("connect", "--goal-id", "g", "--objective", UNSAFE, "--no-hooks", "--redact")
    assert redacted["goal_created"] == "g" and loopx_git.open(fresh).goal("g").objective == REDACTED


def test_every_writing_command_offers_redact(cli):
    writers = [
        ["connect"],
        ["goal", "create"],
        ["goal", "update"],
        ["agent", "register"],
        ["todo", "add"],
        ["todo", "claim"],
        ["todo", "update"],
        ["todo", "complete"],
        ["todo", "supersede"],
        ["todo", "suggest"],
        ["todo", "promote"],
        ["event", "append"],
        ["refresh-state"],
    ]
    for command in writers:
        assert "--redact" in cli(*command, "--help").out, command


def test_warnings_are_written_and_reported(cli):
    data = cli.json("todo", "add", "-g", GOAL, "--text", "ask ops@acme-corp.io about 10.1.2.3")
    assert data["record"]["text"] == "ask ops@acme-corp.io about 10.1.2.3"
    assert {w["rule"] for w in data["warnings"]} == {"email-address", "private-ip"}


def test_allow_file_in_the_work_tree_lets_a_false_positive_through(cli, git_repo):
    (git_repo / ".publicsafe-allow").write_text(
        f"home-path {fingerprint('/home/alice')}  # a fixture user, not a person\n"
    )
    data = cli.json("todo", "add", "-g", GOAL, "--text", "see /home/alice/fixture")
    assert data["record"]["text"] == "see /home/alice/fixture"


def test_api_refuses_and_redacts_too(repo, git_repo):
    from loopx_git.errors import SafetyError

    tip = state_tip(git_repo)
    with pytest.raises(SafetyError) as err:
        repo.todo_add(GOAL, UNSAFE)
    assert err.value.code == "unsafe" and state_tip(git_repo) == tip
    redacting = loopx_git.open(git_repo, redact=True)
    written = redacting.todo_add(GOAL, UNSAFE)
    assert written.record.text == REDACTED and {r.rule for r in written.redactions} == {"github-token", "home-path"}


def test_structural_rules_apply_to_event_details(cli, git_repo):
    tip = state_tip(git_repo)
    result = cli("event", "append", "-g", GOAL, "--kind", "note", "--detail", "stdout=all of the raw output")
    assert result.code == 1 and "field 'details.stdout': raw-material-key" in result.err
    assert state_tip(git_repo) == tip
    ok = cli.json("event", "append", "-g", GOAL, "--kind", "note", "--detail", "stdout=sha256:" + "ab" * 32)
    assert ok["changed"] is True


def test_a_secret_in_an_id_is_refused_even_with_redact_and_never_echoed(cli, git_repo):
    tip = state_tip(git_repo)
    for extra in ([], ["--redact"]):
        result = cli("todo", "add", "-g", GOAL, "--text", "ok", "--todo-id", TOKEN, *extra)
        assert result.code == 1 and "field 'todo_id'" in result.err and TOKEN not in result.err
    assert state_tip(git_repo) == tip


def test_boundary_flags_stay_truthful_even_for_a_hand_built_write(repo, git_repo):
    """No command sets a boundary flag; a write built by hand through `StateRepo.apply` that
    claims raw material was recorded is refused too, with or without redaction."""
    from loopx_git.domain.write import EventMaker, Write
    from loopx_git.errors import SafetyError
    from loopx_git.model.event import Note

    def build(state):
        event = EventMaker(state.goals[GOAL], "2026-03-01T11:00:00Z").make(
            Note, goal_id=GOAL, summary="raw log attached", boundary={"raw_logs_recorded": True}
        )
        return Write("event note", "raw log", GOAL, None, [event])

    tip = state_tip(git_repo)
    for redacting in (False, True):
        repo.redact = redacting
        with pytest.raises(SafetyError) as err:
            repo.apply(build)
        assert "field 'boundary.raw_logs_recorded': boundary-claim" in err.value.message
        assert "leave the boundary flag out" in err.value.hint and ".publicsafe-allow" not in err.value.hint
    assert state_tip(git_repo) == tip


# A ref must stay a path relative to the repository: no marker can make an absolute or climbing ref
# one, so --redact does not help, and the hint says what does (allowlisting does not: structural
# rules are not allowlistable).
UNSAFE_REFS = [
    (["todo", "complete", "-g", GOAL, "-t", "t0", "--evidence", "/etc/passwd"], "evidence[0]", "/etc/passwd"),
    (
        ["todo", "complete", "-g", GOAL, "-t", "t0", "--evidence", "docs/../../outside.md"],
        "evidence[0]",
        "docs/../../outside.md",
    ),
    (
        ["refresh-state", "-g", GOAL, "--classification", "progress", "--evidence", "/etc/passwd"],
        "evidence[0]",
        "/etc/passwd",
    ),
    (
        ["event", "append", "-g", GOAL, "--kind", "note", "--detail", "log_ref=/var/log/app.log"],
        "details.log_ref",
        "/var/log/app.log",
    ),
]


@pytest.mark.parametrize("redact", [False, True], ids=["plain", "redact"])
@pytest.mark.parametrize("args, field, value", UNSAFE_REFS, ids=[f"{_ids(a)} {v}" for a, _, v in UNSAFE_REFS])
def test_an_unsafe_ref_is_refused_even_with_redact(seeded, git_repo, args, field, value, redact):
    tip = state_tip(git_repo)
    result = seeded(*args, *(["--redact"] if redact else []))
    assert result.code == 1, result.err
    assert result.err.startswith("error[unsafe]: ")
    assert f"field '{field}': unsafe-ref (block) fp={fingerprint(value)}" in result.err
    assert "nothing was written" in result.err
    assert ("--redact cannot fix it" in result.err) is redact
    hint = result.err.split("\nhint: ", 1)[1]
    assert "relative to the repository root without '..'" in hint
    assert ".publicsafe-allow" not in hint and "rerun with --redact" not in hint  # neither would work
    assert result.out == ""
    assert state_tip(git_repo) == tip
    assert "REDACTED:unsafe-ref" not in git(git_repo, "log", "-p", "refs/heads/loopx/state")


def test_a_relative_ref_with_a_token_in_it_is_redacted_into_a_relative_ref(seeded, git_repo):
    data = seeded.json("todo", "complete", "-g", GOAL, "-t", "t0", "--evidence", f"logs/{TOKEN}.txt", "--redact")
    assert data["record"]["evidence"] == ["logs/[REDACTED:github-token].txt"]


def _hint(result) -> str:
    assert "\nhint: " in result.err, result.err
    return result.err.split("\nhint: ", 1)[1]


def test_each_rule_hints_at_a_fix_that_works(seeded, git_repo):
    tip = state_tip(git_repo)
    token = seeded("todo", "add", "-g", GOAL, "--text", f"use {TOKEN}")
    assert token.code == 1 and "field 'text': github-token" in token.err
    assert f"add 'github-token {fingerprint(TOKEN)} # reason' to .publicsafe-allow" in _hint(token)
    assert "rerun with --redact" in _hint(token) and "disabled_rules" not in _hint(token)  # fingerprint only
    home = seeded("todo", "add", "-g", GOAL, "--text", f"see {HOME}/x")
    assert home.code == 1 and "field 'text': home-path" in home.err
    assert ".publicsafe-allow" in _hint(home) and "disabled_rules or severity" in _hint(home)
    raw = seeded("event", "append", "-g", GOAL, "--kind", "note", "--detail", "stdout=all of it")
    assert raw.code == 1 and "field 'details.stdout': raw-material-key" in raw.err
    assert "digest (sha256:<hex>)" in _hint(raw) and ".publicsafe-allow" not in _hint(raw)
    large = seeded("event", "append", "-g", GOAL, "--kind", "note", "--detail", "note=" + "a b" * 2000)
    assert large.code == 1 and "field 'details.note': field-too-large" in large.err
    assert "at most 4096 bytes" in _hint(large) and ".publicsafe-allow" not in _hint(large)
    assert state_tip(git_repo) == tip
    # the fixes named work: --redact for the raw key and the large field, a digest for the raw key
    assert seeded("event", "append", "-g", GOAL, "--kind", "note", "--detail", "stdout=all of it", "--redact").code == 0
    assert (
        seeded("event", "append", "-g", GOAL, "--kind", "note", "--detail", "note=" + "a b" * 2000, "--redact").code
        == 0
    )
    (git_repo / ".publicsafe-allow").write_text(
        f"github-token {fingerprint(TOKEN)}  # a revoked token, shown on purpose\n"
    )
    assert seeded("todo", "add", "-g", GOAL, "--text", f"use {TOKEN}").code == 0


def test_an_allow_entry_for_a_structural_rule_is_refused_not_silently_ignored(seeded, git_repo):
    """The old unsafe-ref hint suggested it; it never did anything, so the allow file refuses it."""
    (git_repo / ".publicsafe-allow").write_text(f"unsafe-ref {fingerprint('/etc/passwd')}  # tried anyway\n")
    tip = state_tip(git_repo)
    result = seeded("todo", "complete", "-g", GOAL, "-t", "t0", "--evidence", "/etc/passwd")
    assert result.code == 1 and "error[invalid-config]" in result.err
    assert ".publicsafe-allow:1: unsafe-ref is a structural rule of records and cannot be allowlisted" in result.err
    assert state_tip(git_repo) == tip


def test_a_token_split_into_literals_is_refused_and_redact_replaces_every_piece(seeded, git_repo):
    """What a careless agent writes to get a token past a scanner: the pieces are joined before
    matching, the refusal never echoes a piece, and --redact writes a marker in place of each."""
    split = f'token = "{TOKEN[:12]}" + "{TOKEN[12:]}"'
    tip = state_tip(git_repo)
    refused = seeded("todo", "add", "-g", GOAL, "--text", split)
    assert refused.code == 1 and refused.err.startswith("error[unsafe]: ") and "field 'text'" in refused.err
    assert "github-token" in refused.err and fingerprint(TOKEN) in refused.err
    assert TOKEN[:12] not in refused.err and TOKEN[12:] not in refused.err
    assert state_tip(git_repo) == tip
    data = seeded.json("todo", "add", "-g", GOAL, "--text", split, "--redact")
    assert data["record"]["text"] == 'token = "[REDACTED:github-token]" + "[REDACTED:github-token]"'

"""Reads answered from the tip-keyed answers under .git/loopx/: the same output as computing them,
recomputed when the tip moves, and a damaged file is only a slower read."""

from __future__ import annotations

import json
import subprocess
import sys

from loopx_git.api import StateRepo


def answers_file(git_repo):
    found = list((git_repo / ".git" / "loopx").glob("answers-*.json"))
    assert len(found) == 1
    return found[0]


def test_a_second_status_is_answered_without_models_or_pydantic(repo, git_repo):
    code = (
        "import sys; from loopx_git.cli.main import run_cli; "
        f"rc = run_cli(['--repo', {str(git_repo)!r}, 'status', '-g', 'g1']); "
        "print(rc, sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in ('pydantic', 'typer', 'rich')} "
        "| {m for m in sys.modules if m.startswith(('loopx_git.model.', 'loopx_git.domain'))} "
        "- {'loopx_git.model.canonical', 'loopx_git.model.patterns'}), file=sys.stderr)"  # terminal escapes and the id rule: no models in them
    )
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120) for _ in "ab"]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    assert runs[0].stdout == runs[1].stdout and "Ship the parser" in runs[1].stdout
    assert "pydantic" in runs[0].stderr  # the first one computed the card
    assert runs[1].stderr.strip().splitlines()[-1] == "0 []", runs[1].stderr


def test_the_cached_card_is_the_computed_card_and_moves_with_the_tip(cli, repo, git_repo):
    first = cli("status", fmt="json").out
    assert json.loads(first) == repo.status("g1").model_dump(mode="json")
    assert cli("status", fmt="json").out == first  # answered from the file
    assert cli("todo", "add", "-g", "g1", "--text", "A new one").code == 0
    after = json.loads(cli("status", fmt="json").out)
    assert [t["text"] for t in after["agent_todos"]] == ["A new one"]
    assert after == StateRepo.open(git_repo).status("g1").model_dump(mode="json")
    assert cli("status", "-a", "alice", fmt="json").out != cli("status", fmt="json").out  # keyed by the filter


def test_a_damaged_or_foreign_answers_file_is_only_a_slower_read(cli, git_repo):
    expected = cli("status").out
    path = answers_file(git_repo)
    for damage in (b"", b"{not json", b"[]", json.dumps({"version": "0:old", "tip": "0" * 40, "answers": {}}).encode()):
        path.write_bytes(damage)
        result = cli("status")
        assert (result.code, result.out, result.err) == (0, expected, "")
    data = json.loads(path.read_text())
    assert (
        data["tip"]
        == subprocess.run(
            ["git", "-C", str(git_repo), "rev-parse", "refs/heads/loopx/state"], capture_output=True, text=True
        ).stdout.strip()
    )


def test_an_unknown_goal_or_agent_is_refused_and_nothing_is_cached_for_it(cli, git_repo):
    result = cli("status", "-g", "nope")
    assert result.code == 1 and "error[not-found]" in result.err
    result = cli("status", "-g", "g1", "-a", "mallory")
    assert result.code == 1 and "mallory" in result.err
    for path in (git_repo / ".git" / "loopx").glob("answers-*.json"):
        keys = [json.loads(k) for k in json.loads(path.read_text())["answers"]]
        assert ["status", "nope", None] not in keys and ["status", "g1", "mallory"] not in keys


def test_an_empty_agent_filter_is_not_the_unfiltered_card(cli):
    assert cli("status").code == 0  # the unfiltered card is now cached
    result = cli("status", "-a", "")
    assert result.code == 1 and "agent" in result.err


def test_answers_of_other_code_are_not_used(cli, git_repo, monkeypatch):
    """An upgrade (or an edit) of the code that computes answers leaves earlier ones unused."""
    from loopx_git.app import core

    first = cli("status", fmt="json").out
    path = answers_file(git_repo)
    data = json.loads(path.read_text())
    key = json.dumps(["status", "g1", None])
    data["answers"][key]["event_count"] = 999  # as if another version had computed it differently
    path.write_text(json.dumps(data))
    assert json.loads(cli("status", fmt="json").out)["event_count"] == 999  # same code: the answer is used
    monkeypatch.setattr(core, "ANSWERS_VERSION", "other")
    assert cli("status", fmt="json").out == first


def test_the_operator_projections_are_answered_from_the_tip_too(repo, git_repo):
    """should-run, review-packet, todo index and manager: the second ask at a tip loads no models, the
    answer equals the computed one, and should-run echoes each turn's own id."""
    repo.todo_add("g1", "Write the parser", todo_id="t1")
    asks = [
        ["quota", "should-run", "-g", "g1", "-a", "alice", "--turn-instance-id", "turn-{n}"],
        ["review-packet", "-g", "g1"],
        ["todo", "index"],
        ["manager"],
    ]
    for argv in asks:
        code = (
            "import sys; from loopx_git.cli.main import run_cli; "
            f"rc = run_cli(['--repo', {str(git_repo)!r}, '--format', 'json', *{argv!r}]); "
            "print(rc, sorted({m for m in sys.modules if m.startswith(('loopx_git.model.', 'pydantic'))} "
            "- {'loopx_git.model.canonical', 'loopx_git.model.patterns'}), file=sys.stderr)"  # the id rule a turn is checked against: no models in it
        )
        runs = [
            subprocess.run([sys.executable, "-c", code.replace("{n}", n)], capture_output=True, text=True, timeout=120)
            for n in "12"
        ]
        assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
        assert runs[1].stderr.strip().splitlines()[-1] == "0 []", (argv, runs[1].stderr)
        first, second = json.loads(runs[0].stdout), json.loads(runs[1].stdout)
        if argv[0] == "quota":
            assert (first.pop("turn_instance_id"), second.pop("turn_instance_id")) == ("turn-1", "turn-2")
        assert first == second
    fresh = StateRepo.open(git_repo)
    assert json.loads(
        subprocess.run(
            [sys.executable, "-m", "loopx_git", "--repo", str(git_repo), "--format", "json", "manager"],
            capture_output=True,
            text=True,
        ).stdout
    ) == fresh.manager().model_dump(mode="json")

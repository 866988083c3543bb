"""``loopx dashboard``: what the site holds, built from a real state branch; bad input and safety
findings refused with nothing written; bounded on a long history."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import loopx_git
from loopx_git.views import dashboard as view
from tests.conftest import Cli, git
from tests.dashboard.fixture import GOAL, three_lanes

MARKER_FILE = ".loopx-dashboard"


@pytest.fixture
def project(git_repo) -> tuple[Path, dict]:
    return git_repo, three_lanes(git_repo)


def _tip(path: Path) -> str:
    return git(path, "rev-parse", "refs/heads/loopx/state").strip()


def _site(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_the_site_holds_lanes_card_todos_and_evidence_with_their_sources(project, capsys, tmp_path):
    path, ids = project
    out = tmp_path / "site"
    result = Cli(path, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    page = (out / "index.html").read_text()
    files = _site(out)
    assert {"index.html", "dashboard.css", "dashboard.js", "data/dashboard.js", "data/todos-0.js"} <= files.keys()
    assert result["tip"] == _tip(path) and f"built from commit {result['tip']}" in page
    assert result["goals"][0]["todos"] == 4 and result["goals"][0]["events"] > 15
    assert len(re.findall(r'<g class="lane" data-lane="', page)) == 3  # alice, bob, carol
    assert 'class="track unattributed"' in page  # a person's events: a track, not a lane
    assert len(re.findall(r'<line class="handoff', page)) == 1
    inferred = re.findall(r'<g class="bridge inferred" data-from="([^"]+)" data-to="([^"]+)"', page)
    assert inferred == [(ids["note"], ids["validation"])]
    assert 'stroke-dasharray="5 4"' in page and ">inferred</text>" in page
    assert re.search(r'class="gate" data-gate="ship-gate">.*blocks deploy', page)  # on the card
    assert re.search(
        r'<g class="gate-node status-open holds" data-gate="ship-gate".*?>ship-gate: blocks deploy</text>', page
    )
    # claims as bars, handed on at the adoption: alice's ends there, bob's starts there
    bars = re.findall(r'<rect class="claim ended-(\w+)" data-todo="(\w+)"', page)
    assert ("handed_off", "tok") in bars and ("open", "tok") in bars and ("done", "lanes") in bars
    # every mark names its event and the commit that wrote it
    marks = re.findall(r'<circle class="mark[^"]*" data-event="([^"]+)" data-commit="([0-9a-f]{40})"', page)
    assert len(marks) == result["goals"][0]["events"]
    for event_id, commit in marks[:5]:
        assert f"Loopx-Event: {event_id}" in git(path, "show", "-s", "--format=%B", commit)
    todos = json.loads(files["data/todos-0.js"].decode().split(", ", 1)[1].rsplit(");", 1)[0])
    assert {t["todo_id"]: t["state"] for t in todos} == {
        "tok": "claimed",
        "docs": "claimed",
        "deploy": "open",
        "lanes": "done",
    }
    assert all(re.fullmatch(r"[0-9a-f]{40}", t["commit"]) for t in todos)
    assert ids["run"] in page and "positive: useful" in page  # the reward beside its run
    assert "docs build" in page  # the validation


def test_each_todo_history_is_in_the_chunk_the_page_computes(project, capsys, tmp_path):
    path, _ = project
    out = tmp_path / "site"
    Cli(path, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    chunk = view.history_chunk("tok")
    text = (out / "data" / f"history-{chunk}.js").read_text()
    history = json.loads(text.split(", ", 1)[1].rsplit(");", 1)[0])["tok"]
    assert [h["kind"] for h in history][:2] == ["todo_add", "todo_claim"] and history[-1]["kind"] == "todo_update"


def test_the_same_tip_builds_the_same_bytes_and_the_marker_allows_a_rebuild(project, capsys, tmp_path):
    path, _ = project
    cli = Cli(path, capsys)
    out = tmp_path / "site"
    cli.json("dashboard", "-g", GOAL, "--out", str(out))
    first = _site(out)
    cli.json("dashboard", "-g", GOAL, "--out", str(out))
    assert _site(out) == first
    assert oct((out).stat().st_mode & 0o777) != oct(0o700)  # a folder to publish


def test_all_goals_writes_a_folder_each_and_an_index(project, capsys, tmp_path):
    path, _ = project
    with loopx_git.open(path) as repo:
        repo.goal_create("second", "Another goal")
    out = tmp_path / "public"
    result = Cli(path, capsys).json("dashboard", "--all-goals", "--out", str(out))
    assert [g["goal_id"] for g in result["goals"]] == [GOAL, "second"]
    index = (out / "index.html").read_text()
    assert f'href="goals/{GOAL}/index.html"' in index and 'href="goals/second/index.html"' in index
    assert (out / "goals" / "second" / "index.html").is_file() and (out / "dashboard.css").is_file()
    assert [g["path"] for g in result["goals"]] == [f"goals/{GOAL}/index.html", "goals/second/index.html"]


def test_a_commit_url_links_every_source(project, capsys, tmp_path):
    path, _ = project
    out = tmp_path / "site"
    url = "https://example.invalid/OWNER/REPO/commit/{commit}"
    Cli(path, capsys).json("dashboard", "-g", GOAL, "--out", str(out), "--commit-url", url)
    page = (out / "index.html").read_text()
    assert re.search(
        r'<a class="src" data-event="[^"]+" data-commit="[0-9a-f]{40}" href="https://example\.invalid/OWNER/REPO/commit/[0-9a-f]{40}"',
        page,
    )
    assert json.loads((out / "data/dashboard.js").read_text().split("=", 1)[1].rstrip(";\n"))["commit_url"] == url


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--commit-url", "javascript:alert(1)"], "commit_url"),
        (["--commit-url", "https://example.invalid/commit/"], "commit_url"),
        (["-g", "nope"], "nope"),
        (["--out", "caf\udce9"], "out"),  # not UTF-8 (b"caf\xe9" as Python decodes it)
        (["--out", "site\x1b[2J\r\n"], "out"),
        (["--out", "si\u202ete"], "out"),
    ],
)
def test_bad_input_is_refused_naming_the_field_and_writes_nothing(project, capsys, tmp_path, monkeypatch, args, field):
    path, _ = project
    before = _tip(path)
    out, work = tmp_path / "site", tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # where a relative --out would go
    given = ["-g", GOAL] if "-g" not in args else []
    result = Cli(path, capsys)("dashboard", *given, *(["--out", str(out)] if "--out" not in args else []), *args)
    assert result.code == 1 and field in result.err and "Traceback" not in result.err
    assert not out.exists() and list(work.iterdir()) == [] and _tip(path) == before


def test_a_folder_it_did_not_write_is_left_alone(project, capsys, tmp_path):
    path, _ = project
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my own file\n")
    result = Cli(path, capsys)("dashboard", "-g", GOAL, "--out", str(out))
    assert result.code == 1 and "not-a-dashboard-folder" in result.err and "out " in result.err
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_a_safety_finding_in_the_output_refuses_the_whole_site(git_repo, capsys, tmp_path):
    """A value on the branch that a rule added since blocks (a team rule for its ticket ids): the
    generator scans its own output, refuses, names file, rule and fingerprint, and writes nothing."""
    three_lanes(git_repo)
    ticket = "ZZQ-" + "40417736"
    with loopx_git.open(git_repo) as repo:
        repo.todo_add(GOAL, f"ask about ticket {ticket}", todo_id="ticket")
    (git_repo / "pyproject.toml").write_text(
        '[tool.loopx.safety]\n[[tool.loopx.safety.rules]]\nid = "zzq-ticket"\ndescription = "internal ticket id"\n'
        "regex = 'ZZQ-[0-9]{8}'\nkeywords = [\"zzq-\"]\n"
    )
    out = tmp_path / "site"
    result = Cli(git_repo, capsys)("dashboard", "-g", GOAL, "--out", str(out))
    assert (
        result.code == 1 and "zzq-ticket" in result.err and "fp=" in result.err and "dashboard file data/" in result.err
    )
    assert ticket not in result.err + result.out
    assert not out.exists() and not list(tmp_path.glob(".loopx-dashboard-*"))


def test_a_long_history_is_drawn_in_buckets_and_todos_go_to_chunks(git_repo, capsys, tmp_path, monkeypatch):
    """Past MARKS_SHOWN events a lane shows counts per time bucket; todos past TODO_CHUNK go to more
    files, loaded when asked (the limits are lowered here to keep the history short)."""
    monkeypatch.setattr(view, "MARKS_SHOWN", 30)
    monkeypatch.setattr(view, "TODO_CHUNK", 10)
    three_lanes(git_repo)
    with loopx_git.open(git_repo) as repo:
        for i in range(25):
            repo.todo_add(GOAL, f"todo {i}", todo_id=f"bulk{i}")
            repo.event_append(GOAL, "note", agent_id="alice", summary=f"note {i}")
    out = tmp_path / "site"
    result = Cli(git_repo, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    page = (out / "index.html").read_text()
    counts = [int(n) for n in re.findall(r'data-count="(\d+)"', page)]
    assert sum(counts) == result["goals"][0]["events"] and max(counts) > 1 and len(counts) <= 4 * view.BUCKETS
    assert "events counted per time bucket" in page
    assert sorted(p.name for p in (out / "data").glob("todos-*.js")) == ["todos-0.js", "todos-1.js", "todos-2.js"]
    assert result["goals"][0]["page_bytes"] < result["goals"][0]["total_bytes"]


def test_a_cold_build_folds_what_it_reads_and_leaves_the_same_state_a_cold_status_folds(project, capsys, tmp_path):
    """Without a fold cache the build reads every record once and folds it itself: the state it
    leaves in the cache answers exactly as a fold from scratch does."""
    path, _ = project
    cli = Cli(path, capsys)
    cache = path / ".git" / "loopx"

    def drop() -> None:
        for pattern in ("fold-*", "answers-*"):
            for f in cache.glob(pattern):
                f.unlink()

    drop()
    cli.json("dashboard", "-g", GOAL, "--out", str(tmp_path / "site"))
    assert list(cache.glob("fold-*")), "the fold the build made is kept"
    for f in cache.glob("answers-*"):
        f.unlink()
    from_build = cli.json("status", "-g", GOAL)
    drop()
    assert cli.json("status", "-g", GOAL) == from_build


def test_rollback_plans_and_ledger_entries_waiting_for_a_person_are_shown(project, capsys, tmp_path):
    path, _ = project
    with loopx_git.open(path) as repo:
        claim = repo.events(GOAL, todo_id="docs")[1]  # carol's claim of docs
        packet = repo.rollback(GOAL, event_id=claim.event_id, reason="claimed by mistake").record
        repo.ledger_add(GOAL, "the docs build is flaky", "retry_docs_build", entry_id="e1")
        repo.ledger_next(GOAL)
        repo.ledger_record(
            GOAL, "e1", status="blocked", verdict="UNVERIFIABLE", next="ask_user", question="Is the flake real?"
        )
    out = tmp_path / "site"
    Cli(path, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    page = (out / "index.html").read_text()
    assert f'data-packet="{packet.packet_id}"' in page and "claimed by mistake" in page
    assert re.search(r'data-packet="[^"]+"><strong>[^<]+</strong> \(mistaken_transition', page)
    assert "Is the flake real?" in page


def test_goal_ids_that_look_like_files_or_schemes_get_folders_and_links_of_their_own(git_repo, capsys, tmp_path):
    with loopx_git.open(git_repo) as repo:
        repo.connect()
        for goal_id in ("index.html", "dashboard.css", "team:parser"):
            repo.goal_create(goal_id, f"goal {goal_id}")
    out = tmp_path / "public"
    Cli(git_repo, capsys).json("dashboard", "--all-goals", "--out", str(out))
    index = (out / "index.html").read_text()
    assert 'href="goals/team%3Aparser/index.html"' in index and 'href="goals/index.html/index.html"' in index
    for goal_id in ("index.html", "dashboard.css", "team:parser"):
        assert (out / "goals" / goal_id / "index.html").is_file()


def test_all_goals_and_a_goal_id_together_are_a_usage_error(project, capsys, tmp_path):
    path, _ = project
    result = Cli(path, capsys)("dashboard", "--all-goals", "-g", GOAL, "--out", str(tmp_path / "site"))
    assert result.code == 2 and "--all-goals" in result.err and not (tmp_path / "site").exists()


@pytest.mark.parametrize("name", [".", "..", ""])
def test_the_working_folder_or_one_above_it_is_never_replaced(project, capsys, tmp_path, monkeypatch, name):
    path, _ = project
    work = tmp_path / "cwd"
    work.mkdir()
    (work / MARKER_FILE).write_text("")  # even one that looks like an old site
    monkeypatch.chdir(work)
    result = Cli(path, capsys)("dashboard", "-g", GOAL, "--out", name)
    assert result.code == 1 and "out " in result.err and "Traceback" not in result.err
    assert sorted(p.name for p in work.iterdir()) == [MARKER_FILE]


def test_an_out_folder_under_a_file_is_a_clear_error(project, capsys, tmp_path):
    path, _ = project
    (tmp_path / "a-file").write_text("x")
    result = Cli(path, capsys)("dashboard", "-g", GOAL, "--out", str(tmp_path / "a-file" / "site"))
    assert result.code == 1 and "error[unwritable]" in result.err and "out " in result.err
    assert (tmp_path / "a-file").read_text() == "x"


def test_a_rebuild_replaces_only_its_own_site(project, capsys, tmp_path):
    """The old site is moved aside into a folder of loopx's own: a user's ``.site.old`` beside it,
    or anything else in the parent, is left alone."""
    path, _ = project
    cli = Cli(path, capsys)
    out = tmp_path / "site"
    cli.json("dashboard", "-g", GOAL, "--out", str(out))
    (tmp_path / ".site.old").mkdir()
    (tmp_path / ".site.old" / "keep.txt").write_text("mine\n")
    cli.json("dashboard", "-g", GOAL, "--out", str(out))
    assert (tmp_path / ".site.old" / "keep.txt").read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [".site.old"]


def test_hostile_text_on_the_branch_is_shown_as_text(git_repo, capsys, tmp_path):
    hostile = "</title><script>alert(1)</script>\"'><img src=x onerror=alert(2)>"
    three_lanes(git_repo)
    with loopx_git.open(git_repo) as repo:
        repo.todo_add(GOAL, hostile, todo_id="evil")
        repo.event_append(GOAL, "note", agent_id="alice", todo_id="evil", summary=hostile)
        repo.gate_open(GOAL, "evil-gate", owner_class="user", question=hostile, blocks=["evil"])
    out = tmp_path / "site"
    Cli(git_repo, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    page = (out / "index.html").read_text()
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script") == 2  # the page's own two


def test_a_claim_the_fold_refused_draws_no_bar(tmp_path, capsys):
    """Two clones claim one todo offline; the fold keeps the first claim and records the other as a
    conflict. The lanes agree with it: one bar, the first holder's, still open."""
    from tests.sync.helpers import bare, clone

    remote = bare(tmp_path / "remote.git")
    a = clone(tmp_path / "a", str(remote))
    with loopx_git.open(a) as repo:
        repo.goal_create(GOAL, "race")
        repo.agent_register(GOAL, "alice")
        repo.agent_register(GOAL, "bob")
        repo.todo_add(GOAL, "contested", todo_id="c1")
        assert repo.sync().pushed
    b = clone(tmp_path / "b", str(remote), connect=False)
    with loopx_git.open(b) as repo:
        repo.pull()
        repo.todo_claim(GOAL, "c1", "bob")
    with loopx_git.open(a) as repo:
        repo.todo_claim(GOAL, "c1", "alice")
        assert repo.sync().pushed
    with loopx_git.open(b) as repo:
        repo.sync()
        holder = repo.todo(GOAL, "c1").claimed_by
        assert [c.kind for c in repo.state().goals[GOAL].conflicts]
    out = tmp_path / "site"
    Cli(b, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    bars = re.findall(
        r'<rect class="claim ended-(\w+)" data-todo="c1"[^>]*>.*?by (\w+):', (out / "index.html").read_text()
    )
    assert bars == [("open", holder)]

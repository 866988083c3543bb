"""The state branch holds only what the layout defines, and nothing is built on a branch that fails:
ref names checked before anything is written, hostile trees found by verify and refused by sync,
writes refused on a branch edited by hand (issue 9, items 7-9 and the SHA-256 case of 10)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import loopx_git
from loopx_git.errors import LoopxError, StoreError
from loopx_git.store import layout
from loopx_git.store.git import RefMoved
from tests.conftest import GOAL, NOW, Cli, git, state_tip
from tests.plumbing import plain_commit
from tests.sync.helpers import bare, clone

STATE = "refs/heads/loopx/state"


def config(path: Path, key: str) -> str | None:
    done = subprocess.run(["git", "-C", str(path), "config", "--get", key], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def refs(path: Path) -> str:
    return git(path, "for-each-ref", "--format=%(refname) %(objectname)")


def mktree(path: Path, entries: list[tuple[str, str, str, str]]) -> str:
    """A tree object from (mode, type, id, name) lines, as `git mktree` takes them: any name."""
    text = "".join(f"{mode} {kind} {oid}\t{name}\n" for mode, kind, oid, name in entries)
    return subprocess.run(
        ["git", "-C", str(path), "mktree"], input=text, capture_output=True, text=True, check=True
    ).stdout.strip()


def blob(path: Path, data: bytes) -> str:
    return (
        subprocess.run(
            ["git", "-C", str(path), "hash-object", "-w", "--stdin"], input=data, capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )


def with_entry(path: Path, parent: str, folder: str, mode: str, kind: str, oid: str, name: str) -> str:
    """A plain-git commit on ``parent`` whose tree gains one entry (any name, any mode) in ``folder``."""

    def build(tree: str | None, parts: list[str]) -> str:
        entries = []
        for line in git(path, "ls-tree", tree).splitlines() if tree else []:
            meta, entry_name = line.split("\t", 1)
            entries.append((*meta.split(), entry_name))
        if not parts:
            return mktree(path, entries + [(mode, kind, oid, name)])
        child = next((e for e in entries if e[3] == parts[0] and e[1] == "tree"), None)
        inner = build(child[2] if child else None, parts[1:])
        return mktree(path, [e for e in entries if e[3] != parts[0]] + [("040000", "tree", inner, parts[0])])

    tree = build(git(path, "rev-parse", f"{parent}^{{tree}}").strip(), [p for p in folder.split("/") if p])
    return git(path, "commit-tree", tree, "-p", parent, "-m", "plain git").strip()


def advance(path: Path, commit: str) -> None:
    git(path, "update-ref", STATE, commit)


@pytest.fixture
def seeded(repo, git_repo):
    repo.todo_add(GOAL, "first", todo_id="t1", now=NOW)
    repo.close()
    return git_repo


# -- item 7: ref names, and configuration written only once the branch exists ------------------------


@pytest.mark.parametrize("name", ["a..b", "x.lock", "a b", "has~tilde", "end/", "-/.hidden", "x\n"])
def test_connect_refuses_an_invalid_state_branch_before_writing_anything(git_repo, capsys, name):
    before = refs(git_repo)
    result = Cli(git_repo, capsys)("connect", "--state-branch", name)
    assert result.code == 1
    assert "error[invalid-field]: field 'state_branch'" in result.err and "not a valid git branch name" in result.err
    assert config(git_repo, "loopx.stateRef") is None
    assert refs(git_repo) == before


def test_the_global_state_branch_option_is_checked_too(cli, git_repo):
    tip = state_tip(git_repo)
    result = cli("--state-branch", "a..b", "todo", "add", "--goal-id", GOAL, "--text", "x")
    assert result.code == 1 and "field 'state_branch'" in result.err
    assert state_tip(git_repo) == tip


def test_a_state_branch_that_does_not_exist_is_refused_unless_connect_creates_it(cli, git_repo):
    tip = state_tip(git_repo)
    result = cli("--state-branch", "loopx/stat", "todo", "add", "--goal-id", GOAL, "--text", "typo")
    assert result.code == 1 and "error[no-state]" in result.err and "refs/heads/loopx/stat does not exist" in result.err
    assert "refs/heads/loopx/stat " not in refs(git_repo) and state_tip(git_repo) == tip
    read = cli("--state-branch", "loopx/stat", "status", "--goal-id", GOAL)
    assert read.code == 1 and "error[no-state]" in read.err
    assert cli("connect", "--state-branch", "loopx/other").code == 0
    assert config(git_repo, "loopx.stateRef") == "refs/heads/loopx/other"
    assert cli("--state-branch", "loopx/other", "goal", "list").code == 0


def test_a_bad_configured_state_ref_is_refused_with_the_fix(cli, git_repo):
    git(git_repo, "config", "loopx.stateRef", "refs/heads/a..b")
    result = cli("status", "--goal-id", GOAL)
    assert result.code == 1 and "git config loopx.stateRef" in result.err
    assert "git config loopx.stateRef refs/heads/loopx/state" in result.err  # the hint


def test_only_a_lost_compare_and_swap_is_retried(repo):
    git_ = repo.git
    tree = git_.commit(repo.tip).tree
    with pytest.raises(StoreError) as refused:
        git_.commit_on_ref("refs/heads/a..b", tree, [repo.tip], "bad name")
    assert refused.value.code == "commit-failed"
    with pytest.raises(RefMoved):  # the tip is elsewhere: that one is a race
        git_.commit_on_ref(STATE, tree, [git_.commit(repo.tip).parents[0]], "stale parent")


def test_a_sha256_repository_is_refused_clearly(tmp_path, capsys):
    path = tmp_path / "sha256"
    made = subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("this git cannot create SHA-256 repositories")
    result = Cli(path, capsys)("connect")
    assert result.code == 1 and "error[unsupported-repo]" in result.err and "SHA-256" in result.err
    assert not (path / ".git" / "refs" / "heads" / "loopx").exists()


# -- item 8: verify checks the whole tree ----------------------------------------------------------


def problem_codes(path: Path) -> set[tuple[str, str]]:
    report = loopx_git.open(path).verify()
    return {(p.path, p.code) for p in report.problems}


def test_a_dotdot_entry_is_reported_not_accepted(seeded):
    hostile = with_entry(seeded, STATE, "goals/g1", "100644", "blob", blob(seeded, b"x\n"), "..")
    advance(seeded, hostile)
    found = problem_codes(seeded)
    assert ("goals/g1/..", "bad-name") in found and ("goals/g1/..", "stray-file") in found


@pytest.mark.parametrize(
    "where",
    [
        ".publicsafe-allow",
        "goals/g1/notes.txt",
        "goals/g1/todos/t1.yml",
        "goals/g1/events/2026/03/01/10/readme.md",
        "goals/other/anything.json",
        "README",
    ],
)
def test_stray_files_anywhere_are_reported(seeded, where):
    advance(seeded, plain_commit(seeded, STATE, "a stray", {where: "stray\n"}))
    report = loopx_git.open(seeded).verify()
    assert not report.ok
    stray = [p for p in report.problems if p.path == where]
    assert stray and stray[0].code == "stray-file" and stray[0].commit == state_tip(seeded)


def test_an_oversized_blob_in_an_events_folder_is_reported_without_being_read(seeded):
    big = blob(seeded, b"{" + b" " * (1 << 20) + b"}")
    commit = with_entry(seeded, STATE, "goals/g1/events/2026/03/01/10", "100644", "blob", big, "evt_big.json")
    advance(seeded, commit)
    report = loopx_git.open(seeded).verify()
    found = [p for p in report.problems if p.code == "oversized"]
    assert found and found[0].path == "goals/g1/events/2026/03/01/10/evt_big.json" and found[0].commit == commit


@pytest.mark.parametrize(
    "mode,kind",
    [("100755", "blob"), ("120000", "blob"), ("160000", "commit")],
    ids=["executable", "symlink", "submodule"],
)
def test_only_regular_files_are_accepted(seeded, mode, kind):
    oid = git(seeded, "rev-parse", "HEAD").strip() if kind == "commit" else blob(seeded, b"goals/g1/goal.yaml")
    advance(seeded, with_entry(seeded, STATE, "goals/g1/todos", mode, kind, oid, "t9.yaml"))
    assert ("goals/g1/todos/t9.yaml", "bad-mode") in problem_codes(seeded)


@pytest.mark.parametrize("target", ["garbage", "blob", "missing"])
def test_a_state_ref_that_names_no_commit_is_reported_not_a_crash(cli, git_repo, target):
    ref_file = git_repo / ".git" / "refs" / "heads" / "loopx" / "state"
    ref_file.parent.mkdir(parents=True, exist_ok=True)
    value = {"garbage": "not a sha at all", "blob": blob(git_repo, b"x\n"), "missing": "1" * 40}[target]
    ref_file.write_text(value + "\n")
    result = cli("--format", "json", "verify")
    assert result.code == 1, result.err
    report = json.loads(result.out) if result.out else None
    if report is not None:
        assert report["ok"] is False and report["problems"][0]["code"] in ("bad-ref", "no-state-branch")
    else:
        assert "error[bad-ref]" in result.err
    write = cli("todo", "add", "--goal-id", GOAL, "--text", "on a broken ref")
    assert write.code == 1 and "internal error" not in write.err
    assert ref_file.read_text().strip() == value


def test_a_valid_branch_still_verifies(seeded):
    assert loopx_git.open(seeded).verify().ok


# -- item 8: sync refuses hostile incoming trees ---------------------------------------------------------


@pytest.fixture
def pair(tmp_path):
    remote = bare(tmp_path / "remote.git")
    alice = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(alice) as repo:
        repo.goal_create(GOAL, "Ship it")
        repo.agent_register(GOAL, "alice")
        repo.todo_add(GOAL, "first", todo_id="t1")
        assert repo.sync().pushed
    bob = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(bob) as repo:
        assert repo.pull().action == "fast-forward"
    return remote, alice, bob


@pytest.mark.parametrize("attack", ["stray", "oversized", "dotdot"])
def test_sync_refuses_a_hostile_incoming_tree_naming_commit_and_path(pair, attack):
    _remote, alice, bob = pair
    if attack == "stray":
        bad, path = plain_commit(alice, STATE, "stray", {"goals/g1/todos/notes.txt": "x\n"}), "goals/g1/todos/notes.txt"
    elif attack == "oversized":
        big = blob(alice, b"[" + b"0," * (600 * 1024) + b"0]")
        bad = with_entry(alice, STATE, "goals/g1/events/2026/03/01/10", "100644", "blob", big, "evt_x.json")
        path = "goals/g1/events/2026/03/01/10/evt_x.json"
    else:
        bad = with_entry(alice, STATE, "goals", "100644", "blob", blob(alice, b"x\n"), "..")
        path = "goals/.."
    git(alice, "push", "-q", "--no-verify", "origin", f"{bad}:{STATE}")
    before = state_tip(bob)
    with loopx_git.open(bob) as repo, pytest.raises(LoopxError) as refused:
        repo.pull()
    assert refused.value.code == "remote-refused"
    assert bad[:12] in refused.value.message and path in refused.value.message
    assert state_tip(bob) == before


# -- item 9: never build on a broken branch --------------------------------------------------------------


def test_a_write_on_a_hand_edited_event_is_refused_naming_commit_and_path(cli, git_repo):
    assert cli("todo", "add", "--goal-id", GOAL, "--text", "honest", "--todo-id", "t1").code == 0
    events = [line for line in git(git_repo, "ls-tree", "-r", "--name-only", STATE).split() if "/events/" in line]
    path = events[-1]
    data = json.loads(git(git_repo, "show", f"{STATE}:{path}"))
    data["summary"] = "edited by hand"
    edited = plain_commit(git_repo, STATE, "edit an event", {path: json.dumps(data, indent=2, sort_keys=True) + "\n"})
    advance(git_repo, edited)
    status = cli("status", "--goal-id", GOAL)  # still readable, with a warning
    assert status.code == 0 and "warning: the state branch fails verification" in status.err and path in status.err
    result = cli("todo", "add", "--goal-id", GOAL, "--text", "on top")
    assert result.code == 1 and "error[broken-branch]" in result.err
    assert edited[:12] in result.err and path in result.err and "record-changed" in result.err
    assert "loopx verify" in result.err and "loopx repair" in result.err
    assert state_tip(git_repo) == edited


def test_a_stray_file_blocks_writes_until_repair_removes_it(cli, git_repo):
    assert cli("todo", "add", "--goal-id", GOAL, "--text", "honest").code == 0
    stray = plain_commit(git_repo, STATE, "add a stray", {"goals/g1/notes.txt": "scribble\n"})
    advance(git_repo, stray)
    refused = cli("todo", "add", "--goal-id", GOAL, "--text", "on top")
    assert refused.code == 1 and "stray-file" in refused.err and "goals/g1/notes.txt" in refused.err
    assert state_tip(git_repo) == stray
    repaired = cli.json("repair")
    assert repaired["record"]["removed"] == ["goals/g1/notes.txt"]
    assert cli("todo", "add", "--goal-id", GOAL, "--text", "after the repair").code == 0
    assert loopx_git.open(git_repo).verify().ok


def test_the_verified_tip_follows_every_write_and_another_writers_clean_commits_pass(repo, git_repo):
    from loopx_git.store.cache import VerifiedMark

    mark = VerifiedMark(repo.git.git_dir, STATE)
    repo.todo_add(GOAL, "one", now=NOW)
    assert mark.load() == repo.tip
    other = loopx_git.open(git_repo)  # another process's handle: its commits move the tip and the mark
    other.todo_add(GOAL, "two", now=NOW)
    mark.path.unlink()  # forget it: the next write checks the whole branch once, and passes
    repo.todo_add(GOAL, "three", now=NOW)
    assert mark.load() == repo.tip and len(repo.todos(GOAL)) == 3


def test_a_secret_written_by_plain_git_blocks_writes(cli, git_repo):
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    assert cli("todo", "add", "--goal-id", GOAL, "--text", "honest").code == 0
    events = [line for line in git(git_repo, "ls-tree", "-r", "--name-only", STATE).split() if "/events/" in line]
    data = json.loads(git(git_repo, "show", f"{STATE}:{events[-1]}"))
    data["event_id"] = "evt_01zzzzzzzzzzzzzzzzzzzzzzzz"
    data["summary"] = f"token {token}"
    data["lamport"] = data["lamport"] + 1
    path = layout.event_path(GOAL, data["event_id"], data["recorded_at"])
    advance(
        git_repo, plain_commit(git_repo, STATE, "a note", {path: json.dumps(data, indent=2, sort_keys=True) + "\n"})
    )
    tip = state_tip(git_repo)
    result = cli("todo", "add", "--goal-id", GOAL, "--text", "on top")
    assert result.code == 1 and "safety:github-token" in result.err and token not in result.err
    assert state_tip(git_repo) == tip
    verify = cli("verify")
    assert verify.code == 1 and "safety:github-token" in verify.out and token not in verify.out


def test_a_well_formed_event_that_breaks_a_todo_is_refused_by_writes_reviews_and_pulls(tmp_path):
    """An event that parses but sets a status no todo may have, with the document loopx renders
    for it: only the check of the folded todo finds it, and every incremental path runs it."""
    remote = bare(tmp_path / "remote.git")
    alice = clone(tmp_path / "alice", str(remote))
    with loopx_git.open(alice) as repo:
        repo.goal_create(GOAL, "Ship it")
        repo.todo_add(GOAL, "first", todo_id="t1")
        assert repo.sync().pushed
        base = repo.tip
        update = repo.todo_update(GOAL, "t1", "blocked", reason="waiting")
    added = git(alice, "diff-tree", "-r", "--no-commit-id", "--name-only", base, update.commit).split()
    path = next(p for p in added if "/events/" in p)
    data = json.loads(git(alice, "show", f"{update.commit}:{path}"))
    for change in data["changes"]:
        if change["field"] == "status":
            change["after"] = "bogus"
    data["event_id"] = "evt_01zzzzzzzzzzzzzzzzzzzzzzzy"
    bad_path = layout.event_path(GOAL, data["event_id"], data["recorded_at"])
    advance(
        alice,
        plain_commit(
            alice, base, "a status that does not exist", {bad_path: json.dumps(data, indent=2, sort_keys=True) + "\n"}
        ),
    )
    with loopx_git.open(alice) as repo:
        repo.repair()  # the documents rendered from the fold: only the folded todo is wrong now
        tip = repo.tip
        assert [p.code for p in repo.verify().problems] == ["invalid-entity"]
    mark = alice / ".git" / "loopx"
    for stale in mark.glob("verified-*"):
        stale.write_text(base + "\n")  # as if this clone had verified only up to the base
    with loopx_git.open(alice) as repo, pytest.raises(LoopxError) as refused:
        repo.todo_add(GOAL, "on top")
    assert refused.value.code == "broken-branch" and "invalid-entity" in refused.value.message
    assert state_tip(alice) == tip
    from loopx_git.store.git import GitRepo
    from loopx_git.views.review_diff import review

    assert not review(GitRepo.discover(alice), STATE, base, tip).ok
    git(alice, "push", "-q", "--no-verify", "origin", f"{tip}:{STATE}")
    bob = clone(tmp_path / "bob", str(remote), connect=False)
    with loopx_git.open(bob) as repo:
        git(bob, "fetch", "-q", "origin", f"{base}:{STATE}")  # bob had the base already
        repo.mark_built(base, None)
        with pytest.raises(LoopxError) as pulled:
            repo.pull()
    assert pulled.value.code == "remote-refused" and "invalid-entity" in pulled.value.message


def test_verify_never_prints_a_secret_a_record_holds_where_it_does_not_parse(cli, git_repo):
    token = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"
    assert cli("todo", "add", "--goal-id", GOAL, "--text", "honest").code == 0
    events = [line for line in git(git_repo, "ls-tree", "-r", "--name-only", STATE).split() if "/events/" in line]
    data = json.loads(git(git_repo, "show", f"{STATE}:{events[-1]}"))
    data["recorded_at"], data["event_id"] = token, "evt_01zzzzzzzzzzzzzzzzzzzzzzzx"
    path = events[-1].rsplit("/", 1)[0] + f"/{data['event_id']}.json"
    advance(
        git_repo,
        plain_commit(git_repo, STATE, "a bad record", {path: json.dumps(data, indent=2, sort_keys=True) + "\n"}),
    )
    for fmt in (None, "json"):
        shown = cli("verify", fmt=fmt)
        assert shown.code == 1 and "invalid-record" in shown.out
        assert token not in shown.out + shown.err and "[REDACTED:github-token]" in shown.out
    refused = cli("todo", "add", "--goal-id", GOAL, "--text", "on top")
    assert refused.code == 1 and "broken-branch" in refused.err and token not in refused.err

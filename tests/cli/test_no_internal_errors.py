"""Issue 9 item 15: every exit-3 path found is a bug with a test. Each case here once ended in
``internal error`` (exit 3) or a traceback; now it is a clean refusal (exit 1, ``error[code]:`` naming
the field or path, the problem and the rule, the state ref not moved), or — where the command's
work had already landed — a success with a warning. Real repositories, real git, nothing mocked."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_git.cli.main import run_cli
from loopx_git.hooks import runner
from tests.conftest import GOAL, Cli, git, state_tip

STATE_REF = "refs/heads/loopx/state"
ZERO = "0" * 40
TOKEN = "gh" + "p_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"


def refused(result, code: str, *fragments: str) -> None:
    assert result.code == 1, (result.code, result.err)
    assert result.err.startswith(f"error[{code}]: "), result.err
    for fragment in fragments:
        assert fragment in result.err, result.err
    assert "internal error" not in result.err and "Traceback" not in result.err


def clean(result) -> None:
    assert "internal error" not in result.err and "Traceback" not in result.err, result.err


def loopx_dir(path: Path) -> Path:
    return path / ".git" / "loopx"


def run_argv(capsys, *argv: str):
    """``loopx`` in-process with exactly ``argv`` (no --repo added)."""
    capsys.readouterr()
    code = run_cli(list(argv))
    out, err = capsys.readouterr()
    return type("R", (), {"code": code, "out": out, "err": err})()


def hook_main(*argv: str, stdin: str = "") -> tuple[int, str]:
    """``loopx hook run ...`` the way the shims call it: ``cli/entry.py`` -> ``hooks.runner.main``."""
    err, old = io.StringIO(), (sys.stdin, sys.stderr)
    sys.stdin, sys.stderr = io.StringIO(stdin), err
    try:
        code = runner.main(list(argv))
    finally:
        sys.stdin, sys.stderr = old
    return code, err.getvalue()


# --- --repo that cannot even be searched -------------------------------------------------------------


def test_a_repo_path_too_long_for_the_file_system_is_refused(capsys):
    result = run_argv(capsys, "--repo", "a" * 10_000, "status", "-g", GOAL)
    refused(
        result,
        "no-repo",
        "field 'repo'",
        "cannot be searched for a git repository",
        "File name too long",
        "(10000 characters)",
    )
    assert len(result.err) < 1000, "the path is not echoed back whole"


@pytest.mark.parametrize("kind", ["missing", "file", "too-long"])
def test_the_pre_commit_hook_with_a_repo_it_cannot_enter_is_refused(tmp_path, capsys, kind):
    target = {"missing": tmp_path / "nope", "file": tmp_path / "afile", "too-long": tmp_path / ("a" * 5000)}[kind]
    if kind == "file":
        target.write_text("x")
    refused(
        run_argv(capsys, "--repo", str(target), "hook", "run", "pre-commit"),
        "no-repo",
        "field 'repo'",
        "cannot be searched for a git work tree",
    )
    code, err = hook_main("pre-commit", "--repo", str(target))
    assert code == 1 and err.startswith("error[no-repo]: field 'repo'") and "internal error" not in err, err


# --- pre-push input naming objects that are not commits ------------------------------------------------


def test_a_state_push_from_or_onto_a_non_commit_is_refused(cli, git_repo):
    tip, blob = state_tip(git_repo), git(git_repo, "rev-parse", "HEAD:README.md").strip()
    onto_blob = f"{STATE_REF} {tip} {STATE_REF} {blob}\n"
    code, err = hook_main("pre-push", "origin", "url", "--repo", str(git_repo), stdin=onto_blob)
    assert code == 1 and f"the remote's '{blob[:12]}' is a blob, not a commit" in err, err
    from_blob = f"{STATE_REF} {blob} {STATE_REF} {tip}\n"
    code, err = hook_main("pre-push", "origin", "url", "--repo", str(git_repo), stdin=from_blob)
    assert code == 1 and f"the pushed '{blob[:12]}' is a blob, not a commit" in err, err
    assert "internal error" not in err and state_tip(git_repo) == tip


def test_endless_pre_push_input_is_refused_not_read_into_memory(git_repo):
    from loopx_git.errors import ValidationError
    from loopx_git.hooks.runner import MAX_PUSH_INPUT

    with pytest.raises(ValidationError, match="pre-push input is longer than 16 Mi characters"):
        runner.run(
            "pre-push", ["origin"], repo=str(git_repo), stdin=io.StringIO("0" * (MAX_PUSH_INPUT + 1)), out=io.StringIO()
        )


def test_the_pre_commit_hook_skips_unmerged_entries(git_repo):
    git(git_repo, "checkout", "-q", "-b", "side")
    (git_repo / "c.txt").write_text("side\n")
    git(git_repo, "add", "c.txt")
    git(git_repo, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "side")
    git(git_repo, "checkout", "-q", "main")
    (git_repo / "c.txt").write_text("main\n")
    git(git_repo, "add", "c.txt")
    git(git_repo, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "main")
    subprocess.run(["git", "-C", str(git_repo), "merge", "side"], capture_output=True)  # a conflict, on purpose
    code, err = hook_main("pre-commit", "--repo", str(git_repo))
    assert code == 0 and "cannot read object 0000" not in err, err


def test_the_pre_commit_hook_works_in_a_folder_whose_name_is_not_utf8(tmp_path):
    folder = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/caf\xe9"))
    folder.mkdir()
    git(folder, "init", "-q", "-b", "main")
    (folder / "notes.txt").write_text(f"token {TOKEN}\n")
    git(folder, "add", "notes.txt")
    code, err = hook_main("pre-commit", "--repo", str(folder))
    assert code == 1 and "notes.txt:1:7: github-token (block)" in err and "internal error" not in err, err


# --- the caches under .git/loopx: never a source of truth, never a crash ------------------------------


def _fold_cache(path: Path):
    from loopx_git.model.state import FOLD_VERSION
    from loopx_git.store.cache import FoldCache

    return FoldCache(path / ".git", STATE_REF, FOLD_VERSION)


@pytest.mark.parametrize("state", ["x", None, {}, [1]])
def test_a_fold_cache_holding_something_else_is_ignored(cli, git_repo, state):
    assert cli("todo", "add", "-g", GOAL, "--text", "seed", "--todo-id", "t1").code == 0
    cache = _fold_cache(git_repo)
    cache.save(state_tip(git_repo), state)  # whole, with its digest: only its content is foreign
    assert [t["todo_id"] for t in cli.json("todo", "list", "-g", GOAL)] == ["t1"]
    assert cli("todo", "add", "-g", GOAL, "--text", "next").code == 0


def test_a_fold_cache_keyed_to_a_missing_commit_is_ignored(cli, git_repo):
    assert cli("todo", "add", "-g", GOAL, "--text", "seed", "--todo-id", "t1").code == 0
    assert cli("todo", "list", "-g", GOAL).code == 0  # writes the cache
    cache = _fold_cache(git_repo)
    _tip, state = cache.load()
    cache.save("f" * 40, state)
    for args in (["events", "-g", GOAL], ["history", "-g", GOAL], ["repair"]):
        result = cli(*args)
        assert result.code == 0, result.err
    assert [t["todo_id"] for t in cli.json("todo", "list", "-g", GOAL)] == ["t1"]


def test_a_damaged_fold_cache_is_not_read(cli, git_repo):
    """A flipped bit anywhere: the digest saved before the state no longer matches, and the fold is
    made again from the records (a damaged pickle can otherwise load into a state that answers wrongly,
    or raise what no unpickling error names)."""
    assert cli("todo", "add", "-g", GOAL, "--text", "seed", "--todo-id", "t1").code == 0
    assert cli("todo", "list", "-g", GOAL).code == 0  # writes the cache
    cache = _fold_cache(git_repo)
    saved = cache.path.read_bytes()
    for offset in range(0, len(saved), max(1, len(saved) // 40)):
        for bit in (0x01, 0x80):
            damaged = bytearray(saved)
            damaged[offset] ^= bit
            cache.path.write_bytes(bytes(damaged))
            assert cache.load() is None
            assert [t["todo_id"] for t in cli.json("todo", "list", "-g", GOAL)] == ["t1"]


@pytest.mark.parametrize("what", ["blob", "tree"])
def test_a_verified_mark_naming_a_non_commit_means_a_full_check(cli, git_repo, what):
    from loopx_git.store.cache import VerifiedMark

    oid = git(git_repo, "rev-parse", "HEAD:README.md" if what == "blob" else "HEAD^{tree}").strip()
    VerifiedMark(git_repo / ".git", STATE_REF).path.write_text(oid + "\n")
    assert cli("status", "-g", GOAL).code == 0
    result = cli("todo", "add", "-g", GOAL, "--text", "after a bad mark")
    assert result.code == 0, result.err


@pytest.mark.parametrize(
    "text", ['{"loose_after": Infinity}', '{"loose_after": 1e400}', '{"loose_after": 0, "packs": NaN}']
)
def test_a_pack_state_with_non_finite_numbers_is_ignored(cli, git_repo, text):
    (loopx_dir(git_repo) / "pack-state").write_text(text)
    for args in (["status", "-g", GOAL], ["todo", "add", "-g", GOAL, "--text", "x"]):
        result = cli(*args)
        assert result.code == 0 and "warning" not in result.err, result.err


def test_gc_warns_when_its_bookkeeping_cannot_be_written(cli, git_repo):
    (loopx_dir(git_repo) / "pack-state").mkdir()
    result = cli("gc")
    assert result.code == 0, result.err
    assert "warning: could not record the packing in" in result.err and "the objects are packed" in result.err
    clean(result)


def test_gc_leaves_a_folder_named_gc_log_alone(cli, git_repo):
    (git_repo / ".git" / "gc.log").mkdir()
    result = cli("gc")
    assert result.code == 0, result.err
    assert (git_repo / ".git" / "gc.log").is_dir()


@pytest.mark.parametrize("kind", ["file", "dangling-link"])
def test_a_loopx_folder_that_is_not_a_folder(cli, git_repo, kind):
    import shutil

    folder = loopx_dir(git_repo)
    shutil.rmtree(folder)
    if kind == "file":
        folder.write_text("not a folder")
    else:
        folder.symlink_to(git_repo / "nowhere")
    tip = state_tip(git_repo)
    refused(cli("gc"), "no-lock", "cannot take the packing lock pack.lock", "nothing was packed")
    assert state_tip(git_repo) == tip
    write = cli("todo", "add", "-g", GOAL, "--text", "still written")  # caches are upkeep: the write stands
    assert write.code == 0 and "warning:" in write.err, write.err
    clean(write)
    assert state_tip(git_repo) != tip


def test_a_folder_where_the_pack_lock_goes_is_refused_at_once(cli, git_repo):
    (loopx_dir(git_repo) / "pack.lock").mkdir()
    refused(cli("gc"), "no-lock", "a folder stands where the lock file goes")


# --- a damaged object store or index --------------------------------------------------------------------


def _loose(path: Path, oid: str) -> Path:
    return path / ".git" / "objects" / oid[:2] / oid[2:]


@pytest.mark.parametrize("damage", ["missing-tree", "corrupt-tree", "missing-parent"])
def test_a_damaged_object_store_is_refused(cli, git_repo, damage):
    assert cli("todo", "add", "-g", GOAL, "--text", "seed").code == 0
    tip = state_tip(git_repo)
    oid = git(
        git_repo, "rev-parse", f"{STATE_REF}~1" if damage == "missing-parent" else f"{STATE_REF}^{{tree}}"
    ).strip()
    obj = _loose(git_repo, oid)
    if damage == "corrupt-tree":
        obj.chmod(0o644)
        obj.write_bytes(b"garbage")
    else:
        obj.unlink()
    for cached in loopx_dir(git_repo).iterdir():  # no fold or verified mark to answer from: git is asked
        cached.unlink()
    reads = [["events", "-g", GOAL]] if damage != "missing-parent" else []  # a read needs the tip's tree only
    for args in [["verify"], ["todo", "add", "-g", GOAL, "--text", "x"], *reads]:
        refused(cli(*args), "damaged-repo", "git cannot read this repository", oid)
    assert state_tip(git_repo) == tip


def test_an_object_store_that_takes_no_new_objects_is_refused(cli, git_repo):
    import shutil

    git(git_repo, "gc", "-q", "--prune=now")  # every object packed: reads still work
    objects = git_repo / ".git" / "objects"
    for fan in range(256):  # a file where every loose-object folder goes: no object can be written
        folder = objects / f"{fan:02x}"
        if folder.exists():
            shutil.rmtree(folder)
        folder.write_text("in the way")
    tip = state_tip(git_repo)
    refused(
        cli("todo", "add", "-g", GOAL, "--text", "x"),
        "write-failed",
        "git cannot write into this repository",
        "nothing was committed",
    )
    assert state_tip(git_repo) == tip
    assert cli("status", "-g", GOAL).code == 0


def test_a_damaged_index_is_refused_by_check(cli, git_repo):
    (git_repo / ".git" / "index").write_bytes(b"garbage")
    refused(cli("check"), "damaged-repo", "failed to read index", "git read-tree HEAD")


# --- remotes and branch names git would choke on -------------------------------------------------------


@pytest.mark.parametrize(
    "name, problem",
    [
        ("origin\n", "holds '\\n'"),
        ("\udcff", "is not UTF-8 text"),
        ("-x", "starts with '-'"),
        ("a" * 300, "300 characters long"),
    ],
)
def test_a_malformed_remote_name_is_refused(cli, git_repo, name, problem):
    tip = state_tip(git_repo)
    for args in (["pull", "--remote", name], ["push", "-r", name], ["sync", "-r", name], ["propose", "-r", name]):
        refused(cli(*args), "invalid-field", "field 'remote'", problem, "git remote add NAME URL")
    assert state_tip(git_repo) == tip


def test_connect_with_an_unknown_remote_writes_nothing(git_repo, capsys):
    result = Cli(git_repo, capsys)("connect", "--remote", "nope")
    refused(result, "no-remote", "remote 'nope' is not configured")
    assert git(git_repo, "for-each-ref", "refs/heads/loopx").strip() == ""
    assert not (git_repo / ".git" / "hooks" / "pre-commit").exists()
    refused(Cli(git_repo, capsys)("connect", "--remote", "bad\nname"), "invalid-field", "field 'remote'")


def test_a_proposal_branch_that_is_not_utf8_is_refused(cli, git_repo, tmp_path):
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(git_repo, "remote", "add", "origin", str(bare))
    refused(cli("propose", "--branch", "\udcff"), "invalid-field", "field 'branch'", "is not UTF-8 text")
    assert git(bare, "for-each-ref").strip() == ""


# --- fire: what the record cannot hold is refused before anything runs ---------------------------------

FIRE = ["fire", "-g", GOAL, "--max-iterations", "2", "--timeout", "30", "--approver-ceiling", "workspace_write"]


@pytest.mark.parametrize(
    "program, problem",
    [
        ("", "names no program"),
        ("/", "names no program"),
        ("a" * 5000, "5000 characters long"),
        ("\udcff", "not UTF-8 text"),
    ],
)
def test_a_fire_whose_program_name_cannot_be_recorded_is_refused_before_it_runs(cli, git_repo, program, problem):
    assert cli("ledger", "add", "-g", GOAL, "--entry-id", "e1", "--claim", "c", "--action", "a").code == 0
    tip = state_tip(git_repo)
    refused(cli(*FIRE, "--", program), "invalid-field", "field 'command'", problem, "rule: a fire records")
    assert state_tip(git_repo) == tip
    assert cli.json("ledger", "show", "-g", GOAL, "--entry-id", "e1")["status"] == "pending"


@pytest.mark.parametrize("in_the_way", [".git/loopx", ".git/loopx/fire-g1-_.lock"])
def test_a_fire_that_cannot_take_its_lock_is_refused_before_it_runs(cli, git_repo, tmp_path, in_the_way):
    import shutil

    assert cli("ledger", "add", "-g", GOAL, "--entry-id", "e1", "--claim", "c", "--action", "a").code == 0
    shutil.rmtree(loopx_dir(git_repo), ignore_errors=True)
    if in_the_way == ".git/loopx":
        loopx_dir(git_repo).write_text("not a folder")
    else:
        (git_repo / in_the_way).mkdir(parents=True)
    tip, ran = state_tip(git_repo), tmp_path / "ran"
    result = cli(*FIRE, "--", "/bin/sh", "-c", f"touch '{ran}'")
    assert (
        result.code == 1 and "error[no-lock]: cannot take the fire lock" in result.err and "nothing ran" in result.err
    )
    clean(result)  # (a warning that the fold cache could not be saved there may come first)
    assert state_tip(git_repo) == tip and not ran.exists()


def test_a_fire_stopped_by_an_unverifiable_answer_is_recorded(cli, git_repo, tmp_path):
    assert cli("ledger", "add", "-g", GOAL, "--entry-id", "e1", "--claim", "c", "--action", "a").code == 0
    answer = tmp_path / "answer.json"
    answer.write_text(
        json.dumps(
            {
                "status": "done",
                "verdict": "UNVERIFIABLE",
                "next": "stop",
                "evidence": [{"kind": "test_path", "ref": "tests/test_x.py"}],
            }
        )
    )
    result = cli(*FIRE, "--", "/bin/cat", str(answer), fmt="json")
    assert result.code == 4, result.err
    summary = json.loads(result.out)
    assert (summary["terminal_status"], summary["stop_condition"]) == ("needs_attention", "unverifiable")


# --- input files: bounded reads ----------------------------------------------------------------------


def test_endless_input_files_are_refused(cli, git_repo):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this platform")
    tip = state_tip(git_repo)
    refused(cli("ledger", "conformance", "/dev/zero"), "invalid-field", "field 'file'", "larger than 16 MiB")
    refused(
        cli("rollback", "record", "-g", GOAL, "--packet", "/dev/zero"),
        "invalid-field",
        "field 'packet'",
        "larger than 16 MiB",
    )
    refused(
        cli("explore", "observe", "-g", GOAL, "--observation-json", "/dev/zero"),
        "invalid-field",
        "field 'observation_json'",
        "larger than 16 MiB",
    )
    assert state_tip(git_repo) == tip


# --- the work tree and hooks: connect, doctor, disconnect ----------------------------------------------


def test_a_gitignore_in_another_encoding_is_kept_byte_for_byte(git_repo, capsys):
    (git_repo / ".gitignore").write_bytes(b"caf\xe9/\n")
    run = Cli(git_repo, capsys)
    result = run("connect")
    assert result.code == 0, result.err
    assert (git_repo / ".gitignore").read_bytes().startswith(b"caf\xe9/\n")
    clean(run("doctor"))


def test_a_gitignore_folder_is_refused_with_the_path(git_repo, capsys):
    (git_repo / ".gitignore").mkdir()
    run = Cli(git_repo, capsys)
    refused(
        run("connect"),
        "worktree",
        "cannot write the local-state block to .gitignore",
        "Is a directory",
        "the state branch refs/heads/loopx/state is connected",
        "run `loopx connect` again",
    )
    assert run("connect", "--no-ignore").code == 0


@pytest.mark.parametrize("where", ["hook-folder", "hooks-path-file"])
def test_hooks_that_cannot_be_written_are_refused_with_the_path(git_repo, capsys, where):
    if where == "hook-folder":
        (git_repo / ".git" / "hooks" / "pre-commit").mkdir(parents=True)
    else:
        git(git_repo, "config", "core.hooksPath", str(git_repo / "README.md"))
    run = Cli(git_repo, capsys)
    refused(run("connect"), "worktree", "cannot install the git hooks", "core.hooksPath", "--no-hooks")
    doctor = run("doctor")
    clean(doctor)
    assert doctor.code == 1 and "missing" in doctor.out
    if where == "hook-folder":
        refused(run("disconnect"), "worktree", "cannot remove loopx's hook sections", "pre-commit")
    assert run("connect", "--no-hooks").code == 0


# --- output a terminal cannot encode -----------------------------------------------------------------


def _loopx(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "loopx_git", *args], cwd=cwd, capture_output=True, env={**os.environ, **env}
    )


def test_output_the_locale_cannot_encode_is_escaped_and_the_write_happens_once(cli, git_repo):
    tip = state_tip(git_repo)
    done = _loopx(git_repo, "todo", "add", "-g", GOAL, "--text", "caf\u00e9 \U0001f600", PYTHONIOENCODING="ascii")
    assert done.returncode == 0 and b"internal error" not in done.stderr, done.stderr
    assert git(git_repo, "rev-list", "--count", f"{tip}..{STATE_REF}").strip() == "1"
    listed = _loopx(git_repo, "--format", "json", "todo", "list", "-g", GOAL, PYTHONIOENCODING="ascii")
    assert listed.returncode == 0, listed.stderr
    assert [t["text"] for t in json.loads(listed.stdout)] == ["caf\u00e9 \U0001f600"]
    text = _loopx(git_repo, "todo", "list", "-g", GOAL, PYTHONIOENCODING="ascii")
    assert text.returncode == 0 and b"\\U0001f600" in text.stdout, text.stderr


def test_a_finding_in_a_file_name_that_is_not_utf8_is_printed(cli, git_repo):
    name = os.fsdecode(b"f\xff.txt")
    (git_repo / name).write_text(f"token {TOKEN}\n")
    git(git_repo, "add", name)
    result = _loopx(git_repo, "check")
    assert result.returncode == 1 and b"internal error" not in result.stderr, result.stderr
    assert b"f\xff.txt:1:7: github-token (block)" in result.stdout


# -- found in review: text that rich would read as markup, held ref locks, read-only refs, binary hooks ------


def test_todo_text_that_looks_like_markup_or_holds_escapes_is_listed_as_it_is(cli):
    for text in ("[/bold] not markup [red]x", "esc \x1b[31mred"):
        assert cli("todo", "add", "--goal-id", GOAL, "--text", text).code == 0
    listed = cli("todo", "list", "--goal-id", GOAL)
    clean(listed)
    assert listed.code == 0 and "[/bold] not markup [red]x" in listed.out
    assert "\x1b" not in listed.out and "esc \\x1b[31mred" in listed.out


def test_a_ref_lock_held_by_a_live_git_is_named_in_the_refusal(cli, git_repo, monkeypatch):
    import threading

    from loopx_git.store import transaction, writelock

    monkeypatch.setattr(transaction, "MAX_ATTEMPTS", 2)
    # kept young every 50 ms; the bound leaves room for a loaded machine to pause the toucher
    monkeypatch.setattr(writelock, "STALE_REF_LOCK_SECONDS", 2.0)
    tip = state_tip(git_repo)
    lock = git_repo / ".git" / "refs" / "heads" / "loopx" / "state.lock"
    lock.write_text("")
    done = threading.Event()

    def busy_git() -> None:  # a git process that keeps updating the ref: its lock is never stale
        while not done.wait(0.05):
            os.utime(lock)

    toucher = threading.Thread(target=busy_git)
    toucher.start()
    try:
        result = cli("todo", "add", "--goal-id", GOAL, "--text", "blocked")
    finally:
        done.set()
        toucher.join()
    refused(result, "ref-locked", str(lock), "remove that file")
    assert state_tip(git_repo) == tip
    # left behind now (its git gone): the next write takes it away once stale (tests/store/test_crash.py)
    assert cli("todo", "add", "--goal-id", GOAL, "--text", "free again").code == 0
    assert not lock.exists()


@pytest.mark.parametrize("ref", ["refs/remotes/origin/loopx/state", "refs/tags/state"])
def test_a_ref_outside_refs_heads_is_read_never_written(cli, git_repo, ref):
    git(git_repo, "update-ref", ref, STATE_REF)
    tip = state_tip(git_repo)
    assert cli("--state-branch", ref, "status", "--goal-id", GOAL).code == 0
    refused(
        cli("--state-branch", ref, "todo", "add", "--goal-id", GOAL, "--text", "x"),
        "invalid-field",
        "field 'state_branch'",
        "can be read but not written",
    )
    refused(cli("connect", "--state-branch", ref), "invalid-field", "refs/heads/")
    assert git(git_repo, "rev-parse", ref).strip() == tip == state_tip(git_repo)


def test_head_is_not_a_state_branch_name(cli, git_repo):
    refused(cli("connect", "--state-branch", "HEAD"), "invalid-field", "field 'state_branch'", "HEAD")
    assert "refs/heads/HEAD" not in git(git_repo, "for-each-ref")


def test_a_compiled_hook_without_a_shebang_is_moved_aside_not_edited(git_repo, capsys):
    hook = git_repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    program = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4
    hook.write_bytes(program)
    hook.chmod(0o755)
    result = Cli(git_repo, capsys)("connect")
    assert result.code == 0 and "moved to pre-commit.pre-loopx" in result.out
    assert (git_repo / ".git" / "hooks" / "pre-commit.pre-loopx").read_bytes() == program


@pytest.mark.parametrize("how", ["reader-gone", "stdout-closed"])
def test_a_write_whose_output_nobody_reads_still_exits_0(repo, git_repo, how):
    """Invariant 7: once the ref has moved the command has succeeded, even if printing fails."""
    repo.close()
    before = state_tip(git_repo)
    argv = [
        sys.executable,
        "-m",
        "loopx_git",
        "--repo",
        str(git_repo),
        "--format",
        "json",
        "todo",
        "add",
        "--goal-id",
        GOAL,
        "--text",
        f"written for nobody ({how})",
    ]
    if how == "reader-gone":
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader has left before anything is written: EPIPE
        done = subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, text=True)
        os.close(write_end)
    else:
        done = subprocess.run(argv, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: os.close(1))
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr and state_tip(git_repo) != before
    assert git(git_repo, "rev-list", "--count", f"{before}..{STATE_REF}").strip() == "1", "written once"


def test_checks_of_the_branch_write_no_objects(cli, git_repo):
    from tests.plumbing import plain_commit

    git(
        git_repo,
        "update-ref",
        STATE_REF,
        plain_commit(git_repo, STATE_REF, "a stray folder", {"goals/g1/extra/x.txt": "x\n"}),
    )
    assert cli("repair").code == 0  # the folder goes: a later diff sees a folder on one side only
    before = git(git_repo, "count-objects", "-v")
    assert cli("verify").code == 0
    assert cli("review-diff", f"{STATE_REF}~2..{STATE_REF}").code in (0, 1)
    assert git(git_repo, "count-objects", "-v") == before


def test_a_sh_launcher_is_not_taken_for_the_python_to_run(tmp_path):
    from loopx_git.hooks.shim import _interpreter_of

    launcher = tmp_path / "loopx"
    launcher.write_text("#!/bin/sh\n'''exec' \"/long path/python\" \"$0\" \"$@\"\n' '''\n")
    assert _interpreter_of(str(launcher)) is None
    script = tmp_path / "loopx-py"
    script.write_text(f"#!{sys.executable}\n")
    assert _interpreter_of(str(script)) == sys.executable


def test_sync_never_moves_a_ref_outside_refs_heads(cli, git_repo, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(git_repo, "remote", "add", "origin", str(remote))
    git(git_repo, "update-ref", "refs/remotes/origin/loopx/state", STATE_REF)
    refused(
        cli("--state-branch", "refs/remotes/origin/loopx/state", "pull"), "invalid-field", "can be read but not written"
    )


@pytest.mark.parametrize(
    "name,hostile",
    [
        ("..", True),
        (".", True),
        (".git", True),
        (".GIT", True),
        (".git. ", True),
        ("git~1", True),
        ("...", False),
        ("goal.yaml", False),
        (".gitx", False),
    ],
)
def test_the_names_gits_fsck_refuses(name, hostile):
    from loopx_git.store.layout import hostile_component

    assert (hostile_component(f"goals/g1/{name}") == name) is hostile

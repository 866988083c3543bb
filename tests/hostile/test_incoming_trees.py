"""State trees that arrive by sync (issue 16, item 4): another clone pushes, with plain git
plumbing, a state commit holding something loopx never writes — a symlink, a submodule link, a
name git's fsck refuses, a huge blob, a record that is not JSON or not an event, an event at a path
its content does not give it, ambiguous or non-finite JSON, a YAML document with duplicate keys or a
billion-laughs bomb. ``loopx pull`` refuses each with exit 1 naming the commit and the path, the
local ref where it was; ``loopx verify`` on a clone that took it by plain ``git fetch`` reports it."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

import loopx_git
from loopx_git.cli.main import run_cli
from loopx_git.store import layout
from tests.conftest import GOAL, git, hermetic
from tests.store.test_integrity import blob, with_entry
from tests.sync.helpers import bare, clone

STATE = "refs/heads/loopx/state"
REMOTE_COPY = "refs/remotes/origin/loopx/state"


def run(path: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_cli(["--repo", str(path), *args])
    return code, out.getvalue(), err.getvalue()


class Pair:
    def __init__(self, alice: Path, bob: Path, base: str):
        self.alice, self.bob, self.base = alice, bob, base

    def event(self) -> tuple[str, dict]:
        """The path and content of the note event at the base (the one every event case edits)."""
        names = git(self.alice, "ls-tree", "-r", "--name-only", self.base).split()
        for path in (n for n in names if "/events/" in n):
            data = json.loads(git(self.alice, "show", f"{self.base}:{path}"))
            if data["event_kind"] == "note":
                return path, data
        raise AssertionError("the base holds a note")


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:  # the autouse hermetic fixture is per test: set up here too
        hermetic(env, tmp_path_factory.mktemp("home"))
        root = tmp_path_factory.mktemp("incoming")
        remote = bare(root / "remote.git")
        alice = clone(root / "alice", str(remote))
        with loopx_git.open(alice) as repo:
            repo.goal_create(GOAL, "Ship it")
            repo.agent_register(GOAL, "alice")
            repo.todo_add(GOAL, "first", todo_id="t1")
            repo.event_append(GOAL, "note", summary="a note")
            assert repo.sync().pushed
            base = repo.tip
        bob = clone(root / "bob", str(remote), connect=False)
        with loopx_git.open(bob) as repo:
            assert repo.pull().action == "fast-forward"
        yield Pair(alice, bob, base)


def _event_file(pair: Pair, change) -> tuple[str, bytes]:
    """A new event file: the newest event with a new id, changed by ``change`` (path, bytes)."""
    _, data = pair.event()
    data = dict(data, event_id="evt_01zzzzzzzzzzzzzzzzzzzzzzzz", lamport=data["lamport"] + 1)
    return change(layout.event_path(GOAL, data["event_id"], data["recorded_at"]), data)


def _text(data: dict) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


def _replace(data: dict, old: bytes, new: bytes) -> bytes:
    encoded = _text(data)
    assert old in encoded
    return encoded.replace(old, new, 1)


BOMB = b"".join(
    [b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n']
    + [b"%c: &%c [%s]\n" % (c, c, b",".join([b"*%c" % (c - 1)] * 9)) for c in range(ord("b"), ord("j"))]
    + [b"text: *i\n"]
)

EVENT_CASES = {
    "not-json": lambda p, d: (p, b"this is not json\n"),
    "json-array": lambda p, d: (p, b"[]\n"),
    "json-null": lambda p, d: (p, b"null\n"),
    "not-an-event": lambda p, d: (p, b'{"hello": "world"}\n'),
    "unknown-kind": lambda p, d: (p, _text(dict(d, event_kind="gossip"))),
    "id-differs-from-name": lambda p, d: (p.replace(d["event_id"], "evt_01zzzzzzzzzzzzzzzzzzzzzzzy"), _text(d)),
    "wrong-goal-folder": lambda p, d: (p.replace(f"goals/{GOAL}/", "goals/g2/"), _text(d)),
    "wrong-hour": lambda p, d: (  # the hour after the event's own (a fixed 23 is no move for an event of 23:xx)
        re.sub(
            r"/events/(\d{4})/(\d{2})/(\d{2})/(\d{2})/",
            lambda m: f"/events/{m[1]}/{m[2]}/{m[3]}/{(int(m[4]) + 1) % 24:02d}/",
            p,
        ),
        _text(d),
    ),
    "not-utf8": lambda p, d: (p, _replace(d, b'"summary": "a note"', b'"summary": "caf\xe9"')),
    "bom": lambda p, d: (p, b"\xef\xbb\xbf" + _text(d)),
    "deep-nesting": lambda p, d: (
        p,
        _replace(d, b'"details": {}', b'"details": {"a": ' + b"[" * 5000 + b"]" * 5000 + b"}"),
    ),
    "huge-integer": lambda p, d: (p, _replace(d, b'"lamport": ', b'"lamport": 1' + b"0" * 400 + b', "x_": ')),
    "integer-past-64-bits": lambda p, d: (p, _text(dict(d, lamport=2**64))),
    "nan": lambda p, d: (p, _replace(d, b'"details": {}', b'"details": {"a": NaN}')),
    "infinity": lambda p, d: (p, _replace(d, b'"details": {}', b'"details": {"a": Infinity}')),
    "duplicate-keys": lambda p, d: (
        p,
        _replace(d, b'"summary": "a note"', b'"summary": "a note", "summary": "another"'),
    ),
    "lone-surrogate": lambda p, d: (p, _replace(d, b'"summary": "a note"', b'"summary": "\\ud800"')),
}


def _commit_files(pair: Pair, files: dict[str, bytes]) -> str:
    tree = git(pair.alice, "rev-parse", f"{pair.base}^{{tree}}").strip()
    commit = pair.base
    for path, data in files.items():
        folder, name = path.rsplit("/", 1)
        commit = with_entry(pair.alice, commit, folder, "100644", "blob", blob(pair.alice, data), name)
    return commit if files else git(pair.alice, "commit-tree", tree, "-p", pair.base, "-m", "x").strip()


def _tree_cases(pair: Pair) -> dict[str, tuple[str, str]]:
    """(commit, path) for hostile entries built with mktree: modes and names."""
    a = pair.alice
    head = pair.base  # a gitlink names a commit: any will do
    link = blob(a, b"../../../../etc/passwd")
    doc, t9, t8 = (layout.todo_document(GOAL, todo) for todo in ("t1", "t9", "t8"))

    def at(path: str, mode: str, kind: str, oid: str) -> tuple[str, str]:
        folder, name = path.rsplit("/", 1)
        return with_entry(a, pair.base, folder, mode, kind, oid, name), path

    return {
        "symlink-document": at(doc, "120000", "blob", link),
        "symlink-stray": (with_entry(a, pair.base, "goals", "120000", "blob", link, "evil"), "goals/evil"),
        "gitlink-document": at(t9, "160000", "commit", head),
        "gitlink-root": (with_entry(a, pair.base, "", "160000", "commit", head, "sub"), "sub"),
        "executable": at(t8, "100755", "blob", blob(a, b"x")),
        "dotdot": (with_entry(a, pair.base, "goals", "100644", "blob", blob(a, b"x\n"), ".."), "goals/.."),
        "dot-git": (with_entry(a, pair.base, "goals", "100644", "blob", blob(a, b"x\n"), ".git"), "goals/.git"),
        "dot-git-upper": (with_entry(a, pair.base, "", "100644", "blob", blob(a, b"x\n"), ".GIT"), ".GIT"),
        "git-short-name": (
            with_entry(a, pair.base, "goals", "100644", "blob", blob(a, b"x\n"), "GIT~1"),
            "goals/GIT~1",
        ),
        "backslash": (
            with_entry(a, pair.base, "goals", "100644", "blob", blob(a, b"x\n"), "..\\..\\evil.yaml"),
            "goals/..\\..\\evil.yaml",
        ),
        "absolute-looking": (
            with_entry(a, pair.base, "goals", "100644", "blob", blob(a, b"x\n"), ":etc:passwd"),
            "goals/:etc:passwd",
        ),
        "gitmodules": (
            with_entry(a, pair.base, "", "100644", "blob", blob(a, b"[submodule]\n"), ".gitmodules"),
            ".gitmodules",
        ),
        "huge-event": (
            with_entry(
                a,
                pair.base,
                f"goals/{GOAL}/events/2026/03/01/10/z/z",
                "100644",
                "blob",
                blob(a, b"[" + b"0," * (600 << 10) + b"0]"),
                "evt_zz.json",
            ),
            f"goals/{GOAL}/events/2026/03/01/10/z/z/evt_zz.json",
        ),
        "huge-document": at(doc, "100644", "blob", blob(a, b"text: " + b"x" * (2 << 20) + b"\n")),
    }


DOCUMENT_CASES = {
    "duplicate-yaml-keys": b"todo_id: t1\ntodo_id: t2\ntext: first\n",
    "yaml-bomb": BOMB,
    "yaml-deep": b"[" * 50_000 + b"]" * 50_000 + b"\n",
    "yaml-tag": b"!!python/object/apply:os.system ['true']\n",
    "yaml-not-utf8": b"text: caf\xe9\n",
    "yaml-many-keys": b"".join(b"k%d: v\n" % n for n in range(60_000)),
}


def _all_cases(pair: Pair) -> dict[str, tuple[str, str]]:
    cases = _tree_cases(pair)
    for name, change in EVENT_CASES.items():
        path, data = _event_file(pair, change)
        cases[f"event-{name}"] = (_commit_files(pair, {path: data}), path)
    doc = layout.todo_document(GOAL, "t1")
    for name, data in DOCUMENT_CASES.items():
        cases[name] = (_commit_files(pair, {doc: data}), doc)
    return cases


CASE_NAMES = sorted(
    [
        *(f"event-{n}" for n in EVENT_CASES),
        *DOCUMENT_CASES,
        "symlink-document",
        "symlink-stray",
        "gitlink-document",
        "gitlink-root",
        "executable",
        "dotdot",
        "dot-git",
        "dot-git-upper",
        "git-short-name",
        "backslash",
        "absolute-looking",
        "gitmodules",
        "huge-event",
        "huge-document",
    ]
)


@pytest.fixture(scope="module")
def cases(pair):
    return _all_cases(pair)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_a_pull_of_a_hostile_tree_is_refused_naming_commit_and_path(pair, cases, name):
    bad, path = cases[name]
    git(pair.alice, "push", "-q", "--no-verify", "--force", "origin", f"{bad}:{STATE}")
    before = git(pair.bob, "rev-parse", STATE).strip()
    code, out, err = run(pair.bob, "pull")
    assert code == 1, (name, code, err[:500])
    assert err.startswith("error[remote-refused]: "), err[:500]
    assert bad[:12] in err, f"{name}: the commit is not named: {err[:500]}"
    assert path.replace("\\", "\\\\") in err or path in err, f"{name}: the path is not named: {err[:500]}"
    assert "Traceback" not in err and len(err) < 12_000
    assert git(pair.bob, "rev-parse", STATE).strip() == before, "a refused pull must not move the state ref"
    # a clone that took it by plain git fetch: verify reports it
    git(pair.bob, "fetch", "-q", "origin", f"+{STATE}:{REMOTE_COPY}")
    code, out, err = run(pair.bob, "--state-branch", REMOTE_COPY, "--format", "json", "verify")
    assert code == 1 and "Traceback" not in err, (code, err[:500])
    report = json.loads(out)
    assert not report["ok"] and any(p["path"] == path or path in p["message"] for p in report["problems"]), report


@pytest.mark.parametrize(
    "value",
    [
        b"NaN",
        b"Infinity",
        b"-Infinity",
        b"1e999",
        b"-1e999",
        b"18446744073709551616",
        b"-9223372036854775809",
        b"1" * 500,
    ],
    ids=[
        "nan",
        "infinity",
        "minus-infinity",
        "float-overflow",
        "minus-float-overflow",
        "2-to-64",
        "below-int64",
        "500-digits",
    ],
)
@pytest.mark.parametrize("where", ["field-change", "payload-list"])
def test_a_number_no_other_reader_can_hold_is_refused_anywhere_in_a_record(value, where):
    """Beyond ``details`` and ``lamport`` (checked by the model): a field change's before/after and an
    imported payload take any JSON, so the raw bytes are checked where verify reads every record."""
    from loopx_git.errors import ValidationError
    from loopx_git.store.records import check_unambiguous

    inner = b'{"field": "x", "before": 1, "after": %s}' % value if where == "field-change" else b"[1, [2, %s]]" % value
    data = b'{"event_id": "evt_1", "changes": [%s]}' % inner
    with pytest.raises(ValidationError) as refused:
        check_unambiguous(data, "goals/g1/events/x.json")
    assert "goals/g1/events/x.json" in refused.value.message and "64 bits" in refused.value.message
    check_unambiguous(data.replace(value, b"18446744073709551615"), "goals/g1/events/x.json")  # the largest kept

"""The document layout (layout 3, issue 16): every entity document two bucket levels below its
folder, so writing one document rebuilds a few small trees however many of its kind there are;
branches an older loopx wrote (documents in one folder per kind) still read, verify and repair
clean, and the first commit this loopx writes on one moves every document in that same commit.
Older branches are written the way an older loopx wrote them: the real write path with
``layout.WRITE_LAYOUT`` set to 2."""

from __future__ import annotations

import re
from pathlib import Path

import pygit2
import pytest

import loopx_git
from loopx_git.store import layout
from tests.conftest import GOAL, NOW, Cli, git, state_tip
from tests.plumbing import plain_commit
from tests.sync.helpers import bare, clone, tree_of

STATE = "refs/heads/loopx/state"
FLAT = re.compile(r"goals/[^/]+/[a-z]+/[^/]+\.yaml")
BUCKETED = re.compile(r"goals/[^/]+/[a-z]+/[0-9a-z_]/[0-9a-z_]/[^/]+\.yaml")


def files(path: Path, ref: str = STATE) -> dict[str, str]:
    """path -> blob id of every file on the branch."""
    out = {}
    for line in git(path, "ls-tree", "-r", ref).splitlines():
        meta, name = line.split("\t", 1)
        out[name] = meta.split()[2]
    return out


def entity_documents(path: Path, ref: str = STATE) -> dict[str, str]:
    return {
        p: o for p, o in files(path, ref).items() if (e := layout.document_entity(p)) and e[0] not in ("root", "goal")
    }


def declared(path: Path, ref: str = STATE) -> int | None:
    return layout.declared_layout(git(path, "show", f"{ref}:loopx.yaml").encode())


def write_entities(repo) -> None:
    """One or more documents of each of four kinds: agents, todos, a suggestion, a gate."""
    repo.agent_register(GOAL, "alice", lane="core", now=NOW)
    repo.agent_register(GOAL, "bob", now=NOW)
    repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", now=NOW)
    repo.todo_add(GOAL, "Document it", todo_id="docs", now=NOW)
    repo.todo_suggest(GOAL, "Fuzz the parser", todo_id="fuzz", now=NOW)
    repo.gate_open(GOAL, "release", owner_class="user", question="Ship it?", blocks=["docs"], now=NOW)


@pytest.fixture
def layout_2_branch(git_repo, monkeypatch) -> Path:
    """A state branch as the loopx before layout 3 wrote it: documents in one folder per kind."""
    with monkeypatch.context() as patch:
        patch.setattr(layout, "WRITE_LAYOUT", 2)
        with loopx_git.open(git_repo) as repo:
            repo.connect()
            repo.goal_create(GOAL, "Ship the parser", now=NOW)
            write_entities(repo)
    documents = entity_documents(git_repo)
    assert len(documents) == 6 and all(FLAT.fullmatch(p) for p in documents)
    assert declared(git_repo) == 2
    return git_repo


def verify_problems(path: Path) -> list[tuple[str, str]]:
    with loopx_git.open(path) as repo:
        return [(p.code, p.path) for p in repo.verify().problems]


# -- the paths ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "folder"),
    [
        ("agent", "agents"),
        ("todo", "todos"),
        ("suggested", "suggested"),
        ("ledger", "ledger"),
        ("rollback", "rollbacks"),
        ("gate", "gates"),
        ("handoff", "handoffs"),
        ("reward", "rewards"),
        ("explore", "explore"),
    ],
)
def test_every_kind_of_document_is_bucketed_by_a_hash_of_its_id(kind, folder):
    path = layout.entity_document(kind, GOAL, "todo-4k2x9m7q")
    assert path == f"goals/{GOAL}/{folder}/g/6/todo-4k2x9m7q.yaml"
    old = layout.entity_document(kind, GOAL, "todo-4k2x9m7q", 2)
    assert old == f"goals/{GOAL}/{folder}/todo-4k2x9m7q.yaml" == layout.entity_document(kind, GOAL, "todo-4k2x9m7q", 1)
    for where in (path, old):  # both shapes are the layout's, and name the same entity
        assert layout.is_defined(where) and layout.document_entity(where) == (kind, GOAL, "todo-4k2x9m7q")
        assert not layout.is_record(where)


@pytest.mark.parametrize(("entity_id", "buckets"), [("t1", "5/n"), ("a", "6/q"), ("Release.v2", "w/z"), ("x:-", "t/r")])
def test_a_document_bucket_is_two_characters_of_a_hash_of_its_id(entity_id, buckets):
    path = layout.todo_document(GOAL, entity_id)
    assert path == f"goals/{GOAL}/todos/{buckets}/{entity_id}.yaml"
    assert layout.hostile_component(path) is None and layout.document_entity(path) == ("todo", GOAL, entity_id)


@pytest.mark.parametrize(
    "path",
    [
        f"goals/{GOAL}/todos/1/t1.yaml/x.yaml",
        f"goals/{GOAL}/todos/1/t/u/t1.yaml",  # three levels
        f"goals/{GOAL}/todos/1/t1.yaml",  # one level
        f"goals/{GOAL}/todos/A/t/t1.yaml",  # a bucket in capitals
        f"goals/{GOAL}/todos/./t/t1.yaml",
        f"goals/{GOAL}/notes/1/t/t1.yaml",  # no such kind
    ],
)
def test_a_document_path_of_neither_shape_is_a_stray(path):
    assert not layout.is_defined(path)


# -- new writes -----------------------------------------------------------------------------------------


def test_new_writes_put_every_document_in_its_buckets_and_loopx_yaml_says_3(repo, git_repo):
    write_entities(repo)
    documents = entity_documents(git_repo)
    assert len(documents) == 6 and all(BUCKETED.fullmatch(p) for p in documents), sorted(documents)
    assert f"goals/{GOAL}/todos/5/n/t1.yaml" in documents and f"goals/{GOAL}/gates/1/n/release.yaml" in documents
    assert declared(git_repo) == 3
    assert repo.verify().ok and not repo.repair().changed


def test_the_todo_folders_stay_bounded_however_many_todos(repo, git_repo):
    count = 150
    for n in range(count):
        repo.todo_add(GOAL, f"todo {n}", todo_id=f"t{n}", now=NOW)  # ids a person numbers in turn
    repo.close()
    store = pygit2.Repository(str(git_repo))
    todos = store[store.revparse_single(STATE).tree["goals/g1/todos"].id]
    spine, leaves = [len(todos)], []
    for bucket in todos:
        assert bucket.type_str == "tree" and re.fullmatch(r"[0-9a-z_]", bucket.name)
        spine.append(len(store[bucket.id]))
        for inner in store[bucket.id]:
            leaves.append(len(store[inner.id]))
    assert max(spine) <= 32 and sum(leaves) == count
    assert max(leaves) <= 4  # about count/1024 each; the folder of layout 2 held all 150


# -- branches an older loopx wrote ----------------------------------------------------------------------


def test_a_layout_2_branch_reads_verifies_and_is_not_repaired(layout_2_branch, capsys):
    tip = state_tip(layout_2_branch)
    with loopx_git.open(layout_2_branch) as repo:
        assert repo.todo(GOAL, "t1").text == "Write the tokenizer"
        report = repo.verify()
        assert report.ok and report.documents_checked == 8, report.problems  # six, the goal's and loopx.yaml
        assert not repo.repair().changed  # documents in one folder are what layout 2 wants
    for command in (("status", "--goal-id", GOAL), ("todo", "list", "--goal-id", GOAL), ("verify",)):
        assert Cli(layout_2_branch, capsys)(*command).code == 0
    assert state_tip(layout_2_branch) == tip  # reading never upgrades


def test_the_first_write_on_a_layout_2_branch_moves_every_document_in_the_same_commit(layout_2_branch):
    before = entity_documents(layout_2_branch)
    with loopx_git.open(layout_2_branch) as repo:
        result = repo.todo_claim(GOAL, "t1", "alice", now="2026-03-01T11:00:00Z")
    assert result.changed and git(layout_2_branch, "rev-list", "--count", f"{result.commit}^..{STATE}").strip() == "1"
    after = entity_documents(layout_2_branch)
    assert len(after) == 6 and all(BUCKETED.fullmatch(p) for p in after)
    assert declared(layout_2_branch) == 3
    moved = {
        path: after[layout.entity_document(*layout.document_entity(path))]  # type: ignore[misc]
        for path in before
    }
    t1 = f"goals/{GOAL}/todos/t1.yaml"
    assert all(moved[p] == before[p] for p in before if p != t1)  # untouched documents move as they were
    assert moved[t1] != before[t1]  # the claimed todo's document is written anew
    renames = git(layout_2_branch, "diff", "--name-status", "-M", f"{STATE}^", STATE).splitlines()
    assert sum(line.startswith("R100") for line in renames) == 5  # a reviewer sees moves, not rewrites
    for pickle in (layout_2_branch / ".git" / "loopx").glob("fold-*.pickle"):
        pickle.unlink()
    with loopx_git.open(layout_2_branch) as repo:
        assert repo.todo(GOAL, "t1").claimed_by == "alice"
        assert repo.verify().ok and not repo.repair().changed


def test_a_goal_created_on_a_layout_2_branch_moves_the_other_goals_documents_too(layout_2_branch):
    """The commit renders loopx.yaml anew (a new goal is listed there): the move still happens."""
    with loopx_git.open(layout_2_branch) as repo:
        repo.goal_create("g2", "Ship the docs", now=NOW)
        repo.todo_add("g2", "Write the guide", todo_id="guide", now=NOW)
        assert repo.verify().ok
    documents = entity_documents(layout_2_branch)
    assert f"goals/{GOAL}/todos/5/n/t1.yaml" in documents and "goals/g2/todos/9/p/guide.yaml" in documents
    assert all(BUCKETED.fullmatch(p) for p in documents) and declared(layout_2_branch) == 3


def test_repair_of_a_drifted_layout_2_branch_leaves_it_in_layout_3(layout_2_branch):
    t1 = f"goals/{GOAL}/todos/t1.yaml"
    drifted = plain_commit(layout_2_branch, STATE, "edited by hand", {t1: "text: not what the events say\n"})
    git(layout_2_branch, "update-ref", STATE, drifted)
    assert verify_problems(layout_2_branch) == [("document-drift", t1)]
    with loopx_git.open(layout_2_branch) as repo:
        result = repo.repair()
        assert result.changed
        # what was wrong, then the move: not every moved document counted as re-derived
        assert result.write.summary == (
            "re-derive 1 document(s), remove 0 orphan(s) or stray file(s); every document moved to layout 3"
        )
        assert repo.verify().ok and not repo.repair().changed
    assert all(BUCKETED.fullmatch(p) for p in entity_documents(layout_2_branch)) and declared(layout_2_branch) == 3
    subject = git(layout_2_branch, "log", "-1", "--format=%s", STATE).strip()
    assert subject.startswith("loopx: repair re-derive 1 document(s)")


def test_a_layout_2_clone_merges_a_layout_3_remote_once_it_upgrades(tmp_path, monkeypatch):
    remote = bare(tmp_path / "remote.git")
    with monkeypatch.context() as patch:
        patch.setattr(layout, "WRITE_LAYOUT", 2)
        old = clone(tmp_path / "old", str(remote))
        with loopx_git.open(old) as repo:
            repo.goal_create(GOAL, "Ship the parser", now=NOW)
            write_entities(repo)
            assert repo.sync().pushed
            repo.todo_add(GOAL, "old clone's work", todo_id="to", now="2026-03-01T12:00:00Z")  # not pushed
    new = clone(tmp_path / "new", str(remote))
    with loopx_git.open(new) as repo:
        repo.todo_add(GOAL, "new clone's work", todo_id="tn", now="2026-03-01T12:10:00Z")
        assert repo.sync().pushed
    assert declared(new) == 3
    with loopx_git.open(old) as repo:  # upgraded: its unpushed layout-2 commit merges with the remote's
        result = repo.sync()
        assert result.pull.action == "merged" and result.pushed
    with loopx_git.open(new) as repo:
        assert repo.sync().pull.action == "fast-forward"
    assert tree_of(old) == tree_of(new) and declared(new) == 3
    documents = entity_documents(new)
    assert len(documents) == 8 and all(BUCKETED.fullmatch(p) for p in documents), sorted(documents)
    for path in (old, new):
        assert verify_problems(path) == []


# -- documents off their paths --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "where",
    [f"goals/{GOAL}/todos/t1.yaml", f"goals/{GOAL}/todos/z/z/t1.yaml", f"goals/{GOAL}/todos/1/t/t1.yaml"],
    ids=["the-layout-2-path", "wrong-buckets", "buckets-of-its-last-characters"],
)
def test_a_document_off_its_layout_3_path_is_reported_and_repaired(repo, git_repo, capsys, where):
    repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1", now=NOW)
    repo.close()
    home = layout.todo_document(GOAL, "t1")
    text = git(git_repo, "show", f"{STATE}:{home}")
    moved = plain_commit(git_repo, STATE, "moved by hand", {where: text}, remove=(home,))
    git(git_repo, "update-ref", STATE, moved)
    assert sorted(verify_problems(git_repo)) == [("document-missing", home), ("document-orphan", where)]
    result = Cli(git_repo, capsys)("verify")
    assert result.code == 1 and "document-orphan" in result.out + result.err
    assert state_tip(git_repo) == moved
    with loopx_git.open(git_repo) as again:
        assert again.repair().changed and again.verify().ok
    assert home in files(git_repo) and where not in files(git_repo)


# -- a layout line that does not match the documents ----------------------------------------------------


def said(path: Path, version: int) -> str:
    """A plain-git commit that changes only what loopx.yaml says, leaving every document in place."""
    text = git(path, "show", f"{STATE}:loopx.yaml")
    commit = plain_commit(
        path,
        STATE,
        "the layout line by hand",
        {"loopx.yaml": text.replace(f"layout_version: {declared(path)}", f"layout_version: {version}")},
    )
    git(path, "update-ref", STATE, commit)
    return commit


@pytest.mark.parametrize(("start", "to"), [(2, 3), (3, 2)], ids=["says-3-documents-flat", "says-2-documents-bucketed"])
def test_a_layout_line_its_documents_do_not_follow_is_refused_by_the_next_write(
    layout_2_branch, capsys, monkeypatch, start, to
):
    """The incremental check of a write (and of a pull, and of a push) looks at every document when
    the range changes where documents belong, not only at the ones it changed."""
    if start == 3:
        with loopx_git.open(layout_2_branch) as repo:  # upgraded by a write
            repo.todo_add(GOAL, "moves the documents", todo_id="t3", now=NOW)
    assert declared(layout_2_branch) == start
    tip = said(layout_2_branch, to)
    codes = {code for code, _ in verify_problems(layout_2_branch)}
    assert {"document-missing", "document-orphan"} <= codes
    result = Cli(layout_2_branch, capsys)("todo", "add", "--goal-id", GOAL, "--text", "on top")
    assert result.code == 1 and "broken-branch" in result.err and "document-" in result.err
    assert state_tip(layout_2_branch) == tip


def test_the_upgrade_commit_is_checked_without_rendering_the_documents_it_moves_as_they_were(
    layout_2_branch, monkeypatch
):
    from loopx_git.store import documents
    from loopx_git.views import verify

    since = state_tip(layout_2_branch)
    with loopx_git.open(layout_2_branch) as repo:
        repo.todo_claim(GOAL, "t1", "alice", now="2026-03-01T11:00:00Z")
        rendered: list = []
        real = documents.render_touched
        monkeypatch.setattr(documents, "render_touched", lambda s, e, v=None: rendered.append(set(e)) or real(s, e, v))
        report = verify.verify_since(repo.git, repo.ref, repo.tip, since)
    assert report.ok and report.documents_checked == 8, report.problems
    (entities,) = rendered
    assert entities == {("root", "", ""), ("todo", GOAL, "t1")}  # what the claim changed; the rest moved as they were


def test_a_document_changed_while_it_was_moved_is_drift(layout_2_branch):
    since = state_tip(layout_2_branch)
    with loopx_git.open(layout_2_branch) as repo:
        repo.todo_add(GOAL, "moves the documents", todo_id="t3", now=NOW)
    gate = layout.entity_document("gate", GOAL, "release")
    text = git(layout_2_branch, "show", f"{STATE}:{gate}").replace("Ship it?", "Ship it now?")
    # the same move, one document edited on the way: a branch made by hand to look like an upgrade
    forged = plain_commit(layout_2_branch, STATE, "forged", {gate: text})
    git(layout_2_branch, "update-ref", STATE, forged)
    with loopx_git.open(layout_2_branch) as repo:
        from loopx_git.views import verify

        report = verify.verify_since(repo.git, repo.ref, forged, since)
    assert [(p.code, p.path) for p in report.problems] == [("document-drift", gate)]

"""``loopx verify``: walk the whole state branch and report every broken invariant."""
from __future__ import annotations

from typing import Callable, Optional

from loopx_git.errors import LoopxError
from loopx_git.model.event import EventBase
from loopx_git.model.record import Record
from loopx_git.model.run import RunRecord
from loopx_git.model.state import Conflict, fold
from loopx_git.model.todo import TodoItem
from loopx_git.store import layout
from loopx_git.store.documents import render_all
from loopx_git.store.git import GitRepo
from loopx_git.store.records import parse_event, parse_run

VERIFY_SCHEMA = "loopx_verify_report_v0"
Progress = Callable[[str, int, int], None]


class Problem(Record):
    code: str
    path: str
    commit: Optional[str] = None
    message: str


class VerifyReport(Record):
    schema_version: str = VERIFY_SCHEMA
    ok: bool
    ref: str
    tip: Optional[str]
    commits_checked: int
    records_checked: int
    documents_checked: int
    problems: list[Problem]
    conflicts: list[Conflict]


def _noop(stage: str, done: int, total: int) -> None:
    return None


def verify(git: GitRepo, ref: str, progress: Progress = _noop, *, tip: Optional[str] = None) -> VerifyReport:
    """Check the branch at ``ref`` (or at commit ``tip``, e.g. one about to be pushed)."""
    tip = tip or git.ref_target(ref)
    if tip is None:
        return VerifyReport(ok=True, ref=ref, tip=None, commits_checked=0, records_checked=0, documents_checked=0,
                            problems=[], conflicts=[])  # fmt: skip
    problems: list[Problem] = []
    added_in: dict[str, str] = {}
    commits = list(git.walk_commits(tip))
    for n, commit in enumerate(commits, 1):
        _check_append_only(git, commit.oid, commit.tree, commit.parents, added_in, problems)
        progress("history", n, len(commits))
    tree = git.commit(tip).tree
    events, runs = _read_records(git, tree, added_in, problems, progress)
    _check_unique(events, added_in, problems)
    state = fold(events, runs)
    for goal_state in state.goals.values():  # the fold applies changes without validating each one
        for todo in goal_state.todos.values():
            try:
                TodoItem.model_validate(todo.model_dump())
            except ValueError as exc:
                problems.append(Problem(code="invalid-entity", path=layout.todo_document(goal_state.goal_id, todo.todo_id),
                                        message=f"the fold of its events is not a valid todo: {exc}".splitlines()[0]))
    documents = _check_documents(git, tree, render_all(state), problems)
    conflicts = [c for g in state.goals.values() for c in g.conflicts]
    return VerifyReport(ok=not problems, ref=ref, tip=tip, commits_checked=len(commits),
                        records_checked=len(events) + len(runs), documents_checked=documents, problems=problems,
                        conflicts=conflicts)  # fmt: skip


def verify_since(git: GitRepo, ref: str, tip: str, since: str, *, documents: bool = True) -> VerifyReport:
    """Check what the commits after ``since`` add, up to ``tip``: the invariants of ``verify``,
    for those commits only. ``since`` is an ancestor already checked — the remote's tip, for the
    pre-push hook — so a push costs what it adds, not what the history holds: records are read
    and documents rendered only where the new commits touch them, and the fold of the older
    history comes through the cache. A deleted or changed record is reported as such; the
    document drift it also causes is left to a full ``loopx verify``."""
    from collections import Counter

    from loopx_git.store.documents import render_touched, touched
    from loopx_git.views.folded import state_reader

    problems: list[Problem] = []
    added_in: dict[str, str] = {}
    others: dict[str, str] = {}
    blobs: dict[str, str] = {}
    commits = list(git.walk_range([tip], [since]))
    for commit in commits:
        _check_append_only(git, commit.oid, commit.tree, commit.parents, added_in, problems, others, blobs)
    tree = git.commit(tip).tree
    problems += [Problem(code="stray-file", path=p, commit=c, message="a file in a record folder that is not a record path")
                 for p, c in others.items() if _in_record_folder(p) and git.tree_entry(tree, p)]  # fmt: skip
    events, runs = _parse_records(git, sorted(blobs.items()), added_in, problems, _noop)
    if events:  # ids are file names: count them without reading a blob
        names = Counter(p.rsplit("/", 1)[1] for p, _ in git.walk_files(tree, "goals") if layout.record_kind(p) == "event")
        for event in events:
            if names[f"{event.event_id}.json"] > 1:
                path = layout.event_path(event.goal_id, event.event_id, event.recorded_at)
                problems.append(Problem(code="duplicate-event-id", path=path, commit=added_in.get(path),
                                        message=f"event id {event.event_id} is used by another event file too"))
    checked, conflicts = 0, []
    if documents:  # a merge re-derives every touched document, so it checks the records only
        state = state_reader(git, ref).state_at(tip)
        entities = touched(events) | {e for e in map(layout.document_entity, others) if e is not None}
        expected = render_touched(state, entities)
        docs = {p: o for p in {*expected, *(p for p in others if layout.is_document(p))}
                if (o := git.tree_entry(tree, p)) is not None}  # fmt: skip
        checked = _check_documents(git, tree, expected, problems, docs)
        conflicts = [c for g in state.goals.values() for c in g.conflicts]
    return VerifyReport(ok=not problems, ref=ref, tip=tip, commits_checked=len(commits), records_checked=len(events) + len(runs),
                        documents_checked=checked, problems=problems, conflicts=conflicts)  # fmt: skip


def _check_append_only(git: GitRepo, oid: str, tree: str, parents: tuple[str, ...], added_in: dict[str, str],
                       problems: list[Problem], others: Optional[dict[str, str]] = None,
                       blobs: Optional[dict[str, str]] = None) -> None:  # fmt: skip
    """Records are only ever added. ``others`` collects the other paths the commit changed, and
    ``blobs`` the blob id of each record added."""
    for parent in parents or (None,):
        base = git.commit(parent).tree if parent else None
        for change in git.changes(base, tree):
            if not layout.is_record(change.path):
                if others is not None:
                    others.setdefault(change.path, oid)
                continue
            if change.old is None:
                added_in.setdefault(change.path, oid)
                if blobs is not None:
                    blobs[change.path] = change.new
            elif change.new is None:
                problems.append(Problem(code="record-deleted", path=change.path, commit=oid,
                                        message="an event or run record was deleted; records are append-only"))
            else:
                problems.append(Problem(code="record-changed", path=change.path, commit=oid,
                                        message="an event or run record was changed after it was committed"))


def _in_record_folder(path: str) -> bool:
    return bool(layout.record_kind(path)) or "/events/" in path or "/runs/" in path


def _read_records(git: GitRepo, tree: str, added_in: dict[str, str], problems: list[Problem], progress: Progress):
    files = [(p, o) for p, o in git.walk_files(tree, "goals") if _in_record_folder(p)]
    return _parse_records(git, files, added_in, problems, progress)


def _parse_records(git: GitRepo, files: list[tuple[str, str]], added_in: dict[str, str], problems: list[Problem],
                   progress: Progress):  # fmt: skip
    events: list[EventBase] = []
    runs: list[RunRecord] = []
    for n, (path, oid) in enumerate(files, 1):
        kind = layout.record_kind(path)
        try:
            if kind == "event":
                events.append(parse_event(git.read_blob(oid), path))
            elif kind == "run":
                runs.append(parse_run(git.read_blob(oid), path))
            else:
                problems.append(Problem(code="stray-file", path=path, commit=added_in.get(path),
                                        message="a file in a record folder that is not a record path"))
        except LoopxError as exc:
            problems.append(Problem(code="invalid-record", path=path, commit=added_in.get(path), message=exc.message))
        if n % 1000 == 0 or n == len(files):
            progress("records", n, len(files))
    return events, runs


def _check_unique(events: list[EventBase], added_in: dict[str, str], problems: list[Problem]) -> None:
    seen: dict[str, str] = {}
    for event in events:
        path = layout.event_path(event.goal_id, event.event_id, event.recorded_at)
        if event.event_id in seen:
            problems.append(Problem(code="duplicate-event-id", path=path, commit=added_in.get(path),
                                    message=f"event id {event.event_id} is also used by {seen[event.event_id]}"))
        seen[event.event_id] = path


def _check_documents(git: GitRepo, tree: str, expected: dict[str, bytes], problems: list[Problem],
                     actual: Optional[dict[str, str]] = None) -> int:  # fmt: skip
    """Documents against the fold: every document on the branch, or only ``actual`` (path -> blob)."""
    if actual is None:
        actual = {p: o for p, o in git.walk_files(tree) if layout.is_document(p)}
    for path in sorted(expected.keys() | actual.keys()):
        if path not in actual:
            problems.append(Problem(code="document-missing", path=path, message="the fold implies this document, "
                                    "but it is not on the branch"))
        elif path not in expected:
            problems.append(Problem(code="document-orphan", path=path, message="no entity in the fold has this document"))
        elif git.read_blob(actual[path]) != expected[path]:
            fields = _differing_fields(git.read_blob(actual[path]), expected[path])
            problems.append(Problem(code="document-drift", path=path,
                                    message=f"differs from the fold of the events (fields: {fields}); "
                                    "documents are written only by loopx commands"))
    return len(actual)


def _differing_fields(actual: bytes, expected: bytes) -> str:
    from ruamel.yaml import YAML, YAMLError  # lazy: only drifted documents are parsed

    yaml = YAML(typ="safe", pure=True)
    try:
        left, right = yaml.load(actual) or {}, yaml.load(expected) or {}
    except YAMLError:
        return "unparsable YAML"
    if not isinstance(left, dict):
        return "not a mapping"
    names = sorted(k for k in left.keys() | right.keys() if left.get(k) != right.get(k))
    return ", ".join(map(str, names)) or "formatting only"

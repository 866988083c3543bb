"""The checks verify makes of each commit it walks: its tree (modes, names, sizes, layout), its
records (parsed, unique, safety-scanned) and the documents they derive."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from loopx_git.errors import LoopxError
from loopx_git.model.event_head import EventBase
from loopx_git.model.record import Record
from loopx_git.model.run import RunRecord
from loopx_git.model.todo import TodoItem
from loopx_git.safety.mask import masked
from loopx_git.store import layout
from loopx_git.store.documents import unannounced_event
from loopx_git.store.git import GitRepo
from loopx_git.store.git_objects import Change
from loopx_git.store.records import check_unambiguous, parse_event, parse_run

if TYPE_CHECKING:
    pass


Progress = Callable[[str, int, int], None]
GITLINK = 0o160000


class Problem(Record):
    code: str
    path: str
    commit: str | None = None
    message: str


class Problems:
    """Problems in the order found, each (code, path, commit) once: a merge commit shows the same
    change against both parents."""

    def __init__(self) -> None:
        self.items: list[Problem] = []
        self._seen: set = set()

    def add(self, code: str, path: str, commit: str | None, message: str) -> None:
        # a message may quote what a record holds (an invalid timestamp that is a token), and a
        # path is whatever name a hostile tree chose: neither is printed unmasked
        path, message = masked(path), masked(message)
        key = (code, path, commit)
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(Problem(code=code, path=path, commit=commit, message=message))

    def __bool__(self) -> bool:
        return bool(self.items)


def check_commit(
    git: GitRepo,
    oid: str,
    tree: str,
    parents: tuple[str, ...],
    added_in: dict[str, str],
    problems: Problems,
    changed: dict[str, str] | None = None,
) -> None:
    """What one commit changes: records are only ever added, no name git's fsck refuses, no blob
        over the bound. ``changed`` collects every path it touches, with the latest commit that did (commits
    come parents first): the one a problem with the path at the tip is named by, whether the walk is the
    whole history or only the commits a pull brings."""
    for parent in parents or (None,):
        base = git.commit(parent).tree if parent else None
        for change in git.changes(base, tree):
            if changed is not None:
                changed[change.path] = oid
            _check_change(git, oid, change, problems)
            if not layout.is_record(change.path):
                continue
            if change.old is None:
                added_in.setdefault(change.path, oid)
            elif change.new is None:
                problems.add(
                    "record-deleted", change.path, oid, "an event or run record was deleted; records are append-only"
                )
            else:
                problems.add(
                    "record-changed", change.path, oid, "an event or run record was changed after it was committed"
                )


def check_entities(state: Any, problems: Problems, version: int, only: set | None = None) -> None:
    """Todos as the fold leaves them are valid records (the fold applies field changes without
    validating each one: a well-formed event can still set a status that does not exist), each
    named by its document's path in layout ``version``. ``only``: the (goal, todo) pairs to check;
    all of them when None."""
    if only is None:
        todos = [(g.goal_id, t) for g in state.goals.values() for t in g.todos.values()]
    else:  # looked up one by one: a goal's todos are built into records only when read
        todos = [
            (goal, found)
            for goal, todo_id in sorted(only)
            if goal in state.goals and (found := state.goals[goal].todos.get(todo_id)) is not None
        ]
    for goal_id, todo in todos:
        try:
            TodoItem.model_validate(todo.model_dump())
        except ValueError as exc:
            problems.add(
                "invalid-entity",
                layout.todo_document(goal_id, todo.todo_id, version),
                None,
                f"the fold of its events is not a valid todo: {exc}".splitlines()[0],
            )


def check_layout(
    git: GitRepo, tree: str, event_paths: list[str] | None, added_in: dict[str, str], problems: Problems
) -> None:
    """An event at a layout-2 path while loopx.yaml says layout 1: loopx never writes that (the
    commit that adds the first such event says 2 or later). ``event_paths``: where to look (all
    when None)."""
    where = unannounced_event(git, tree, event_paths)
    if where is not None:
        problems.add(
            "layout-mismatch",
            where,
            added_in.get(where),
            "an event at a layout-2 path on a branch whose loopx.yaml says layout_version 1; the commit "
            "that adds the first layout-2 event says layout_version 2 or later (`loopx repair` re-derives it)",
        )


def _check_change(git: GitRepo, oid: str, change: Change, problems: Problems) -> None:
    """What a commit brings in (a removal brings nothing): names fsck refuses, blobs over the bound.
    Both stay in history once committed, so only rewriting the branch clears them."""
    name = layout.hostile_component(change.path) if change.new is not None else None
    if name is not None:
        problems.add("bad-name", change.path, oid, f"a path component {name!r} that git's fsck refuses")
    if change.new is not None and change.mode != GITLINK:
        _size_ok(git, change.path, change.new, oid, problems)


def _size_ok(git: GitRepo, path: str, blob: str, commit: str | None, problems: Problems) -> bool:
    size = git.object_size(blob)
    if size is None:
        problems.add("missing-object", path, commit, f"its blob {blob[:12]} is not in this repository")
        return False
    if size > layout.MAX_BLOB_BYTES:
        problems.add(
            "oversized",
            path,
            commit,
            f"a {size}-byte file; nothing on the state branch is larger than {layout.MAX_BLOB_BYTES} bytes",
        )
        return False
    return True


def check_tree(git: GitRepo, entries: Iterable, added_in: dict[str, str], problems: Problems):
    """Paths, modes and sizes of tree entries (``added_in``: the commit that brought each path).
    Returns the record files and the documents that passed, as (path, blob id) lists: only those
    are read."""
    records: list[tuple[str, str]] = []
    documents: list[tuple[str, str]] = []
    for entry in entries:
        commit = added_in.get(entry.path)
        if not layout.is_defined(entry.path):
            problems.add(
                "stray-file",
                entry.path,
                commit,
                "a path the state-branch layout does not define; "
                "the branch holds only loopx.yaml and goals/<goal>/ documents, events and runs",
            )
            continue
        if entry.mode != layout.REGULAR_FILE:
            problems.add(
                "bad-mode",
                entry.path,
                commit,
                f"mode {entry.mode:o}: the state branch holds regular files "
                "(100644) only, no executables, symlinks or submodules",
            )
            continue
        if not _size_ok(git, entry.path, entry.oid, commit, problems):
            continue
        (records if layout.is_record(entry.path) else documents).append((entry.path, entry.oid))
    return records, documents


def parse_records(
    git: GitRepo, files: list[tuple[str, str]], added_in: dict[str, str], problems: Problems, progress: Progress
):
    """The valid records of ``files``, and where each was read (by ``id()`` of the record): a problem
    names the file a record sits in, whichever layout put it there."""
    events: list[EventBase] = []
    runs: list[RunRecord] = []
    where: dict[int, str] = {}
    for n, (path, oid) in enumerate(files, 1):
        try:
            record: EventBase | RunRecord
            data = git.read_blob(oid)
            if layout.record_kind(path) == "event":
                record = parse_event(data, path)
                check_unambiguous(data, path)
                events.append(record)
            else:
                record = parse_run(data, path)
                check_unambiguous(data, path)
                runs.append(record)
            where[id(record)] = path
        except LoopxError as exc:
            problems.add("invalid-record", path, added_in.get(path), exc.message)
        if n % 1000 == 0 or n == len(files):
            progress("records", n, len(files))
    return events, runs, where


def check_unique(events: list[EventBase], where: dict[int, str], added_in: dict[str, str], problems: Problems) -> None:
    seen: dict[str, str] = {}
    for event in events:
        path = where[id(event)]
        if event.event_id in seen:
            problems.add(
                "duplicate-event-id",
                path,
                added_in.get(path),
                f"event id {event.event_id} is also used by {seen[event.event_id]}",
            )
        seen[event.event_id] = path


def check_safety(
    events: list, runs: list, where: dict[int, str], policy: Any, added_in: dict[str, str], problems: Problems
) -> None:
    """Records against the public-safety rules, as the write gate checks them; only blocking
    findings count, and a finding names the field, rule and fingerprint, never the value."""
    from loopx_git.safety.records import check

    for record in [*events, *runs]:
        path = where[id(record)]
        for finding in check(record.model_dump(mode="json"), policy)[1]:
            if finding.blocks:
                problems.add(
                    f"safety:{finding.rule}",
                    path,
                    added_in.get(path),
                    finding.describe() + "; secrets never belong on the state branch",
                )


def check_documents(
    git: GitRepo,
    expected: dict[str, bytes],
    problems: Problems,
    documents: Iterable[tuple[str, str]],
    changed: dict[str, str] | None = None,
) -> int:
    """Documents against the fold: ``documents`` (path, blob id) of the documents present;
    ``changed``: the commit that last touched each path, named in a problem (a sync's refusal says
    which incoming commit brought the document)."""
    actual = dict(documents)
    touched_in = changed or {}
    for path in sorted(expected.keys() | actual.keys()):
        commit = touched_in.get(path)
        if path not in actual:
            problems.add(
                "document-missing", path, commit, "the fold implies this document, but it is not on the branch"
            )
        elif path not in expected:
            problems.add("document-orphan", path, commit, "no entity in the fold has this document")
        elif git.read_blob(actual[path]) != expected[path]:
            fields = _differing_fields(git.read_blob(actual[path]), expected[path])
            problems.add(
                "document-drift",
                path,
                commit,
                f"differs from the fold of the events (fields: {fields}); documents are written only by loopx commands",
            )
    return len(actual)


MAX_COMPARED_BYTES = 16 << 10
MAX_FLOW_BRACKETS = 256


def _differing_fields(actual: bytes, expected: bytes) -> str:
    from ruamel.yaml import YAML, YAMLError  # lazy: only drifted documents are parsed

    # the parser is pure Python: a megabyte of keys takes it seconds, a few thousand nested
    # brackets its whole stack. Documents loopx renders are small and in block style; anything else
    # is not worth a field-by-field account
    if len(actual) > MAX_COMPARED_BYTES:
        return f"a {len(actual)}-byte document, not compared field by field"
    if actual.count(b"[") + actual.count(b"{") > MAX_FLOW_BRACKETS:
        return "flow collections loopx never writes, not compared field by field"
    yaml = YAML(typ="safe", pure=True)
    try:
        left, right = yaml.load(actual) or {}, yaml.load(expected) or {}
    except YAMLError:  # duplicate keys, unknown tags, keys that are lists: all are YAMLErrors
        return "unparsable YAML"
    except RecursionError:  # the pure-Python parser recurses once per nesting level
        return "YAML nested too deeply to read"
    if not isinstance(left, dict):
        return "not a mapping"
    # a hostile document's keys may be numbers, dates or a megabyte long: shown as short text
    names = sorted({str(k)[:60] for k in left.keys() | right.keys() if left.get(k) != right.get(k)})
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    return shown or "formatting only"

"""``loopx verify``: walk the whole state branch and report every broken invariant.

What a state branch may hold is narrow, and everything outside it is reported: only the paths the
layout defines (``store/layout.py``), only regular files, none larger than ``MAX_BLOB_BYTES``, no
name git's fsck refuses; records that are valid, unique, never changed or deleted, and free of
secrets; documents equal to the fold of the records. ``verify_since`` checks the same for the
commits after one already checked, which is what sync, the pre-push hook and every write use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from loopx_git.errors import LoopxError
from loopx_git.model.event_head import EventBase
from loopx_git.model.record import Record
from loopx_git.model.run import RunRecord
from loopx_git.model.state import Conflict, fold
from loopx_git.model.todo import TodoItem
from loopx_git.safety.mask import masked
from loopx_git.store import layout
from loopx_git.store.documents import Entity, branch_layout, render_all, unannounced_event
from loopx_git.store.git import GitRepo
from loopx_git.store.git_objects import Change
from loopx_git.store.records import check_unambiguous, parse_event, parse_run

if TYPE_CHECKING:
    from loopx_git.store.reader import StateReader

VERIFY_SCHEMA = "loopx_verify_report_v0"
Progress = Callable[[str, int, int], None]
GITLINK = 0o160000


class Problem(Record):
    code: str
    path: str
    commit: str | None = None
    message: str


class VerifyReport(Record):
    schema_version: str = VERIFY_SCHEMA
    ok: bool
    ref: str
    tip: str | None
    commits_checked: int
    records_checked: int
    documents_checked: int
    problems: list[Problem]
    conflicts: list[Conflict]


def _noop(stage: str, done: int, total: int) -> None:
    return None


def _failed(ref: str, tip: str | None, code: str, message: str) -> VerifyReport:
    return VerifyReport(
        ok=False,
        ref=ref,
        tip=tip,
        commits_checked=0,
        records_checked=0,
        documents_checked=0,
        problems=[Problem(code=code, path=ref, message=message)],
        conflicts=[],
    )


def resolve_tip(git: GitRepo, ref: str, tip: str | None) -> str | VerifyReport:
    """The commit to check, or the report that says why there is none (a missing, damaged or
    non-commit ref is a finding, never a crash)."""
    if tip is None:
        try:
            tip = git.ref_target(ref)
        except LoopxError as exc:
            return _failed(ref, None, "bad-ref", exc.message)
        if tip is None:
            return _failed(ref, None, "no-state-branch", "the state branch does not exist; `loopx connect` creates it")
    kind = git.object_type(tip)
    if kind != "commit":
        return _failed(ref, tip, "bad-ref", f"{tip[:12]} is {'missing' if kind is None else 'a ' + kind}, not a commit")
    return tip


def verify(
    git: GitRepo, ref: str, progress: Progress = _noop, *, tip: str | None = None, policy: Any = None
) -> VerifyReport:
    """Check the branch at ``ref`` (or at commit ``tip``, e.g. one about to be pushed). With a
    safety ``policy``, every record is also scanned for secrets."""
    resolved = resolve_tip(git, ref, tip)
    if isinstance(resolved, VerifyReport):
        return resolved
    tip = resolved
    problems = _Problems()
    added_in: dict[str, str] = {}
    changed: dict[str, str] = {}
    commits = list(git.walk_commits(tip))
    for n, commit in enumerate(commits, 1):
        _check_commit(git, commit.oid, commit.tree, commit.parents, added_in, problems, changed)
        progress("history", n, len(commits))
    tree = git.commit(tip).tree
    records, documents = _check_tree(git, git.walk_entries(tree), changed, problems)
    events, runs, where = _parse_records(git, records, added_in, problems, progress)
    _check_unique(events, where, added_in, problems)
    if policy is not None:
        _check_safety(events, runs, where, policy, added_in, problems)
    state = fold(events, runs)
    paths = [p for p, _ in records]
    version = branch_layout(git, tree, paths)
    _check_entities(state, problems, version)
    _check_layout(git, tree, paths, added_in, problems)
    checked = _check_documents(git, render_all(state, version), problems, documents, changed)
    conflicts = [c for g in state.goals.values() for c in g.conflicts]
    return VerifyReport(
        ok=not problems.items,
        ref=ref,
        tip=tip,
        commits_checked=len(commits),
        records_checked=len(events) + len(runs),
        documents_checked=checked,
        problems=problems.items,
        conflicts=conflicts,
    )


def verify_since(
    git: GitRepo,
    ref: str,
    tip: str,
    since: str,
    *,
    documents: bool = True,
    policy: Any = None,
    reader: StateReader | None = None,
) -> VerifyReport:
    """Check what the commits after ``since`` add, up to ``tip``: the invariants of ``verify``,
    for those commits only. ``since`` is an ancestor already checked — the remote's tip, for the
    pre-push hook; the last tip this clone verified, for a write — so the check costs what the
    new commits add, not what the history holds: records are read and documents rendered only
    where the new commits touch them, and the fold of the older history comes through the cache
    (or ``reader``, the caller's own). Documents are compared only when the records
    passed: a fold of broken records proves nothing. Every blob the new commits add is
    bounded in size and every name checked, even one a later commit removes (its objects arrive
    all the same); the layout is checked for the paths they leave at the tip. A deleted or changed
    record is reported as such; the document drift it also causes is left to a full ``verify``.
    A record the range adds that ``since`` already holds, as it is (what a merge takes from its
    other parent when that is ``since``), was checked with ``since`` and is not read again."""
    from loopx_git.store import lookup
    from loopx_git.store.documents import all_entities, document_files, render_touched, touched

    resolved = resolve_tip(git, ref, tip)
    if isinstance(resolved, VerifyReport):
        return resolved
    tip = resolved
    problems = _Problems()
    added_in: dict[str, str] = {}
    changed: dict[str, str] = {}
    commits = list(git.walk_range([tip], [since]))
    for commit in commits:
        _check_commit(git, commit.oid, commit.tree, commit.parents, added_in, problems, changed)
    tree = git.commit(tip).tree
    at_tip = [entry for entry in lookup.leaves(git, tree, sorted(changed)).values() if entry is not None]
    records, docs = _check_tree(git, at_tip, changed, problems)
    # the records a verified ``since`` held say what its loopx.yaml says; only the ones the range
    # adds can need another layout, unless the range changes loopx.yaml itself: then look at all
    layout_paths = None if layout.ROOT_DOCUMENT in changed else [p for p, _ in records]
    _check_layout(git, tree, layout_paths, added_in, problems)
    # a merge adds, against its first parent, the records its other parent brings: those that
    # ``since`` holds already, as they are, were checked with it and are not read again
    records = [(p, o) for p, o in records if p in added_in]
    checked_at_since = lookup.entry_ids(git, git.commit(since).tree, [p for p, _ in records])
    records = [(p, o) for p, o in records if checked_at_since[p] != o]
    events, runs, where = _parse_records(git, records, added_in, problems, _noop)
    if reader is None:
        from loopx_git.views.folded import state_reader

        reader = state_reader(git, ref)
    if events:
        _check_new_ids(git, tree, since, events, where, added_in, problems, reader)
    if policy is not None:
        _check_safety(events, runs, where, policy, added_in, problems)
    checked, conflicts = 0, []
    if documents and not problems:  # a merge re-derives every touched document: records only
        state = reader.state_at(tip)
        by_events = touched(events)
        entities = by_events | {e for e in map(layout.document_entity, changed) if e is not None}
        version = branch_layout(git, tree, layout_paths)
        since_tree = git.commit(since).tree
        since_version = branch_layout(git, since_tree)
        present_paths = {p for p, _ in docs}
        if layout.buckets_documents(version) != layout.buckets_documents(since_version):
            # loopx.yaml moved every document's place: all of them are checked, or a range that
            # changed the line and left documents where they were would pass
            entities |= set(all_entities(state))
            present_paths |= {p for p, _ in document_files(git, tree)}
        # an entity no event of the range touches, whose document is the very blob a verified
        # ``since`` held for it, renders the same: its place is checked, not its bytes (the commit
        # moving every document to layout 3 is checked at the cost of a lookup a document)
        same = _same_as_since(git, tree, since_tree, entities - by_events, version, since_version)
        entities -= same.keys()
        _check_entities(state, problems, version, {(goal, todo) for kind, goal, todo in entities if kind == "todo"})
        expected = render_touched(state, entities, version)
        kept = set(same.values())
        present = {
            p: o
            for p, o in lookup.entry_ids(git, tree, sorted({*expected, *(present_paths - kept)})).items()
            if o and p not in kept
        }
        checked = _check_documents(git, expected, problems, present.items(), changed) + len(kept)
        conflicts = [c for g in state.goals.values() for c in g.conflicts]
    return VerifyReport(
        ok=not problems.items,
        ref=ref,
        tip=tip,
        commits_checked=len(commits),
        records_checked=len(events) + len(runs),
        documents_checked=checked,
        problems=problems.items,
        conflicts=conflicts,
    )


def _check_new_ids(
    git: GitRepo,
    tree: str,
    since: str,
    events: list[EventBase],
    where: dict[int, str],
    added_in: dict[str, str],
    problems: _Problems,
    reader: StateReader,
) -> None:
    """The ids of the events a range adds are used once at ``tree``: by none of the others it adds
    and by no event ``since`` held (a verified ``since`` holds each once, and keeps every record).

    What ``since`` held is read from a fold, never folded from scratch for this: the fold at
    ``since`` (the one at hand, or that one advanced to ``since``) answers exactly; one at a later
    commit holds more (what came after ``since`` on its side of a merge), so an id it knows is
    confirmed by the tree. With neither, the event file names at ``tree`` are counted (every
    event's path, no blob read: 17 s at a million)."""
    _check_unique(events, where, added_in, problems)
    new = {event.event_id for event in events}
    state, exact = reader.state_if_cheap(since), True
    if state is None:
        cached = reader.cached()
        state = cached[1] if cached is not None and git.is_ancestor(since, cached[0]) else None
        exact = False
    if state is not None:
        known = [goal.event_ids for goal in state.goals.values()]
        suspects = {i for i in new if any(i in ids for ids in known)}
    else:
        suspects = new
    if not suspects:
        return
    if exact:
        taken = suspects
    else:  # ids are file names: count them without reading a blob
        counts = Counter(
            name
            for p, _ in git.walk_files(tree, "goals")
            if layout.record_kind(p) == "event" and (name := p.rsplit("/", 1)[1][: -len(".json")]) in suspects
        )
        taken = {i for i, n in counts.items() if n > 1}
    for event in events:
        if event.event_id in taken:
            path = where[id(event)]
            problems.add(
                "duplicate-event-id",
                path,
                added_in.get(path),
                f"event id {event.event_id} is used by another event file too",
            )


def _same_as_since(
    git: GitRepo, tree: str, since_tree: str, entities: Iterable[Entity], version: int, since_version: int
) -> dict[Entity, str]:
    """entity -> its document's path at ``tree``, for each of ``entities`` (not loopx.yaml, which
    says the layout) whose document there is the blob its document was at ``since_tree``."""
    from loopx_git.store import lookup

    entities = [e for e in entities if e[0] != "root"]
    here = {e: layout.document_path(*e, version) for e in entities}
    there = {e: layout.document_path(*e, since_version) for e in entities}
    now, before = lookup.entry_ids(git, tree, here.values()), lookup.entry_ids(git, since_tree, there.values())
    return {e: here[e] for e in entities if now[here[e]] is not None and now[here[e]] == before[there[e]]}


class _Problems:
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


def _check_commit(
    git: GitRepo,
    oid: str,
    tree: str,
    parents: tuple[str, ...],
    added_in: dict[str, str],
    problems: _Problems,
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


def _check_entities(state: Any, problems: _Problems, version: int, only: set | None = None) -> None:
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


def _check_layout(
    git: GitRepo, tree: str, event_paths: list[str] | None, added_in: dict[str, str], problems: _Problems
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


def _check_change(git: GitRepo, oid: str, change: Change, problems: _Problems) -> None:
    """What a commit brings in (a removal brings nothing): names fsck refuses, blobs over the bound.
    Both stay in history once committed, so only rewriting the branch clears them."""
    name = layout.hostile_component(change.path) if change.new is not None else None
    if name is not None:
        problems.add("bad-name", change.path, oid, f"a path component {name!r} that git's fsck refuses")
    if change.new is not None and change.mode != GITLINK:
        _size_ok(git, change.path, change.new, oid, problems)


def _size_ok(git: GitRepo, path: str, blob: str, commit: str | None, problems: _Problems) -> bool:
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


def _check_tree(git: GitRepo, entries: Iterable, added_in: dict[str, str], problems: _Problems):
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


def _parse_records(
    git: GitRepo, files: list[tuple[str, str]], added_in: dict[str, str], problems: _Problems, progress: Progress
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


def _check_unique(
    events: list[EventBase], where: dict[int, str], added_in: dict[str, str], problems: _Problems
) -> None:
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


def _check_safety(
    events: list, runs: list, where: dict[int, str], policy: Any, added_in: dict[str, str], problems: _Problems
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


def _check_documents(
    git: GitRepo,
    expected: dict[str, bytes],
    problems: _Problems,
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

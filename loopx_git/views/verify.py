"""``loopx verify``: walk the whole state branch and report every broken invariant.

What a state branch may hold is narrow, and everything outside it is reported: only the paths the
layout defines (``store/layout.py``), only regular files, none larger than ``MAX_BLOB_BYTES``, no
name git's fsck refuses; records that are valid, unique, never changed or deleted, and free of
secrets; documents equal to the fold of the records. ``verify_since`` checks the same for the
commits after one already checked, which is what sync, the pre-push hook and every write use.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from loopx_git.errors import LoopxError
from loopx_git.model.event_head import EventBase
from loopx_git.model.fold import fold
from loopx_git.model.record import Record
from loopx_git.model.state import Conflict
from loopx_git.store import layout
from loopx_git.store.documents import Entity, branch_layout, render_all
from loopx_git.store.git import GitRepo
from loopx_git.views.verify_checks import (
    Problem,
    Problems,
    Progress,
    check_commit,
    check_documents,
    check_entities,
    check_layout,
    check_safety,
    check_tree,
    check_unique,
    parse_records,
)

if TYPE_CHECKING:
    from loopx_git.store.reader import StateReader

VERIFY_SCHEMA = "loopx_verify_report_v0"


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
    problems = Problems()
    added_in: dict[str, str] = {}
    changed: dict[str, str] = {}
    commits = list(git.walk_commits(tip))
    for n, commit in enumerate(commits, 1):
        check_commit(git, commit.oid, commit.tree, commit.parents, added_in, problems, changed)
        progress("history", n, len(commits))
    tree = git.commit(tip).tree
    records, documents = check_tree(git, git.walk_entries(tree), changed, problems)
    events, runs, where = parse_records(git, records, added_in, problems, progress)
    check_unique(events, where, added_in, problems)
    if policy is not None:
        check_safety(events, runs, where, policy, added_in, problems)
    state = fold(events, runs)
    paths = [p for p, _ in records]
    version = branch_layout(git, tree, paths)
    check_entities(state, problems, version)
    check_layout(git, tree, paths, added_in, problems)
    checked = check_documents(git, render_all(state, version), problems, documents, changed)
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
    problems = Problems()
    added_in: dict[str, str] = {}
    changed: dict[str, str] = {}
    commits = list(git.walk_range([tip], [since]))
    for commit in commits:
        check_commit(git, commit.oid, commit.tree, commit.parents, added_in, problems, changed)
    tree = git.commit(tip).tree
    at_tip = [entry for entry in lookup.leaves(git, tree, sorted(changed)).values() if entry is not None]
    records, docs = check_tree(git, at_tip, changed, problems)
    # the records a verified ``since`` held say what its loopx.yaml says; only the ones the range
    # adds can need another layout, unless the range changes loopx.yaml itself: then look at all
    layout_paths = None if layout.ROOT_DOCUMENT in changed else [p for p, _ in records]
    check_layout(git, tree, layout_paths, added_in, problems)
    # a merge adds, against its first parent, the records its other parent brings: those that
    # ``since`` holds already, as they are, were checked with it and are not read again
    records = [(p, o) for p, o in records if p in added_in]
    checked_at_since = lookup.entry_ids(git, git.commit(since).tree, [p for p, _ in records])
    records = [(p, o) for p, o in records if checked_at_since[p] != o]
    events, runs, where = parse_records(git, records, added_in, problems, _noop)
    if reader is None:
        from loopx_git.views.folded import state_reader

        reader = state_reader(git, ref)
    if events:
        _check_new_ids(git, tree, since, events, where, added_in, problems, reader)
    if policy is not None:
        check_safety(events, runs, where, policy, added_in, problems)
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
        check_entities(state, problems, version, {(goal, todo) for kind, goal, todo in entities if kind == "todo"})
        expected = render_touched(state, entities, version)
        kept = set(same.values())
        present = {
            p: o
            for p, o in lookup.entry_ids(git, tree, sorted({*expected, *(present_paths - kept)})).items()
            if o and p not in kept
        }
        checked = check_documents(git, expected, problems, present.items(), changed) + len(kept)
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
    problems: Problems,
    reader: StateReader,
) -> None:
    """The ids of the events a range adds are used once at ``tree``: by none of the others it adds
    and by no event ``since`` held (a verified ``since`` holds each once, and keeps every record).

    What ``since`` held is read from a fold, never folded from scratch for this: the fold at
    ``since`` (the one at hand, or that one advanced to ``since``) answers exactly; one at a later
    commit holds more (what came after ``since`` on its side of a merge), so an id it knows is
    confirmed by the tree. With neither, the event file names at ``tree`` are counted (every
    event's path, no blob read: 17 s at a million)."""
    check_unique(events, where, added_in, problems)
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

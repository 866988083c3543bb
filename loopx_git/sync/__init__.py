"""Many clones, one history: pull, merge and push of the state branch.

- **pull** fetches the remote's state branch, checks what it adds (valid records, nothing edited
  or deleted), and fast-forwards or merges. A merge commit's tree is the union of both sides'
  record files plus every document the two sides' new events touch, re-derived from the merged
  fold; documents are never line-merged. The fold orders events by (Lamport clock, time, id), so
  merging either way round gives the same tree, and clones that sync in any order converge.
- **push** is compare-and-swap: it carries the remote tip last fetched as the expected old value
  and fails if the remote moved. **sync** is pull + push, retried (bounded) when the push loses.
- **claim_synced** is fetch → claim → push as one step; a claim whose push loses the race is
  taken back (it was never published) and tried again on the new remote state, so of two
  machines racing for one todo exactly one wins.

Nothing here touches the work tree or the index.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loopx_git.errors import ConflictError, LoopxError, Notice, RefMoved, SyncRefused, ValidationError
from loopx_git.model.fold import extend, fold
from loopx_git.store import layout
from loopx_git.store.documents import layout_upgrade, render_touched, touched
from loopx_git.store.remote import Remote

if TYPE_CHECKING:
    from loopx_git.api import StateRepo, WriteResult
from loopx_git.sync.push import backoff, push

SYNC_ATTEMPTS = 8
"""Pushes tried before a sync or a claim gives up on a remote that keeps moving: with sixteen clones
racing through one server, five (and a 1 s backoff cap) gave up on about four syncs in ten, eight
(with 2 s) on about one in six (benchmarks/agents.py)."""
SYNC_SCHEMA = "loopx_sync_result_v0"


@dataclass
class PullResult:
    action: str
    """``up-to-date`` | ``ahead`` | ``fast-forward`` | ``merged`` | ``no-remote-branch``"""
    remote_tip: str | None
    local_tip: str | None
    events_from_remote: int = 0
    conflicts: list = field(default_factory=list)
    warnings: list[Notice] = field(default_factory=list)


@dataclass
class SyncResult:
    remote: str
    pull: PullResult
    pushed: bool = False
    attempts: int = 1

    def to_json(self) -> dict:
        return {
            "schema_version": SYNC_SCHEMA,
            "remote": self.remote,
            "action": self.pull.action,
            "remote_tip": self.pull.remote_tip,
            "local_tip": self.pull.local_tip,
            "events_from_remote": self.pull.events_from_remote,
            "pushed": self.pushed,
            "attempts": self.attempts,
            "conflicts": [c.model_dump(mode="json") for c in self.pull.conflicts],
            "warnings": [w.to_json() for w in self.pull.warnings],
        }


def _refuse_problems(report, side: str, outcome: str = "nothing was merged") -> None:
    if report.problems:
        first = report.problems[0]
        more = f" (and {len(report.problems) - 1} more)" if len(report.problems) > 1 else ""
        where = f"commit {first.commit[:12]}, " if first.commit else ""
        raise SyncRefused(
            f"{side}: {first.code} at {where}{first.path}: {first.message}{more}; {outcome}",
            hint="the other clone must fix its branch (`loopx verify` there says what is wrong)",
        )


def _check_incoming(
    repo: StateRepo, tip: str, since: str | None, *, merging: bool, progress=None, outcome: str = "nothing was merged"
) -> None:
    from loopx_git.views.verify import verify, verify_since

    policy = repo.policy  # incoming records pass the same safety rules as local writes
    if since is None:  # a branch never seen before: all of it (progress shown, it can be long)
        report = verify(repo.git, repo.ref, progress or (lambda stage, done, total: None), tip=tip, policy=policy)
    else:  # a merge re-derives the documents; a fast-forward takes them as they are
        # through the clone's own reader: the fold of the incoming tip is then kept when the command
        # ends, so the next pull folds what it brings, not the whole history again
        report = verify_since(repo.git, repo.ref, tip, since, documents=not merging, policy=policy, reader=repo.reader)
    _refuse_problems(report, "the remote state branch", outcome)


def pull(repo: StateRepo, remote: Remote, progress=None) -> PullResult:
    """Fetch and bring the local state branch up to the remote's (never the other way round)."""
    repo.require_writable()
    git = repo.git
    seen = git.ref_target(remote.tracking_ref)  # the remote's tip as this clone last saw it
    theirs = remote.fetch()
    ours = repo.tip
    if theirs is None:
        return PullResult("no-remote-branch", None, ours)
    warnings = _rewritten(repo, remote, seen, theirs)
    if ours == theirs:
        return _said(repo, PullResult("up-to-date", theirs, ours, warnings=warnings))
    if ours is not None and git.is_ancestor(theirs, ours):
        return _said(repo, PullResult("ahead", theirs, ours, warnings=warnings))
    if ours is None or git.is_ancestor(ours, theirs):
        _check_incoming(repo, theirs, ours, merging=False, progress=progress)
        # under the clone's write lock, as every write: local writers take turns with it, and a ref
        # lock file a killed writer left is taken away first (store/writelock.py)
        repo.locked(lambda: git.move_ref(repo.ref, theirs, ours))()
        repo.mark_built(theirs, ours)
        return _said(repo, PullResult("fast-forward", theirs, theirs, warnings=warnings))
    base = git.merge_base(ours, theirs)
    if base is None:
        raise SyncRefused(
            f"the remote state branch ({remote.name} at {theirs[:12]}) shares no history with the local one "
            f"({ours[:12]}); rule: a pull joins histories that grew from one root, as git refuses to merge "
            "unrelated histories; nothing was merged",
            code="unrelated-history",
            hint=f"`git log {theirs[:12]}` shows what the remote holds; if it is another project's branch, fix the "
            "remote; if it is a clone that connected on its own before it ever fetched, start that clone again "
            "from the remote (`loopx connect` in a fresh clone adopts the remote's branch)",
        )
    repo.require_intact(ours)  # a merge builds on the local branch: never on a broken one
    _check_incoming(repo, theirs, base, merging=True, progress=progress)
    result = repo.locked(lambda: merge(repo, ours, theirs, remote.name))()
    result.warnings = warnings
    return _said(repo, result)


def _said(repo: StateRepo, result: PullResult) -> PullResult:
    """A pull that went through says its warnings (a refused one says only why it was refused)."""
    for warning in result.warnings:
        repo.note(warning)
    return result


def _rewritten(repo: StateRepo, remote: Remote, seen: str | None, theirs: str) -> list[Notice]:
    """A warning when the remote's branch no longer holds the tip this clone saw there: it was
    force-pushed over. Nothing is lost (this clone still has those commits, and the merge and the
    next push carry them back), but whoever rewrote it should know."""
    git = repo.git
    if seen is None or seen == theirs or not git.has_object(seen) or git.is_ancestor(seen, theirs):
        return []
    dropped = sum(1 for _ in git.walk_range([seen], [theirs]))
    notice = Notice(
        "remote-rewritten",
        f"the state branch on {remote.name} was rewritten: it no longer holds {dropped} commit(s) this clone saw "
        f"there (up to {seen[:12]}); merged as usual, nothing is lost, and the next push puts them back",
    )
    return [notice]


@dataclass(frozen=True)
class Adopted:
    """A remote's copy of the state branch that a clone without one started from."""

    remote: str
    branch: str
    tip: str

    def __str__(self) -> str:
        return f"{self.remote}/{self.branch}"


def adoptable(repo: StateRepo, named: str | None) -> tuple[str, str] | None:
    """``(remote, tip)`` of the remote-tracking copy of the state branch a clone without one should
    start from (``git clone`` leaves it at ``refs/remotes/<remote>/<branch>``): the named remote's,
    else origin's, else the only one. Copies that differ and no name: refused, not guessed."""
    git, branch = repo.git, repo.ref.removeprefix("refs/heads/")
    copies = {}
    for name in [named] if named else git.remotes():
        tip = git.ref_target(f"refs/remotes/{name}/{branch}")
        if tip is not None:
            copies[name] = tip
    if not copies:
        return None
    choice = named or ("origin" if "origin" in copies else None)
    if choice is None and len(set(copies.values())) == 1:
        choice = sorted(copies)[0]
    if choice is None:
        listed = ", ".join(f"{name}/{branch} at {tip[:12]}" for name, tip in sorted(copies.items()))
        raise ValidationError(
            f"field 'remote': several remotes have a different copy of {branch} ({listed}) and none was named; "
            "rule: a new state branch starts from one remote's history",
            code="ambiguous-remote",
            hint="name the one to join: `loopx connect --remote NAME`",
        )
    return choice, copies[choice]


def adopt(repo: StateRepo, remote: str, tip: str, progress=None) -> Adopted:
    """Start the (missing) local state branch at a remote's copy, checked as a pull checks what a
    remote brings: a copy that fails verification is refused and no branch is created."""
    adopted = Adopted(remote, repo.ref.removeprefix("refs/heads/"), tip)
    _check_incoming(repo, tip, None, merging=False, progress=progress, outcome=f"nothing was created from {adopted}")
    repo.git.move_ref(repo.ref, tip, None)
    repo.mark_built(tip, None)
    return adopted


def fetch_copy(repo: StateRepo, named: str | None) -> str | None:
    """In a clone with no state branch and no copy of the remote's (a ``--single-branch`` clone, or a
    remote added and never fetched), fetch that one branch into its tracking ref, so that connect
    starts from the shared history instead of a second root. The remote fetched from, or None:
    nothing to fetch, the remote has no state branch, or it cannot be reached (connect works offline;
    a later ``loopx sync`` merges what it finds)."""
    if repo.tip is not None or adoptable(repo, named) is not None:
        return None
    names = repo.git.remotes()
    name = named or ("origin" if "origin" in names else names[0] if len(names) == 1 else None)
    if name is None:
        return None
    try:
        remote = repo.remote(name)
        if remote.brings_state_branch() and not named:
            return None  # a plain fetch maps the branch and ran: the remote had none then
        return name if remote.fetch(quiet_auth=True, timeout=60) is not None else None
    except LoopxError:
        return None


def merge(repo: StateRepo, ours: str, theirs: str, label: str) -> PullResult:
    """One merge commit (parents: ours, theirs) whose tree is the union of both sides' records and
    the re-derived documents of every entity either side's new events touch."""
    git = repo.git
    ours_tree, theirs_tree = git.commit(ours).tree, git.commit(theirs).tree
    incoming: list[tuple[str, str]] = []  # (path, blob id) of the records only theirs has
    outgoing: list[tuple[str, str]] = []
    clashes: list[str] = []
    for change in git.changes(ours_tree, theirs_tree):
        if layout.record_kind(change.path) is None:
            continue
        if change.old is None and change.new is not None:
            incoming.append((change.path, change.new))
        elif change.new is None and change.old is not None:
            outgoing.append((change.path, change.old))
        else:
            clashes.append(change.path)
    if clashes:
        raise SyncRefused(
            f"{clashes[0]} holds different content here and on the remote: a record id was reused "
            "with different content; nothing was merged",
            code="record-clash",
        )
    reader = repo.reader
    folded = reader.state_at(ours)
    # a record file is named by its id (verified: ours is intact), so the ids folded at ours are
    # the names of its record files, asked without walking a tree as large as the history
    known = [ids for goal in folded.goals.values() for ids in (goal.event_ids, goal.run_ids)]
    reused = [p for p, _ in incoming if any(p.rsplit("/", 1)[1].removesuffix(".json") in ids for ids in known)]
    if reused:
        raise SyncRefused(
            f"{reused[0]}: its record id is already used here by another file; nothing was merged", code="record-clash"
        )
    their_events, their_runs = reader.parse(incoming)
    our_events, _ = reader.parse(outgoing)
    merged = folded.copy_for({e.goal_id for e in their_events} | {r.goal_id for r in their_runs})
    if not extend(merged, their_events, their_runs):  # an interleaving event the fold reads whole: fold all
        events, runs = reader.records_in(ours_tree)  # the merged tree's records: ours and theirs, no others
        merged = fold([*events, *their_events], [*runs, *their_runs])
    # the documents in the layout this loopx writes; on an older layout's branch the others move there
    documents = render_touched(merged, touched(their_events) | touched(our_events))
    upgrade = layout_upgrade(git, ours_tree, [*documents, *(p for p, _ in incoming)])
    documents.update(upgrade.files)
    # one tree: their records, the documents
    tree = git.write_tree(ours_tree, documents, blobs={**dict(incoming), **upgrade.blobs}, remove=upgrade.removed)
    message = (
        f"loopx: merge {label} ({len(their_events)} events from the remote, {len(our_events)} local)\n\n"
        f"Loopx-Merge: {theirs}\n"
    )
    commit = git.commit_on_ref(repo.ref, tree, [ours, theirs], message)
    reader.remember(commit, merged)
    repo.mark_built(commit, ours)
    conflicts = [c for g in merged.goals.values() for c in g.conflicts]
    return PullResult("merged", theirs, commit, len(their_events) + len(their_runs), conflicts)


def sync(repo: StateRepo, remote: Remote, *, attempts: int = SYNC_ATTEMPTS, progress=None) -> SyncResult:
    """Pull, then push; when the push loses to another clone, pull (merge) and push again."""
    reason = ""
    for attempt in range(1, attempts + 1):
        try:
            pulled = pull(repo, remote, progress)
        except RefMoved as exc:
            if exc.lock:  # held past the write lock's wait: a refusal naming the file, not a race
                raise
            reason = "the local state branch moved during the pull"  # a writer of this clone: again
            backoff(attempt)
            continue
        outcome = push(repo, remote)
        if outcome.ok:
            return SyncResult(remote.name, pulled, pushed=outcome.pushed, attempts=attempt)
        reason = outcome.reason
        backoff(attempt)
    raise ConflictError(
        f"the remote kept moving; gave up after {attempts} attempts ({reason})",
        code="push-lost",
        hint="another clone is syncing busily; try again",
    )


def claim_synced(
    repo: StateRepo, remote: Remote, goal_id: str, todo_id: str, agent_id: str, *, attempts: int = SYNC_ATTEMPTS
) -> WriteResult:
    """Fetch, claim, push, as one step. A claim that loses the push race is taken back (it was
    never published) and tried again on the new remote state, where it may be refused."""
    for attempt in range(1, attempts + 1):
        try:
            pull(repo, remote)
        except RefMoved as exc:
            if exc.lock:  # held past the write lock's wait: a refusal naming the file, not a race
                raise
            backoff(attempt)  # a writer of this clone moved the branch during the pull: again
            continue
        base, before = repo.tip, repo.state()
        result = repo.todo_claim(goal_id, todo_id, agent_id)  # refused here if the winner's claim arrived
        if push(repo, remote).ok:
            return result
        if result.changed:
            assert base is not None  # a claim is written on a tip: its goal is on the branch
            try:
                repo.git.move_ref(repo.ref, base, result.commit)
            except RefMoved as exc:
                raise ConflictError(
                    "the local state branch moved while the claim was being pushed", code="claim-unsettled"
                ) from exc
            repo.reader.remember(base, before)
            repo.mark_built(base, None)  # the claim was built on it: it was verified
        backoff(attempt)
    raise ConflictError(f"could not publish the claim after {attempts} attempts", code="push-lost")


def remote_copies(repo: StateRepo) -> list[dict]:
    """The state branch against each remote-tracking copy of it: pushed, ahead, behind or diverged,
    read from the refs the last fetch left."""
    git, short, tip = repo.git, repo.ref.removeprefix("refs/heads/"), repo.tip
    out = []
    for name, oid in git.refs("refs/remotes/"):
        remote, _, branch = name.removeprefix("refs/remotes/").partition("/")
        if branch != short:
            continue
        if tip is None:
            relation = "behind"
        elif oid == tip:
            relation = "pushed"
        elif git.is_ancestor(oid, tip):
            relation = "ahead"
        elif git.is_ancestor(tip, oid):
            relation = "behind"
        else:
            relation = "diverged"
        out.append({"remote": remote, "ref": name, "remote_tip": oid, "relation": relation})
    return out


def remote_status(repo: StateRepo) -> list[dict]:
    """For each configured remote, whether it has the state branch (``git ls-remote``; ``None``
    with the error when it cannot be reached)."""
    out = []
    for name in repo.git.remotes():
        try:
            tip = repo.remote(name).remote_tip()
            out.append({"remote": name, "has_state_branch": tip is not None, "remote_tip": tip, "error": None})
        except LoopxError as exc:
            out.append({"remote": name, "has_state_branch": None, "remote_tip": None, "error": exc.message})
    return out

"""Keeping a state branch in order: verify it, repair what can be re-derived, pack and prune the
object store, and say when what arrived fails. Functions over a ``StateRepo`` (the API wires them);
no protocol rule lives here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.errors import Notice
from loopx_git.store import hygiene, layout, transaction

if TYPE_CHECKING:
    from loopx_git.api import StateRepo
    from loopx_git.domain.write import Write
    from loopx_git.store.git import GitRepo
    from loopx_git.store.git_objects import Entry


def repair(repo: StateRepo) -> tuple[str | None, Write]:
    """One commit that re-derives every document from the fold and removes stray files and orphaned
    documents; records are never touched (a broken one needs a person). No commit when all agree.
    The commit (None when none was needed) and what it did."""
    from loopx_git.domain.write import Write
    from loopx_git.store.documents import branch_layout, render_all

    repo.require_writable()
    empty = Write("repair", "documents", "", None)
    git = repo.git

    def attempt() -> tuple[str | None, Write]:
        tip = repo.tip
        if tip is None:
            return None, empty
        tree = git.commit(tip).tree
        entries = {e.path: e for e in git.walk_entries(tree)}
        state = repo.reader.state_at(tip)
        version = branch_layout(git, tree, entries)
        # a branch in an older layout, as that layout wants it, is not drift: no commit
        txn = _rederive(git, entries, render_all(state, version))
        if not txn.files and not txn.removed:
            return None, empty
        txn.summary = f"re-derive {len(txn.files)} document(s), remove {len(txn.removed)} orphan(s) or stray file(s)"
        if version != layout.WRITE_LAYOUT:  # a commit is due: it leaves the tree in this loopx's layout
            summary = f"{txn.summary}; every document moved to layout {layout.WRITE_LAYOUT}"
            txn = _rederive(git, entries, render_all(state))
            txn.summary = summary
        done = Write("repair", txn.summary, "", None, result={"rederived": sorted(txn.files), "removed": txn.removed})
        return transaction.commit(git, repo.ref, tip, txn), done

    return transaction.retrying(repo.locked(attempt))


def _rederive(git: GitRepo, entries: dict[str, Entry], expected: dict[str, bytes]) -> transaction.Transaction:
    """The transaction that makes a tree's documents ``expected``: what differs is written, any
    other file that is not a record removed."""
    txn = transaction.Transaction("repair", "re-derive documents from the events")
    for path, data in expected.items():
        entry = entries.get(path)
        if entry is None or entry.mode != layout.REGULAR_FILE or git.read_blob(entry.oid) != data:
            txn.add(path, data)
    txn.removed = sorted(p for p in entries if p not in expected and not layout.is_record(p))
    return txn


def review_policy(repo: StateRepo, policy_from: str | None = None):
    """The safety policy a check of the branch uses: the one committed at ``policy_from`` when
    named; otherwise the work tree's (what writes use), unless the work tree is a checkout of a
    state branch (CI checking out a pull request into it), which never supplies a policy of its
    own — there, the defaults."""
    from loopx_git.safety.policy import DEFAULT_POLICY
    from loopx_git.views.policy import committed_policy

    if policy_from:
        return committed_policy(repo.git, repo.git.rev_parse(policy_from))
    workdir = repo.git.workdir
    if workdir is not None and (workdir / layout.ROOT_DOCUMENT).is_file():
        return DEFAULT_POLICY
    return repo.policy


def verify(repo: StateRepo, progress: Any = None, *, policy_from: str | None = None):
    """The whole branch checked; a clean report moves the verified tip to it."""
    from loopx_git.views.verify import verify as verify_branch

    report = verify_branch(
        repo.git, repo.ref, progress or (lambda stage, done, total: None), policy=review_policy(repo, policy_from)
    )
    if report.ok and report.tip is not None:
        repo.mark_built(report.tip, None)
    return report


def read_warning(repo: StateRepo) -> Notice | None:
    """A notice when the commits after the last verified tip fail (records only, no documents:
    cheap enough for a read); None when nothing new arrived or there is no verified tip yet (the
    next write then checks the whole branch)."""
    git, tip, since = repo.git, repo.tip, repo.integrity.verified()
    if tip is None or since is None or since == tip or not git.has_object(since) or not git.is_ancestor(since, tip):
        return None
    report = repo.integrity.report(tip, repo.reader, repo.policy, documents=False)
    if report is None or report.ok:
        return None
    first = report.problems[0]
    return Notice(
        "broken-branch",
        f"the state branch fails verification after {since[:12]} ({first.code} at "
        f"{first.path}); what is shown may include records changed by hand, and writes are refused: "
        "run `loopx verify`",
    )


def gc(repo: StateRepo) -> hygiene.GcResult:
    done = hygiene.gc(repo.git)
    for warning in done.warnings:  # the packing landed: say what was left undone, never fail
        repo.note(Notice("upkeep", warning))
    return done


def store_health(repo: StateRepo) -> dict:
    """Loose objects and packs, the unreachable objects lost races left (``loopx gc`` drops those
    past the grace period), a gc.log git left."""
    stats = hygiene.object_stats(repo.git.common_dir)
    lost = hygiene.unreachable(repo.git)
    return {
        "loose_objects": stats.loose_objects,
        "loose_bytes": stats.loose_bytes,
        "packs": stats.packs,
        "pack_bytes": stats.pack_bytes,
        "unreachable_objects": lost.objects,
        "prune_expire": lost.expire,
        "gc_log": hygiene.gc_log(repo.git.common_dir),
    }

"""The pre-push check. Git gives one line per ref update on stdin:
``<local ref> <local sha> <remote ref> <remote sha>``.

Every commit in each pushed range is walked — not the net diff, so a secret added and removed
again inside the range still refuses the push — and every blob a commit adds or changes is
scanned. A push of the state branch must also be a fast-forward of the remote's and pass
``verify`` (a tip this clone's loopx verified already, its verified mark, is not verified twice).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from loopx_git.hooks.checks import COMMIT_MESSAGE, Report, boundary_of, check_names, check_paths, scan_blob
from loopx_git.safety.policy import Policy
from loopx_git.safety.scan import scan, with_place
from loopx_git.store import lookup
from loopx_git.store.git import GitRepo

ZERO = "0" * 40


@dataclass(frozen=True)
class RefUpdate:
    local_ref: str
    local_sha: str
    remote_ref: str
    remote_sha: str

    @property
    def deletes(self) -> bool:
        return set(self.local_sha) == {"0"}

    @property
    def creates(self) -> bool:
        return set(self.remote_sha) == {"0"}


def parse_updates(text: str) -> list[RefUpdate]:
    updates = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4:
            updates.append(RefUpdate(*parts))
        elif parts:
            from loopx_git.errors import ValidationError

            shown = repr(line[:200]) + ("..." if len(line) > 200 else "")  # a runaway line is not echoed whole
            raise ValidationError(
                f"pre-push input {shown}: expected '<local ref> <local sha> <remote ref> <remote sha>'",
                code="invalid-input",
            )
    return updates


def _remote_tips(git: GitRepo, remote: str | None) -> list[str]:
    prefix = f"refs/remotes/{remote}/" if remote else "refs/remotes/"
    return [oid for _, oid in git.refs(prefix)]


def _verified_here(git: GitRepo, state_ref: str, sha: str) -> bool:
    """Whether ``sha`` is the tip this clone last verified: the mark every loopx write, pull and
    sync keeps under .git/loopx/ (``integrity.py``), moved only after the commits up to it were
    checked as ``verify`` checks them, safety rules and documents included, or were built by loopx
    on a checked tip. A commit is its content, so checking it again here would find what that
    check found; a push of anything else (a tip made with plain git) is verified below."""
    from loopx_git.store.cache import VerifiedMark

    return VerifiedMark(git.common_dir, state_ref).load() == sha


def _check_state_push(git: GitRepo, update: RefUpdate, state_ref: str, report: Report) -> None:
    if update.deletes:
        report.refused.append(f"{update.remote_ref}: deleting the state branch on the remote loses its history")
        return
    kind = git.object_type(update.local_sha)
    if kind != "commit":  # git hands over commits; odd stdin (or a hand-run hook) may not
        report.refused.append(
            f"{update.remote_ref}: the pushed {update.local_sha[:12]!r} is "
            f"{'no object in this repository' if kind is None else 'a ' + kind}, not a commit; "
            "only state commits are pushed to the state branch"
        )
        return
    if not update.creates:
        kind = git.object_type(update.remote_sha)
        if kind not in (None, "commit"):
            report.refused.append(
                f"{update.remote_ref}: the remote's {update.remote_sha[:12]!r} is a {kind}, not a "
                "commit; the state branch there is damaged and a push cannot fast-forward it"
            )
            return
        if not git.has_object(update.remote_sha):
            report.refused.append(
                f"{update.remote_ref}: the remote has state commits this clone has not seen "
                f"({update.remote_sha[:12]}); fetch and merge them first (loopx sync)"
            )
            return
        if not git.is_ancestor(update.remote_sha, update.local_sha):
            report.refused.append(
                f"{update.remote_ref}: not a fast-forward of the remote's {update.remote_sha[:12]}; "
                "the state branch is append-only and is never rewritten"
            )
            return
    if _verified_here(git, state_ref, update.local_sha):
        return
    from loopx_git.views.verify import verify, verify_since

    if update.creates:
        result = verify(git, state_ref, tip=update.local_sha)
    else:  # the remote's tip passed this check when it was pushed: check what this push adds
        result = verify_since(git, state_ref, update.local_sha, update.remote_sha)
    for problem in result.problems[:20]:
        report.refused.append(
            f"{update.remote_ref}: verify: {problem.code} {problem.path or ''} {problem.message}".rstrip()
        )


def check_push(
    git: GitRepo, updates: Iterable[RefUpdate], policy: Policy, *, remote: str | None, state_ref: str
) -> Report:
    report = Report()
    boundary = boundary_of(policy)
    updates = list(updates)
    if any(state_ref in (u.local_ref, u.remote_ref) for u in updates):
        git = lookup.DiffMemo(git)  # the state check and the scan below diff the same commits
    walked: set[str] = set()
    for update in updates:
        is_state = state_ref in (update.local_ref, update.remote_ref)
        if is_state:
            _check_state_push(git, update, state_ref, report)
        if update.deletes:
            continue
        if not update.creates and git.has_object(update.remote_sha):
            exclude = [update.remote_sha]
        else:  # a new branch, or a remote tip not fetched: everything the remote is not known to have
            exclude = _remote_tips(git, remote)
        for commit in git.walk_range([update.local_sha], exclude):
            if commit.oid in walked:
                continue
            walked.add(commit.oid)
            report.commits += 1
            found = len(report.findings)
            _check_commit(git, commit, policy, boundary, report)
            report.on_state_branch |= is_state and len(report.findings) > found
    return report


def _check_commit(git: GitRepo, commit, policy: Policy, boundary, report: Report) -> None:
    """What one commit adds or changes, against its first parent; blobs that a merge takes
    unchanged from another parent were checked with that parent's commits."""
    where = f"commit {commit.oid[:12]}"
    first = git.commit(commit.parents[0]).tree if commit.parents else None
    others = [git.commit(p).tree for p in commit.parents[1:]]
    changed = [(change.path, change.new) for change in git.changes(first, commit.tree) if change.new is not None]
    for other in others:  # each parent's folders read once, not once per path
        there = lookup.entry_ids(git, other, [path for path, _ in changed])
        changed = [(path, new) for path, new in changed if there[path] != new]
    check_names(report, (path for path, _ in changed), policy, where=where)  # a renamed file too
    check_paths(report, (path for path, _ in changed), boundary, policy, where=where)
    for path, new in changed:
        scan_blob(report, git, path, new, policy, where=where)
    # a message is published with its commit: a token pasted into one leaks as surely as a file
    report.findings.extend(with_place(f, path=COMMIT_MESSAGE, where=where) for f in scan(commit.message, policy))

"""What the hooks and ``loopx check`` look at: paths against the local-state boundary and blob
contents against the safety rules, read from git (the index, or commits) through ``store/``.

A ``Report`` gathers findings; each blob is scanned once however many paths or commits hold it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from loopx_git.safety.boundary import Boundary
from loopx_git.safety.policy import ALLOW_FILE, Policy, load
from loopx_git.safety.rules import BLOCK
from loopx_git.safety.scan import Finding, fingerprint, scan, with_place

if TYPE_CHECKING:
    from pathlib import Path


class BlobReader(Protocol):
    def read_blob(self, oid: str) -> bytes: ...


class Reader(BlobReader, Protocol):
    """What the checks read: ``store.git.GitRepo`` (pygit2) or, on the pre-commit path,
    ``store.plumbing.IndexReader`` (the git binary, which honours ``GIT_INDEX_FILE``)."""

    @property
    def workdir(self) -> Path | None: ...
    def index_entries(self) -> Iterable[tuple[str, str, int]]: ...
    def index_blob(self, path: str) -> str | None: ...


class StagedReader(Reader, Protocol):
    """A reader that also knows what the next commit changes (``IndexReader``)."""

    def staged(self) -> list[tuple[str, str, int]]: ...


LOCAL_STATE = "local-state"
_BINARY_SNIFF = 8000  # as git does: a NUL in the first 8000 bytes means binary


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    files: int = 0
    commits: int = 0
    refused: list[str] = field(default_factory=list)
    """Refusals that are not findings in a file (a state-branch rewrite, a failed verify)."""
    on_state_branch: bool = False
    """Some finding is in a commit of the state branch, which is append-only: never rewritten."""
    _scanned: dict = field(default_factory=dict)

    @property
    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == BLOCK]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity != BLOCK]

    def failed(self, strict: bool = False) -> bool:
        return bool(self.blocking or self.refused or (strict and self.findings))

    def to_json(self, strict: bool = False) -> dict:
        return {
            "ok": not self.failed(strict),
            "files_scanned": self.files,
            "commits_walked": self.commits,
            "blocking": len(self.blocking),
            "warnings": len(self.warnings),
            "findings": [f.to_json() for f in self.findings],
            "refused": self.refused,
        }


def policy_of(git: Reader) -> Policy:
    """The repository's policy, from the staged ``pyproject.toml`` and ``.publicsafe-allow``
    (what the commit will hold), else the work tree's, else the defaults."""

    def read(name: str) -> str | None:
        oid = git.index_blob(name) if git.workdir is not None else None
        if oid is not None:
            return git.read_blob(oid).decode("utf-8", "replace")
        path = git.workdir / name if git.workdir is not None else None
        return path.read_text(encoding="utf-8", errors="replace") if path is not None and path.is_file() else None

    return load(read("pyproject.toml"), read(ALLOW_FILE))


def boundary_of(policy: Policy) -> Boundary:
    return Boundary(policy.local_state)


def path_finding(
    path: str, pattern: str, policy: Policy, *, where: str | None = None, note: str = ""
) -> Finding | None:
    """A local-state path as a finding (``path:0:0`` — the path itself, not a line in it)."""
    fp = fingerprint(path)
    if policy.allowed_by_fingerprint(LOCAL_STATE, fp, path):
        return None
    return Finding(LOCAL_STATE, BLOCK, 0, 0, fp, 0, 0, path, where, f"local-state pattern {pattern!r}{note}")


def check_paths(
    report: Report,
    paths: Iterable[str],
    boundary: Boundary,
    policy: Policy,
    *,
    where: str | None = None,
    note: str = "",
) -> None:
    for path in paths:
        pattern = boundary.violates(path)
        if pattern is not None:
            finding = path_finding(path, pattern, policy, where=where, note=note)
            if finding is not None:
                report.findings.append(finding)


def decode(data: bytes) -> str | None:
    """Text of a blob, or None for binary content (never scanned: it has no lines to point at)."""
    if b"\0" in data[:_BINARY_SNIFF]:
        return None
    return data.decode("utf-8", "surrogateescape")


def scan_blob(
    report: Report, git: BlobReader, path: str, oid: str, policy: Policy, *, where: str | None = None
) -> None:
    """Scan one blob as ``path``; a blob seen before is not read again, its findings are reused."""
    found = report._scanned.get((oid, path))
    if found is None:
        text = decode(git.read_blob(oid))
        found = scan(text, policy, path=path) if text is not None else []
        report._scanned[(oid, path)] = found
        report.files += 1
    report.findings.extend(with_place(f, path=path, where=where) for f in found)


def check_staged(git: StagedReader, policy: Policy, only: set[str] | None = None) -> Report:
    """The pre-commit check: staged paths against the boundary, staged blobs (from the index,
    not the work tree) against the rules, and the whole index once for tracked local state.
    ``only`` limits the first two to the named paths."""
    report = Report()
    boundary = boundary_of(policy)
    # named files (the pre-commit framework's, `--all-files` too) are checked as the index holds
    # them, changed or not; otherwise what the commit changes
    staged = git.staged() if only is None else [e for e in git.index_entries() if e[0] in only]
    staged_paths = {p for p, _, _ in staged}
    check_paths(report, sorted(staged_paths), boundary, policy)
    tracked = (p for p, _, _ in git.index_entries() if p not in staged_paths)
    check_paths(report, tracked, boundary, policy, note="; already tracked")
    for path, oid, _mode in staged:
        scan_blob(report, git, path, oid, policy)
    return report


def check_tree(git: Reader, policy: Policy) -> Report:
    """``loopx check``: every tracked path and blob, as the index holds them."""
    report = Report()
    boundary = boundary_of(policy)
    entries = list(git.index_entries())
    check_paths(report, (p for p, _, _ in entries), boundary, policy, note="; tracked")
    for path, oid, _mode in entries:
        scan_blob(report, git, path, oid, policy)
    return report

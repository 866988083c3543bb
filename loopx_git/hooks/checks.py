"""What the hooks and ``loopx check`` look at: paths against the local-state boundary, and paths,
blob contents and commit messages against the safety rules, read from git (the index, or
commits) through ``store/``.

A ``Report`` gathers findings; each blob is scanned once however many paths or commits hold it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from loopx_git.safety.boundary import Boundary
from loopx_git.safety.policy import ALLOW_FILE, Policy, load
from loopx_git.safety.rules import BLOCK
from loopx_git.safety.scan import Finding, fingerprint, marker, scan, with_place

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
    def read_blobs(self, oids: list[str]) -> Iterable[bytes]: ...


LOCAL_STATE = "local-state"
_BINARY_SNIFF = 8000  # as git does: a NUL in the first 8000 bytes means binary


class Report:
    """What a check found, filled in as it goes. (A plain class: ``dataclasses`` costs every hook
    process ~15 ms of CPU to import; see ``safety/rule.py``.)"""

    def __init__(self, notes: list[str] | None = None):
        self.findings: list[Finding] = []
        self.files = 0
        self.commits = 0
        self.refused: list[str] = []
        """Refusals that are not findings in a file (a state-branch rewrite, a failed verify)."""
        self.on_state_branch = False
        """Some finding is in a commit of the state branch, which is append-only: never rewritten."""
        self.notes: list[str] = notes or []
        """The policy's notes (team rules left out): ``loopx check`` prints them; hooks, quiet, do not."""
        self.masked: dict[str, str] = {}
        """A path holding a secret -> the path as findings show it, the secret masked (``check_names``)."""
        self._scanned: dict = {}

    def shown(self, path: str) -> str:
        return self.masked.get(path, path)

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

    workdir = git.workdir

    def read(name: str) -> str | None:
        if workdir is None:
            return None
        oid = git.index_blob(name)
        if oid is not None:
            return git.read_blob(oid).decode("utf-8", "replace")
        path = workdir / name
        if not path.is_file() or not path.resolve().is_relative_to(workdir.resolve()):
            return None  # absent, or a link out of the work tree: only the repository's own files count
        return path.read_text(encoding="utf-8", errors="replace")

    # .loopx-safety.toml and a gitleaks configuration are read the same way, staged first
    return load(read("pyproject.toml"), read(ALLOW_FILE), read)


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
                report.findings.append(finding._replace(path=report.shown(path)))


IN_THE_NAME = "in the file name"


def check_names(report: Report, paths: Iterable[str], policy: Policy, *, where: str | None = None) -> None:
    """Secrets in the paths themselves: a file named after a token publishes it with the tree.
    Reported as ``path:0:0`` (the path, not a line in the file) with the note ``in the file name``,
    the path shown with each value masked (``keys/[REDACTED:github-token].txt``) here and in every
    later finding of the report: a finding never holds a value. Run it before the other checks
    of the same paths. The paths are scanned as one text, a path a line, and a path near a finding
    is scanned again on its own, so that its allowlisting (a path glob, ``allowed_paths``) applies."""
    paths = list(paths)
    if not paths:
        return
    starts, offset = [], 0
    for path in paths:
        starts.append(offset)
        offset += len(path) + 1
    near: set[int] = set()
    for hit in scan("\n".join(paths), policy, inline=False):
        first = bisect_right(starts, hit.start) - 1
        near.update(range(first, bisect_right(starts, max(hit.start, hit.end - 1))))
    for i in sorted(near):
        path = paths[i]
        found = scan(path, policy, path=path, inline=False)
        if not found:
            continue
        shown = path
        for f in reversed(found):  # in order and not overlapping: masked from the end, positions hold
            shown = shown[: f.start] + marker(f.rule) + shown[f.end :]
        report.masked[path] = shown
        report.findings.extend(
            f._replace(line=0, column=0, start=0, end=0, path=shown, where=where, note=IN_THE_NAME) for f in found
        )


COMMIT_MESSAGE = "<commit message>"
"""The path a finding in a commit message is reported at."""
_SCISSORS = " ------------------------ >8 ------------------------"


def message_text(raw: str, comment: str | None, cleanup: str = "strip") -> str:
    """A commit message file as git will record it, for the scan. ``comment`` is git's comment
    string when an editor was used (None otherwise, or when git picks one per message), and
    ``cleanup`` the ``commit.cleanup`` mode in effect as far as the hook can tell. Under ``strip``
    (git's default with an editor) comment lines are blanked and all that follows the scissors line
    of ``git commit -v`` (the diff) is dropped; under ``scissors`` only the latter; under
    ``whitespace`` and ``verbatim`` git keeps both, so both are scanned. Blanked, not removed, so a
    finding's line is the line in the file."""
    if comment is None or cleanup not in ("strip", "scissors"):
        return raw
    out = []
    for line in raw.split("\n"):
        if line.rstrip("\r") == comment + _SCISSORS:
            break
        out.append("" if cleanup == "strip" and line.startswith(comment) else line)
    return "\n".join(out)


def check_message(text: str, policy: Policy) -> Report:
    """The commit-msg check: the message against the rules, before the commit exists."""
    report = Report()
    report.findings.extend(with_place(f, path=COMMIT_MESSAGE) for f in scan(text, policy))
    return report


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
        _scan_data(report, path, oid, git.read_blob(oid), policy)
        found = report._scanned[(oid, path)]
    report.findings.extend(with_place(f, path=report.shown(path), where=where) for f in found)


def _scan_data(report: Report, path: str, oid: str, data: bytes, policy: Policy) -> None:
    text = decode(data)
    report._scanned[(oid, path)] = scan(text, policy, path=path) if text is not None else []
    report.files += 1


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
    check_names(report, sorted(staged_paths), policy)
    check_paths(report, sorted(staged_paths), boundary, policy)
    tracked = (p for p, _, _ in git.index_entries() if p not in staged_paths)
    check_paths(report, tracked, boundary, policy, note="; already tracked")
    # read in one stream (the blobs of a commit are many); each blob is then scanned as its path
    for (path, oid, _mode), data in zip(staged, git.read_blobs([oid for _, oid, _ in staged]), strict=True):
        _scan_data(report, path, oid, data, policy)
        report.findings.extend(with_place(f, path=report.shown(path)) for f in report._scanned[(oid, path)])
    return report


def check_tree(git: Reader, policy: Policy) -> Report:
    """``loopx check``: every tracked path and blob, as the index holds them."""
    report = Report(notes=list(policy.notes))
    boundary = boundary_of(policy)
    entries = list(git.index_entries())
    check_names(report, (p for p, _, _ in entries), policy)
    check_paths(report, (p for p, _, _ in entries), boundary, policy, note="; tracked")
    for path, oid, _mode in entries:
        scan_blob(report, git, path, oid, policy)
    return report

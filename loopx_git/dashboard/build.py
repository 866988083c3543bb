"""``loopx dashboard``: read the state branch at its tip, build each goal's page and data files, scan
them with the public-safety rules, and only then put them in the output folder.

The folder holds ``index.html``, ``dashboard.css``, ``dashboard.js`` (shipped in the package) and
``data/`` (``dashboard.js`` with what the script needs first, ``todos-N.js`` and ``history-NN.js``
loaded when asked: script files, since a page opened from disk may not fetch). With several goals,
each has a folder of its own and ``index.html`` lists them. The output is the same for the same tip
and options: no clock is read.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from loopx_git.errors import RuleError, SafetyError, StoreError, ValidationError, shown_path
from loopx_git.model.record import Record
from loopx_git.model.state import require_goal
from loopx_git.views.dashboard import HISTORY_CHUNKS, RUNS_SHOWN, TRAILER, build
from loopx_git.views.dashboard_model import Site

if TYPE_CHECKING:
    from loopx_git.api import StateRepo

RESULT_SCHEMA: Final = "loopx_dashboard_result_v0"
MARKER: Final = ".loopx-dashboard"
"""Left in every folder this command writes: it replaces only a folder that is empty or holds it."""
ASSETS: Final = ("dashboard.css", "dashboard.js")
_COMMIT_URL = re.compile(r"https?://[^\s\"'<>]+\Z")


class GoalPage(Record):
    goal_id: str
    path: str
    """The page, relative to the output folder."""
    page_bytes: int
    """What a browser loads when the page opens: the HTML, the two assets and ``data/dashboard.js``
    with the first todo chunk."""
    total_bytes: int
    files: int
    events: int
    todos: int


class DashboardResult(Record):
    schema_version: str = RESULT_SCHEMA
    out: str
    tip: str | None
    ref: str
    goals: list[GoalPage]


def check_commit_url(commit_url: str | None) -> None:
    if commit_url is None:
        return
    if not _COMMIT_URL.match(commit_url) or "{commit}" not in commit_url:
        raise ValidationError(
            f"commit_url {shown_path(commit_url, 120)} is not an http(s) URL holding {{commit}}",
            code="invalid-option",
            hint="e.g. --commit-url 'https://github.com/OWNER/REPO/commit/{commit}'",
        )


def write_dashboard(
    repo: StateRepo, goal_ids: list[str] | None, out: Path, *, commit_url: str | None = None
) -> DashboardResult:
    """Build the pages of ``goal_ids`` (None: every goal) into ``out``; nothing is written when any
    file would carry a blocking safety finding."""
    check_commit_url(commit_url)
    _check_out(out)
    tip = repo.tip
    state, read = _state_and_records(repo, tip, goal_ids)
    goals = sorted(state.goals) if goal_ids is None else goal_ids
    for goal_id in goals:
        require_goal(state, goal_id)
    commits = _event_commits(repo, tip)
    tip_time = None
    if tip is not None:
        tip_time = datetime.fromtimestamp(repo.git.commit(tip).time, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    files: dict[str, str] = {}
    pages = []
    nested = goal_ids is None or len(goals) > 1
    for goal_id in goals:
        goal = read.get(goal_id) or _read_goal(repo, tip, goal_id, every_run=False)
        rewarded = {r.run_id for r in state.goals[goal_id].rewards.values() if r.run_id}
        runs = _shown_runs(repo, goal, rewarded)
        site = build(state, goal_id, goal.events, goal.causes, commits, runs, ref=repo.ref, tip=tip, tip_time=tip_time)
        prefix = f"goals/{goal_id}/" if nested else ""  # beside index.html and the stylesheet, whatever the ids
        mine = _site_files(site, commit_url)
        files.update({prefix + name: text for name, text in mine.items()})
        pages.append(_page_summary(goal_id, prefix, mine, len(goal.events), site.dashboard.todo_count))
    if nested:
        files["index.html"] = _goal_index(goals, tip, repo.ref)
        files["dashboard.css"] = _asset("dashboard.css")
        files[MARKER] = f"{tip or ''}\n"
    _scan(files, repo.policy)
    _put(out, files)
    return DashboardResult(out=str(out), tip=tip, ref=repo.ref, goals=pages)


_UNSAFE_NAME = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""Control characters, zero-width and bidirectional marks, and bytes that are not UTF-8 (which
Python hands over as lone surrogates): no folder to publish is named with them, and a terminal
that prints the path would be driven by them."""


def _check_out(out: Path) -> None:
    bad = _UNSAFE_NAME.search(str(out))
    if bad:
        raise ValidationError(
            f"out {shown_path(out, 120)} holds {bad.group()!r}; rule: the folder's path is printable UTF-8 "
            "text, with no control, zero-width or bidirectional characters",
            code="invalid-option",
        )
    try:
        resolved, here, exists, is_dir = out.resolve(), Path.cwd().resolve(), out.exists(), out.is_dir()
    except OSError as exc:  # a name longer than the file system takes, a folder it cannot read
        raise ValidationError(
            f"out {shown_path(out, 120)} cannot be used: {exc.strerror or exc}; rule: the site goes into a "
            "folder this file system can hold",
            code="invalid-option",
            hint="name a shorter path, e.g. --out site",
        ) from exc
    if out.name in ("", ".", "..") or resolved in (here, *here.parents):
        raise ValidationError(
            f"out {shown_path(out)} names no folder of its own (the working folder or one above it); "
            "rule: the site goes into a folder it may replace",
            code="invalid-option",
            hint="name a new folder, e.g. --out site",
        )
    if exists and not is_dir:
        raise ValidationError(f"out {shown_path(out)} is a file", code="invalid-option", hint="name a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise RuleError(
            f"out {shown_path(out)} is a folder this command did not write; it replaces only an empty folder "
            f"or one holding {MARKER}",
            code="not-a-dashboard-folder",
            hint="name a new or empty folder",
        )


def _event_commits(repo: StateRepo, tip: str | None) -> dict[str, str]:
    """Event id -> the commit that wrote it, from the ``Loopx-Event:`` trailers of every commit."""
    commits: dict[str, str] = {}
    if tip is None:
        return commits
    for oid, message in repo.git.commit_messages(tip):
        for m in TRAILER.finditer(message):
            commits.setdefault(m.group(1), oid)
    return commits


@dataclass
class _GoalRecords:
    events: list[Any]
    """As the fold reads them: heads, or whole events of the kinds whose payload it reads."""
    causes: dict[str, tuple[str, str]]
    """Event id -> (relation, the event id it names as its cause)."""
    run_files: list[tuple[str, str]]
    """(path, blob id) of the goal's run records, oldest first."""
    runs: dict[str, Any] = field(default_factory=dict)
    """The run records read so far, by path."""


def _state_and_records(repo: StateRepo, tip: str | None, goal_ids: list[str] | None) -> tuple[Any, dict[str, Any]]:
    """The state at ``tip`` and the records of the goals read for it. With a fold at hand (cached, or
    a few records behind) only the pages' goals are read; without one, every goal is read once and
    folded here — the page needs each event anyway, so a cold build reads the history once, not twice."""
    if tip is None:
        return repo.state(), {}
    state = repo.reader.state_if_cheap(tip)
    if state is not None:
        return state, {}
    tree = repo.git.commit(tip).tree
    read = {goal_id: _read_goal(repo, tip, goal_id, every_run=True) for goal_id in repo.git.list_dir(tree, "goals")}
    events = [e for goal in read.values() for e in goal.events]
    runs = [r for goal in read.values() for r in goal.runs.values()]
    return repo.reader.fold_records(tip, events, runs), read  # kept as the cache, as any cold read's


def _read_goal(repo: StateRepo, tip: str | None, goal_id: str, *, every_run: bool) -> _GoalRecords:
    """One goal's events as the fold reads them, the cause each names (from the whole event, parsed
    only where the bytes hold one and the fold did not read it whole), and its run files (every run
    parsed with ``every_run``, for a fold)."""
    from loopx_git.model.state import PAYLOAD_KINDS
    from loopx_git.store import layout
    from loopx_git.store.records import parse_event, parse_for_fold, parse_run

    events, causes = [], {}
    for path, oid in repo.reader.goal_files(tip, goal_id, "events"):
        data = repo.reader.read_blob(oid)
        head = parse_for_fold(data, path, PAYLOAD_KINDS)
        events.append(head)
        if b'"causality"' in data:
            c = head.causality if hasattr(head, "causality") else parse_event(data, path).causality
            if c is not None and c.source_event_id:
                causes[head.event_id] = ("source_event", c.source_event_id)
            elif c is not None and c.caused_by:
                causes[head.event_id] = ("caused_by", c.caused_by)
    files = sorted(repo.reader.goal_files(tip, goal_id, "runs"), key=lambda f: layout.record_order(f[0]))
    goal = _GoalRecords(events, causes, files)
    if every_run:
        goal.runs = {path: parse_run(repo.reader.read_blob(oid), path) for path, oid in files}
    return goal


def _shown_runs(repo: StateRepo, goal: _GoalRecords, rewarded: set[str]) -> list[Any]:
    """The goal's newest ``RUNS_SHOWN`` run records, and the newest ``RUNS_SHOWN`` older ones a reward names."""
    from loopx_git.store.records import parse_run

    files = goal.run_files
    older = [f for f in files[:-RUNS_SHOWN] if f[0].rsplit("/", 1)[1][:-5] in rewarded]
    chosen = older[-RUNS_SHOWN:] + files[-RUNS_SHOWN:]
    return [goal.runs.get(path) or parse_run(repo.reader.read_blob(oid), path) for path, oid in chosen]


def _js(name: str, value: Any) -> str:
    return f"loopxChunk({json.dumps(name)}, {json.dumps(value, ensure_ascii=False, separators=(',', ':'))});\n"


def _site_files(site: Site, commit_url: str | None) -> dict[str, str]:
    from loopx_git.dashboard.page import page

    d = site.dashboard
    first = {
        "goal_id": d.goal_id,
        "tip": d.tip,
        "todo_count": d.todo_count,
        "todo_chunks": d.todo_chunks,
        "history_chunks": HISTORY_CHUNKS,
        "commit_url": commit_url,
    }
    files = {
        "index.html": page(d, commit_url),
        "data/dashboard.js": "window.LOOPX_DASHBOARD = " + json.dumps(first, ensure_ascii=False) + ";\n",
        MARKER: f"{d.tip or ''}\n",
    }
    for name in ASSETS:
        files[name] = _asset(name)
    for i, chunk in enumerate(site.todo_chunks):
        files[f"data/todos-{i}.js"] = _js(f"todos-{i}", [row.model_dump(mode="json") for row in chunk])
    for name, histories in sorted(site.history_chunks.items()):
        rows = {todo: [r.model_dump(mode="json", exclude_none=True) for r in hist] for todo, hist in histories.items()}
        files[f"data/history-{name}.js"] = _js(f"history-{name}", rows)
    return files


def _page_summary(goal_id: str, prefix: str, files: dict[str, str], events: int, todos: int) -> GoalPage:
    size = {name: len(text.encode()) for name, text in files.items()}
    opened = ("index.html", *ASSETS, "data/dashboard.js", "data/todos-0.js")
    return GoalPage(
        goal_id=goal_id,
        path=prefix + "index.html",
        page_bytes=sum(size.get(name, 0) for name in opened),
        total_bytes=sum(size.values()),
        files=len(files),
        events=events,
        todos=todos,
    )


def _asset(name: str) -> str:
    return resources.files("loopx_git.dashboard").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def _goal_index(goals: list[str], tip: str | None, ref: str) -> str:
    from html import escape
    from urllib.parse import quote

    items = "".join(f'<li><a href="goals/{escape(quote(g))}/index.html">{escape(g)}</a></li>' for g in goals)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>loopx goals</title>'
        '<link rel="stylesheet" href="dashboard.css"></head><body><header><h1>loopx goals</h1>'
        f'<p class="built">built from commit {escape(tip or "none")} of {escape(ref)}</p></header>'
        f'<main><section><ul id="goals">{items}</ul></section></main></body></html>\n'
    )


def _scan(files: dict[str, str], policy: Any) -> None:
    """Every file as it would be written, against the repository's safety rules: a blocking finding
    refuses the whole build (the state branch was scanned when written; this holds the generator
    and its assets to the same rule). The value itself is never echoed."""
    from loopx_git.safety.scan import scan

    for name, text in sorted(files.items()):
        # no path: the allowed_paths globs of the repository's own files must not exempt these
        blocking = [f for f in scan(text, policy, path=None, inline=False) if f.blocks]
        if blocking:
            first = blocking[0]
            more = f" (and {len(blocking) - 1} more)" if len(blocking) > 1 else ""
            raise SafetyError(
                f"dashboard file {name} line {first.line}: {first.rule} fp={first.fingerprint}{more}; "
                "rule: a dashboard holds nothing the public-safety rules block; nothing was written",
                hint="fix the record on the state branch (loopx verify names it), or allowlist a false positive "
                "by its fingerprint in .publicsafe-allow",
            )


def _put(out: Path, files: dict[str, str]) -> None:
    """Write everything beside ``out``, then swap it in: a reader sees the old site or the new one.
    The old one is moved into a fresh hidden folder (never one of the user's) and put back if the
    new one cannot take its place."""
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".loopx-dashboard-", dir=out.parent))
    except OSError as exc:
        raise _unwritable(out, exc) from exc
    umask = os.umask(0)
    os.umask(umask)
    staging.chmod(0o777 & ~umask)  # a folder to publish, not mkdtemp's private 0700
    retired = None
    try:
        for name, text in files.items():
            path = staging / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if out.exists():
            retired = Path(tempfile.mkdtemp(prefix=".loopx-dashboard-old-", dir=out.parent))
            out.rename(retired / "site")
            try:
                staging.rename(out)
            except OSError:
                (retired / "site").rename(out)
                raise
        else:
            staging.rename(out)
    except OSError as exc:
        raise _unwritable(out, exc) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)


def _unwritable(out: Path, exc: OSError) -> StoreError:
    return StoreError(
        f"out {shown_path(out)} could not be written: {exc.strerror or exc}; nothing was changed there",
        code="unwritable",
        hint="name a folder you can write to, on a file system with room",
    )

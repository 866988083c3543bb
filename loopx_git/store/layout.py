"""Where every record and document lives on the state branch."""

from __future__ import annotations

import re

DEFAULT_STATE_REF = "refs/heads/loopx/state"
ROOT_DOCUMENT = "loopx.yaml"
LAYOUT_VERSION = 1

MAX_BLOB_BYTES = 1 << 20
"""No file on the state branch is larger: records hold short fields (4 KiB each by default) and
documents are renderings of one entity. A bigger blob is an attack or an accident, never state."""
REGULAR_FILE = 0o100644
"""The one mode loopx writes: no executables, symlinks or submodule links on the state branch."""

_ID = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}"  # model.ids.ID_PATTERN, kept here so hooks load no pydantic
EVENT_PATH_RE = re.compile(
    rf"goals/(?P<goal>{_ID})/events/(?P<y>\d{{4}})/(?P<m>\d{{2}})/(?P<d>\d{{2}})/(?P<h>\d{{2}})/(?P<id>{_ID})\.json\Z"
)
RUN_PATH_RE = re.compile(
    rf"goals/(?P<goal>{_ID})/runs/(?P<y>\d{{4}})/(?P<m>\d{{2}})/(?P<d>\d{{2}})/(?P<id>{_ID})\.json\Z"
)


_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def ref_name_problem(ref: str) -> str | None:
    """Why ``ref`` is not a name git accepts (the rules of ``git check-ref-format``), or None.
    Pure Python: the hooks check names without loading the git library."""
    bad = _REF_FORBIDDEN.search(ref)
    if bad:
        return f"holds {bad.group()!r} (no spaces, control characters or any of ~ ^ : ? * [ \\)"
    for sequence in ("..", "@{", "//"):
        if sequence in ref:
            return f"holds {sequence!r}"
    if ref == "@" or ref.endswith((".", "/")):
        return "ends with '.' or '/', or is '@'"
    for part in ref.split("/"):
        if part.startswith(".") or part.endswith(".lock"):
            return f"has a component {part!r} that starts with '.' or ends with '.lock'"
    return None


def state_ref(branch: str, *, field: str = "state_branch") -> str:
    """The full ref of a state branch name (``loopx/state`` -> ``refs/heads/loopx/state``); a name
    git would refuse is refused here, before anything is written."""
    from loopx_git.errors import ValidationError

    ref = branch if branch.startswith("refs/") else f"refs/heads/{branch}"
    problem = "is empty" if not branch or branch in ("refs/", "refs/heads/") else ref_name_problem(ref)
    if problem is None and ref.rsplit("/", 1)[-1] == "HEAD":
        problem = "is HEAD, which git keeps for the checked-out commit"
    if problem is None and not branch.isascii():
        try:
            branch.encode("utf-8")
        except UnicodeEncodeError:  # bytes of another encoding on the command line
            problem = "is not UTF-8 text"
    if problem is not None:
        raise ValidationError(
            f"field '{field}': {branch!r} is not a valid git branch name: it {problem}",
            code="invalid-field",
            hint="a branch name as `git check-ref-format --branch` accepts it, e.g. loopx/state",
        )
    return ref


def goal_dir(goal_id: str) -> str:
    return f"goals/{goal_id}"


def event_path(goal_id: str, event_id: str, recorded_at: str) -> str:
    """``goals/<goal>/events/YYYY/MM/DD/HH/<event-id>.json``: an hour shard keeps every tree small,
    so an append rebuilds a handful of small trees whatever the history's length."""
    y, m, d, h = recorded_at[0:4], recorded_at[5:7], recorded_at[8:10], recorded_at[11:13]
    return f"goals/{goal_id}/events/{y}/{m}/{d}/{h}/{event_id}.json"


def run_path(goal_id: str, run_id: str, generated_at: str) -> str:
    y, m, d = generated_at[0:4], generated_at[5:7], generated_at[8:10]
    return f"goals/{goal_id}/runs/{y}/{m}/{d}/{run_id}.json"


def goal_document(goal_id: str) -> str:
    return f"goals/{goal_id}/goal.yaml"


def todo_document(goal_id: str, todo_id: str) -> str:
    return f"goals/{goal_id}/todos/{todo_id}.yaml"


def suggested_document(goal_id: str, todo_id: str) -> str:
    return f"goals/{goal_id}/suggested/{todo_id}.yaml"


def agent_document(goal_id: str, agent_id: str) -> str:
    return f"goals/{goal_id}/agents/{agent_id}.yaml"


def ledger_document(goal_id: str, entry_id: str) -> str:
    return f"goals/{goal_id}/ledger/{entry_id}.yaml"


def rollback_document(goal_id: str, packet_id: str) -> str:
    return f"goals/{goal_id}/rollbacks/{packet_id}.yaml"


def is_record(path: str) -> bool:
    """Append-only files: never changed or deleted once committed."""
    return bool(EVENT_PATH_RE.match(path) or RUN_PATH_RE.match(path))


def is_defined(path: str) -> bool:
    """Whether the layout has a place for ``path``: the root document, a goal's documents, its
    event and run records. Anything else on the state branch is a stray."""
    return is_record(path) or document_entity(path) is not None


def hostile_component(path: str) -> str | None:
    """A path component git's fsck refuses (``..``, ``.``, an empty name, ``.git`` in any case and
    the spellings Windows and macOS file systems read as it: trailing dots or spaces, ``git~1``),
    or None."""
    return next(
        (part for part in path.split("/") if part in ("", ".", "..") or part.lower().rstrip(". ") in (".git", "git~1")),
        None,
    )


def is_document(path: str) -> bool:
    return path == ROOT_DOCUMENT or (path.startswith("goals/") and path.endswith(".yaml"))


def record_kind(path: str) -> str | None:
    if EVENT_PATH_RE.match(path):
        return "event"
    if RUN_PATH_RE.match(path):
        return "run"
    return None


_DOCUMENT_RE = re.compile(
    rf"goals/(?P<goal>{_ID})/(?:(?P<goal_doc>goal)|(?P<folder>todos|suggested|agents|rollbacks|ledger)/(?P<id>{_ID}))\.yaml\Z"
)
_FOLDER_KIND = {
    "todos": "todo",
    "suggested": "suggested",
    "agents": "agent",
    "rollbacks": "rollback",
    "ledger": "ledger",
}


def document_entity(path: str) -> tuple[str, str, str] | None:
    """The entity (kind, goal id, id) a document path renders, or None for any other path."""
    if path == ROOT_DOCUMENT:
        return ("root", "", "")
    m = _DOCUMENT_RE.match(path)
    if m is None:
        return None
    if m.group("goal_doc"):
        return ("goal", m.group("goal"), m.group("goal"))
    return (_FOLDER_KIND[m.group("folder")], m.group("goal"), m.group("id"))

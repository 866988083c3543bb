"""Where every record and document lives on the state branch."""
from __future__ import annotations

import re
from typing import Optional

DEFAULT_STATE_REF = "refs/heads/loopx/state"
ROOT_DOCUMENT = "loopx.yaml"
LAYOUT_VERSION = 1

EVENT_PATH_RE = re.compile(
    r"^goals/(?P<goal>[^/]+)/events/(?P<y>\d{4})/(?P<m>\d{2})/(?P<d>\d{2})/(?P<h>\d{2})/(?P<id>[^/]+)\.json$"
)
RUN_PATH_RE = re.compile(r"^goals/(?P<goal>[^/]+)/runs/(?P<y>\d{4})/(?P<m>\d{2})/(?P<d>\d{2})/(?P<id>[^/]+)\.json$")


def state_ref(branch: str) -> str:
    return branch if branch.startswith("refs/") else f"refs/heads/{branch}"


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


def is_document(path: str) -> bool:
    return path == ROOT_DOCUMENT or (path.startswith("goals/") and path.endswith(".yaml"))


def record_kind(path: str) -> Optional[str]:
    if EVENT_PATH_RE.match(path):
        return "event"
    if RUN_PATH_RE.match(path):
        return "run"
    return None


_DOCUMENT_RE = re.compile(r"^goals/(?P<goal>[^/]+)/(?:(?P<goal_doc>goal)|(?P<folder>todos|suggested|agents|rollbacks|ledger)/(?P<id>[^/]+))\.yaml$")
_FOLDER_KIND = {"todos": "todo", "suggested": "suggested", "agents": "agent", "rollbacks": "rollback", "ledger": "ledger"}


def document_entity(path: str) -> Optional[tuple[str, str, str]]:
    """The entity (kind, goal id, id) a document path renders, or None for any other path."""
    if path == ROOT_DOCUMENT:
        return ("root", "", "")
    m = _DOCUMENT_RE.match(path)
    if m is None:
        return None
    if m.group("goal_doc"):
        return ("goal", m.group("goal"), m.group("goal"))
    return (_FOLDER_KIND[m.group("folder")], m.group("goal"), m.group("id"))

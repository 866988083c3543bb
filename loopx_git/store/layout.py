"""Where every record and document lives on the state branch."""

from __future__ import annotations

import re

DEFAULT_STATE_REF = "refs/heads/loopx/state"
ROOT_DOCUMENT = "loopx.yaml"
LAYOUT_VERSION = 3
"""The layout new writes use, and what ``layout_version`` in loopx.yaml says once this loopx has
written to a branch. Each layout bounds what one write rewrites, whatever the history's length:

- layout 1 put every event of an hour in one tree (``.../HH/<id>.json``), which each append
  rewrote: bytes per append grew with the events of that hour (330 KB per append after 10k in one
  hour);
- layout 2 adds two bucket levels under the hour, the last and second-to-last characters of the
  event id (``.../HH/<last>/<second-to-last>/<id>.json``): a ULID's low-order characters are
  random, so no tree of the spine has more than 37 entries and a leaf holds about N/1024 of the
  hour's N events. Documents stayed in one folder per kind (``todos/<id>.yaml``), which a write of
  one todo rewrote whole: 2.4 MB at 30k todos;
- layout 3 splits each document folder in two bucket levels too, by a hash of the id (people
  choose todo ids, so their last characters are not random): ``todos/<h1>/<h2>/<id>.yaml``; its
  events are where layout 2 put them.

A branch may hold events of layouts 1 and 2: records never move, so events written in layout 1 stay
where they are, and every new event goes to its layout-2 path. loopx.yaml says 1 only while every
event sits at its layout-1 path. Documents are derived, so they do move: the first commit this loopx
writes on a branch saying 1 or 2 moves every document to its layout-3 path and says 3."""
LAYOUTS = (1, 2, 3)
RECORD_LAYOUTS = (1, 2)
"""The two shapes of an event record's path; layout 3 writes events at layout-2 paths."""
WRITE_LAYOUT = LAYOUT_VERSION
"""The layout this loopx writes in. Always ``LAYOUT_VERSION``, except to rebuild a branch as an
older loopx wrote it (tests of old branches, the benchmarks' baselines)."""
BUCKETED_DOCUMENTS = 3
"""The first layout with documents in bucket folders."""

MAX_BLOB_BYTES = 1 << 20
"""No file on the state branch is larger: records hold short fields (4 KiB each by default) and
documents are renderings of one entity. A bigger blob is an attack or an accident, never state."""
REGULAR_FILE = 0o100644
"""The one mode loopx writes: no executables, symlinks or submodule links on the state branch."""

_ID = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}"  # model.ids.ID_PATTERN, kept here so hooks load no pydantic
_BUCKET = "[0-9a-z_]"
EVENT_PATH_RE = re.compile(
    rf"goals/(?P<goal>{_ID})/events/(?P<y>\d{{4}})/(?P<m>\d{{2}})/(?P<d>\d{{2}})/(?P<h>\d{{2}})/"
    rf"(?:(?P<b1>{_BUCKET})/(?P<b2>{_BUCKET})/)?(?P<id>{_ID})\.json\Z"
)
"""An event record of either layout: with the two bucket levels (layout 2) or without (layout 1).
The shape only; that the buckets and the hour fit the event is checked against its content."""
RUN_PATH_RE = re.compile(
    rf"goals/(?P<goal>{_ID})/runs/(?P<y>\d{{4}})/(?P<m>\d{{2}})/(?P<d>\d{{2}})/(?P<id>{_ID})\.json\Z"
)


MAX_REF_CHARS = 255
"""The longest state ref loopx takes (as long as a file name may be on most file systems)."""
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
    if not branch or branch in ("refs/", "refs/heads/"):
        problem: str | None = "is empty"
    elif len(ref) > MAX_REF_CHARS:  # past 1024 bytes the git library fails on the name itself
        problem = f"is {len(ref)} characters long (at most {MAX_REF_CHARS} with refs/heads/)"
    else:
        problem = ref_name_problem(ref)
    if problem is None and ref.rsplit("/", 1)[-1] == "HEAD":
        problem = "is HEAD, which git keeps for the checked-out commit"
    if problem is None and not branch.isascii():
        try:
            branch.encode("utf-8")
        except UnicodeEncodeError:  # bytes of another encoding on the command line
            problem = "is not UTF-8 text"
    if problem is not None:
        raise ValidationError(
            f"field '{field}': {branch[:200]!r}{'...' if len(branch) > 200 else ''} is not a valid git branch "
            f"name: it {problem}",
            code="invalid-field",
            hint="a branch name as `git check-ref-format --branch` accepts it, e.g. loopx/state",
        )
    return ref


def goal_dir(goal_id: str) -> str:
    return f"goals/{goal_id}"


def _bucket(char: str) -> str:
    # ids may hold '.', ':', '-' or capitals (records from elsewhere): a bucket is never '.' (a name
    # git's fsck refuses) and never differs from another only in case
    return char.lower() if char.isascii() and char.isalnum() else "_"


def event_buckets(event_id: str) -> str:
    """``<last>/<second-to-last>`` character of an event id: the random end of a ULID, so events
    spread evenly over 32 x 32 leaves whatever the write rate."""
    return f"{_bucket(event_id[-1])}/{_bucket(event_id[-2] if len(event_id) > 1 else '_')}"


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def document_buckets(entity_id: str) -> str:
    """Two base32 characters of the SHA-1 of an entity id: documents spread evenly over 32 x 32
    leaves whatever their ids look like. Unlike event ids, these are often chosen by people
    (``t1``, ``t2``, ... or ``release``), whose last characters would crowd a few leaves."""
    import hashlib  # here, not at the top: the hooks import this module and never place a document

    digest = hashlib.sha1(entity_id.encode("utf-8")).digest()
    return f"{_CROCKFORD[digest[0] & 31]}/{_CROCKFORD[digest[1] & 31]}"


def event_path(goal_id: str, event_id: str, recorded_at: str, version: int | None = None) -> str:
    """Where a new event is written (``version``: ``WRITE_LAYOUT`` unless given). Layout 2:
    ``goals/<goal>/events/YYYY/MM/DD/HH/<b1>/<b2>/<event-id>.json``, the hour shard split by the
    id's last two characters, so an append rebuilds a fixed handful of small trees whatever the
    history's length and the write rate. Layout 1: ``.../HH/<event-id>.json``."""
    y, m, d, h = recorded_at[0:4], recorded_at[5:7], recorded_at[8:10], recorded_at[11:13]
    shard = f"goals/{goal_id}/events/{y}/{m}/{d}/{h}"
    if (WRITE_LAYOUT if version is None else version) == 1:
        return f"{shard}/{event_id}.json"
    return f"{shard}/{event_buckets(event_id)}/{event_id}.json"


def event_paths(goal_id: str, event_id: str, recorded_at: str) -> tuple[str, ...]:
    """Every path the event may be stored at, one per record layout, newest first: what a record's
    content allows (a reader finds it at exactly one of them)."""
    return tuple(event_path(goal_id, event_id, recorded_at, version) for version in reversed(RECORD_LAYOUTS))


def event_layout(path: str) -> int | None:
    """The layout of an event record's path (1 or 2), or None for any other path."""
    m = EVENT_PATH_RE.match(path)
    if m is None:
        return None
    return 1 if m.group("b1") is None else 2


def record_order(path: str) -> str:
    """A sort key putting record files in the order layout 1's trees kept them, whatever the
    layout of each: by hour shard, then by file name (the id: time order for ULIDs). Tree order
    in layout 2 is bucket order, which is random."""
    m = EVENT_PATH_RE.match(path)
    if m is None or m.group("b1") is None:
        return path
    return path[: m.start("b1")] + path[m.end("b2") + 1 :]


_DECLARED_RE = re.compile(rb"^layout_version: (\d{1,6})$", re.MULTILINE)


def declared_layout(root_document: bytes) -> int | None:
    """The ``layout_version`` loopx.yaml says (read without a YAML parser: the hooks load none),
    or None when it says none."""
    m = _DECLARED_RE.search(root_document)
    return int(m.group(1)) if m else None


def with_layout(root_document: bytes, version: int) -> bytes:
    """loopx.yaml saying ``version``, the rest as it was (the line is the one ``root_document``
    renders, so this equals a fresh rendering of the same goals)."""
    return _DECLARED_RE.sub(b"layout_version: %d" % version, root_document, count=1)


def run_path(goal_id: str, run_id: str, generated_at: str) -> str:
    y, m, d = generated_at[0:4], generated_at[5:7], generated_at[8:10]
    return f"goals/{goal_id}/runs/{y}/{m}/{d}/{run_id}.json"


def goal_document(goal_id: str) -> str:
    return f"goals/{goal_id}/goal.yaml"


DOCUMENT_FOLDERS = {
    "agent": "agents",
    "todo": "todos",
    "suggested": "suggested",
    "ledger": "ledger",
    "rollback": "rollbacks",
    "gate": "gates",
    "handoff": "handoffs",
    "reward": "rewards",
    "explore": "explore",
}
"""The folder of a goal that holds one document per entity of a kind."""
_FOLDER_KIND = {folder: kind for kind, folder in DOCUMENT_FOLDERS.items()}


def entity_document(kind: str, goal_id: str, entity_id: str, version: int | None = None) -> str:
    """Where the document of one entity of a goal lives (``kind`` a key of ``DOCUMENT_FOLDERS``;
    ``version``: ``WRITE_LAYOUT`` unless given). Layout 3: ``goals/<goal>/<folder>/<b1>/<b2>/<id>.yaml``
    (``document_buckets``), so writing one document rebuilds a few small trees whatever the number
    of its kind; layouts 1 and 2: ``goals/<goal>/<folder>/<id>.yaml``."""
    folder = f"goals/{goal_id}/{DOCUMENT_FOLDERS[kind]}"
    if not buckets_documents(WRITE_LAYOUT if version is None else version):
        return f"{folder}/{entity_id}.yaml"
    return f"{folder}/{document_buckets(entity_id)}/{entity_id}.yaml"


def document_path(kind: str, goal_id: str, entity_id: str, version: int | None = None) -> str:
    """Where the document of any entity lives (``kind`` as ``document_entity`` gives it: ``root``,
    ``goal`` or a key of ``DOCUMENT_FOLDERS``)."""
    if kind == "root":
        return ROOT_DOCUMENT
    if kind == "goal":
        return goal_document(goal_id)
    return entity_document(kind, goal_id, entity_id, version)


def buckets_documents(version: int) -> bool:
    """Whether a branch of layout ``version`` keeps its documents in bucket folders."""
    return version >= BUCKETED_DOCUMENTS


def todo_document(goal_id: str, todo_id: str, version: int | None = None) -> str:
    return entity_document("todo", goal_id, todo_id, version)


def may_hold_records(folder: str) -> bool:
    """Whether a folder (``goals/g1/``, ``goals/g1/events/2026/``) may hold records: the goals, a
    goal's folder, its events and runs. A diff of records never needs to look into the documents."""
    parts = folder.rstrip("/").split("/")
    if parts[0] != "goals":
        return False
    return len(parts) <= 2 or parts[2] in ("events", "runs")


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
    rf"goals/(?P<goal>{_ID})/(?:(?P<goal_doc>goal)|(?P<folder>{'|'.join(DOCUMENT_FOLDERS.values())})/"
    rf"(?:(?P<b1>{_BUCKET})/(?P<b2>{_BUCKET})/)?(?P<id>{_ID}))\.yaml\Z"
)
"""A document of either shape: in its folder (layouts 1 and 2) or two bucket levels down (layout 3).
The shape only; that the path is the one its entity's document has is checked against the fold."""


def document_entity(path: str) -> tuple[str, str, str] | None:
    """The entity (kind, goal id, id) a document path of either shape renders, or None for any
    other path."""
    if path == ROOT_DOCUMENT:
        return ("root", "", "")
    m = _DOCUMENT_RE.match(path)
    if m is None:
        return None
    if m.group("goal_doc"):
        return ("goal", m.group("goal"), m.group("goal"))
    return (_FOLDER_KIND[m.group("folder")], m.group("goal"), m.group("id"))

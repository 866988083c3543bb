"""The evidence index kept between commands (loopx_git/evidence.py): extended by the runs a new tip
added, rebuilt whenever that would not be exact, and never a source of truth — every answer is the one
a build from scratch gives, byte for byte, on real repositories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

import loopx_git
from loopx_git.app.core import code_stamp
from loopx_git.evidence import SAVE_AFTER, EvidenceIndexes
from loopx_git.views.evidence_index import EvidenceIndex
from tests.conftest import GOAL, git, state_tip

UNCHANGED = {"progress_result_class": "unchanged", "progress_surface_id": "auth", "progress_evidence_ids": ["ci-1"]}
T = "2026-03-01T{:02d}:{:02d}:00Z"


def _at(n: int) -> str:
    return T.format(10 + n // 60, n % 60)


def _cycle(repo, n: int, at: int, action: str = "probe") -> None:
    """A semantic delta of alice's (a new surface: it settles the open obligation), then the same
    unchanged observation twice on that surface: a new obligation opens."""
    surface = {"progress_surface_id": f"s{n}", "progress_evidence_ids": ["ci-1"]}
    frontier = repo.state().goals[GOAL].frontiers.get("alice")
    settles = {"replan_obligation_id": frontier.open.obligation_id} if frontier and frontier.open else {}
    repo.refresh_state(
        GOAL, "probe", agent_id="alice", now=_at(at), progress_result_class="advanced", **surface, **settles
    )
    for k in (1, 2):
        repo.refresh_state(
            GOAL,
            "probe",
            agent_id="alice",
            recommended_action=action,
            now=_at(at + k),
            progress_result_class="unchanged",
            **surface,
        )


def _kept_files(path) -> list:
    return sorted((path / ".git" / "loopx").glob("evidence-*.pickle"))


def _ask(path, agent: str = "alice") -> str:
    """should-run's JSON from a new process's view: a new StateRepo, the kept files it finds."""
    with loopx_git.open(path) as repo:
        return json.dumps(repo.should_run(GOAL, agent).model_dump(mode="json"), sort_keys=True)


def _fresh(path, agent: str = "alice") -> str:
    """The same with nothing kept: the index built from all of the agent's runs."""
    shutil.rmtree(path / ".git" / "loopx", ignore_errors=True)
    return _ask(path, agent)


@pytest.fixture
def stalled(repo, git_repo):
    for n in range(2):
        repo.refresh_state(GOAL, "probe", agent_id="alice", recommended_action=f"try {n}", now=_at(n), **UNCHANGED)
    first = _ask(git_repo)
    assert json.loads(first)["decision"] == "replan_required"
    assert len(_kept_files(git_repo)) == 1  # kept for the next command
    return repo, git_repo


def test_a_kept_index_answers_as_a_fresh_build_after_each_write(stalled):
    repo, path = stalled
    for n in range(1, 6):  # the agent's runs, another agent's, and notes: each a new tip
        repo.refresh_state(GOAL, "probe", agent_id="bob", recommended_action="bob's", now=_at(5 * n))
        repo.event_append(GOAL, "note", summary=f"note {n}", now=_at(5 * n))
        _cycle(repo, n, 5 * n + 1, action=f"try {n % 2}")
        kept = _ask(path)
        assert json.loads(kept)["decision"] == "replan_required"
        assert kept == _fresh(path)
        _ask(path)  # leave an index kept at this tip for the next round


def test_extension_looks_only_at_what_the_tip_added_and_refuses_what_is_not_an_append(stalled):
    repo, _ = stalled
    indexes = EvidenceIndexes(repo.git, repo.reader, repo.ref, code_stamp())
    old_tip = repo.tip
    kept = (old_tip, indexes.at(old_tip, GOAL, "alice").index)
    _cycle(repo, 1, 30)
    tip = repo.tip
    tree = repo.git.commit(tip).tree
    extended = indexes._extended(kept, tree, GOAL, "alice")
    assert extended is not None
    index, added, examined = extended
    assert (added, examined) == (3, 3) and index.runs == 5 and index.last[0] == _at(32)
    # a run of the agent that sorts before the ones indexed: only a rebuild is exact
    stale = (old_tip, EvidenceIndex.of(GOAL, "alice", [_run_like(repo, _at(40))]))
    assert indexes._extended(stale, tree, GOAL, "alice") is None


def _run_like(repo, at: str):
    from loopx_git.model.run import RunRecord

    return RunRecord(run_id="run-later", generated_at=at, goal_id=GOAL, agent_id="alice", classification="probe")


def test_a_run_written_with_an_earlier_time_rebuilds(stalled):
    repo, path = stalled
    _cycle(repo, 1, 50)
    _ask(path)
    obligation = repo.state().goals[GOAL].frontiers["alice"].open.obligation_id
    repo.refresh_state(  # a delta, back-dated: it sorts before the runs indexed
        GOAL,
        "probe",
        agent_id="alice",
        recommended_action="back-dated",
        now=_at(5),
        progress_result_class="advanced",
        progress_surface_id="s-early",
        replan_obligation_id=obligation,
    )
    answer = _ask(path)
    assert json.loads(answer)["decision"] == "replan_required"  # in time order it settled nothing
    assert "back-dated" in answer and answer == _fresh(path)


def test_a_branch_reset_under_the_kept_tip_answers_as_a_fresh_build(stalled):
    repo, path = stalled
    base = state_tip(path)
    _cycle(repo, 1, 3, action="on one line")
    _ask(path)  # kept at a tip the branch is about to leave
    subprocess.run(["git", "-C", str(path), "update-ref", "refs/heads/loopx/state", base], check=True)
    _cycle(repo, 2, 3, action="on another")
    assert _ask(path) == _fresh(path)


def test_a_descendant_that_changed_a_run_file_rebuilds(stalled):
    """Records are append-only, but a branch can be damaged: a later commit that rewrites a run the
    index holds must not leave the index counting what the file no longer says."""
    _, path = stalled
    assert len(json.loads(_ask(path))["replan_context"]["evidence"]) == 2  # "try 0", then "try 1"
    runs = sorted(p for p in git(path, "ls-tree", "-r", "--name-only", "loopx/state").split() if "/runs/" in p)
    first = runs[0]
    record = json.loads(git(path, "show", f"loopx/state:{first}"))
    assert record["recommended_action"] == "try 0"
    record["recommended_action"] = "try 1"  # now the same observation as the later run
    blob = subprocess.run(
        ["git", "-C", str(path), "hash-object", "-w", "--stdin"],
        input=json.dumps(record, indent=2, sort_keys=True) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    _commit_tree_change(path, "change", first, blob)
    answer = _ask(path)
    [row] = json.loads(answer)["replan_context"]["evidence"]  # collapsed: one observation, twice
    assert row["count"] == 2 and row["recommended_action"] == "try 1"
    assert answer == _fresh(path)


def test_a_descendant_that_removed_a_run_the_context_does_not_show_rebuilds(stalled):
    repo, path = stalled
    for n in range(1, 14):  # 26 more observations: the oldest ones are left out of the context
        _cycle(repo, n, 3 * n)
    context = json.loads(_ask(path))["replan_context"]
    assert "try 0" not in [r["recommended_action"] for r in context["evidence"]]
    oldest = min(p for p in git(path, "ls-tree", "-r", "--name-only", "loopx/state").split() if "/runs/" in p)
    assert json.loads(git(path, "show", f"loopx/state:{oldest}"))["recommended_action"] == "try 0"
    _commit_tree_change(path, "rm", oldest)
    answer = json.loads(_ask(path))["replan_context"]
    assert answer["omitted"]["rows"] == context["omitted"]["rows"] - 1  # it is gone from the counts too
    assert json.dumps(answer, sort_keys=True) == json.dumps(json.loads(_fresh(path))["replan_context"], sort_keys=True)


def _commit_tree_change(path, what: str, file: str, blob: str | None = None) -> None:
    """A commit on the state branch that removes ``file`` or points it at ``blob``, made with git's
    plumbing through a scratch index: a damaged branch, as loopx would never write it."""
    env = {**os.environ, "GIT_INDEX_FILE": str(path / ".git" / "test-index")}

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(path), *args], env=env, capture_output=True, text=True, check=True
        ).stdout

    run("read-tree", "loopx/state")
    if what == "rm":
        run("update-index", "--force-remove", file)
    else:
        run("update-index", "--cacheinfo", f"100644,{blob},{file}")
    commit = run("commit-tree", run("write-tree").strip(), "-p", "loopx/state", "-m", f"{what} {file}").strip()
    run("update-ref", "refs/heads/loopx/state", commit)


def test_a_damaged_or_foreign_kept_file_is_only_a_slower_read(stalled):
    repo, path = stalled
    _cycle(repo, 1, 3)
    [kept] = _kept_files(path)
    kept.write_bytes(b"not a pickle")
    assert _ask(path) == _fresh(path)
    # bob's kept index under alice's name: not used for alice
    repo.refresh_state(GOAL, "probe", agent_id="bob", recommended_action="b", now=_at(4), **UNCHANGED)
    repo.refresh_state(GOAL, "probe", agent_id="bob", recommended_action="b", now=_at(5), **UNCHANGED)
    _ask(path, "bob")
    indexes = EvidenceIndexes(repo.git, repo.reader, repo.ref, code_stamp())
    shutil.copyfile(indexes._cache(GOAL, "bob").path, indexes._cache(GOAL, "alice").path)
    repo.event_append(GOAL, "note", summary="a new tip", now=_at(6))
    assert _ask(path) == _fresh(path)


def test_a_kept_index_naming_runs_the_branch_lacks_is_rebuilt(stalled):
    repo, path = stalled
    repo.event_append(GOAL, "note", summary="a new tip", now=_at(3))
    tip = repo.tip
    ghost = EvidenceIndex.of(GOAL, "alice", [_run_like(repo, _at(4))])  # a run that is on no branch
    indexes = EvidenceIndexes(repo.git, repo.reader, repo.ref, code_stamp())
    indexes._cache(GOAL, "alice").save(tip, ghost)
    answer = _ask(path)
    assert "run-later" not in answer
    assert answer == _fresh(path)


def test_the_kept_file_moves_when_the_agent_wrote_or_many_other_runs_piled_up(stalled):
    repo, path = stalled
    kept = EvidenceIndexes(repo.git, repo.reader, repo.ref, code_stamp())._cache(GOAL, "alice")
    saved_at = kept.load()[0]
    repo.refresh_state(GOAL, "probe", agent_id="bob", now=_at(3))
    assert _ask(path) == _fresh(path)
    _ask(path)
    saved_at = kept.load()[0]
    repo.refresh_state(GOAL, "probe", agent_id="bob", now=_at(4))
    _ask(path)
    assert kept.load()[0] == saved_at  # one run of another agent: looked at again next time, not saved
    for n in range(SAVE_AFTER):  # unattributed runs: in the diff, never in alice's index
        repo.refresh_state(GOAL, "probe", now=_at(5 + n))
    answer = _ask(path)
    assert kept.load()[0] == state_tip(path)  # many: saved at the tip
    assert answer == _fresh(path)
    _ask(path)
    _cycle(repo, 1, 40)
    _ask(path)
    assert kept.load()[0] == state_tip(path)  # the agent's own runs: saved at once

"""``loopx demo``: a scripted walk through a temporary repository, printed as it goes."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from loopx_git.cli import render
from loopx_git.cli.status import show_card

GOAL = "demo-parser"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _step(title: str) -> None:
    render.line("")
    render.line(f"== {title}", style="bold cyan")


def _race(path: Path) -> dict:
    """Two agents, two independent handles on the repository, claiming one todo at the same instant."""
    from loopx_git.api import StateRepo
    from loopx_git.errors import LoopxError

    outcome: dict = {}
    start = threading.Barrier(2)

    def claim(agent: str) -> None:
        repo = StateRepo.open(path)
        start.wait()
        try:
            repo.todo_claim(GOAL, "todo-parser", agent)
            outcome[agent] = "won"
        except LoopxError as exc:
            outcome[agent] = f"refused: {exc.message}"

    threads = [threading.Thread(target=claim, args=(a,)) for a in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outcome


def _safety(path: Path, repo) -> None:
    """A token in a note is refused (or redacted on request); a token in a commit is refused by the hook."""
    from loopx_git.api import StateRepo
    from loopx_git.errors import LoopxError

    token = "gh" + "p_" + "Demo0nly0N0tARealT0ken0aB3dE5fG7hJ9k"  # assembled: a fake, for the demo only
    _step("public safety: a token in a note is refused, nothing is written")
    try:
        repo.event_append(GOAL, "note", summary=f"deploy with {token}")
    except LoopxError as exc:
        render.line(f"refused: {exc.message}")
    written = StateRepo.open(path, redact=True).event_append(GOAL, "note", summary=f"deploy with {token}")
    render.line(f"with --redact the note says: {written.record.summary}")

    _step("hooks: connect installs them; a commit holding the token is refused")
    for name, did in repo.connect_worktree().hooks.items():
        render.line(f"{name} hook: {did}")
    (path / "settings.py").write_text(f"GITHUB_TOKEN = '{token}'\n")
    _git(path, "add", "settings.py")
    refused = subprocess.run(["git", "-C", str(path), "commit", "-m", "add settings"], capture_output=True, text=True)
    render.line(f"git commit exited {refused.returncode}:")
    for line in refused.stderr.splitlines()[:2]:
        render.line(f"  {line}")
    _git(path, "rm", "-q", "--cached", "settings.py")
    (path / "settings.py").unlink()


def run_demo(*, keep: bool = False) -> int:
    from loopx_git.api import StateRepo

    path = Path(tempfile.mkdtemp(prefix="loopx-demo-"))
    try:
        _git(path, "init", "-q")
        _git(path, "config", "user.name", "loopx demo")
        _git(path, "config", "user.email", "demo@example.invalid")
        _git(path, "commit", "-q", "--allow-empty", "-m", "project start")
        repo = StateRepo.open(path)

        _step("connect: create the state branch and a goal")
        repo.connect()
        repo.goal_create(GOAL, "Ship a streaming JSON parser", acceptance_criteria=["the test suite passes"])
        render.line(f"state branch {repo.ref}; goal {GOAL}")

        _step("two agents register")
        repo.agent_register(GOAL, "alice", lane="core")
        repo.agent_register(GOAL, "bob", lane="docs")
        render.line("alice (lane core), bob (lane docs)")

        _step("todos: one runnable, one waiting for it, one waiting for a PR, one for the user")
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="todo-parser", priority="P1")
        repo.todo_add(GOAL, "Document the tokenizer API", todo_id="todo-docs", resume_when="todo_done:todo-parser")
        repo.todo_add(
            GOAL,
            "Announce the release",
            todo_id="todo-release",
            resume_when="pr_merged:#7",
            task_repository="example/parser",
        )
        repo.todo_add(GOAL, "Approve the release plan", todo_id="todo-approve", role="user", task_class="user_gate")
        for todo in repo.todos(GOAL):
            render.line(
                f"{todo.todo_id:14} {todo.status:9} {todo.text}"
                + (f"  [{todo.resume_when}]" if todo.resume_when else "")
            )

        _step("claim race: alice and bob claim todo-parser at the same instant")
        outcome = _race(path)
        for agent, said in sorted(outcome.items()):
            render.line(f"{agent}: {said}")
        winner = next(a for a, said in outcome.items() if said == "won")

        _step(f"{winner} completes todo-parser with evidence; todo-docs wakes up")
        done = repo.todo_complete(GOAL, "todo-parser", evidence=["tests/test_tokenizer.py"], actor=winner)
        for event in done.write.events[1:]:
            render.line(f"woke {event.todo_id}: {event.summary}")

        _step("a PR merge is recorded; todo-release wakes up")
        merged = repo.event_append(
            GOAL, "pr_merge", pr_ref="example/parser#7", summary="release branch merged", agent_id=winner
        )
        for event in merged.write.events[1:]:
            render.line(f"woke {event.todo_id}: {event.summary}")
        repo.refresh_state(
            GOAL,
            "progress",
            agent_id=winner,
            todo_id="todo-parser",
            delivery_outcome="outcome_progress",
            recommended_action="claim todo-docs next",
        )

        _safety(path, repo)

        _step("status")
        show_card(repo.status(GOAL))

        _step("verify")
        report = repo.verify()
        render.line(
            f"{'ok' if report.ok else 'PROBLEMS'}: {report.commits_checked} commits, {report.records_checked} records, "
            f"{report.documents_checked} documents"
        )

        _step("git log loopx/state: the history of what happened")
        render.line(_git(path, "log", "--format=%h %s", "loopx/state").rstrip())
        repo.close()
        if keep:
            render.line("")
            render.line(f"kept the demo repository: {path}")
        return 0 if report.ok else 1
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)

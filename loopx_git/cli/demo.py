"""``loopx demo``: a scripted walk through a temporary repository, printed as it goes (or, with
``--format json``, one report of the steps and what each showed)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from loopx_git.cli import render
from loopx_git.cli.status import show_card
from loopx_git.views.outputs import DemoReport

GOAL = "demo-parser"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


class Narrator:
    """The walk, printed as it goes (text), or kept for one report at the end (``--format json``)."""

    def __init__(self, live: bool = True):
        self.live = live
        self.steps: list[dict] = []

    def step(self, title: str) -> None:
        self.steps.append({"title": title, "said": []})
        if self.live:
            render.line("")
            render.line(f"== {title}", style="bold cyan")

    def say(self, text: str, style: str | None = None) -> None:
        if self.steps:
            self.steps[-1]["said"].extend(text.splitlines() or [""])
        if self.live:
            render.line(text, style=style)


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


def _safety(path: Path, repo, say: Narrator) -> None:
    """A token in a note is refused (or redacted on request); a token in a commit is refused by the hook."""
    from loopx_git.api import StateRepo
    from loopx_git.errors import LoopxError

    token = "gh" + "p_" + "Demo0nly0N0tARealT0ken0aB3dE5fG7hJ9k"  # assembled: a fake, for the demo only
    say.step("public safety: a token in a note is refused, nothing is written")
    try:
        repo.event_append(GOAL, "note", summary=f"deploy with {token}")
    except LoopxError as exc:
        say.say(f"refused: {exc.message}")
    written = StateRepo.open(path, redact=True).event_append(GOAL, "note", summary=f"deploy with {token}")
    say.say(f"with --redact the note says: {written.record.summary}")

    say.step("hooks: connect installs them; a commit holding the token is refused")
    for name, did in repo.connect_worktree().hooks.items():
        say.say(f"{name} hook: {did}")
    (path / "settings.py").write_text(f"GITHUB_TOKEN = '{token}'\n")
    _git(path, "add", "settings.py")
    refused = subprocess.run(["git", "-C", str(path), "commit", "-m", "add settings"], capture_output=True, text=True)
    say.say(f"git commit exited {refused.returncode}:")
    for line in refused.stderr.splitlines()[:2]:
        say.say(f"  {line}")
    _git(path, "rm", "-q", "--cached", "settings.py")
    (path / "settings.py").unlink()


def run_demo(*, keep: bool = False, live: bool = True) -> DemoReport:
    """The walk; ``live`` prints it as it goes, else it is only in the report (steps and what each said)."""
    from loopx_git.api import StateRepo

    say = Narrator(live)
    path = Path(tempfile.mkdtemp(prefix="loopx-demo-"))
    try:
        _git(path, "init", "-q")
        _git(path, "config", "user.name", "loopx demo")
        _git(path, "config", "user.email", "demo@example.invalid")
        _git(path, "commit", "-q", "--allow-empty", "-m", "project start")
        repo = StateRepo.open(path)

        say.step("connect: create the state branch and a goal")
        repo.connect()
        repo.goal_create(GOAL, "Ship a streaming JSON parser", acceptance_criteria=["the test suite passes"])
        say.say(f"state branch {repo.ref}; goal {GOAL}")

        say.step("two agents register")
        repo.agent_register(GOAL, "alice", lane="core")
        repo.agent_register(GOAL, "bob", lane="docs")
        say.say("alice (lane core), bob (lane docs)")

        say.step("todos: one runnable, one waiting for it, one waiting for a PR, one for the user")
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
            say.say(
                f"{todo.todo_id:14} {todo.status:9} {todo.text}"
                + (f"  [{todo.resume_when}]" if todo.resume_when else "")
            )

        say.step("claim race: alice and bob claim todo-parser at the same instant")
        outcome = _race(path)
        for agent, said in sorted(outcome.items()):
            say.say(f"{agent}: {said}")
        winner = next(a for a, said in outcome.items() if said == "won")

        say.step(f"{winner} completes todo-parser with evidence; todo-docs wakes up")
        done = repo.todo_complete(GOAL, "todo-parser", evidence=["tests/test_tokenizer.py"], actor=winner)
        for event in done.write.events[1:]:
            say.say(f"woke {event.todo_id}: {event.summary}")

        say.step("a PR merge is recorded; todo-release wakes up")
        merged = repo.event_append(
            GOAL, "pr_merge", pr_ref="example/parser#7", summary="release branch merged", agent_id=winner
        )
        for event in merged.write.events[1:]:
            say.say(f"woke {event.todo_id}: {event.summary}")

        say.step("a gate: the release waits for the user's decision; other work goes on")
        repo.gate_open(
            GOAL, "gate-release", owner_class="user", question="Publish release 1.0 now?", blocks=["todo-release"]
        )
        for agent in ("alice", "bob"):
            lane = repo.should_run(GOAL, agent).agent_lane_next_action
            say.say(f"next for {agent}: {lane.todo_id or '-'} ({lane.basis})")
        refused_by = "todo-release" not in {a.todo_id for a in repo.status(GOAL).next_actions}
        say.say(f"todo-release offered to no agent while the gate is open: {refused_by}")
        repo.gate_decide(
            GOAL, "gate-release", decision="approve", reason="release notes reviewed", decided_by_class="user"
        )
        say.say("the user approves gate-release: todo-release is runnable again")

        other = "bob" if winner == "alice" else "alice"
        say.step(f"a handoff: {winner} hands todo-docs to {other}, who adopts it")
        repo.todo_claim(GOAL, "todo-docs", winner)
        repo.handoff_prepare(
            GOAL,
            "handoff-docs",
            from_agent_id=winner,
            to_agent_id=other,
            todo_ids=["todo-docs"],
            stop_condition="the API docs build without warnings",
            evidence_refs=["tests/test_tokenizer.py"],
        )
        adopted = repo.handoff_adopt(GOAL, "handoff-docs", other)
        say.say(f"{adopted.write.summary}; todo-docs is now claimed by {repo.todo(GOAL, 'todo-docs').claimed_by}")
        repo.refresh_state(
            GOAL,
            "progress",
            agent_id=winner,
            todo_id="todo-parser",
            delivery_outcome="outcome_progress",
            recommended_action="claim todo-docs next",
        )

        _safety(path, repo, say)

        say.step("status")
        card = repo.status(GOAL)
        if say.live:
            show_card(card)
        else:
            n = card.counts
            say.say(f"todos: {n.open} open ({n.claimed} claimed), {n.deferred} deferred, {n.done} done")
            for action in card.next_actions:
                say.say(f"next for {action.agent_id}: {action.todo_id or '-'} ({action.basis})")

        say.step("verify")
        report = repo.verify()
        say.say(
            f"{'ok' if report.ok else 'PROBLEMS'}: {report.commits_checked} commits, {report.records_checked} records, "
            f"{report.documents_checked} documents"
        )

        say.step("git log loopx/state: the history of what happened")
        say.say(_git(path, "log", "--format=%h %s", "loopx/state").rstrip())
        repo.close()
        if keep and say.live:
            render.line("")
            render.line(f"kept the demo repository: {path}")
        return DemoReport(ok=report.ok, steps=say.steps, kept=str(path) if keep else None)
    finally:
        if not keep:
            shutil.rmtree(path, ignore_errors=True)

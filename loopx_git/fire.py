"""``loopx fire``: one bounded headless run of the loop, as a scheduler (cron, a systemd timer, a
CI schedule) starts it.

Each iteration selects one ledger entry (``ledger next``), runs COMMAND once with the entry's action
contract on stdin and ``LOOPX_LEDGER_ENTRY`` in its environment, reads one JSON object from its
stdout, judges the actions it requests against the approver ceiling, and writes the result back to
the ledger before the next selection. Every fire is bounded (iterations, a whole-fire timeout, a
per-iteration timeout), cancellable (SIGINT/SIGTERM), and ends with exactly one terminal status,
recorded on the state branch.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from loopx_git.errors import LoopxError, ValidationError
from loopx_git.model.fire import EXIT_CODES, FireSummary, IterationResult, IterationRow, judge
from loopx_git.model.ids import new_id, utc_now

if TYPE_CHECKING:
    from loopx_git.api import StateRepo

STDOUT_LIMIT = 1 << 20  # one JSON object; anything longer is not an answer
KILL_GRACE = 2.0
MAX_SECONDS = 30 * 24 * 3600  # a bound must be one a timer can wait for: 30 days
MAX_ITERATIONS = 1_000_000


@dataclass
class Bounds:
    max_iterations: int | None
    timeout: float | None
    iteration_timeout: float | None
    ceiling: str | None

    def check(self) -> None:
        """A scheduled run is bounded or it does not start (headless_fire_unbounded)."""
        from loopx_git.errors import RuleError

        rule = "rule: a headless fire is bounded, never an open-ended loop"
        if not self.max_iterations or self.max_iterations < 1 or not self.timeout or self.timeout <= 0:
            raise RuleError(
                f"a fire needs --max-iterations (>= 1) and --timeout (seconds > 0); {rule}",
                code="headless_fire_unbounded",
            )
        if self.max_iterations > MAX_ITERATIONS:
            raise RuleError(
                f"field 'max_iterations': more than {MAX_ITERATIONS:,}; {rule}", code="headless_fire_unbounded"
            )
        for name, seconds in (("timeout", self.timeout), ("iteration_timeout", self.iteration_timeout)):
            if seconds is None:
                continue
            if not math.isfinite(seconds) or not 0 < seconds <= MAX_SECONDS:
                raise RuleError(
                    f"field '{name}': {seconds!r} is not a number of seconds > 0 and at most {MAX_SECONDS} "
                    f"(30 days); {rule}",
                    code="headless_fire_unbounded",
                )
        if self.ceiling not in ("read_only", "workspace_write", "repo_push"):
            raise ValidationError(
                f"field 'approver_ceiling': {self.ceiling!r} is not read_only, workspace_write or "
                "repo_push; rule: a scheduled run states what it may approve",
                code="invalid-field",
            )


@dataclass
class _Run:
    """One fire in progress."""

    started: float = field(default_factory=time.monotonic)
    started_at: str = field(default_factory=utc_now)
    child: subprocess.Popen | None = None
    cancelled: bool = False
    rows: list = field(default_factory=list)
    denials: list = field(default_factory=list)

    def cancel(self, signum: int, frame) -> None:  # a signal handler
        self.cancelled = True
        _stop(self.child)


def _stop(child: subprocess.Popen | None) -> None:
    """Terminate COMMAND and everything it started (its own process group), then kill what is left."""
    if child is None or child.poll() is not None:
        return
    try:
        os.killpg(child.pid, signal.SIGTERM)
        child.wait(KILL_GRACE)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _run_command(
    run: _Run, command: list[str], contract: dict, entry_id: str, goal_id: str, fire_id: str, timeout: float
) -> tuple[str, bytes | None]:
    """``(outcome, stdout)``: outcome is ``ok``, ``timeout``, ``command_failed`` or ``cancelled``."""
    env = {**os.environ, "LOOPX_LEDGER_ENTRY": entry_id, "LOOPX_GOAL_ID": goal_id, "LOOPX_FIRE_ID": fire_id}
    try:
        run.child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, start_new_session=True
        )
    except OSError as exc:
        raise ValidationError(
            f"field 'command': {command[0]!r} cannot be started ({exc.strerror})", code="invalid-field"
        ) from exc
    try:
        out, _ = run.child.communicate(json.dumps(contract).encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(run.child)
        run.child.communicate()
        return "timeout", None
    finally:
        code = run.child.poll()
        run.child = None
    if run.cancelled:
        return "cancelled", None
    if code != 0:
        return "command_failed", None
    return "ok", out[:STDOUT_LIMIT]


def _parse(out: bytes) -> IterationResult:
    text = out.decode("utf-8", "replace").strip()
    return IterationResult.model_validate_json(text.splitlines()[-1] if text else "")


def fire(
    repo: StateRepo, goal_id: str, command: list[str], bounds: Bounds, *, agent_id: str | None = None
) -> FireSummary:
    """Run one bounded fire and return its record (already written to the state branch)."""
    bounds.check()
    if not command:
        raise ValidationError("field 'command': give the command after --", code="invalid-field")
    _check_program_name(command[0])
    repo.goal(goal_id)  # a missing goal, or an agent that is not registered, is refused before anything runs
    if agent_id is not None:
        from loopx_git.domain.write import check_actor
        from loopx_git.model.state import require_goal

        check_actor(require_goal(repo.state(), goal_id), agent_id)
    with _fire_lock(repo, goal_id, agent_id):
        return _fire(repo, goal_id, command, bounds, agent_id)


def _slug(condition: str) -> str:
    """A stop condition as the record's lower-case slug: refusal codes use '-' and a verdict is upper
    case ('broken-branch' -> 'broken_branch', 'UNVERIFIABLE' -> 'unverifiable')."""
    import re

    slug = re.sub(r"[^a-z0-9_]", "_", condition.lower())[:64]
    return slug if slug[:1].isalpha() else "error"


def _check_program_name(program: str) -> None:
    """The fire record keeps the program's name (``Path(program).name``): one that record cannot
    hold is refused before anything runs, not after the iterations have written their results."""
    name = Path(program).name
    if not name:
        problem = "names no program (it is empty or ends with '/')"
    elif len(name) > 1000:
        problem = f"is {len(name)} characters long (at most 1000)"
    else:
        try:
            name.encode("utf-8")
            return
        except UnicodeEncodeError:
            problem = "holds bytes that are not UTF-8 text (an argument in another encoding?)"
    raise ValidationError(
        f"field 'command': {program[:80]!r} {problem}; rule: a fire records its program's name as one "
        "line of UTF-8 text",
        code="invalid-field",
    )


@contextmanager
def _fire_lock(repo, goal_id: str, agent_id: str | None):
    """One fire per goal and agent at a time: a scheduler that starts the next run before the last
    one ended gets a clear refusal, not two loops on one ledger."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock on this platform: the ledger's own rules still hold
        yield
        return
    folder = repo.git.common_dir / "loopx"
    path = folder / f"fire-{goal_id}-{agent_id or '_'}.lock"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(path, "w")  # noqa: SIM115 - held for the whole fire, closed by its caller
    except OSError as exc:  # .git/loopx is a file, a folder stands where the lock goes, read-only
        from loopx_git.errors import StoreError

        raise StoreError(
            f"cannot take the fire lock {path.name} under {folder} ({exc.strerror or exc}); nothing ran",
            code="no-lock",
            hint=f"{folder} holds locks and caches only, never state: remove what is in the "
            "way (loopx makes it again) or make it writable",
        ) from exc
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            from loopx_git.errors import RuleError

            raise RuleError(
                f"another fire for goal '{goal_id}' ({agent_id or 'no agent'}) is still running; rule: one "
                "fire at a time per goal and agent",
                code="fire_running",
            ) from None
        yield


def _fire(repo: StateRepo, goal_id: str, command: list[str], bounds: Bounds, agent_id: str | None) -> FireSummary:
    fire_id = new_id("fire")
    run = _Run()
    import threading

    # signals reach only the main thread; called from another, the caller owns cancellation
    in_main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, run.cancel) for sig in (signal.SIGINT, signal.SIGTERM)} if in_main else {}
    try:
        terminal, stop = _loop(repo, goal_id, command, bounds, agent_id, fire_id, run)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    summary = FireSummary(
        fire_id=fire_id,
        terminal_status=terminal,
        stop_condition=_slug(stop),
        iterations_run=len(run.rows),
        max_iterations=bounds.max_iterations,
        timeout_seconds=bounds.timeout,
        iteration_timeout_seconds=bounds.iteration_timeout or bounds.timeout,
        approver_ceiling=bounds.ceiling,
        command=Path(command[0]).name,
        duration_seconds=round(time.monotonic() - run.started, 3),
        entries=run.rows,
        denials=run.denials,
        started_at=run.started_at,
        ended_at=utc_now(),
    )
    from loopx_git.domain.ledger import record_fire

    repo.apply(lambda s: record_fire(s, goal_id=goal_id, summary=summary, agent_id=agent_id, now=utc_now()))
    return summary


def _write_back(repo, goal_id: str, entry_id: str, agent_id: str | None, outcome: str, run: _Run, **result) -> None:
    repo.ledger_record(goal_id, entry_id, agent_id=agent_id, **result)
    run.rows.append(
        IterationRow(
            entry_id=entry_id, outcome=outcome, status=result["status"], verdict=result["verdict"], next=result["next"]
        )
    )


def _failed(repo, goal_id: str, entry_id: str, agent_id: str | None, outcome: str, run: _Run) -> None:
    """The entry back to runnable-later: blocked, DRIFT, retry — never left active."""
    _write_back(
        repo,
        goal_id,
        entry_id,
        agent_id,
        outcome,
        run,
        status="blocked",
        verdict="DRIFT",
        next="retry",
        question=None,
        evidence=(),
    )


def _loop(
    repo, goal_id: str, command: list[str], bounds: Bounds, agent_id: str | None, fire_id: str, run: _Run
) -> tuple[str, str]:
    per_iteration = bounds.iteration_timeout or bounds.timeout
    for _ in range(bounds.max_iterations):
        if run.cancelled:
            return "cancelled", "cancelled"
        remaining = bounds.timeout - (time.monotonic() - run.started)
        if remaining <= 0:
            return "ok", "budget_exhausted"
        try:
            contract = repo.ledger_next(goal_id, agent_id=agent_id).record
        except LoopxError as exc:
            return ("needs_attention", "ask_user") if exc.code == "needs_attention" else ("error", exc.code)
        if contract is None:
            return "ok", "ledger_empty"
        entry_id = contract["entry"]["id"]
        outcome, out = _run_command(run, command, contract, entry_id, goal_id, fire_id, min(per_iteration, remaining))
        if outcome != "ok":
            _failed(repo, goal_id, entry_id, agent_id, outcome, run)
            return ("cancelled", "cancelled") if outcome == "cancelled" else ("error", outcome)
        try:
            result = _parse(out or b"")
        except ValueError:
            _failed(repo, goal_id, entry_id, agent_id, "bad_output", run)
            return "error", "bad_output"
        denials = judge(result.requested_actions, bounds.ceiling)
        if denials:
            run.denials.extend(denials)
            reason = "dangerous_action" if any(d.reason == "dangerous_action" for d in denials) else "policy_denied"
            listed = ", ".join(f"{d.kind} ({d.level})" for d in denials)
            _write_back(
                repo,
                goal_id,
                entry_id,
                agent_id,
                "denied",
                run,
                status="blocked",
                verdict="DRIFT",
                next="ask_user",
                evidence=(),
                question=f"{reason}: {listed} needs a person",
            )
            return "needs_attention", reason
        try:
            _write_back(
                repo,
                goal_id,
                entry_id,
                agent_id,
                "written_back",
                run,
                status=result.status,
                verdict=result.verdict,
                next=result.next,
                evidence=result.evidence,
                question=result.question,
            )
        except LoopxError as exc:  # the protocol refused the result (no evidence for done, inherited confidence...)
            _failed(repo, goal_id, entry_id, agent_id, exc.code, run)
            return "error", exc.code
        if result.next == "ask_user" or result.verdict == "UNVERIFIABLE":
            return "needs_attention", "ask_user" if result.next == "ask_user" else "UNVERIFIABLE"
        if result.next == "stop":
            return "ok", "stop"
        if result.status == "blocked":
            return "ok", "blocked"
        if run.cancelled:
            return "cancelled", "cancelled"
    return "ok", "max_iterations"


def exit_code(summary: FireSummary) -> int:
    return EXIT_CODES[summary.terminal_status]

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

import math
import re
import shutil
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from loopx_git.errors import LoopxError, ValidationError
from loopx_git.model.fire import (
    EXIT_CODES,
    FireReason,
    FireSummary,
    IterationRow,
    judge,
)
from loopx_git.model.ids import new_id, utc_now

if TYPE_CHECKING:
    from loopx_git.api import StateRepo
from loopx_git.fire.command import Run, parse_answer, run_command
from loopx_git.fire.reasons import bad_answer, command_reason, cut, fits, refused

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
            given = "is missing" if self.ceiling is None else f"{self.ceiling!r} is not one of them"
            raise ValidationError(
                f"field 'approver_ceiling': {given}; rule: a scheduled run states what it may approve "
                "(--approver-ceiling read_only, workspace_write or repo_push)",
                code="invalid-field",
            )


def fire(
    repo: StateRepo, goal_id: str, command: list[str], bounds: Bounds, *, agent_id: str | None = None
) -> FireSummary:
    """Run one bounded fire and return its record (already written to the state branch)."""
    bounds.check()
    if not command:
        raise ValidationError("field 'command': give the command after --", code="invalid-field")
    _check_program_name(command[0])
    if shutil.which(command[0]) is None:  # before a selection: an entry is never taken by a COMMAND that cannot run
        raise ValidationError(
            f"field 'command': {command[0][:200]!r} is not an executable program (not found on PATH, or "
            "not executable); rule: COMMAND is a program a fire can start; nothing ran",
            code="invalid-field",
        )
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
                code="fire-running",
            ) from None
        yield


def _fire(repo: StateRepo, goal_id: str, command: list[str], bounds: Bounds, agent_id: str | None) -> FireSummary:
    fire_id = new_id("fire")
    run = Run()
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
        reason=run.reason if terminal == "error" else None,
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


def _write_back(repo, goal_id: str, entry_id: str, agent_id: str | None, outcome: str, run: Run, **result) -> None:
    repo.ledger_record(goal_id, entry_id, agent_id=agent_id, **result)
    run.rows.append(
        IterationRow(
            entry_id=entry_id, outcome=outcome, status=result["status"], verdict=result["verdict"], next=result["next"]
        )
    )


def _failed(
    repo, goal_id: str, entry_id: str, agent_id: str | None, outcome: str, run: Run, fire_id: str, why: str
) -> None:
    """The entry back to runnable-later: blocked, DRIFT, retry — never left active — with why (the next
    iteration's contract carries it); ``why`` already passed the safety redaction."""
    from loopx_git.domain.ledger import record_result
    from loopx_git.safety.scan import redact

    prefix = f"fire {fire_id}: "
    failure = redact(prefix + cut(why, fits(repo.policy, 1000) - len(prefix)), repo.policy)[0]
    repo.apply(
        lambda s: record_result(
            s,
            goal_id=goal_id,
            entry_id=entry_id,
            status="blocked",
            verdict="DRIFT",
            next_="retry",
            agent_id=agent_id,
            failure=failure,
            now=utc_now(),
        )
    )
    run.rows.append(IterationRow(entry_id=entry_id, outcome=outcome, status="blocked", verdict="DRIFT", next="retry"))


def _error(
    repo, goal_id: str, entry_id: str, agent_id: str | None, run: Run, fire_id: str, outcome: str, reason: FireReason
) -> tuple[str, str]:
    """End the fire in error with ``reason``; the entry it held is written back with it."""
    run.reason = reason
    why = reason.one_line(fits(repo.policy, 1000) - len(f"fire {fire_id}: "))
    _failed(repo, goal_id, entry_id, agent_id, outcome[:40], run, fire_id, why)
    return "error", outcome


def _loop(
    repo, goal_id: str, command: list[str], bounds: Bounds, agent_id: str | None, fire_id: str, run: Run
) -> tuple[str, str]:
    max_iterations, budget, ceiling = bounds.max_iterations, bounds.timeout, bounds.ceiling
    assert max_iterations is not None and budget is not None and ceiling is not None  # Bounds.check passed
    per_iteration = bounds.iteration_timeout or budget
    for _ in range(max_iterations):
        if run.cancelled:
            return "cancelled", "cancelled"
        remaining = budget - (time.monotonic() - run.started)
        if remaining <= 0:
            return "ok", "budget_exhausted"
        try:
            contract = repo.ledger_next(goal_id, agent_id=agent_id).record
        except LoopxError as exc:
            if exc.code == "needs-attention":
                return "needs_attention", "ask_user"
            run.reason = refused(exc, repo.policy)  # nothing was selected: no entry to write back
            return "error", exc.code
        if contract is None:
            return "ok", "ledger_empty"
        entry_id = contract["entry"]["id"]
        timeout = min(per_iteration, remaining)
        ran = run_command(run, command, contract, entry_id, goal_id, fire_id, timeout)
        failed = partial(_error, repo, goal_id, entry_id, agent_id, run, fire_id)
        if ran.outcome == "cancelled":
            _failed(repo, goal_id, entry_id, agent_id, "cancelled", run, fire_id, "cancelled (SIGINT or SIGTERM)")
            return "cancelled", "cancelled"
        if ran.outcome != "ok":
            return failed(ran.outcome, command_reason(ran, command[0], timeout, repo.policy))
        try:
            result = parse_answer(ran.out or b"")
        except ValueError as exc:
            return failed("bad_output", bad_answer(exc, ran, command[0], repo.policy))
        denials = judge(result.requested_actions, ceiling)
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
            return failed(exc.code, refused(exc, repo.policy))
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

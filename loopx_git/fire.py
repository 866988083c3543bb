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
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from loopx_git.errors import LoopxError, ValidationError, outcome
from loopx_git.model.fire import (
    EXIT_CODES,
    STDERR_TAIL_BYTES,
    STDERR_TAIL_LINES,
    FireReason,
    FireSummary,
    IterationResult,
    IterationRow,
    judge,
)
from loopx_git.model.ids import new_id, utc_now

if TYPE_CHECKING:
    from loopx_git.api import StateRepo
    from loopx_git.safety.policy import Policy

STDOUT_LIMIT = 1 << 20  # one JSON object; anything longer is not an answer
STDERR_KEEP = 64 * 1024
"""Bytes of COMMAND's stderr kept while it runs. Only whole lines of them are kept (``safety.window``)
and redaction runs over all of those before the last lines are cut out, so a secret spread over lines
(a private key) is found whole, and the cut-off end of one is never kept."""
LINE_CHARS = 400  # one line of the tail; a longer one is cut (its start says what it is)
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
            given = "is missing" if self.ceiling is None else f"{self.ceiling!r} is not one of them"
            raise ValidationError(
                f"field 'approver_ceiling': {given}; rule: a scheduled run states what it may approve "
                "(--approver-ceiling read_only, workspace_write or repo_push)",
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
    reason: FireReason | None = None
    """Why the fire ended in error, once it has."""

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


class _StderrTail:
    """COMMAND's stderr, passed on to ours as it comes — an operator watching a fire sees it live, as
    when COMMAND wrote to the terminal itself — while its last bytes are kept for the fire's reason."""

    def __init__(self, fd: int):
        self._fd = fd
        self._kept = bytearray()
        self._dropped = 0
        self._lock = threading.Lock()
        self._text: str | None = None
        # a daemon: something COMMAND started in the background may hold the pipe open past the fire
        self._thread = threading.Thread(target=self._pump, name="loopx-fire-stderr", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while True:
                try:
                    chunk = os.read(self._fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                with self._lock:
                    self._kept += chunk
                    over = len(self._kept) - STDERR_KEEP
                    if over > 0:
                        del self._kept[:over]
                        self._dropped += over
                _echo(chunk)
        finally:
            os.close(self._fd)

    def text(self, wait: float = 1.0) -> str:
        """What was kept, in whole lines (``safety.window.whole_lines``): once COMMAND closed its
        stderr, or after ``wait`` seconds what came so far, without the line still being written
        (something COMMAND started in the background may hold the pipe open)."""
        if self._text is None:
            self._thread.join(wait)
            ended = not self._thread.is_alive()  # before the copy: an ended pump's bytes are all there
            with self._lock:
                kept, dropped = bytes(self._kept), self._dropped
            from loopx_git.safety.window import whole_lines

            self._text = whole_lines(kept, dropped=dropped, complete=ended)
        return self._text


def _echo(chunk: bytes) -> None:
    """COMMAND's stderr, to ours as it came: it is the operator's own program talking, not loopx (a
    front end that masks what loopx prints offers the stream under its mask as ``unmasked``). What
    is recorded of it is redacted (``_tail``)."""
    stream = getattr(sys.stderr, "unmasked", sys.stderr)
    if stream is None:
        return
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            stream.flush()
            buffer.write(chunk)
            buffer.flush()
        else:
            stream.write(chunk.decode("utf-8", "replace"))
            stream.flush()
    except (OSError, ValueError):  # a closed or broken stderr must not stop the capture, nor the fire
        pass


@dataclass
class _Ran:
    """One run of COMMAND: ``outcome`` is ``ok``, ``timeout``, ``command_failed``, ``cannot_start`` or
    ``cancelled``; ``stderr`` what it wrote there (raw: redacted before it is recorded)."""

    outcome: str
    out: bytes | None = None
    exit_status: int | None = None
    tail: _StderrTail | None = None
    error: str | None = None

    @property
    def stderr(self) -> str:
        # read only when a reason needs it: a run that answered waits for no pipe a background child holds
        return self.tail.text() if self.tail is not None else ""


def _run_command(
    run: _Run, command: list[str], contract: dict, entry_id: str, goal_id: str, fire_id: str, timeout: float
) -> _Ran:
    env = {**os.environ, "LOOPX_LEDGER_ENTRY": entry_id, "LOOPX_GOAL_ID": goal_id, "LOOPX_FIRE_ID": fire_id}
    read_end, write_end = os.pipe()
    try:
        run.child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=write_end, env=env, start_new_session=True
        )
    except OSError as exc:  # found when the fire began, gone or broken now (a bad interpreter line...)
        os.close(read_end)
        return _Ran("cannot_start", error=exc.strerror or type(exc).__name__)
    finally:
        os.close(write_end)  # COMMAND holds its own copy; ours would keep the pipe open forever
    tail = _StderrTail(read_end)
    try:
        out, _ = run.child.communicate(json.dumps(contract).encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(run.child)
        run.child.communicate()
        return _Ran("timeout", exit_status=run.child.poll(), tail=tail)
    finally:
        code = run.child.poll()
        run.child = None
    if run.cancelled:
        return _Ran("cancelled", exit_status=code)
    if code != 0:
        return _Ran("command_failed", exit_status=code, tail=tail)
    return _Ran("ok", out[:STDOUT_LIMIT], exit_status=code, tail=tail)


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
                code="fire-running",
            ) from None
        yield


def _fire(repo: StateRepo, goal_id: str, command: list[str], bounds: Bounds, agent_id: str | None) -> FireSummary:
    fire_id = new_id("fire")
    run = _Run()
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


def _write_back(repo, goal_id: str, entry_id: str, agent_id: str | None, outcome: str, run: _Run, **result) -> None:
    repo.ledger_record(goal_id, entry_id, agent_id=agent_id, **result)
    run.rows.append(
        IterationRow(
            entry_id=entry_id, outcome=outcome, status=result["status"], verdict=result["verdict"], next=result["next"]
        )
    )


def _failed(
    repo, goal_id: str, entry_id: str, agent_id: str | None, outcome: str, run: _Run, fire_id: str, why: str
) -> None:
    """The entry back to runnable-later: blocked, DRIFT, retry — never left active — with why (the next
    iteration's contract carries it); ``why`` already passed the safety redaction."""
    from loopx_git.domain.ledger import record_result
    from loopx_git.safety.scan import redact

    prefix = f"fire {fire_id}: "
    failure = redact(prefix + _cut(why, _fits(repo.policy, 1000) - len(prefix)), repo.policy)[0]
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


# --- why a fire ended in error: what is recorded passed the safety redaction ------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")  # colours, titles


def _fits(policy: Policy, chars: int) -> int:
    """A length that fits one field under ``policy`` (``max_field_bytes`` may be as low as 256), with
    room for a multi-byte character or two."""
    return max(64, min(chars, policy.max_field_bytes // 2))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _tail(stderr: str, policy: Policy) -> list[str]:
    """The last lines of ``stderr``, redacted and bounded. ``stderr`` holds whole lines only, and
    redaction runs over all of it before a line is cut or dropped: a secret is found whole (a key over
    several lines too), never half, so the start of a long line, once redacted, is safe to keep."""
    from loopx_git.model.canonical import visible
    from loopx_git.safety.scan import redact

    text = redact(_ANSI.sub("", stderr), policy)[0]
    lines = [visible(line).rstrip() for line in text.splitlines()]
    lines = [_cut(line, _fits(policy, LINE_CHARS)) for line in lines if line.strip()][-STDERR_TAIL_LINES:]
    kept: list[str] = []
    size = 0
    for line in reversed(lines):  # the last lines first: they say most
        size += len(line.encode("utf-8")) + 1
        if size > STDERR_TAIL_BYTES:
            break
        kept.append(line)
    return kept[::-1]


def _safe(reason: FireReason, policy: Policy) -> FireReason:
    """``reason`` as the state branch may hold it: every string through the safety rules, with whatever
    blocks redacted — it is diagnostic text, and a refusal here would lose the fire's record."""
    from loopx_git.safety.records import check

    clean, _ = check(reason.model_dump(mode="json"), policy, redact=True)
    return FireReason.model_validate(clean)


def _refused(exc: LoopxError, policy: Policy) -> FireReason:
    """A refusal as a reason: its code, and the field and rule its message names."""
    said = outcome(exc)
    message = said.message
    named = re.search(r"field '([^']{1,200})'", message)
    rule = message.rpartition("rule: ")[2].strip() if "rule: " in message else None
    return _safe(
        FireReason(
            kind="refused",
            message=_cut(message, _fits(policy, 1000)),
            code=said.code if re.fullmatch(r"[a-z][a-z0-9_-]{0,63}", said.code) else None,
            field=named.group(1) if named else None,
            rule=_cut(rule, _fits(policy, 1000)) if rule else None,
        ),
        policy,
    )


def _bad_answer(exc: ValueError, ran: _Ran, program: str, policy: Policy) -> FireReason:
    """An answer that is not a loopx_fire_result_v0 object: the field and the rule it broke."""
    import pydantic

    field, rule = None, "COMMAND answers with one JSON object (loopx_fire_result_v0) on the last line of its stdout"
    if isinstance(exc, pydantic.ValidationError):
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        if where:
            field, rule = where, first["msg"]
        else:
            rule = f"{rule} ({first['msg']})"
    name = repr(Path(program).name)
    message = f"the answer of {name} is not valid: " + (f"field '{field}': {rule}" if field else rule)
    return _safe(
        FireReason(
            kind="bad_output",
            message=_cut(message, _fits(policy, 1000)),
            field=field,
            rule=_cut(rule, _fits(policy, 1000)),
            stderr_tail=_tail(ran.stderr, policy),
        ),
        policy,
    )


def _command_reason(ran: _Ran, program: str, timeout: float, policy: Policy) -> FireReason:
    """How a run of COMMAND failed: its exit status (or the signal that ended it) and its stderr's tail."""
    name = repr(Path(program).name)  # the name only, as in the record: a path may be private
    status = ran.exit_status
    if ran.outcome == "cannot_start":
        message = f"{name} could not be started: {ran.error}"
    elif ran.outcome == "timeout":
        message = f"{name} ran past the iteration timeout ({timeout:g} s) and was stopped"
    elif status is not None and status < 0:
        message = f"{name} was ended by signal {-status} ({_signal_name(-status)})"
    else:
        message = f"{name} exited with status {status}"
    return _safe(
        FireReason(
            kind=ran.outcome,  # timeout, command_failed or cannot_start: the outcomes that end a fire in error
            message=_cut(message, _fits(policy, 1000)),
            exit_status=status,
            stderr_tail=_tail(ran.stderr, policy),
        ),
        policy,
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def _error(
    repo, goal_id: str, entry_id: str, agent_id: str | None, run: _Run, fire_id: str, outcome: str, reason: FireReason
) -> tuple[str, str]:
    """End the fire in error with ``reason``; the entry it held is written back with it."""
    run.reason = reason
    why = reason.one_line(_fits(repo.policy, 1000) - len(f"fire {fire_id}: "))
    _failed(repo, goal_id, entry_id, agent_id, outcome[:40], run, fire_id, why)
    return "error", outcome


def _loop(
    repo, goal_id: str, command: list[str], bounds: Bounds, agent_id: str | None, fire_id: str, run: _Run
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
            run.reason = _refused(exc, repo.policy)  # nothing was selected: no entry to write back
            return "error", exc.code
        if contract is None:
            return "ok", "ledger_empty"
        entry_id = contract["entry"]["id"]
        timeout = min(per_iteration, remaining)
        ran = _run_command(run, command, contract, entry_id, goal_id, fire_id, timeout)
        failed = partial(_error, repo, goal_id, entry_id, agent_id, run, fire_id)
        if ran.outcome == "cancelled":
            _failed(repo, goal_id, entry_id, agent_id, "cancelled", run, fire_id, "cancelled (SIGINT or SIGTERM)")
            return "cancelled", "cancelled"
        if ran.outcome != "ok":
            return failed(ran.outcome, _command_reason(ran, command[0], timeout, repo.policy))
        try:
            result = _parse(ran.out or b"")
        except ValueError as exc:
            return failed("bad_output", _bad_answer(exc, ran, command[0], repo.policy))
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
            return failed(exc.code, _refused(exc, repo.policy))
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

"""Running COMMAND once: its process group started and stopped, its stdin the entry's contract,
its stderr passed on live with the last bytes kept, its stdout read as one JSON answer."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loopx_git.model.fire import (
    FireReason,
    IterationResult,
)
from loopx_git.model.ids import utc_now

if TYPE_CHECKING:
    pass


STDOUT_LIMIT = 1 << 20  # one JSON object; anything longer is not an answer


STDERR_KEEP = 64 * 1024
"""Bytes of COMMAND's stderr kept while it runs. Only whole lines of them are kept (``safety.window``)
and redaction runs over all of those before the last lines are cut out, so a secret spread over lines
(a private key) is found whole, and the cut-off end of one is never kept."""


KILL_GRACE = 2.0


@dataclass
class Run:
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
        stop(self.child)


def stop(child: subprocess.Popen | None) -> None:
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


class StderrTail:
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
    is recorded of it is redacted (``stderr_tail``)."""
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
class Ran:
    """One run of COMMAND: ``outcome`` is ``ok``, ``timeout``, ``command_failed``, ``cannot_start`` or
    ``cancelled``; ``stderr`` what it wrote there (raw: redacted before it is recorded)."""

    outcome: str
    out: bytes | None = None
    exit_status: int | None = None
    tail: StderrTail | None = None
    error: str | None = None

    @property
    def stderr(self) -> str:
        # read only when a reason needs it: a run that answered waits for no pipe a background child holds
        return self.tail.text() if self.tail is not None else ""


def run_command(
    run: Run, command: list[str], contract: dict, entry_id: str, goal_id: str, fire_id: str, timeout: float
) -> Ran:
    env = {**os.environ, "LOOPX_LEDGER_ENTRY": entry_id, "LOOPX_GOAL_ID": goal_id, "LOOPX_FIRE_ID": fire_id}
    read_end, write_end = os.pipe()
    try:
        run.child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=write_end, env=env, start_new_session=True
        )
    except OSError as exc:  # found when the fire began, gone or broken now (a bad interpreter line...)
        os.close(read_end)
        return Ran("cannot_start", error=exc.strerror or type(exc).__name__)
    finally:
        os.close(write_end)  # COMMAND holds its own copy; ours would keep the pipe open forever
    tail = StderrTail(read_end)
    try:
        out, _ = run.child.communicate(json.dumps(contract).encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(run.child)
        run.child.communicate()
        return Ran("timeout", exit_status=run.child.poll(), tail=tail)
    finally:
        code = run.child.poll()
        run.child = None
    if run.cancelled:
        return Ran("cancelled", exit_status=code)
    if code != 0:
        return Ran("command_failed", exit_status=code, tail=tail)
    return Ran("ok", out[:STDOUT_LIMIT], exit_status=code, tail=tail)


def parse_answer(out: bytes) -> IterationResult:
    text = out.decode("utf-8", "replace").strip()
    return IterationResult.model_validate_json(text.splitlines()[-1] if text else "")

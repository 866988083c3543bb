"""Why a fire ended in error, as the state branch may hold it: every string passed the safety
redaction, the stderr tail bounded and cut whole lines first."""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import TYPE_CHECKING

from loopx_git.errors import LoopxError, outcome
from loopx_git.model.fire import (
    STDERR_TAIL_BYTES,
    STDERR_TAIL_LINES,
    FireReason,
)

if TYPE_CHECKING:
    from loopx_git.safety.policy import Policy
from loopx_git.fire.command import Ran

LINE_CHARS = 400  # one line of the tail; a longer one is cut (its start says what it is)


ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")  # colours, titles


def fits(policy: Policy, chars: int) -> int:
    """A length that fits one field under ``policy`` (``max_field_bytes`` may be as low as 256), with
    room for a multi-byte character or two."""
    return max(64, min(chars, policy.max_field_bytes // 2))


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def stderr_tail(stderr: str, policy: Policy) -> list[str]:
    """The last lines of ``stderr``, redacted and bounded. ``stderr`` holds whole lines only, and
    redaction runs over all of it before a line is cut or dropped: a secret is found whole (a key over
    several lines too), never half, so the start of a long line, once redacted, is safe to keep."""
    from loopx_git.model.canonical import visible
    from loopx_git.safety.scan import redact

    text = redact(ANSI.sub("", stderr), policy)[0]
    lines = [visible(line).rstrip() for line in text.splitlines()]
    lines = [cut(line, fits(policy, LINE_CHARS)) for line in lines if line.strip()][-STDERR_TAIL_LINES:]
    kept: list[str] = []
    size = 0
    for line in reversed(lines):  # the last lines first: they say most
        size += len(line.encode("utf-8")) + 1
        if size > STDERR_TAIL_BYTES:
            break
        kept.append(line)
    return kept[::-1]


def safe_reason(reason: FireReason, policy: Policy) -> FireReason:
    """``reason`` as the state branch may hold it: every string through the safety rules, with whatever
    blocks redacted — it is diagnostic text, and a refusal here would lose the fire's record."""
    from loopx_git.safety.records import check

    clean, _ = check(reason.model_dump(mode="json"), policy, redact=True)
    return FireReason.model_validate(clean)


def refused(exc: LoopxError, policy: Policy) -> FireReason:
    """A refusal as a reason: its code, and the field and rule its message names."""
    said = outcome(exc)
    message = said.message
    named = re.search(r"field '([^']{1,200})'", message)
    rule = message.rpartition("rule: ")[2].strip() if "rule: " in message else None
    return safe_reason(
        FireReason(
            kind="refused",
            message=cut(message, fits(policy, 1000)),
            code=said.code if re.fullmatch(r"[a-z][a-z0-9_-]{0,63}", said.code) else None,
            field=named.group(1) if named else None,
            rule=cut(rule, fits(policy, 1000)) if rule else None,
        ),
        policy,
    )


def bad_answer(exc: ValueError, ran: Ran, program: str, policy: Policy) -> FireReason:
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
    return safe_reason(
        FireReason(
            kind="bad_output",
            message=cut(message, fits(policy, 1000)),
            field=field,
            rule=cut(rule, fits(policy, 1000)),
            stderr_tail=stderr_tail(ran.stderr, policy),
        ),
        policy,
    )


def command_reason(ran: Ran, program: str, timeout: float, policy: Policy) -> FireReason:
    """How a run of COMMAND failed: its exit status (or the signal that ended it) and its stderr's tail."""
    name = repr(Path(program).name)  # the name only, as in the record: a path may be private
    status = ran.exit_status
    if ran.outcome == "cannot_start":
        message = f"{name} could not be started: {ran.error}"
    elif ran.outcome == "timeout":
        message = f"{name} ran past the iteration timeout ({timeout:g} s) and was stopped"
    elif status is not None and status < 0:
        message = f"{name} was ended by signal {-status} ({signal_name(-status)})"
    else:
        message = f"{name} exited with status {status}"
    return safe_reason(
        FireReason(
            kind=ran.outcome,  # timeout, command_failed or cannot_start: the outcomes that end a fire in error
            message=cut(message, fits(policy, 1000)),
            exit_status=status,
            stderr_tail=stderr_tail(ran.stderr, policy),
        ),
        policy,
    )


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"

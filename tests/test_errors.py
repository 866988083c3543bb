"""``errors.outcome``: the one mapping of an error to its exit code, code, message and hint, which the
CLI, the hooks, the MCP server and ``loopx fire`` all use; each kind of error is checked here once."""

from __future__ import annotations

import pytest

from loopx_git.errors import (
    EXIT_INTERNAL,
    EXIT_REFUSED,
    EXIT_USAGE,
    MAX_MESSAGE,
    BadParameter,
    ConflictError,
    Exit,
    NotFoundError,
    Refusal,
    SafetyError,
    ValidationError,
    clipped,
    outcome,
)


@pytest.mark.parametrize(
    ("exc", "exit_code", "code", "lines"),
    [
        (
            ValidationError("field 'x': bad; rule: good", code="invalid-field", hint="`loopx x`"),
            1,
            "invalid-field",
            ["error[invalid-field]: field 'x': bad; rule: good", "hint: `loopx x`"],
        ),
        (NotFoundError("no such goal", code="not-found"), 1, "not-found", ["error[not-found]: no such goal"]),
        (Exit(4), 4, "exit", []),
        (Exit(), 0, "exit", []),
        (BadParameter("missing: what is to be done", param_hint="'--text'"), EXIT_USAGE, "usage", None),
        (KeyboardInterrupt(), EXIT_REFUSED, "aborted", ["aborted"]),
        (EOFError(), EXIT_REFUSED, "aborted", ["aborted"]),
    ],
    ids=["refusal-with-hint", "refusal", "exit-4", "exit-0", "usage", "interrupt", "eof"],
)
def test_each_kind_of_error_has_its_exit_code_and_its_lines(exc, exit_code, code, lines):
    said = outcome(exc)
    assert (said.exit_code, said.code, said.internal) == (exit_code, code, False)
    if lines is not None:
        assert said.lines() == lines
    else:
        assert said.lines() == [f"error[usage]: {said.message}"] and "what is to be done" in said.message


def test_a_refusal_keeps_the_exit_code_of_its_kind():
    for kind in (ValidationError, ConflictError, SafetyError):
        exc = kind("refused")
        assert outcome(exc).exit_code == exc.exit_code


def test_anything_else_is_a_bug_said_by_its_type_never_a_traceback():
    said = outcome(ZeroDivisionError("division by zero"))
    assert said.exit_code == EXIT_INTERNAL and said.internal and said.code == "internal"
    assert said.lines() == [said.message]
    assert said.message.startswith("internal error: ZeroDivisionError: division by zero")
    assert "Traceback" not in said.message and "exit 3 is always a bug" in said.message


def test_a_refusal_over_mcp_carries_what_was_printed_before_it():
    bare = Refusal("invalid-field", "field 'x': bad", field="x").to_json()
    assert bare == {"error": {"code": "invalid-field", "message": "field 'x': bad", "field": "x", "hint": None}}
    with_data = Refusal("claim-held", "held", data={"partial": 1}).to_json()
    assert with_data["error"]["data"] == {"partial": 1}


def test_an_overlong_message_keeps_its_start_and_its_end():
    words = " ".join(f"w{n}" for n in range(MAX_MESSAGE))  # many short words: no word is cut, the message is
    message = "field 'text': " + words + " rule: short"
    cut = clipped(message)
    assert len(cut) < len(message) and cut.startswith("field 'text': ") and cut.endswith("rule: short")
    assert "characters cut" in cut
    assert clipped("field 'x': short") == "field 'x': short"

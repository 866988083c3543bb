"""Every declared operation (domain/operation.py) is one declaration the command line, the MCP tool and
the Python API are made from: held here for every operation in the catalogue, not by example, so a new
one is checked the day it is declared."""

from __future__ import annotations

import inspect

import pytest

from loopx_git.api import StateRepo
from loopx_git.cli import fast
from loopx_git.cli.main import app
from loopx_git.domain.catalog import FAMILIES, OPERATIONS
from loopx_git.domain.operation import Operation, cli_of, declared
from loopx_git.errors import ValidationError
from loopx_git.mcp import tools
from tests.conftest import GOAL, state_tip

ALL = sorted(OPERATIONS.values(), key=lambda op: op.words)


def _ids(op: type[Operation]) -> str:
    return " ".join(op.words)


def test_the_catalogue_holds_every_declaration_of_its_families_once():
    found = [op for family in FAMILIES for op in declared(family)]
    assert len(found) == len(OPERATIONS) == len({op.words for op in found}) >= 3
    assert {op.method for op in found} == set(OPERATIONS)


@pytest.mark.parametrize("op", ALL, ids=_ids)
def test_every_field_says_how_the_command_line_spells_it_and_what_it_means(op):
    for name, info in op.model_fields.items():
        spec = cli_of(op, name)
        assert spec is not None, f"{op.__name__}.{name} has no Cli(...)"
        assert spec.role or info.description, f"{op.__name__}.{name} has no help text"
        assert spec.role or any(d.startswith("--") for d in spec.decls), f"{op.__name__}.{name}: no long option"
    assert set(op.positional) <= set(op.model_fields)
    assert op.model_config.get("frozen") and op.model_config.get("extra") == "forbid"
    doc = inspect.getdoc(op) or ""
    assert f"Example: loopx {' '.join(op.words)} " in doc, "the help shows the command in use"


@pytest.mark.parametrize("op", ALL, ids=_ids)
def test_the_command_takes_exactly_the_fields(op):
    command = tools.command(op.words, app)
    _, by_param = fast.options(command.func)
    expected = {cli_of(op, name).param for name in op.model_fields} | ({"redact"} if op.redact else set())
    assert set(by_param) == expected
    assert command.func.__doc__ == op.__doc__


@pytest.mark.parametrize("op", ALL, ids=_ids)
def test_the_api_method_takes_the_positional_fields_by_position_and_the_rest_by_keyword(op):
    getattr(StateRepo.__new__(StateRepo), op.method)  # made on first use, then kept on the class
    method = vars(StateRepo)[op.method]
    params = list(inspect.signature(method).parameters.values())
    assert [p.name for p in params[1 : 1 + len(op.positional)]] == list(op.positional)
    keywords = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert keywords == [*(n for n in op.model_fields if n not in op.positional), "now"]
    assert op.method in dir(StateRepo.__new__(StateRepo))


@pytest.mark.parametrize("op", [op for op in ALL if op.use_when], ids=_ids)
def test_an_operation_that_says_when_to_use_it_is_served_as_a_tool(op):
    tool = tools.tool("loopx_" + "_".join(op.words).replace("-", "_"), app)
    assert tool.spec.use_when == op.use_when and tool.description.startswith(op.use_when)
    expected = {cli_of(op, name).param for name in op.model_fields} | ({"redact"} if op.redact else set())
    assert tool.names == expected


def _a_good_value(op: type[Operation], name: str) -> object:
    spec = cli_of(op, name)
    return [] if spec.ids else spec.choices[0] if spec.choices else "x"


def _an_ids_field(op: type[Operation]) -> str | None:
    return next((n for n in op.model_fields if cli_of(op, n).ids), None)


def _a_choices_field(op: type[Operation]) -> str | None:
    return next((n for n in op.model_fields if cli_of(op, n).choices), None)


@pytest.mark.parametrize("op", ALL, ids=_ids)
def test_bad_input_is_refused_naming_the_field_before_the_state_is_read(op):
    with pytest.raises(ValidationError, match="field 'no_such_field'") as raised:
        op.of(no_such_field="x")
    assert raised.value.code == "invalid-field"
    required = next(n for n, info in op.model_fields.items() if info.is_required() and n != "goal_id")
    with pytest.raises(ValidationError, match=f"field '{required}'"):
        op.of(goal_id=GOAL)  # a required field left out
    complete = {n: _a_good_value(op, n) for n, info in op.model_fields.items() if info.is_required()}
    op.of(**complete)  # the good values are good
    with pytest.raises(ValidationError, match=f"field '{required}'"):
        op.of(**{**complete, required: 7})  # a number where text belongs: no coercion to "7"
    if (name := _an_ids_field(op)) is not None:
        with pytest.raises(ValidationError, match=f"field '{name}': one string where a list belongs"):
            op.of(**{**complete, name: "a,b"})
    if (name := _a_choices_field(op)) is not None:
        with pytest.raises(ValidationError, match=f"field '{name}': 'nonsense' is not one of"):
            op.of(**{**complete, name: "nonsense"})


def test_an_operation_is_a_frozen_value():
    op = OPERATIONS["todo_release"].of(goal_id=GOAL, todo_id="t1")
    with pytest.raises(Exception, match="frozen"):
        op.todo_id = "t2"  # type: ignore[misc]
    assert op == OPERATIONS["todo_release"].of(goal_id=GOAL, todo_id="t1")


def test_the_api_refuses_bad_input_with_nothing_written(repo, git_repo):
    tip = state_tip(git_repo)
    with pytest.raises(ValidationError, match="field 'blocks': one string where a list belongs"):
        repo.gate_open(GOAL, "g", owner_class="user", question="q?", blocks="t1")
    with pytest.raises(ValidationError, match="field 'decision'"):
        repo.gate_decide(GOAL, "g", decision="maybe", reason="r", decided_by_class="user")
    with pytest.raises(TypeError, match="positional"):
        repo.todo_release(GOAL, "t1", "alice")
    with pytest.raises(TypeError, match="two values"):
        repo.todo_release(GOAL, "t1", todo_id="t2")
    assert state_tip(git_repo) == tip


def test_a_method_and_run_are_the_same_write(repo):
    repo.todo_add(GOAL, "Ship", todo_id="ship")
    by_method = repo.gate_open(
        GOAL, "g1", owner_class="user", question="Ship?", blocks=["ship"], now="2026-03-02T00:00:00Z"
    )
    gate = OPERATIONS["gate_decide"].of(
        goal_id=GOAL, gate_id="g1", decision="approve", reason="ok", decided_by_class="user"
    )
    by_run = repo.run(gate, now="2026-03-02T00:00:01Z")
    assert by_method.record.gate_id == "g1" and by_run.record.status == "approved"
    assert by_run.commit != by_method.commit and by_run.changed


def test_an_unknown_method_is_still_an_attribute_error(repo):
    with pytest.raises(AttributeError, match="no attribute 'gate_opne'"):
        repo.gate_opne  # noqa: B018
    assert not hasattr(repo, "_private_thing")


def test_docs_cli_md_lists_every_declared_write_as_declared():
    from pathlib import Path

    from loopx_git.cli import declared as made
    from loopx_git.docblock import between

    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert between(text, made.REFERENCE_START, made.REFERENCE_END) + "\n" == made.reference(), (
        "docs/cli.md is out of date: run `python -m loopx_git.cli.declared docs/cli.md`"
    )
    for op in OPERATIONS.values():
        assert f"| `loopx {' '.join(op.words)}` |" in text

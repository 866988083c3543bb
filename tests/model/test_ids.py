import pytest
from pydantic import TypeAdapter, ValidationError

from loopx_git.model.ids import Id, new_id, new_ulid
from loopx_git.model.todo import ResumeCondition


@pytest.mark.parametrize("good", ["a", "todo-1", "todo_public_boundary_repair", "evt:1.2", "A" * 128])
def test_ids_accept_opaque_tokens(good):
    assert TypeAdapter(Id).validate_python(good) == good


@pytest.mark.parametrize("bad", ["", "-a", ".a", "a/b", "../x", "a b", "A" * 129, "é", "a\n", "a\r\n", "\na"])
def test_ids_refuse_paths_and_junk(bad):
    with pytest.raises(ValidationError):
        TypeAdapter(Id).validate_python(bad)


def test_new_ids_are_unique_and_time_sortable():
    ids = [new_id("evt") for _ in range(2000)]
    assert len(set(ids)) == 2000
    assert new_ulid()[:10] <= new_ulid()[:10]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("todo_done:t1", ResumeCondition("todo_done", todo_id="t1")),
        ("pr_merged:#12", ResumeCondition("pr_merged", pr_number=12)),
        ("pr_merged:org/repo#12", ResumeCondition("pr_merged", repository="org/repo", pr_number=12)),
        ("capacity_available:gpu", ResumeCondition("capacity_available", capacity="gpu")),
    ],
)
def test_resume_conditions_parse(text, expected):
    assert ResumeCondition.parse(text) == expected


def test_unqualified_pr_binds_to_task_repository():
    bound = ResumeCondition.parse("pr_merged:#12").bound_to("org/repo")
    assert bound == ResumeCondition("pr_merged", repository="org/repo", pr_number=12)
    assert ResumeCondition.parse("pr_merged:x/y#1").bound_to("org/repo").repository == "x/y"


@pytest.mark.parametrize(
    "bad",
    [
        "todo_done:",
        "pr_merged:12",
        "pr_merged:#0",
        "soon",
        "capacity_available:GPU",
        "todo_done:t1\n",
        "pr_merged:o/r#1\n",
        "capacity_available:gpu\n",
    ],
)
def test_bad_resume_conditions(bad):
    with pytest.raises(ValueError):
        ResumeCondition.parse(bad)


def test_a_final_newline_is_read_from_old_records_but_never_written():
    """Item 11: Python's `$` matches before a final newline; a read still takes what older versions
    wrote, a write (the WRITE_CONTEXT of domain.write.build) takes only the exact form."""
    import pydantic

    from loopx_git.model.record import WRITE_CONTEXT
    from loopx_git.model.todo import TodoItem

    data = {
        "todo_id": "t1",
        "text": "x",
        "updated_at": "2026-01-01T00:00:00Z",
        "task_repository": "owner/repo\n",
        "resume_when": "todo_done:t0\n",
    }
    assert TodoItem.model_validate(data).resume_condition == ResumeCondition("todo_done", todo_id="t0")
    with pytest.raises(pydantic.ValidationError):
        TodoItem.model_validate(data, context=WRITE_CONTEXT)
    assert ResumeCondition.parse("todo_done:t0\n", lenient=True).todo_id == "t0"
    for bad in ("TIMESTAMP", "2026-01-01T00:00:00Z\n"):
        with pytest.raises(pydantic.ValidationError):
            TodoItem.model_validate({**data, "task_repository": None, "resume_when": None, "updated_at": bad})

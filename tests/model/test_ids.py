import pytest
from pydantic import TypeAdapter, ValidationError

from loopx_git.model.ids import Id, new_id, new_ulid
from loopx_git.model.todo import ResumeCondition


@pytest.mark.parametrize("good", ["a", "todo-1", "todo_public_boundary_repair", "evt:1.2", "A" * 128])
def test_ids_accept_opaque_tokens(good):
    assert TypeAdapter(Id).validate_python(good) == good


@pytest.mark.parametrize("bad", ["", "-a", ".a", "a/b", "../x", "a b", "A" * 129, "é"])
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


@pytest.mark.parametrize("bad", ["todo_done:", "pr_merged:12", "pr_merged:#0", "soon", "capacity_available:GPU"])
def test_bad_resume_conditions(bad):
    with pytest.raises(ValueError):
        ResumeCondition.parse(bad)

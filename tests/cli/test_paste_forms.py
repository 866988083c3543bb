"""What people paste: a repository or a pull request as a URL (browser, clone, SSH), stored in the
forms the state branch keeps — ``owner/repo`` and ``owner/repo#N`` — through the real CLI and the
Python API alike. An address on another host is refused (exit 1, field and rule, ref unmoved)."""

from __future__ import annotations

import pytest

from tests.conftest import GOAL, state_tip

REPOSITORY_FORMS = [
    "example/parser",
    "https://github.com/example/parser",
    "https://github.com/example/parser.git",
    "https://github.com/example/parser/",
    "http://github.com/example/parser",
    "https://www.github.com/example/parser",
    "HTTPS://GitHub.com/example/parser",
    "git@github.com:example/parser.git",
    "git@github.com:example/parser",
    "ssh://git@github.com/example/parser.git",
    "github.com/example/parser",
    "www.github.com/example/parser",
]

PR_FORMS = [
    "https://github.com/example/parser/pull/7",
    "https://github.com/example/parser/pull/7/",
    "https://github.com/example/parser/pull/7/files",
    "https://github.com/example/parser/pull/7/commits/abc1234",
    "https://github.com/example/parser/pull/7#issuecomment-123456",
    "https://github.com/example/parser/pull/7?w=1",
    "http://www.github.com/example/parser/pull/7",
    "github.com/example/parser/pull/7",
]


@pytest.mark.parametrize("pasted", REPOSITORY_FORMS)
def test_each_form_of_a_repository_is_stored_as_owner_repo(cli, pasted):
    added = cli.json("todo", "add", "-g", GOAL, "--text", "Ship it", "--todo-id", "t1", "--task-repository", pasted)
    assert added["record"]["task_repository"] == "example/parser"
    assert cli.json("todo", "show", "-g", GOAL, "-t", "t1")["task_repository"] == "example/parser"


def test_the_python_api_stores_the_same_form(repo):
    todo = repo.todo_add(GOAL, "Ship it", todo_id="t1", task_repository="git@github.com:example/parser.git").record
    assert todo.task_repository == "example/parser"
    suggestion = repo.todo_suggest(GOAL, "Fuzz it", task_repository="https://github.com/example/parser").record
    assert suggestion.task_repository == "example/parser"
    waiting = repo.todo_add(GOAL, "Announce", resume_when="pr_merged:https://github.com/example/parser/pull/7")
    assert waiting.record.resume_when == "pr_merged:example/parser#7"
    fact = repo.event_append(GOAL, "pr_merge", pr_ref="https://github.com/example/parser/pull/7/files").record
    assert fact.code_refs.pr_ref == "example/parser#7"
    assert repo.todo(GOAL, waiting.record.todo_id).status == "open"


@pytest.mark.parametrize("pasted", PR_FORMS)
def test_a_pr_url_condition_is_stored_as_a_ref_and_woken_by_the_same_pr_as_a_url(cli, pasted):
    added = cli.json(
        "todo", "add", "-g", GOAL, "--text", "Announce", "--todo-id", "t1", "--resume-when", f"pr_merged:{pasted}"
    )
    assert (added["record"]["status"], added["record"]["resume_when"]) == ("deferred", "pr_merged:example/parser#7")
    merged = cli("event", "append", "-g", GOAL, "--kind", "pr_merge", "--pr-ref", pasted)
    assert merged.code == 0 and "woke t1" in merged.out
    assert cli.json("todo", "show", "-g", GOAL, "-t", "t1")["status"] == "open"
    [fact] = cli.json("events", "-g", GOAL, "--kind", "pr_merge")
    assert fact["code_refs"]["pr_ref"] == "example/parser#7"


@pytest.mark.parametrize(
    "condition, merged",
    [
        ("pr_merged:https://github.com/example/parser/pull/7", "example/parser#7"),
        ("pr_merged:example/parser#7", "https://github.com/example/parser/pull/7#issuecomment-1"),
    ],
)
def test_a_url_and_an_owner_repo_ref_name_the_same_pr(cli, condition, merged):
    cli.json("todo", "add", "-g", GOAL, "--text", "Announce", "--todo-id", "t1", "--resume-when", condition)
    assert "woke t1" in cli("event", "append", "-g", GOAL, "--kind", "pr_merge", "--pr-ref", merged).out
    assert cli.json("todo", "show", "-g", GOAL, "-t", "t1")["status"] == "open"


def test_an_unqualified_pr_binds_to_a_pasted_repository(cli):
    repository = ["--task-repository", "https://github.com/example/parser.git"]
    cli.json(
        "todo", "add", "-g", GOAL, "--text", "Announce", "--todo-id", "t1", "--resume-when", "pr_merged:#7", *repository
    )
    merged = cli("event", "append", "-g", GOAL, "--kind", "pr_merge", "--pr-ref", "github.com/example/parser/pull/7")
    assert "woke t1" in merged.out


def test_a_blocked_todo_takes_a_pr_url_on_update(cli):
    cli.json("todo", "add", "-g", GOAL, "--text", "Announce", "--todo-id", "t1")
    condition = "pr_merged:https://github.com/example/parser/pull/9/files"
    block = ["--status", "blocked", "--reason", "after the release PR", "--resume-when", condition]
    updated = cli.json("todo", "update", "-g", GOAL, "-t", "t1", *block)
    assert updated["record"]["resume_when"] == "pr_merged:example/parser#9"


@pytest.mark.parametrize(
    "args, field, problem",
    [
        (["--task-repository", "https://gitlab.com/example/parser"], "task_repository", "on gitlab.com"),
        (["--task-repository", "git@gitlab.com:example/parser.git"], "task_repository", "on gitlab.com"),
        (["--task-repository", "gitlab.com/example/parser"], "task_repository", "on gitlab.com"),
        (["--task-repository", "example/parser/extra"], "task_repository", "is not a repository"),
        (["--task-repository", "https://github.com/example/parser/tree/main"], "task_repository", "owner/repo"),
        (["--task-repository", "https://github.com/example"], "task_repository", "owner/repo"),
        (
            ["--resume-when", "pr_merged:https://gitlab.com/example/parser/-/merge_requests/7"],
            "resume_when",
            "on gitlab.com",
        ),
        (["--resume-when", "pr_merged:https://github.com/example/parser/issues/7"], "resume_when", "pull request"),
        (["--resume-when", "pr_merged:https://github.com/example/parser/pull/0"], "resume_when", "pull request"),
        (["--resume-when", "pr_merged:https://github.com/example/parser"], "resume_when", "pull request"),
    ],
)
def test_an_address_that_is_not_github_or_not_a_repository_is_refused(cli, git_repo, args, field, problem):
    tip = state_tip(git_repo)
    result = cli("todo", "add", "-g", GOAL, "--text", "Ship it", *args)
    assert result.code == 1, result.err
    assert f"field '{field}'" in result.err and problem in result.err
    assert "rule: " in result.err and "github.com" in result.err  # the accepted forms are named
    assert state_tip(git_repo) == tip


@pytest.mark.parametrize(
    "pasted, problem",
    [
        ("https://bitbucket.org/example/parser/pull-requests/7", "on bitbucket.org"),
        ("https://gitlab.com/example/parser/-/merge_requests/7", "on gitlab.com"),
        ("https://github.com/example/parser", "not a pull request URL"),
        ("https://github.com/example/parser/pulls", "not a pull request URL"),
        ("example/parser/pull/7", "not a PR ref"),
    ],
)
def test_a_pr_ref_that_is_not_a_github_pull_request_is_refused(cli, git_repo, pasted, problem):
    tip = state_tip(git_repo)
    result = cli("event", "append", "-g", GOAL, "--kind", "pr_merge", "--pr-ref", pasted)
    assert result.code == 1, result.err
    assert result.err.startswith("error[invalid-field]: field 'pr_ref': ") and problem in result.err
    assert "rule: a PR ref is one of #N, owner/repo#N or a github.com pull request URL" in result.err
    assert state_tip(git_repo) == tip

"""Which branch is the state branch: never one of the project's code, always one ``loopx connect`` made."""

from __future__ import annotations

from pathlib import Path

from loopx_git.errors import LoopxError, ValidationError
from loopx_git.store import layout
from loopx_git.store.git import GitRepo

CONFIG_KEY = "loopx.stateRef"


def not_code(
    git: GitRepo, ref: str, *, field: str = "state_branch", hint: str | None = None, linked: bool = True
) -> str:
    """``ref``, unless it is a branch of the project's code (checked out in a work tree, a
    remote's default branch): state written there would replace the project's files in its tip.
    ``linked=False`` lets a branch checked out in a linked work tree pass: the configured state
    branch may be checked out on purpose, to edit it with plain git (``loopx verify`` and
    ``repair`` must still read it), where a named ``--state-branch`` is refused everywhere."""
    aliased = git.symbolic_target(ref)
    if aliased is not None:  # `git symbolic-ref refs/heads/cur refs/heads/main`: a write would land on main
        raise ValidationError(
            f"field '{field}': {ref} is a symbolic ref to {aliased}; rule: the state branch is a branch of its own, "
            "never another name for one; nothing was read or written",
            code="state-branch-is-code",
            hint=hint or f"`git symbolic-ref --delete {ref}`, or name a branch of its own",
        )
    why = git.code_branches(linked=linked).get(ref)
    if why is None:
        tip = git.ref_target(ref)
        if tip is not None and not git.holds_path(tip, layout.ROOT_DOCUMENT, "goals"):
            raise ValidationError(
                f"field '{field}': {ref} holds neither {layout.ROOT_DOCUMENT} nor goals/ at its tip "
                f"({tip[:12]}): it is no state branch; rule: loopx reads and writes only a branch `loopx connect` "
                "made (repair would take every other file out of it); nothing was read or written",
                code="not-a-state-branch",
                hint=hint
                or f"leave --state-branch out (the default is {layout.DEFAULT_STATE_REF.removeprefix('refs/heads/')})",
            )
        return ref
    raise ValidationError(
        f"field '{field}': {ref} is {why}, a branch of the project's code; rule: the state branch is a "
        "branch of its own, never the checked-out branch, a remote's default branch or a branch with a "
        "work tree; nothing was read or written",
        code="state-branch-is-code",
        hint=hint
        or f"leave --state-branch out (the default is {layout.DEFAULT_STATE_REF.removeprefix('refs/heads/')})",
    )


def check_state_branch(path: str | Path, branch: str) -> str:
    """A ``--state-branch`` checked before any command runs, whether or not it reads the branch: a
    valid name, and, where ``path`` is in a repository, none of its code branches (``not_code``)."""
    ref = layout.state_ref(branch)
    try:
        git = GitRepo.discover(path)
    except LoopxError:
        return ref  # no repository: the command itself says so, if it needs one
    return not_code(git, ref)


def no_branch(ref: str):
    from loopx_git.errors import NotFoundError

    return NotFoundError(
        f"the state branch {ref} does not exist; only `loopx connect` creates one",
        code="no-state",
        hint=f"run `loopx connect` (with `--state-branch {ref.removeprefix('refs/heads/')}` to create "
        "this one), or check the --state-branch name",
    )

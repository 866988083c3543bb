"""The safety policy as committed at a revision: what a review or a verify of a range uses.

A range under review never supplies its own policy. A ``.publicsafe-allow`` or ``pyproject.toml``
inside the change (or in a work tree checked out from it, as CI does for a pull request) would let
a proposal allowlist its own secret, so reviews read the policy of a trusted, base-side commit.
"""

from __future__ import annotations

from loopx_git.safety.policy import ALLOW_FILE, DEFAULT_POLICY, Policy, load
from loopx_git.store.git import GitRepo

POLICY_FILES = ("pyproject.toml", ALLOW_FILE)


def committed_policy(git: GitRepo, rev: str | None) -> Policy:
    """The policy in the tree of commit ``rev`` (None, or a tree without the files: the defaults)."""
    if rev is None:
        return DEFAULT_POLICY
    tree = git.commit(rev).tree

    def read(name: str) -> str | None:  # the team's rule files too (.loopx-safety.toml, gitleaks_config)
        leaf = git.leaf(tree, name)
        return git.read_blob(leaf.oid).decode("utf-8", "replace") if leaf is not None else None

    return load(read("pyproject.toml"), read(ALLOW_FILE), read)

"""The folded state of a state branch, through the tip-keyed cache: the one wiring of the
store's reader to the model's fold, shared by the API and by views that need the state at a commit."""

from __future__ import annotations

from loopx_git.model.fold import extend, fold
from loopx_git.model.state import FOLD_VERSION, PAYLOAD_KINDS
from loopx_git.store.cache import FoldCache
from loopx_git.store.git import GitRepo
from loopx_git.store.reader import StateReader


def state_reader(git: GitRepo, ref: str) -> StateReader:
    return StateReader(git, FoldCache(git.common_dir, ref, FOLD_VERSION), fold, extend, PAYLOAD_KINDS)

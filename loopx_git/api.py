"""``StateRepo``: the Python API, and the object the CLI drives. It is composed of the families of
``loopx_git/app/`` (one class per protocol family over ``app.core.Core``): each wires the store,
the domain operations (writes) and the views (reads) together; none holds rules of its own. The
declared operations (``domain/operation.py``: ``gate_open``, ``todo_release``...) are methods too,
made from their declarations on first use."""

from __future__ import annotations

from loopx_git.app.branch import CONFIG_KEY, check_state_branch, not_code
from loopx_git.app.connection import Connection
from loopx_git.app.explore import Explore
from loopx_git.app.gates import Gates
from loopx_git.app.goals import Goals
from loopx_git.app.handoffs import Handoffs
from loopx_git.app.ledger import Ledger
from loopx_git.app.quota import Quota
from loopx_git.app.remotes import Remotes
from loopx_git.app.result import WriteResult
from loopx_git.app.rewards import Rewards
from loopx_git.app.rollbacks import Rollbacks
from loopx_git.app.todos import Todos
from loopx_git.app.upkeep import Upkeep
from loopx_git.app.views import Views

__all__ = ["CONFIG_KEY", "StateRepo", "WriteResult", "check_state_branch", "not_code"]


class StateRepo(
    Connection, Goals, Todos, Gates, Handoffs, Rewards, Ledger, Explore, Rollbacks, Quota, Views, Remotes, Upkeep
):
    """One repository's state branch, read and written: ``loopx_git.open(path)`` or
    ``StateRepo.open(path, state_ref=...)``; use it as a context manager (``close`` keeps the folded
    state for the next process). Every write is one commit and returns a ``WriteResult``."""

"""``python -m loopx_git``: the same entry as the ``loopx`` script, fast path for hooks included.
Hook shims fall back to it when the script is gone but the interpreter that installed them is not."""

from loopx_git.cli.entry import run

run()

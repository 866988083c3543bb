"""Git hook entry points (``loopx hook run``), the shim installer that chains existing hooks,
and the checks both share. Imports stay lazy: this code runs on every commit."""

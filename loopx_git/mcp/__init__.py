"""``loopx mcp``: the Model Context Protocol server, a front end beside the CLI.

Each tool is one ``loopx`` command: its input schema is built from the command's own option
declarations (``tools.py``), a call runs the command in-process with ``--format json`` and hands back
what it printed (``calls.py``), and ``server.py`` speaks the protocol over stdio through the ``mcp``
SDK (the optional extra ``loopx-git[mcp]``). So a tool validates, writes and refuses exactly as the
command does: one commit per write, compare-and-swap on the state ref, the same error codes.
"""

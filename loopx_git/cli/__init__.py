"""The ``loopx`` command: parse, call the API, render. The only package that imports typer."""

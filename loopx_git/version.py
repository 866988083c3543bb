"""The version of loopx-git, where every layer can read it (``loopx_git.__version__`` is the same)."""

__version__ = "0.1.0"

"""The state branch in git. The only package that imports pygit2."""

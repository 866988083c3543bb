"""Planted-secret shapes, one module per rule family of loopx_git/safety/catalog/ (same names)."""

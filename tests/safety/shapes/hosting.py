"""Shapes of code hosting, registries and tools: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

from tests.safety.parts import URLSAFE, Shape, cat, rand

SHAPES: dict[str, list[Shape]] = {
    "github-token": [
        lambda r: cat("gh", "p_", rand(r, 36)),
        lambda r: cat("GH_TOKEN=gh", "s_", rand(r, 36)),
        lambda r: cat("oauth gh", "o_", rand(r, 36), " for the app"),
        lambda r: cat("github", "_pat_", rand(r, 22), "_", rand(r, 59)),
    ],
    "gitlab-token": [
        lambda r: cat("gl", "pat-", rand(r, 20, URLSAFE)),
        lambda r: cat("deploy token gl", "dt-", rand(r, 24, URLSAFE)),
        lambda r: cat("RUNNER=gl", "rt-", rand(r, 22, URLSAFE)),
    ],
    "npm-token": [
        lambda r: cat("//registry.npmjs.org/:_authToken=np", "m_", rand(r, 36)),
        lambda r: cat("NPM_TOKEN=np", "m_", rand(r, 36)),
        lambda r: cat("publish with np", "m_", rand(r, 36)),
    ],
    "pypi-token": [
        lambda r: cat("py", "pi-AgEIcHlwaS5vcmc", rand(r, 60, URLSAFE)),
        lambda r: cat("TWINE_PASSWORD=py", "pi-AgENdGVzdC5weXBpLm9yZw", rand(r, 50, URLSAFE)),
        lambda r: cat("token py", "pi-AgEIcHlwaS5vcmc", rand(r, 70, URLSAFE), " for upload"),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = []

"""Code hosting, package registries and developer tools."""

from __future__ import annotations

from loopx_git.safety.rule import BLOCK, Rule, random_enough

RULES: tuple[Rule, ...] = (
    Rule(
        "github-token",
        BLOCK,
        "GitHub token",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        (r"(?<![A-Za-z0-9_])(?P<s>gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})(?![A-Za-z0-9_])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
    Rule(
        "gitlab-token",
        BLOCK,
        "GitLab token",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "gloas-", "gr1348941"),
        (
            r"(?<![A-Za-z0-9_-])(?P<s>(?:glpat|gldt|glrt|glptt|glcbt|gloas)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})"
        ),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
    Rule(
        "npm-token",
        BLOCK,
        "npm access token",
        ("npm_",),
        (r"(?<![A-Za-z0-9_])(?P<s>npm_[A-Za-z0-9]{36})(?![A-Za-z0-9])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
    Rule(
        "pypi-token",
        BLOCK,
        "PyPI API token",
        ("pypi-",),
        (r"(?P<s>pypi-AgE[A-Za-z0-9_-]{40,})"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
)

"""AI model providers."""

from __future__ import annotations

from loopx_git.safety.rule import BLOCK, Rule, random_enough

RULES: tuple[Rule, ...] = (
    Rule(
        "openai-api-key",
        BLOCK,
        "OpenAI API key",
        ("sk-",),
        (
            r"(?<![A-Za-z0-9_-])(?P<s>sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9]{20,}T3BlbkFJ[A-Za-z0-9]{20,}"
            r"|sk-[A-Za-z0-9]{48})(?![A-Za-z0-9_-])"
        ),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
    Rule(
        "anthropic-api-key",
        BLOCK,
        "Anthropic API key",
        ("sk-ant-",),
        (r"(?<![A-Za-z0-9_-])(?P<s>sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{32,})"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
    Rule(
        "huggingface-token",
        BLOCK,
        "Hugging Face access token",
        ("hf_",),
        (r"(?<![A-Za-z0-9_])(?P<s>hf_[A-Za-z]{34,40})(?![A-Za-z0-9])"),
        fingerprint_only=True,
        accept=random_enough(3.0),
    ),
)

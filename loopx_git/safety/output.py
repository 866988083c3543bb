"""What loopx prints never carries a secret: the one mask every front end (the CLI's streams, the
MCP server's answers) puts its output through.

Standard library and the scanner only, and the scanner (the rule catalogue: some 30 ms of import)
only once something is printed: it runs in every CLI process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from loopx_git.errors import LoopxError

if TYPE_CHECKING:
    from loopx_git.safety.policy import Policy

PIECE = 8
"""The shortest piece of a secret looked for on its own: shorter ones are common in any text."""


class OutputMask:
    """What a front end prints passes through here, however it was built: an error quoting a value
    (whole, clipped, in quotes, escaped), a table, JSON, help. Two things are masked:

    - the values this process was handed (``learn``: arguments, ``LOOPX_*``, the repository's
      ``loopx.*`` configuration) that a rule flags, by their pieces: every run of at least ``PIECE``
      characters of a flagged piece is replaced wherever it appears, so a value is masked even where
      the message cut it short, repr-escaped the text around it or split it over lines;
    - whatever a blocking rule finds in the printed text itself (a secret already on the branch,
      written by plain git or an older loopx).

    The repository's own policy (``use_policy``: its allowlist, its team rules) decides, once the
    repository is known; until then the built-in rules do. Paths the user works in (``trust``: the
    current folder, the repository) are not masked: a home path there is the user's own."""

    def __init__(self, policy: Policy | None = None):
        self._policy = policy  # None: the built-in one, loaded with the rules at the first text
        self._load: Callable[[], Policy] | None = None
        self._values: list[str] = []
        self._paths: list[str] = []
        self._pieces: dict[str, str] = {}
        self._trusted: set[str] = set()
        self._stale = False

    def learn(self, value: object) -> None:
        """Remember ``value`` (a string; anything else is ignored): its flagged pieces are masked."""
        if isinstance(value, str) and len(value) >= PIECE:
            self._values.append(value)
            self._stale = True

    def trust(self, path: object) -> None:
        """Never mask what a rule finds in ``path`` (a folder the user works in)."""
        if isinstance(path, str) and path:
            self._paths.append(path)
            self._stale = True

    def use_policy(self, load: Callable[[], Policy]) -> None:
        """Mask by the policy ``load`` returns (read when first needed; the built-in one if it fails)."""
        self._load = load
        self._stale = True

    @property
    def policy(self) -> Policy:
        self._settle()
        assert self._policy is not None
        return self._policy

    def _settle(self) -> None:
        """Scan what was learned, by the policy that decides. The rules are imported here, at the first
        text a command prints: a command that prints nothing loads none."""
        if not self._stale and self._policy is not None:
            return
        from loopx_git.safety.policy import DEFAULT_POLICY
        from loopx_git.safety.scan import marker, scan

        self._stale = False
        if self._load is not None:
            load, self._load = self._load, None
            try:
                self._policy = load()
            except LoopxError:  # a broken policy is refused where it is read for a write, not here
                self._policy = DEFAULT_POLICY
        policy = self._policy = self._policy or DEFAULT_POLICY
        self._trusted = {f.fingerprint for path in self._paths for f in scan(path, policy, inline=False)}
        self._pieces = {}
        for value in self._values:
            for finding in scan(value, policy, inline=False):
                if not finding.blocks or finding.fingerprint in self._trusted:
                    continue
                for start, end in finding.spans:
                    piece = value[start:end]
                    if len(piece) >= PIECE:
                        self._pieces.setdefault(piece, marker(finding.rule))

    @property
    def knows_values(self) -> bool:
        self._settle()
        return bool(self._pieces)

    def text(self, text: str) -> str:
        if not text:
            return text
        from loopx_git.safety.scan import redacted, scan

        policy = self.policy
        text = self._known(text)
        found = [f for f in scan(text, policy, inline=False) if f.blocks and f.fingerprint not in self._trusted]
        return redacted(text, found) if found else text

    def data(self, value: object) -> object:
        """``value`` (JSON data) with every string that JSON or YAML would print with escapes masked
        on its own: a line break dumped as ``\\n``, a control character as ``\\v``, a quote as
        ``\\"`` set a secret's pieces apart, and it is whole only here. The other strings are left
        to ``text`` over the printed answer (one scan, not one a string)."""
        if isinstance(value, str):
            return self.text(value) if _escaped_when_dumped(value) else value
        if isinstance(value, dict):
            return {key: self.data(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(item) for item in value]
        return value

    def _known(self, text: str) -> str:
        """``text`` with every run of ``PIECE`` or more characters of a learned piece masked."""
        if not self._pieces:
            return text
        spans: list[tuple[int, int, str]] = []
        for piece, mark in self._pieces.items():
            for i in range(len(piece) - PIECE + 1):
                gram = piece[i : i + PIECE]
                at = text.find(gram)
                while at >= 0:
                    spans.append((at, at + PIECE, mark))
                    at = text.find(gram, at + 1)
        if not spans:
            return text
        spans.sort()
        merged: list[list] = []
        for start, end, mark in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end, mark])
        out, at = [], 0
        for start, end, mark in merged:
            out += [text[at:start], mark]
            at = end
        out.append(text[at:])
        return "".join(out)


def _escaped_when_dumped(value: str) -> bool:
    """Whether JSON (``ensure_ascii`` either way) or YAML may print ``value`` with an escape."""
    return not (value.isascii() and value.isprintable()) or any(c in value for c in "\"'\\")

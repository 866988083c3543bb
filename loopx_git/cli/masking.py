"""Every character the CLI prints passes one mask (``safety/output.py``): for the length of a command
the standard streams are wrapped, so no way to stdout or stderr is left out — a renderer, an error
and its hint, click's usage message, typer's help, a warning after a commit. The values the command
was handed (its arguments, ``LOOPX_*``, the repository's ``loopx.*`` configuration) are learned first,
so a refusal that quotes one, however it cut or escaped it, prints it masked; and what a rule finds
in the output itself (a secret already on the branch) is masked too.

Output is held until a flush, or until a chunk of it ends a line: a value is never masked in half
by a write that cut it. A string of several lines is masked where it is rendered (``data``,
``multiline``), because a line at a time would not see a secret cut over its breaks.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loopx_git.safety.output import OutputMask

CONFIG_KEYS = ("loopx.goal", "loopx.agent", "loopx.stateRef", "loopx.pruneExpire")
"""The configuration loopx reads as defaults: values a refusal may quote."""
ENV_PREFIX = "LOOPX_"

CHUNK = 1 << 16
"""Characters held before the ones up to the last line break are masked and written."""

_CURRENT: ContextVar[OutputMask | None] = ContextVar("output_mask", default=None)


def new_mask(values: Iterable[object] = ()) -> OutputMask:
    """A mask that knows ``values`` and the environment's ``LOOPX_*`` variables, and trusts the
    current folder, the user's home and loopx's own installation (a path there is the user's own,
    printed to the user: ``dashboard --out ~/site``, ``doctor``)."""
    from loopx_git.safety.output import OutputMask

    mask = OutputMask()
    with contextlib.suppress(OSError):  # a current folder that was deleted has no path to trust
        mask.trust(os.getcwd())
    mask.trust(os.path.expanduser("~"))  # the user's own home, and where loopx itself is installed
    mask.trust(sys.prefix)
    for value in values:
        mask.learn(value)
    for name, value in os.environ.items():
        if name.startswith(ENV_PREFIX):
            mask.learn(value)
    return mask


def current() -> OutputMask | None:
    return _CURRENT.get()


def learn(value: object) -> None:
    mask = _CURRENT.get()
    if mask is not None:
        mask.learn(value)


def learn_repo(git: Any) -> None:
    """What a repository adds: its ``loopx.*`` configuration (learned), its work tree (trusted)."""
    mask = _CURRENT.get()
    if mask is None or git is None:
        return
    workdir = getattr(git, "workdir", None)
    if workdir is not None:
        from loopx_git.safety.policy import load_from

        mask.trust(str(workdir))
        mask.use_policy(lambda: load_from(workdir))  # its allowlist: a value it lets through is shown
    for key in CONFIG_KEYS:
        mask.learn(git.config_get(key))


def data(value: Any) -> Any:
    """JSON data with its strings of several lines masked (see ``OutputMask.data``)."""
    mask = _CURRENT.get()
    return value if mask is None else mask.data(value)


def multiline(text: str, escaped: str | None = None) -> str:
    """A string about to be printed as text, masked on its own where the printed text would hide a
    secret from the mask over the output: it spans lines (a secret cut over them), or it holds
    characters printed escaped (``escaped`` differs: ``Bearer\\x0b<token>`` matches no rule)."""
    mask = _CURRENT.get()
    if mask is None or ("\n" not in text and "\r" not in text and (escaped is None or escaped == text)):
        return text
    return mask.text(text)


def cell(text: str) -> str:
    """A table cell masked on its own, before rich lays it out: a cell wrapped over lines sets its
    pieces apart, with the other columns between them."""
    mask = _CURRENT.get()
    return text if mask is None or not text else mask.text(text)


@contextmanager
def masked_output(mask: OutputMask) -> Iterator[OutputMask]:
    """``sys.stdout`` and ``sys.stderr`` wrapped in ``mask`` until the block ends (then flushed and
    put back: the caller's own streams, a test's capture, are never left wrapped)."""
    out, err = sys.stdout, sys.stderr
    token = _CURRENT.set(mask)
    sys.stdout, sys.stderr = MaskedStream(out, mask), MaskedStream(err, mask)
    try:
        yield mask
    finally:
        try:
            sys.stderr.flush()
            sys.stdout.flush()
        finally:
            sys.stdout, sys.stderr = out, err
            _CURRENT.reset(token)


class MaskedStream:
    """A text stream whose writes reach ``stream`` masked. Everything else (``isatty``,
    ``fileno``, ``encoding``) is the wrapped stream's, so rich and click decide as they did."""

    def __init__(self, stream: Any, mask: OutputMask):
        self._stream = stream
        self._mask = mask
        self._held: list[str] = []
        self._size = 0
        self._lock = threading.RLock()  # rich's progress bar refreshes from a thread of its own

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # as a text stream refuses bytes (click probes with b"")
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        with self._lock:
            self._held.append(text)
            self._size += len(text)
            if self._size > CHUNK:
                self._drain(whole_lines=True)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        with self._lock:
            self._drain()
            self._stream.flush()

    def _drain(self, whole_lines: bool = False) -> None:
        if not self._held:
            return
        text = "".join(self._held)
        rest = ""
        if whole_lines:
            cut = text.rfind("\n") + 1
            if cut == 0:
                return  # one long line: held until it ends or is flushed
            text, rest = text[:cut], text[cut:]
        self._held, self._size = ([rest], len(rest)) if rest else ([], 0)
        self._stream.write(self._mask.text(text))

    @property
    def unmasked(self) -> Any:
        """The stream underneath, for output that is not loopx's own (``fire`` relays COMMAND's
        stderr as it comes). Whatever was held for it is written first, so the order stays."""
        self.flush()
        return self._stream

    @property
    def buffer(self) -> Any:
        inner = getattr(self._stream, "buffer", None)
        return None if inner is None else _MaskedBuffer(self, inner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _MaskedBuffer:
    """The byte stream under a ``MaskedStream`` (YAML is written as UTF-8 bytes whatever the locale):
    decoded, masked and encoded again."""

    def __init__(self, text: MaskedStream, inner: Any):
        self._text, self._inner = text, inner

    def write(self, data: bytes) -> int:
        self._text.flush()
        shown = self._text._mask.text(data.decode("utf-8", "surrogateescape"))
        self._inner.write(shown.encode("utf-8", "surrogateescape"))
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

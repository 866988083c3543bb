"""What a write returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loopx_git.domain.write import Write


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the commit (None when nothing changed), its events, and the record."""

    commit: str | None
    write: Write
    redactions: tuple = ()
    """What ``redact=True`` replaced: field, rule and fingerprint of each value (never the value)."""
    warnings: tuple = ()
    """Warn-level findings (an e-mail address, a private IP) that did not stop the write."""

    @property
    def record(self) -> Any:
        return self.write.result

    @property
    def event_ids(self) -> list[str]:
        return [e.event_id for e in self.write.events]

    @property
    def changed(self) -> bool:
        return self.commit is not None

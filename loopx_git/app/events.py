"""The rollout event log: appended, imported, exported; run history, refreshes and derived views."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_git.app.core import Core, OnFirstUse
from loopx_git.app.result import WriteResult
from loopx_git.errors import ValidationError

event_ops = OnFirstUse("loopx_git.domain.event")
run_ops = OnFirstUse("loopx_git.domain.run")

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator


class Events(Core):
    def event_append(self, goal_id: str, kind: str, *, now: str | None = None, **kw: Any) -> WriteResult:
        return self.apply(lambda s: event_ops.append_event(s, goal_id=goal_id, kind=kind, now=self._now(now), **kw))

    def events_import(
        self, goal_id: str, lines: Iterable[bytes], *, chunk_size: int | None = None, progress: Any = None
    ) -> Any:
        """Append another rollout-event log's lines (``loopx_rollout_event_v0`` JSON Lines) to
        ``goal_id`` as ``rollout_import`` events: every line is checked, and safety-scanned, before
        the first commit; then one commit per chunk, skipping lines whose event id the goal imported
        before. ``progress(done, total)`` is called after each chunk."""
        import functools

        from loopx_git.domain import interop
        from loopx_git.domain.guard import guard
        from loopx_git.errors import SafetyError
        from loopx_git.model.state import require_goal

        require_goal(self.state(), goal_id)
        parsed = interop.read_log(lines, goal_id)
        redactions: tuple = ()
        if parsed:  # every line scanned (and with redact, cleaned) before the first commit
            try:
                guarded = guard(interop.checking(goal_id, parsed), self.policy, redact=self.redact)
            except SafetyError:
                for line in parsed:  # name the first refused line
                    try:
                        guard(interop.checking(goal_id, [line]), self.policy, redact=self.redact)
                    except SafetyError as exc:
                        raise SafetyError(f"line {line.number}: {exc.message}", hint=exc.hint) from None
                raise
            if guarded.redactions:  # the record as written is the redacted one: its id is its hash
                parsed = interop.reidentified(parsed, guarded.write.events)
                redactions = tuple(guarded.redactions)
        commits: list[str] = []
        imported = differing = 0
        size = chunk_size or interop.IMPORT_CHUNK
        done = 0
        for chunk in interop.chunks(parsed, size):
            result = self.apply(functools.partial(interop.import_write, goal_id=goal_id, lines=chunk))
            differing += result.write.result
            if result.commit is not None:
                commits.append(result.commit)
                imported += len(result.write.events)
            done += len(chunk)
            if progress is not None:
                progress(done, len(parsed))
        return interop.EventsImport(
            goal_id=goal_id,
            lines=len(parsed),
            imported=imported,
            already_present=len(parsed) - imported - differing,
            differing=differing,
            commits=commits,
            redacted_fields=len(redactions),
        )

    def events_export(self, goal_id: str) -> Iterator[str]:
        """The goal's events as JSON Lines (one ``loopx_rollout_event_v0`` record each, no newline),
        in fold order: what ``events_import`` reads back."""
        from loopx_git.domain.interop import export_line

        return (export_line(e) for e in self.events(goal_id))

    def refresh_state(self, goal_id: str, classification: str, *, now: str | None = None, **kw: Any) -> WriteResult:
        result = self.apply(
            lambda s: run_ops.refresh_state(s, goal_id=goal_id, classification=classification, now=self._now(now), **kw)
        )
        return self._with_evidence_notes(result, kw.get("evidence", ()))

    def events(self, goal_id: str, **filters: Any) -> list:
        from loopx_git.views.listing import list_events

        tip = self.tip
        return list_events(self.reader, tip, self.reader.state_at(tip), goal_id, **filters)

    def history(self, goal_id: str, **filters: Any) -> list:
        """Run records, newest first, each with the rewards given for it (``HistoryEntry``)."""
        from loopx_git.views.listing import run_history

        tip = self.tip
        return run_history(self.reader, tip, self.reader.state_at(tip), goal_id, **filters)

    def view(self, goal_id: str, kind: str, subject: str, *, include_task_graph: bool = False):
        """A derived view (``loopx_derived_view_v0``) of one agent, todo, case, benchmark or run over
        the goal's event stream; ``include_task_graph`` adds ``task_graph_projection_v0``."""
        from loopx_git.views.derived import VIEW_KINDS, derived_view

        if kind not in VIEW_KINDS:
            raise ValidationError(
                f"field 'kind': {kind!r} is not a view; rule: one of {', '.join(VIEW_KINDS)}", code="invalid-field"
            )
        tip = self.tip
        gs = self._goal_state(goal_id)
        files = self.reader.goal_files(tip, goal_id, "events")
        return derived_view(gs, self.reader, files, kind, subject, include_task_graph=include_task_graph)

"""Rollbacks: compensating commits for an event or a commit, and packets recorded as they are."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_git.app.events import Events
from loopx_git.app.result import WriteResult
from loopx_git.errors import RuleError
from loopx_git.store import layout

if TYPE_CHECKING:
    pass


class Rollbacks(Events):
    def rollback(
        self,
        goal_id: str,
        *,
        event_id: str | None = None,
        commit: str | None = None,
        reason: str | None = None,
        trigger: str = "mistaken_transition",
        dry_run: bool = False,
        force_later_changes: bool = False,
        actor: str | None = None,
        now: str | None = None,
    ) -> WriteResult:
        """Compensate an event (with the events it caused) or a commit of the state branch: a
        rollback_packet_v0 plus compensating events, as one commit. A commit of the project itself
        gets a packet with a gated ``git_revert`` step and a todo; nothing is reverted."""
        from loopx_git.domain import rollback as ops
        from loopx_git.domain import rollback_packets as packets
        from loopx_git.errors import ValidationError

        if (event_id is None) == (commit is None):
            raise ValidationError("fields 'event' and 'commit': give exactly one", code="invalid-field")
        events = self.events(goal_id)
        if commit is not None:
            sha = self.git.rev_parse(commit)
            tip = self.tip
            if tip is None or not self.git.is_ancestor(sha, tip):
                return self._write_or_preview(
                    dry_run,
                    lambda s: packets.rollback_commit(
                        s,
                        goal_id=goal_id,
                        commit_ref=sha,
                        reason=reason,
                        trigger=trigger,
                        actor=actor,
                        now=self._now(now),
                    ),
                )
            if len(self.git.commit(sha).parents) > 1:
                raise RuleError(
                    f"field 'commit': {sha[:12]} is a merge of two clones' histories, which wrote no event of "
                    "its own; rule: a rollback undoes the commit that wrote a transition, or its event (--event)",
                    code="merge-commit",
                    hint="`git log --no-merges -1 --format=%H loopx/state` names the last commit that wrote one; "
                    "`loopx events` lists the events",
                )
            added = {path for path, _ in self.git.added_records(sha)}
            targets = [
                e for e in events if not added.isdisjoint(layout.event_paths(e.goal_id, e.event_id, e.recorded_at))
            ]
            refs = [sha]
        else:
            assert event_id is not None  # exactly one of the two is given
            targets, refs = ops.targets_of(events, event_id), []
        later = ops.later_changes(targets, events)
        return self._write_or_preview(
            dry_run,
            lambda s: ops.rollback(
                s,
                goal_id=goal_id,
                targets=targets,
                later=later,
                reason=reason,
                trigger=trigger,
                force_later_changes=force_later_changes,
                commit_refs=refs,
                actor=actor,
                now=self._now(now),
            ),
        )

    def record_rollback(
        self, goal_id: str, packet: dict, *, actor: str | None = None, now: str | None = None
    ) -> WriteResult:
        """Record a packet written elsewhere (a reviewer's plan) as it is. Nothing in it is executed:
        its steps wait for their owners, and a history_rewrite is never automatic."""
        from loopx_git.domain import rollback_packets as packets

        return self.apply(lambda s: packets.record(s, goal_id=goal_id, packet=packet, actor=actor, now=self._now(now)))

    def rollbacks(self, goal_id: str) -> list:
        gs = self._goal_state(goal_id)
        return sorted(gs.rollbacks.values(), key=lambda p: (p.created_at, p.packet_id))

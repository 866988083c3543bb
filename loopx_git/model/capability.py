"""The records of the explicit-only live research gate (seed 002, M3): the goal's explore policy, the
capability guard a successor todo carries, and the retirement of a duty its source facts invalidated.

The gate itself — which gaps are live, which obligation an idle agent owes, whether a guard still
holds — is worked out from the folded state in ``model/research_gate.py``; these are only its data.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple

from pydantic import Field

from loopx_git.model.ids import Id
from loopx_git.model.record import Line, Record
from loopx_git.model.research import InputObservation

GUARD_SCHEMA: Final = "research_capability_guard_v0"
RETIREMENT_SCHEMA: Final = "capability_obligation_retirement_v0"
RETIRED_NO_SPEND: Final = "capability_duty_retired_no_spend"
JOINT_PROBE: Final = "joint_probe"


@dataclass(frozen=True)
class ExplorePolicy:
    """The goal's explore policy (``loopx configure-goal``). The live gate is on only when the harness
    is enabled and composition is explicit_only; ``scope_id`` is the coverage scope a joint result
    names before it counts as live observed."""

    harness_enabled: bool = False
    composition_mode: str | None = None
    scope_id: str | None = None

    @property
    def active(self) -> bool:
        return self.harness_enabled and self.composition_mode == "explicit_only" and self.scope_id is not None

    @property
    def revision(self) -> str:
        """``policy-`` and 16 hex over the three settings: a guard pins the policy it was admitted under."""
        body = json.dumps([self.harness_enabled, self.composition_mode, self.scope_id], separators=(",", ":"))
        return "policy-" + hashlib.sha256(body.encode()).hexdigest()[:16]


class RetiredDuty(NamedTuple):
    """What the fold keeps of a retirement: enough to answer the old turn again, and to give the
    gap's next obligation a new id (model/research_gate.py)."""

    obligation_id: str
    run_id: str
    gap_id: str
    agent_id: str
    turn_instance_id: str
    progress_fingerprint: str


class CapabilityGuard(Record):
    """research_capability_guard_v0: the gap, its input observations and the policy a capability
    obligation was raised for. A successor todo carries it (``todo add --replan-obligation-id``):
    later changes to the inputs, the scope or the policy do not rewrite it, they make it stale."""

    schema_version: Literal["research_capability_guard_v0"] = GUARD_SCHEMA
    obligation_id: str = Field(pattern=r"^replan-[0-9a-f]{16}$")
    agent_id: Id
    gap_id: str
    input_observations: list[InputObservation]
    coverage_scope_id: Id
    policy_revision: str
    turn_instance_id: Id | None = None
    """The turn that admitted it, when the agent named one (``--turn-instance-id``)."""


class CapabilityRetirement(Record):
    """capability_obligation_retirement_v0: loopx's own proof, made when the write-back was accepted,
    that current source facts invalidated an admitted duty. It closes that duty only: no todo or goal
    is completed and no quota slot is spent."""

    schema_version: Literal["capability_obligation_retirement_v0"] = RETIREMENT_SCHEMA
    obligation_id: str
    agent_id: Id
    gap_id: str
    successor_todo_ids: list[Id]
    turn_instance_id: Id
    invalidated_by: list[Line]
    """What changed since the guard was admitted, one fact each."""
    progress_fingerprint: str
    closeout_kind: Literal["capability_duty_retired_no_spend"] = RETIRED_NO_SPEND


class DutyCloseout(Record):
    """What ``quota spend-slot`` (and a repeated retirement) answers for a run that retired a capability
    duty: no debit, nothing written."""

    schema_version: Literal["quota_closeout_v0"] = "quota_closeout_v0"
    run_id: Id
    obligation_id: str
    closeout_kind: Literal["capability_duty_retired_no_spend"] = RETIRED_NO_SPEND
    spent: Literal[False] = False


class PolicySettings(Record):
    harness_enabled: bool
    composition_mode: str | None = None
    coverage_scope_id: str | None = None
    active: bool
    """Whether the live research gate is on: the harness enabled and composition explicit_only."""
    revision: str

    @classmethod
    def of(cls, policy: ExplorePolicy) -> PolicySettings:
        return cls(
            harness_enabled=policy.harness_enabled,
            composition_mode=policy.composition_mode,
            coverage_scope_id=policy.scope_id,
            active=policy.active,
            revision=policy.revision,
        )


class PolicyChange(Record):
    """explore_policy_change_v0: what ``loopx configure-goal`` changes (a preview) or changed (with
    ``--execute``)."""

    schema_version: Literal["explore_policy_change_v0"] = "explore_policy_change_v0"
    goal_id: Id
    before: PolicySettings
    after: PolicySettings
    changed: bool
    executed: bool = False
    commit: str | None = None

"""The fixed sets of values options take. Declared as ``Literal`` types, so a value outside the set is a
usage error (exit 2) that lists the valid ones before anything is opened, and the command receives a
plain string. They are spelled out here rather than imported from ``model/``, which would load pydantic
for ``loopx --help``; tests/cli/test_options.py checks that each set equals the model's."""

from __future__ import annotations

from typing import Literal

Priority = Literal["P0", "P1", "P2", "P3", "P4"]
TodoRole = Literal["user", "agent"]
TaskClass = Literal["advancement_task", "continuous_monitor", "user_gate", "user_action", "blocker"]
TodoUpdateStatus = Literal["blocked", "deferred", "open"]
"""What ``todo update`` may set: done and superseded have their own commands."""
TodoListStatus = Literal["open", "done", "blocked", "deferred", "superseded"]
GoalStatus = Literal["active", "paused", "completed", "abandoned"]
CompositionMode = Literal["explicit_only", "disabled"]
AgentRole = Literal["worker", "reviewer", "controller", "observer"]
AppendableKind = Literal["pr_merge", "validation", "handoff", "quota", "repair", "failure", "note"]
"""The kinds ``event append`` writes: facts that change no document by themselves."""
EventKind = Literal[
    "goal_create",
    "goal_update",
    "agent_register",
    "todo_add",
    "todo_claim",
    "todo_update",
    "todo_resume",
    "todo_complete",
    "todo_supersede",
    "todo_suggest",
    "todo_promote",
    "pr_merge",
    "validation",
    "refresh_state",
    "handoff",
    "quota",
    "repair",
    "failure",
    "note",
    "rollback_plan",
    "todo_compensate",
    "goal_compensate",
    "ledger_add",
    "ledger_select",
    "ledger_record",
    "fire",
    "gate_open",
    "gate_decide",
    "reward_add",
    "handoff_prepare",
    "handoff_adopt",
    "handoff_cancel",
    "quota_spend",
    "rollout_import",
    "explore_node_add",
    "explore_node_update",
    "explore_edge_add",
    "explore_finding_add",
    "explore_observe",
]
ExportFormat = Literal["jsonl", "json", "yaml"]
"""What ``events export`` writes: JSON Lines (a rollout log), or one list."""
ListedKind = Literal[
    EventKind,
    "benchmark_launch",
    "benchmark_status",
    "capability_gap",
    "codex_session_observed",
    "compact_blocker",
    "compact_case_result",
    "failure_attribution",
    "quota_monitor_poll",
    "quota_should_run",
    "quota_void",
    "research_evidence",
    "research_hypothesis",
    "todo_archive_completed",
]
"""What ``events --kind`` takes: loopx's kinds, and those of upstream LoopX's log (an imported line's)."""
ProgressResultClass = Literal["advanced", "unchanged", "blocked", "exploration_exhausted", "no_followup"]
"""typed_progress_observation_v0's result classes (terminal: the last three)."""
DeliveryOutcome = Literal["surface_only", "outcome_gap", "outcome_progress", "primary_goal_outcome"]
ResourceSetup = Literal["success", "partial_success", "failed"]
LedgerWriteBack = Literal["pending", "blocked", "done"]
"""The statuses a write-back ends an iteration with (``active`` is what ``ledger next`` sets)."""
Verdict = Literal["MATCH", "DRIFT", "UNVERIFIABLE"]
LedgerNext = Literal["resume", "ask_user", "retry", "stop"]
ApproverCeiling = Literal["read_only", "workspace_write", "repo_push"]
RollbackTrigger = Literal[
    "public_boundary_leak",
    "mistaken_transition",
    "regression",
    "failed_validation",
    "operator_request",
    "external_incident",
]

GateOwnerClass = Literal["user", "controller", "agent", "external"]
GateDecision = Literal["approve", "reject", "defer"]
"""What ``gate decide`` records (``cancel`` comes only from a user_gate todo's decision outcome)."""
GateStatus = Literal["open", "approved", "rejected", "deferred", "cancelled"]
TodoDecisionOutcome = Literal["approve", "reject", "cancel"]
RewardPolarity = Literal["positive", "negative", "mixed", "neutral"]
LessonKind = Literal["route", "priority", "benchmark_protocol", "safety_boundary", "operating_rule"]
NodeKind = Literal["question", "area", "hypothesis", "experiment", "artifact"]
NodeStatus = Literal["open", "exploring", "blocked", "resolved", "dead_end"]
EdgeType = Literal["subtopic_of", "depends_on", "answers", "supports", "refutes", "leads_to"]
FindingState = Literal["tentative", "confirmed", "refuted"]
GraphFormat = Literal["mermaid", "json", "dot"]

MAX_BATCH_SCALE = 2**53 - 1
"""The largest ``--delivery-batch-scale``: the whole numbers JSON carries exactly (as domain/run.py)."""

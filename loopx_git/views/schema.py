"""JSON Schemas of every record and output, exported from the models (``loopx schema``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter


@dataclass(frozen=True)
class Output:
    module: str
    model: str
    """A pydantic model, or a TypeAdapter (the event union), in ``module``."""
    emitted_by: str
    """The commands whose ``--format json`` output this is (``[...]``: an array of them)."""


_OUT = "loopx_git.views.outputs"
OUTPUTS: dict[str, Output] = {
    "loopx_write_result_v0": Output(
        _OUT,
        "WriteResult",
        "every write: todo add|claim|update|complete|supersede|suggest|promote, goal create|update, agent "
        "register, event append, refresh-state, repair, rollback, rollback record, ledger add|record, "
        "gate open|decide, reward add, handoff prepare|adopt|cancel, quota spend-slot, explore node add|update, "
        "explore edge add, explore finding add, explore observe",
    ),
    "todo_item_v0": Output("loopx_git.model.todo", "TodoItem", "todo show; todo list [...]"),
    "suggested_todo_v0": Output("loopx_git.model.todo", "SuggestedTodo", "todo list --suggested [...]"),
    "loopx_goal_v0": Output("loopx_git.model.goal", "Goal", "goal show; goal list [...]"),
    "agent": Output("loopx_git.model.goal", "Agent", "agent list [...]"),
    "loopx_rollout_event_v0": Output("loopx_git.model.event", "EVENT_ADAPTER", "events [...]"),
    "loopx_run_record_v0": Output("loopx_git.model.run", "RunRecord", "history [...]"),
    "status_contract_v2": Output("loopx_git.views.status", "GoalCard", "status"),
    "goal_channel_projection_v0": Output(
        "loopx_git.views.status", "GoalChannelProjection", "status (its goal_channel_projection)"
    ),
    "loopx_verify_report_v0": Output("loopx_git.views.verify", "VerifyReport", "verify"),
    "loopx_sync_result_v0": Output(_OUT, "SyncResult", "sync; pull"),
    "loopx_push_result_v0": Output(_OUT, "PushResult", "push"),
    "loopx_propose_result_v0": Output(_OUT, "ProposeResult", "propose"),
    "loopx_connect_result_v0": Output(_OUT, "ConnectResult", "connect"),
    "loopx_disconnect_result_v0": Output(_OUT, "DisconnectResult", "disconnect"),
    "loopx_check_report_v0": Output(_OUT, "CheckReport", "check"),
    "loopx_check_rule_v0": Output(_OUT, "CheckRule", "check --rules [...]"),
    "loopx_safety_rule_v0": Output(_OUT, "SafetyRule", "safety rules [...]"),
    "loopx_doctor_report_v0": Output(_OUT, "DoctorReport", "doctor"),
    "loopx_gc_result_v0": Output(_OUT, "GcResult", "gc"),
    "loopx_dashboard_result_v0": Output("loopx_git.dashboard.build", "DashboardResult", "dashboard"),
    "loopx_prime_v0": Output("loopx_git.views.prime", "Prime", "prime"),
    "loopx_agents_md_v0": Output("loopx_git.views.prime", "AgentsMd", "agents-md"),
    "rollback_packet_v0": Output(
        "loopx_git.model.rollback", "RollbackPacket", "rollback show; rollback list [...]; a rollback's record"
    ),
    "loopx_rollback_dry_run_v0": Output(_OUT, "RollbackDryRun", "rollback --dry-run"),
    "loopx_review_diff_v0": Output("loopx_git.views.review_diff", "ReviewDiff", "review-diff --format json"),
    "loopx_ledger_entry_v0": Output(
        "loopx_git.model.ledger", "LedgerEntry", "ledger show; ledger list [...]; the record of ledger add|record"
    ),
    "loopx_ledger_action_v0": Output(_OUT, "LedgerAction", "ledger next (an entry was selected)"),
    "loopx_ledger_none_selected_v0": Output(_OUT, "NothingSelected", "ledger next (nothing runnable)"),
    "operator_gate_v0": Output(
        "loopx_git.model.gate", "OperatorGate", "gate show; gate list [...]; the record of gate open|decide"
    ),
    "agent_handoff_v0": Output(
        "loopx_git.model.handoff", "AgentHandoff", "handoff show; handoff list [...]; the record of handoff writes"
    ),
    "todo_suggestion_prompt_v0": Output("loopx_git.views.suggest", "SuggestionPrompt", "todo suggest --prompt"),
    "explore_node_v0": Output(
        "loopx_git.model.explore",
        "ExploreNode",
        "explore node show; explore node list [...]; the record of explore node add|update",
    ),
    "typed_research_observation_v0": Output(
        "loopx_git.model.research", "ResearchObservation", "explore observe's input (--observation-json)"
    ),
    "research_closure_basis_v0": Output(
        "loopx_git.model.research", "ClosureBasis", "explore observe's input (its closure_basis)"
    ),
    "research_execution_lineage_v0": Output(
        "loopx_git.model.research", "ExecutionLineage", "explore observe's input (its execution_lineage)"
    ),
    "research_composition_resolution_v0": Output(
        "loopx_git.model.research", "CompositionResolution", "explore observe's input (its composition_resolution)"
    ),
    "research_observation_receipt_v0": Output(
        "loopx_git.model.research", "ObserveReceipt", "the record of explore observe"
    ),
    "research_frontier_v0": Output("loopx_git.views.explore", "ResearchFrontier", "explore summary"),
    "research_execution_frontier_v0": Output(
        "loopx_git.views.explore", "ResearchExecutionFrontier", "explore summary --agent-id (live gate on)"
    ),
    "bounded_research_frontier_v0": Output(
        "loopx_git.views.explore", "BoundedResearchFrontier", "status --agent-id (live gate on)"
    ),
    "explore_policy_change_v0": Output("loopx_git.model.capability", "PolicyChange", "configure-goal"),
    "research_capability_guard_v0": Output(
        "loopx_git.model.capability", "CapabilityGuard", "a capability obligation's guard (should-run, a todo)"
    ),
    "capability_obligation_retirement_v0": Output(
        "loopx_git.model.capability", "CapabilityRetirement", "a run that retired a capability duty"
    ),
    "quota_closeout_v0": Output(
        "loopx_git.model.capability", "DutyCloseout", "quota spend-slot after a retirement (no debit)"
    ),
    "explore_graph_v0": Output("loopx_git.views.explore", "ExploreGraph", "explore graph --graph-format json"),
    "loopx_review_packet_v0": Output("loopx_git.views.packets", "ReviewPacket", "review-packet"),
    "todo_index_v0": Output("loopx_git.views.packets", "TodoIndex", "todo index"),
    "global_manager_command_v0": Output("loopx_git.views.packets", "ManagerCommand", "manager"),
    "loopx_protocol_check_v0": Output("loopx_git.views.protocol", "ProtocolReport", "protocol check"),
    "loopx_should_run_v0": Output("loopx_git.views.quota", "ShouldRun", "quota should-run"),
    "interaction_contract_v0": Output(
        "loopx_git.views.quota", "InteractionContract", "quota should-run (its interaction_contract)"
    ),
    "agent_workspace_guard_v1": Output(
        "loopx_git.views.quota",
        "WorkspaceGuard",
        "quota should-run (its agent_workspace_guard, when the goal names a delivery branch policy)",
    ),
    "agent_lane_next_action_v0": Output(
        "loopx_git.views.quota", "LaneNextAction", "quota should-run (its agent_lane_next_action)"
    ),
    "human_reward_v0": Output("loopx_git.model.reward", "HumanReward", "reward list [...]; the record of reward add"),
    "loopx_history_entry_v0": Output(
        "loopx_git.views.listing", "HistoryEntry", "history [...] (a run record with its rewards)"
    ),
    "loopx_fire_record_v0": Output("loopx_git.model.fire", "FireSummary", "fire"),
    "loopx_fire_result_v0": Output(
        "loopx_git.model.fire",
        "IterationResult",
        "what fire's COMMAND prints on the last line of its stdout (an input)",
    ),
    "loopx_conformance_report_v0": Output(_OUT, "ConformanceReport", "ledger conformance"),
    "loopx_schema_list_v0": Output(_OUT, "SchemaListing", "schema --list [...]"),
    "loopx_demo_v0": Output(_OUT, "DemoReport", "demo"),
    "loopx_derived_view_v0": Output("loopx_git.views.derived", "DerivedView", "view agent|todo|case|benchmark|run ID"),
    "task_graph_projection_v0": Output(
        "loopx_git.views.derived", "TaskGraph", "view ... --include-task-graph (its task_graph)"
    ),
    "typed_progress_observation_v0": Output(
        "loopx_git.model.progress", "ProgressObservation", "history [...] and refresh-state (a run's progress)"
    ),
    "replan_context_v0": Output(
        "loopx_git.views.replan_context",
        "ReplanContext",
        "quota should-run and review-packet -a A (its replan_context, with an open replan obligation)",
    ),
    "replan_context_delivery_receipt_v0": Output(
        "loopx_git.views.replan_context", "DeliveryReceipt", "replan_context_v0 (its delivery_receipt)"
    ),
    "loopx_events_import_v0": Output("loopx_git.domain.interop", "EventsImport", "events import"),
}


def _exported(name: str) -> Callable[[], Any]:
    return lambda: schema(name)


SCHEMAS: dict[str, Callable[[], Any]] = {name: _exported(name) for name in OUTPUTS}
ALIASES = {
    "event": "loopx_rollout_event_v0",
    "todo": "todo_item_v0",
    "suggested": "suggested_todo_v0",
    "goal": "loopx_goal_v0",
    "run": "loopx_run_record_v0",
    "status": "status_contract_v2",
    "loopx_status_v0": "status_contract_v2",  # the card's name before it grew into the seed's contract
    "verify": "loopx_verify_report_v0",
    "write": "loopx_write_result_v0",
    "sync": "loopx_sync_result_v0",
    "packet": "rollback_packet_v0",
    "review": "loopx_review_diff_v0",
    "ledger-entry": "loopx_ledger_entry_v0",
    "ledger_entry": "loopx_ledger_entry_v0",
    "fire": "loopx_fire_record_v0",
    "gate": "operator_gate_v0",
    "reward": "human_reward_v0",
    "handoff": "agent_handoff_v0",
    "explore-node": "explore_node_v0",
    "research-observation": "typed_research_observation_v0",
}


def _key(name: str) -> str:
    from loopx_git.errors import NotFoundError

    key = ALIASES.get(name, name)
    if key not in OUTPUTS:
        raise NotFoundError(
            f"schema '{name}' is unknown (known: {', '.join(sorted(OUTPUTS))}; aliases: {', '.join(sorted(ALIASES))})",
            code="not-found",
            hint="`loopx schema --list` lists them with the commands that print each",
        )
    return key


def adapter(name: str) -> TypeAdapter[Any]:
    """What validates an output named ``name`` (strictly: an extra or a missing key fails)."""
    import importlib

    out = OUTPUTS[_key(name)]
    found = getattr(importlib.import_module(out.module), out.model)
    if isinstance(found, TypeAdapter):
        return found
    union = getattr(found, "union", None)  # the event union is built on first use (model.event.EventAdapter)
    return union if isinstance(union, TypeAdapter) else TypeAdapter(found)


def schema(name: str) -> Any:
    return adapter(name).json_schema()


def listing() -> list[dict[str, str]]:
    """Every output's schema name and the commands that print it, sorted by name."""
    return [{"name": name, "emitted_by": OUTPUTS[name].emitted_by} for name in sorted(OUTPUTS)]

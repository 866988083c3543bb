"""Conformance to the loop-ledger contract (project-telos.loop-ledger/v1): checks a document in the
seed's format — the contract, ledger entries, iteration traces, headless fire traces — and names
each breach by the seed's failure code. Pure: JSON in, codes out.

A document is one of:
- the seed itself (``schema`` + ``contract`` + ``conformance_fixture``): the contract flags and every
  fixture case are checked;
- one case: any of ``contract``, ``entry`` (and ``previous_entry``), ``iteration``, ``fire``,
  ``headless_result``;
- a fire record written by ``loopx fire`` (``schema_version: loopx_fire_record_v0``).
"""
from __future__ import annotations

from typing import Any, Iterable

from loopx_git.model.fire import DANGEROUS_KINDS, Terminal
from loopx_git.model.ledger import LEDGER_SCHEMA, EntryStatus, Next, Verdict

FAILURE_CODES = (
    "ledger_missing", "todo_used_as_durable_state", "conversation_state_used_as_authority",
    "unverifiable_inherited_confidence", "multiple_actions_in_one_iteration", "evidence_missing",
    "headless_fire_unbounded", "dangerous_action_allowed", "ask_user_continued_headless", "terminal_status_missing",
)  # fmt: skip
CONTRACT_FLAGS = {
    "ledger_first_class": "ledger_missing", "ledger_durable": "ledger_missing",
    "fresh_context_reads_ledger_first": "ledger_missing", "todo_is_current_turn_scratchpad": "todo_used_as_durable_state",
    "conversation_state_is_not_authority": "conversation_state_used_as_authority",
    "one_action_per_iteration": "multiple_actions_in_one_iteration", "evidence_first_verify_gate": "evidence_missing",
    "unverifiable_required": "unverifiable_inherited_confidence",
    "unverifiable_must_not_inherit_confidence": "unverifiable_inherited_confidence",
}  # fmt: skip
ENTRY_FIELDS = ("id", "status", "claim", "action", "evidence", "verdict", "next", "updated_at")
TERMINALS = {t.value for t in Terminal}


def _entry(entry: Any, previous: Any = None) -> Iterable[str]:
    if not isinstance(entry, dict):
        yield "ledger_missing"
        return
    if any(name not in entry for name in ENTRY_FIELDS) or not isinstance(entry.get("evidence"), list):
        yield "ledger_missing"  # an entry without the ledger's shape is no ledger
    if entry.get("status") not in {s.value for s in EntryStatus} or entry.get("verdict") not in {v.value for v in Verdict} \
            or entry.get("next") not in {n.value for n in Next}:
        yield "ledger_missing"
    evidence = entry.get("evidence") or []
    if entry.get("status") == EntryStatus.done.value and not evidence:
        yield "evidence_missing"
    if isinstance(previous, dict) and previous.get("verdict") == Verdict.UNVERIFIABLE.value \
            and entry.get("verdict") == Verdict.MATCH.value \
            and not set(map(str, evidence)) - set(map(str, previous.get("evidence") or [])):
        yield "unverifiable_inherited_confidence"


def _iteration(it: Any) -> Iterable[str]:
    if not isinstance(it, dict):
        return
    if it.get("read_ledger_first") is not True:
        yield "ledger_missing"
    if it.get("state_source", "ledger") == "todo" or it.get("todo_promoted_to_durable_state"):
        yield "todo_used_as_durable_state"
    if it.get("authority", "ledger") == "conversation" or (it.get("conversation_summary_used") and not it.get("ledger_evidence")):
        yield "conversation_state_used_as_authority"
    if int(it.get("actions_executed", 1)) > 1 or it.get("wrote_back_before_next_selection") is False:
        yield "multiple_actions_in_one_iteration"


def _fire(fire: Any) -> Iterable[str]:
    if not isinstance(fire, dict):
        return
    bounded = fire.get("max_iterations") and (fire.get("timeout_seconds") or fire.get("per_fire_timeout_seconds"))
    if not bounded or fire.get("open_ended_goal_loop"):
        yield "headless_fire_unbounded"
    approved = fire.get("approved_actions") or []
    if any((a.get("kind") if isinstance(a, dict) else a) in DANGEROUS_KINDS for a in approved) \
            or fire.get("dangerous_actions_denied") is False:
        yield "dangerous_action_allowed"
    yield from _headless(fire)


def _headless(result: Any) -> Iterable[str]:
    if not isinstance(result, dict):
        return
    if result.get("continued_with_dismissed_answer") or (result.get("ask_user_mid_fire") and result.get("continued")):
        yield "ask_user_continued_headless"
    status = result.get("terminal_status", result.get("status"))
    if status not in TERMINALS:
        yield "terminal_status_missing"
    elif result.get("surface_reason") == "ask_user" and status != Terminal.needs_attention.value:
        yield "ask_user_continued_headless"


def check_case(case: dict) -> list[str]:
    """The failure codes of one case, each once, in the seed's order."""
    found: set[str] = set()
    contract = case.get("contract")
    if isinstance(contract, dict):
        found |= {code for flag, code in CONTRACT_FLAGS.items() if contract.get(flag) is not True}
    if "entry" in case:
        found |= set(_entry(case["entry"], case.get("previous_entry")))
    found |= set(_iteration(case.get("iteration")))
    found |= set(_fire(case.get("fire")))
    found |= set(_headless(case.get("headless_result")))
    if not found and not ({"contract", "entry", "iteration", "fire", "headless_result"} & case.keys()):
        found.add("ledger_missing")  # nothing to check is no ledger at all
    return [code for code in FAILURE_CODES if code in found]


def _from_fire_record(record: dict) -> dict:
    """A ``loopx fire`` record as a fire trace: it was bounded by construction; what it approved
    is everything it did not deny."""
    return {"fire": {"max_iterations": record.get("max_iterations"), "timeout_seconds": record.get("timeout_seconds"),
                     "approved_actions": [], "terminal_status": record.get("terminal_status"),
                     "continued_with_dismissed_answer": False}}  # fmt: skip


def check(document: dict) -> dict:
    """``{"ok", "schema", "cases": {name: [codes]}, "failure_codes": [all codes found]}``."""
    if document.get("schema_version") == "loopx_fire_record_v0":
        cases = {"fire_record": check_case(_from_fire_record(document))}
    elif "conformance_fixture" in document:
        cases = {"contract": check_case({"contract": document.get("contract")})}
        fire_contract = document.get("headless_scheduled_fire") or {}
        cases["headless_scheduled_fire"] = [
            code for code, bad in (
                ("headless_fire_unbounded", not (fire_contract.get("max_iterations_required")
                                                 and fire_contract.get("per_fire_timeout_required"))),
                ("dangerous_action_allowed", not fire_contract.get("dangerous_actions_always_denied")),
                ("ask_user_continued_headless", fire_contract.get("continued_with_dismissed_answer_allowed") is not False),
                ("terminal_status_missing", set(fire_contract.get("terminal_status_values") or []) != TERMINALS),
            ) if bad
        ]  # fmt: skip
        for name, case in (document.get("conformance_fixture") or {}).items():
            cases[name] = check_case(case)
    else:
        cases = {document.get("name", "case"): check_case(document.get("case", document))}
    codes = [code for code in FAILURE_CODES if any(code in found for found in cases.values())]
    return {"ok": not codes, "schema": document.get("schema", LEDGER_SCHEMA), "cases": cases, "failure_codes": codes}

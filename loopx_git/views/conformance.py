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

from collections.abc import Iterable
from typing import Any

from loopx_git.model.fire import DANGEROUS_KINDS, Terminal
from loopx_git.model.ledger import LEDGER_SCHEMA, EntryStatus, Next, Verdict

FAILURE_CODES = (
    "ledger_missing",
    "todo_used_as_durable_state",
    "conversation_state_used_as_authority",
    "unverifiable_inherited_confidence",
    "multiple_actions_in_one_iteration",
    "evidence_missing",
    "headless_fire_unbounded",
    "dangerous_action_allowed",
    "ask_user_continued_headless",
    "terminal_status_missing",
)
CONTRACT_FLAGS = {
    "ledger_first_class": "ledger_missing",
    "ledger_durable": "ledger_missing",
    "fresh_context_reads_ledger_first": "ledger_missing",
    "todo_is_current_turn_scratchpad": "todo_used_as_durable_state",
    "conversation_state_is_not_authority": "conversation_state_used_as_authority",
    "one_action_per_iteration": "multiple_actions_in_one_iteration",
    "evidence_first_verify_gate": "evidence_missing",
    "unverifiable_required": "unverifiable_inherited_confidence",
    "unverifiable_must_not_inherit_confidence": "unverifiable_inherited_confidence",
}
ENTRY_FIELDS = ("id", "status", "claim", "action", "evidence", "verdict", "next", "updated_at")
TERMINALS = {t.value for t in Terminal}

# Documents are untrusted JSON: every value may be of any type, so membership is tested on text only
# (a list is unhashable) and lists are taken as lists only.


def _one_of(value: Any, allowed: Iterable[str]) -> bool:
    return isinstance(value, str) and value in set(allowed)


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _entry(entry: Any, previous: Any = None) -> Iterable[str]:
    if not isinstance(entry, dict):
        yield "ledger_missing"
        return
    if any(name not in entry for name in ENTRY_FIELDS) or not isinstance(entry.get("evidence"), list):
        yield "ledger_missing"  # an entry without the ledger's shape is no ledger
    if not (
        _one_of(entry.get("status"), (s.value for s in EntryStatus))
        and _one_of(entry.get("verdict"), (v.value for v in Verdict))
        and _one_of(entry.get("next"), (n.value for n in Next))
    ):
        yield "ledger_missing"
    evidence = _list(entry.get("evidence"))
    inherited = (
        isinstance(previous, dict)
        and previous.get("verdict") == Verdict.UNVERIFIABLE.value
        and entry.get("verdict") == Verdict.MATCH.value
        and not set(map(str, evidence)) - set(map(str, _list(previous.get("evidence"))))
    )
    if inherited:  # the more specific rule wins: no new evidence for a MATCH on an UNVERIFIABLE entry
        yield "unverifiable_inherited_confidence"
    elif entry.get("status") == EntryStatus.done.value and not evidence:
        yield "evidence_missing"


def _iteration(it: Any) -> Iterable[str]:
    if not isinstance(it, dict):
        return
    if it.get("read_ledger_first") is not True:
        yield "ledger_missing"
    if it.get("state_source", "ledger") == "todo" or it.get("todo_promoted_to_durable_state"):
        yield "todo_used_as_durable_state"
    if it.get("authority", "ledger") == "conversation" or (
        it.get("conversation_summary_used") and not it.get("ledger_evidence")
    ):
        yield "conversation_state_used_as_authority"
    actions = it.get("actions_executed", 1)
    one = (
        isinstance(actions, (int, float)) and not isinstance(actions, bool) and actions <= 1
    )  # else: not shown to be one
    if not one or it.get("wrote_back_before_next_selection") is False:
        yield "multiple_actions_in_one_iteration"


def _fire(fire: Any) -> Iterable[str]:
    if not isinstance(fire, dict):
        return
    bounded = fire.get("max_iterations") and (fire.get("timeout_seconds") or fire.get("per_fire_timeout_seconds"))
    if not bounded or fire.get("open_ended_goal_loop"):
        yield "headless_fire_unbounded"
    approved = _list(fire.get("approved_actions"))
    if (
        any(_one_of(a.get("kind") if isinstance(a, dict) else a, DANGEROUS_KINDS) for a in approved)
        or fire.get("dangerous_actions_denied") is False
    ):
        yield "dangerous_action_allowed"
    yield from _headless(fire)


def _headless(result: Any) -> Iterable[str]:
    if not isinstance(result, dict):
        return
    if result.get("continued_with_dismissed_answer") or (result.get("ask_user_mid_fire") and result.get("continued")):
        yield "ask_user_continued_headless"
    status = result.get("terminal_status", result.get("status"))
    if not _one_of(status, TERMINALS):
        yield "terminal_status_missing"
    elif result.get("surface_reason") == "ask_user" and status != Terminal.needs_attention.value:
        yield "ask_user_continued_headless"


def check_case(case: Any) -> list[str]:
    """The failure codes of one case, each once, in the seed's order."""
    if not isinstance(case, dict):
        return ["ledger_missing"]  # a case that is not an object holds no ledger
    found: set[str] = set()

    def part(name: str) -> Any:  # a part that is there but not an object is checked as an empty one
        return _dict(case[name]) if name in case else None

    contract = part("contract")
    if contract is not None:
        found |= {code for flag, code in CONTRACT_FLAGS.items() if contract.get(flag) is not True}
    if "entry" in case:
        found |= set(_entry(case["entry"], case.get("previous_entry")))
    found |= set(_iteration(part("iteration")))
    found |= set(_fire(part("fire")))
    found |= set(_headless(part("headless_result")))
    if not found and not ({"contract", "entry", "iteration", "fire", "headless_result"} & case.keys()):
        found.add("ledger_missing")  # nothing to check is no ledger at all
    return [code for code in FAILURE_CODES if code in found]


def _from_fire_record(record: dict) -> dict:
    """A ``loopx fire`` record as a fire trace: it was bounded by construction; what it approved
    is everything it did not deny."""
    return {
        "fire": {
            "max_iterations": record.get("max_iterations"),
            "timeout_seconds": record.get("timeout_seconds"),
            "approved_actions": [],
            "terminal_status": record.get("terminal_status"),
            "continued_with_dismissed_answer": False,
        }
    }


def check(document: dict) -> dict:
    """``{"ok", "schema", "cases": {name: [codes]}, "failure_codes": [all codes found]}``."""
    if document.get("schema_version") == "loopx_fire_record_v0":
        cases = {"fire_record": check_case(_from_fire_record(document))}
    elif "conformance_fixture" in document:
        cases = {"contract": check_case({"contract": document.get("contract")})}
        fire_contract = _dict(document.get("headless_scheduled_fire"))
        cases["headless_scheduled_fire"] = [
            code
            for code, bad in (
                (
                    "headless_fire_unbounded",
                    not (
                        fire_contract.get("max_iterations_required") and fire_contract.get("per_fire_timeout_required")
                    ),
                ),
                ("dangerous_action_allowed", not fire_contract.get("dangerous_actions_always_denied")),
                (
                    "ask_user_continued_headless",
                    fire_contract.get("continued_with_dismissed_answer_allowed") is not False,
                ),
                (
                    "terminal_status_missing",
                    {v for v in _list(fire_contract.get("terminal_status_values")) if isinstance(v, str)} != TERMINALS,
                ),
            )
            if bad
        ]
        for name, case in _dict(document.get("conformance_fixture")).items():
            cases[name] = check_case(case)
    else:
        name = document.get("name", "case")
        cases = {name if isinstance(name, str) else "case": check_case(document.get("case", document))}
    codes = [code for code in FAILURE_CODES if any(code in found for found in cases.values())]
    return {"ok": not codes, "schema": document.get("schema", LEDGER_SCHEMA), "cases": cases, "failure_codes": codes}

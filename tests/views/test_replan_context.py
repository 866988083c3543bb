"""replan_context_v0 and evidence refs (issue 14, items 3 and 4): the agent's own evidence, sorted,
replays dropped, repeats collapsed, at most 24 chosen by class, then route, then recency; a coverage
ledger linked by fingerprint; deterministic and under 16 KiB; each row's evidence_ref resolves through
`history --evidence-ref` to exactly its run, and every other ref fails with its own code."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_schemas import conforms
from tests.conftest import GOAL, NOW, state_tip

UNCHANGED = {"progress_result_class": "unchanged", "progress_surface_id": "auth", "progress_evidence_ids": ["ci-1"]}


def _stall(repo, times: int = 2) -> None:
    for n in range(times):
        repo.refresh_state(
            GOAL, "probe", agent_id="alice", recommended_action=f"rerun the auth suite, try {n}", **UNCHANGED
        )


def test_should_run_delivers_the_context_with_the_packet(cli, repo):
    repo.refresh_state(GOAL, "probe", agent_id="bob", recommended_action="bob's own trail")
    repo.refresh_state(GOAL, "probe", recommended_action="nobody's")
    _stall(repo)
    should = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")
    conforms("loopx_should_run_v0", should)
    context = should["replan_context"]
    assert context["schema_version"] == "replan_context_v0" and context["from_full_index"] is True
    assert context["obligation_id"] == should["replan_action_packet"]["obligation_id"]
    assert context["core_goal"] == {"objective": "Ship the parser", "source": "goal", "missing": False}
    assert context["acceptance_contract"]["status"] == "active"
    actions = [r["recommended_action"] for r in context["evidence"]]
    assert actions == ["rerun the auth suite, try 0", "rerun the auth suite, try 1"]  # alice's only, in time order
    assert context["evidence_read_action_template"].endswith("--agent-id alice --evidence-ref {evidence_ref}")
    [entry] = context["coverage_ledger"]
    assert entry["count"] == 2 and entry["rows"] == [r["evidence_ref"] for r in context["evidence"]]
    assert context["uncovered_frontier"] == should["replan_action_packet"]["uncovered_frontier"]
    receipt = context["delivery_receipt"]
    assert receipt["schema_version"] == "replan_context_delivery_receipt_v0" and receipt["is_progress"] is False
    assert receipt["delivered_rows"] == 2 and len(receipt["digest"]) == 16
    contract = should["interaction_contract"]
    assert contract["agent_channel"]["required_reads"] == [
        f"loopx --format json status --goal-id {GOAL} --agent-id alice"
    ]
    settle = contract["cli_channel"]["replan_settlement_contract"]
    assert settle["settlement_bound"] is True and settle["identity_option"].startswith("--replan-obligation-id replan-")
    # deterministic: asked again (kept answer) and cold, byte for byte
    again = cli("quota", "should-run", "-g", GOAL, "-a", "alice", "--format", "json").out
    assert json.loads(again) == should
    assert repo.should_run(GOAL, "alice").replan_context.model_dump(mode="json") == context


def test_a_claimed_todo_owns_the_receipt(cli, repo):
    repo.todo_add(GOAL, "Fix the auth suite", todo_id="auth", now=NOW)
    repo.todo_claim(GOAL, "auth", "alice", now=NOW)
    _stall(repo)
    settle = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["interaction_contract"]["cli_channel"][
        "replan_settlement_contract"
    ]
    assert settle == {
        "obligation_id": settle["obligation_id"],
        "settlement_bound": False,
        "identity_option": "--todo-id auth",
    }


def test_review_packet_embeds_the_context_for_the_agent_not_for_handoff_only(cli, repo):
    _stall(repo)
    packet = cli.json("review-packet", "-g", GOAL, "-a", "alice")
    assert packet["replan_context"]["agent_id"] == "alice"
    assert cli.json("review-packet", "-g", GOAL, "-a", "alice", "--handoff-only")["replan_context"] is None
    assert cli.json("review-packet", "-g", GOAL)["replan_context"] is None


def test_every_ref_resolves_to_exactly_its_run(cli, repo):
    _stall(repo)
    context = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["replan_context"]
    for row in context["evidence"]:
        [entry] = cli.json("history", "-g", GOAL, "-a", "alice", "--evidence-ref", row["evidence_ref"])
        assert entry["run_id"] == row["run_id"] and entry["recommended_action"] == row["recommended_action"]


@pytest.fixture
def refs(cli, repo):
    _stall(repo)
    repo.goal_create("g2", "Another goal", now=NOW)
    repo.agent_register("g2", "alice", now=NOW)
    other = repo.refresh_state("g2", "probe", agent_id="alice", run_id="run-g2").record
    bobs = repo.refresh_state(GOAL, "probe", agent_id="bob", run_id="run-bob").record
    row = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")["replan_context"]["evidence"][0]
    return cli, row["evidence_ref"], other, bobs


def test_each_bad_ref_fails_with_its_own_code_and_writes_nothing(refs):
    from loopx_git.views.replan_context import evidence_ref

    cli, good, other, bobs = refs
    run_id, digest = good.split(":")[1], good.split(":")[2]
    stale = f"evr:{run_id}:{'0' * 16 if digest != '0' * 16 else '1' * 16}"
    cases = [
        (stale, "alice", "stale-evidence-ref"),
        (evidence_ref(other), "alice", "evidence-ref-wrong-goal"),
        (evidence_ref(bobs), "alice", "evidence-ref-wrong-agent"),
        ("evr:run_nope:0123456789abcdef", "alice", "unknown-evidence-ref"),
        ("not-a-ref", "alice", "invalid-evidence-ref"),
        (good, None, "agent-required"),
    ]
    tip = state_tip(cli.path)
    for ref, agent, code in cases:
        argv = ["history", "-g", GOAL, "--evidence-ref", ref] + (["-a", agent] if agent else [])
        result = cli(*argv, "--format", "json")
        assert result.code == 1, (code, result.err)
        assert f"error[{code}]" in result.err and "rule:" in result.err and result.out == "", code
        if code != "agent-required":
            assert "refresh the context" in result.err
    assert state_tip(cli.path) == tip


def test_long_texts_keep_the_context_under_16_kib_and_count_what_it_leaves_out(cli, repo):
    for n in range(20):  # 20 runs of fresh progress: a periodic review opens the obligation
        repo.refresh_state(
            GOAL,
            "probe",
            agent_id="alice",
            recommended_action=f"try {n}: " + "x" * 900,
            progress_result_class="advanced",
            progress_surface_id=f"s{n}",
        )
    out = cli("quota", "should-run", "-g", GOAL, "-a", "alice", "--format", "json")
    assert len(out.out.encode()) < 16 * 1024
    should = json.loads(out.out)
    assert [t["kind"] for t in should["replan_action_packet"]["triggers"]] == ["periodic_review"]
    context = should["replan_context"]
    shown, left = len(context["evidence"]), context["omitted"]["rows"]
    assert shown + left == 20 and left > 0 and shown >= 1
    assert all(r["recommended_action"].endswith("x" * 900) for r in context["evidence"])  # full text, never cut
    assert context["omitted"]["first_at"] <= context["omitted"]["latest_at"]
    assert context["omitted"]["read"] == f"loopx --format json history --goal-id {GOAL} --agent-id alice"
    assert context["delivery_receipt"]["delivered_rows"] == shown


def test_a_valid_empty_source_gives_empty_arrays(cli, repo):
    for n in range(20):  # runs without typed progress: a periodic review, and nothing typed to cover
        repo.refresh_state(GOAL, "probe", agent_id="alice", recommended_action=f"step {n}")
    should = cli.json("quota", "should-run", "-g", GOAL, "-a", "alice")
    assert should["replan_action_packet"]["uncovered_frontier"]["baseline"] is None
    context = should["replan_context"]
    assert context["coverage_ledger"] == [] and context["omitted"]["ledger_entries"] == 0
    assert len(context["evidence"]) + context["omitted"]["rows"] == 20
    assert all(r["fingerprint"] is None for r in context["evidence"])

"""``loopx explore`` in the shape issue 15 fixes, through the CLI only: the seed's two example commands
verbatim (``--format json`` after the command), JSON held to its schemas, refusals exit 1 naming the
field with the state ref unmoved, a value outside a fixed set exits 2, and a joint experiment from
observation to an observed gap."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_schemas import conforms, conforms_each, written
from tests.conftest import state_tip
from tests.domain.test_explore import SEED, SEED_FINGERPRINT, _terminal

DEMO = "research-demo"


@pytest.fixture
def demo(cli):
    assert cli("goal", "create", "--goal-id", DEMO, "--objective", "Find which results compose").code == 0
    for node, ev in (("node-a", "ev-a"), ("node-b", "ev-b")):
        result = cli(
            "explore",
            "node",
            "add",
            "-g",
            DEMO,
            "--node-id",
            node,
            "--kind",
            "hypothesis",
            "--title",
            f"{node} holds",
            "--evidence-id",
            ev,
        )
        assert result.code == 0, result.err
    (cli.path / "observation.json").write_text(json.dumps(SEED, indent=2))
    return cli


def test_the_seed_commands_work_verbatim(demo, monkeypatch):
    monkeypatch.chdir(demo.path)
    recorded = demo("explore", "observe", "--goal-id", DEMO, "--observation-json", "observation.json")
    assert recorded.code == 0, recorded.err
    assert f"recorded: observation {SEED_FINGERPRINT} on node-a, revision 2" in recorded.out
    result = demo("explore", "summary", "--goal-id", DEMO, "--format", "json")
    assert result.code == 0, result.err
    frontier = json.loads(result.out)
    conforms("research_frontier_v0", frontier)
    [gap] = frontier["gaps"]
    assert gap["inputs"] == ["node-a", "node-b"] and gap["state"] == "ineligible"
    assert frontier["projected_count"] == 1 and frontier["omitted_count"] == 0
    # the same envelope again: a replay, in JSON
    again = json.loads(
        demo("explore", "observe", "--goal-id", DEMO, "--observation-json", "observation.json", "--format", "json").out
    )
    written(again, "research_observation_receipt_v0")
    assert (again["changed"], again["record"]["replayed"], again["record"]["written"]) == (False, True, False)
    assert again["record"]["fingerprint"] == SEED_FINGERPRINT and again["record"]["revision"] == 2


def test_nodes_edges_findings_and_the_graph_in_json(demo):
    added = demo.json(
        "explore", "node", "add", "-g", DEMO, "--node-id", "exp", "--kind", "experiment", "--title", "A with B"
    )
    written(added, "explore_node_v0")
    for node in ("node-a", "node-b"):
        edge = demo.json(
            "explore",
            "edge",
            "add",
            "-g",
            DEMO,
            "--from-node-id",
            "exp",
            "--to-node-id",
            node,
            "--edge-type",
            "depends_on",
        )
        written(edge)
    finding = demo.json(
        "explore",
        "finding",
        "add",
        "-g",
        DEMO,
        "--node-id",
        "node-a",
        "--finding-id",
        "f1",
        "--state",
        "tentative",
        "--evidence-id",
        "ev-a",
    )
    written(finding)
    update = demo.json(
        "explore", "node", "update", "-g", DEMO, "--node-id", "node-b", "--status", "blocked", "--reason", "needs data"
    )
    written(update, "explore_node_v0")
    assert update["record"]["revision"] == 2
    conforms_each("explore_node_v0", demo.json("explore", "node", "list", "-g", DEMO))
    shown = demo.json("explore", "node", "show", "-g", DEMO, "--node-id", "exp")
    conforms("explore_node_v0", shown)
    assert [e["to_node_id"] for e in shown["edges"]] == ["node-a", "node-b"]
    graph = json.loads(demo("explore", "graph", "-g", DEMO, "--graph-format", "json").out)
    conforms("explore_graph_v0", graph)
    assert {(e["from"], e["to"], e["edge_type"]) for e in graph["edges"]} == {
        ("exp", "node-a", "depends_on"),
        ("exp", "node-b", "depends_on"),
    }
    mermaid = demo("explore", "graph", "-g", DEMO, "--graph-format", "mermaid").out
    assert mermaid.startswith("flowchart TD") and "-->|depends_on|" in mermaid
    dot = demo("explore", "graph", "-g", DEMO, "--graph-format", "dot").out
    assert dot.startswith(f'digraph "{DEMO}"') and '"exp" -> "node-a" [label="depends_on"];' in dot
    text = demo("explore", "node", "list", "-g", DEMO).out
    assert "node-b" in text and "blocked" in text


@pytest.mark.parametrize(
    ("args", "code", "said"),
    [
        (
            ["node", "add", "--node-id", "n1", "--kind", "question", "--title", "Q", "--status", "blocked"],
            "invalid-field",
            "field 'reason'",
        ),
        (
            ["node", "add", "--node-id", "node-a", "--kind", "question", "--title", "Q"],
            "node-exists",
            "field 'node_id'",
        ),
        (["node", "update", "--node-id", "nope", "--title", "x"], "unknown-node", "field 'node_id'"),
        (
            ["edge", "add", "--from-node-id", "node-a", "--to-node-id", "node-a", "--edge-type", "supports"],
            "invalid-field",
            "field 'to_node_id'",
        ),
        (["observe", "--observation-json", "missing.json"], "invalid-field", "field 'observation_json'"),
    ],
)
def test_refusals_exit_1_name_the_field_and_write_nothing(demo, monkeypatch, args, code, said):
    monkeypatch.chdir(demo.path)
    tip = state_tip(demo.path)
    result = (
        demo("explore", *args[:2], "-g", DEMO, *args[2:])
        if args[0] != "observe"
        else demo("explore", "observe", "-g", DEMO, *args[1:])
    )
    assert result.code == 1, result.err
    assert f"error[{code}]" in result.err and said in result.err
    assert state_tip(demo.path) == tip


def test_a_bad_envelope_on_stdin_is_refused_naming_its_field(demo, monkeypatch):
    import io

    bad = dict(SEED, notes="free text")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(bad).encode())))
    tip = state_tip(demo.path)
    result = demo("explore", "observe", "-g", DEMO, "--observation-json", "-")
    assert result.code == 1 and "error[invalid-observation]" in result.err and "'notes': unknown" in result.err
    assert state_tip(demo.path) == tip


@pytest.mark.parametrize(
    "args",
    [
        ["node", "add", "-g", DEMO, "--node-id", "n1", "--kind", "idea", "--title", "Q"],
        ["node", "update", "-g", DEMO, "--node-id", "node-a", "--status", "done"],
        ["edge", "add", "-g", DEMO, "--from-node-id", "node-a", "--to-node-id", "node-b", "--edge-type", "likes"],
        [
            "finding",
            "add",
            "-g",
            DEMO,
            "--node-id",
            "node-a",
            "--finding-id",
            "f",
            "--state",
            "sure",
            "--evidence-id",
            "e",
        ],
        ["graph", "-g", DEMO, "--graph-format", "png"],
    ],
)
def test_a_value_outside_a_fixed_set_is_a_usage_error(demo, args):
    tip = state_tip(demo.path)
    assert demo("explore", *args).code == 2
    assert state_tip(demo.path) == tip


def test_a_joint_experiment_from_observations_to_an_observed_gap(cli, monkeypatch):
    """End to end through the CLI: two inputs observed and closed, the gap pending, the binary
    experiment observed with the inputs the summary names, the gap observed; reopening an input
    makes it ineligible again."""
    monkeypatch.chdir(cli.path)
    G = DEMO
    assert cli("goal", "create", "--goal-id", G, "--objective", "compose").code == 0
    for node, kind in (("A", "hypothesis"), ("B", "hypothesis"), ("AB", "experiment")):
        assert (
            cli(
                "explore",
                "node",
                "add",
                "-g",
                G,
                "--node-id",
                node,
                "--kind",
                kind,
                "--title",
                node,
                "--evidence-id",
                f"ev-{node}",
            ).code
            == 0
        )
    for node in ("A", "B"):
        assert (
            cli(
                "explore",
                "edge",
                "add",
                "-g",
                G,
                "--from-node-id",
                "AB",
                "--to-node-id",
                node,
                "--edge-type",
                "depends_on",
            ).code
            == 0
        )

    def observe(data):
        (cli.path / "obs.json").write_text(json.dumps(data))
        return cli.json("explore", "observe", "-g", G, "--observation-json", "obs.json")["record"]

    observe(_terminal("B", "ev-B"))
    observe(_terminal("A", "ev-A", candidates=[("B", "ev-B")]))
    for node in ("A", "B"):
        assert (
            cli(
                "explore", "node", "update", "-g", G, "--node-id", node, "--status", "resolved", "--reason", "covered"
            ).code
            == 0
        )
    [gap] = cli.json("explore", "summary", "-g", G)["gaps"]
    assert gap["state"] == "pending" and gap["experiments"] == ["AB"]
    inputs = [(i["node_id"], i["fingerprint"]) for i in gap["input_observations"]]
    receipt = observe(_terminal("AB", "ev-AB", inputs=inputs, result_class="no_followup"))
    [gap] = cli.json("explore", "summary", "-g", G)["gaps"]
    assert gap["state"] == "observed" and gap["observed_by"] == {"node_id": "AB", "fingerprint": receipt["fingerprint"]}
    assert (
        cli("explore", "node", "update", "-g", G, "--node-id", "A", "--status", "open", "--reason", "reopened").code
        == 0
    )
    [gap] = cli.json("explore", "summary", "-g", G)["gaps"]
    assert gap["state"] == "ineligible" and any("A is open" in r for r in gap["reasons"])
    assert cli("verify").code == 0

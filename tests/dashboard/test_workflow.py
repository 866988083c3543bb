"""templates/github/loopx-dashboard.yml: valid YAML, and its shell steps run here as written with
bash, against a real remote: the dashboard is built from the fetched state branch, and a scheduled
run skips the build when the published page (served here on 127.0.0.1) is at the same tip."""

from __future__ import annotations

import functools
import http.server
import subprocess
import threading
from pathlib import Path

import pytest
from ruamel.yaml import YAML

import loopx_git
from tests.conftest import git
from tests.sync.helpers import GOAL, bare, clone
from tests.test_templates import ci_env

WORKFLOW = Path(__file__).resolve().parents[2] / "templates" / "github" / "loopx-dashboard.yml"


def load() -> dict:
    return YAML(typ="safe", pure=True).load(WORKFLOW.read_text())


def test_the_workflow_builds_on_a_dispatch_a_schedule_or_by_hand_and_deploys_pages():
    flow = load()
    assert set(flow["on"]) == {"repository_dispatch", "schedule", "workflow_dispatch"}
    assert flow["on"]["repository_dispatch"]["types"] == ["loopx-state-pushed"]
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build = flow["jobs"]["build"]
    names = [s.get("name") for s in build["steps"] if "run" in s]
    assert names == ["Install loopx-git", "Fetch the state branch", "Build the dashboard"]
    for step in build["steps"]:  # no ${{ }} inside a shell line
        assert "${{" not in step.get("run", "")
    assert build["env"]["COMMIT_URL"].endswith("/commit/{commit}")
    assert [s["uses"] for s in build["steps"] if "uses" in s][-1].startswith("actions/upload-pages-artifact")
    assert flow["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages")


def run_step(name: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    steps = {s["name"]: s for s in load()["jobs"]["build"]["steps"] if "run" in s}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", steps[name]["run"]],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.fixture
def pages(tmp_path):
    """A web server on 127.0.0.1 standing in for GitHub Pages: it serves ``tmp_path / 'pages'``."""
    root = tmp_path / "pages"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), type("Quiet", (handler.func,), {"log_message": lambda *a: None})
    )
    server.RequestHandlerClass = functools.partial(server.RequestHandlerClass, directory=str(root))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_its_steps_build_the_site_and_a_schedule_skips_a_published_tip(tmp_path, pages):
    root, url = pages
    remote = bare(tmp_path / "remote.git")
    author = clone(tmp_path / "author", str(remote))
    with loopx_git.open(author) as repo:
        repo.goal_create(GOAL, "Ship the parser")
        repo.agent_register(GOAL, "alice")
        repo.todo_add(GOAL, "Write the tokenizer", todo_id="t1")
        repo.todo_claim(GOAL, "t1", "alice")
        assert repo.sync().pushed
        tip = repo.tip
    checkout = clone(tmp_path / "checkout", str(remote), connect=False)  # actions/checkout: no state branch yet
    output = tmp_path / "github-output"
    env = ci_env(
        tmp_path,
        STATE_BRANCH="loopx/state",
        COMMIT_URL="https://github.example.invalid/OWNER/REPO/commit/{commit}",
        PAGES_URL=url,
        GITHUB_OUTPUT=str(output),
        GITHUB_EVENT_NAME="schedule",
    )
    fetched = run_step("Fetch the state branch", checkout, env)
    assert fetched.returncode == 0, fetched.stderr
    assert output.read_text().strip() == "changed=true"  # nothing published yet
    built = run_step("Build the dashboard", checkout, env)
    assert built.returncode == 0, built.stderr
    site = checkout / "public"
    assert f'href="goals/{GOAL}/index.html"' in (site / "index.html").read_text()
    page = (site / "goals" / GOAL / "index.html").read_text()
    assert f"built from commit {tip}" in page and "https://github.example.invalid/OWNER/REPO/commit/" in page
    # published: the next scheduled run finds the same tip there and stops after the fetch
    (root / "index.html").write_text((site / "index.html").read_text())
    output.write_text("")
    again = run_step("Fetch the state branch", checkout, env)
    assert again.returncode == 0 and output.read_text().strip() == "changed=false", again.stdout + again.stderr
    # a dispatch after a push builds whatever is published
    output.write_text("")
    assert (
        run_step("Fetch the state branch", checkout, {**env, "GITHUB_EVENT_NAME": "repository_dispatch"}).returncode
        == 0
    )
    assert output.read_text().strip() == "changed=true"
    assert git(checkout, "rev-parse", "refs/heads/loopx/state").strip() == tip

"""The dashboard in a real headless browser: Debian's chromium, driven by Playwright's Python client
with the system browser (nothing is downloaded). The page is loaded from disk: no console error, no
request leaves the folder, and what it draws and filters is checked as a person would see it.
Screenshots go to ``$LOOPX_TEST_ARTIFACTS`` (default: the test's temporary folder)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import loopx_git
from loopx_git.views import dashboard as view
from tests.conftest import Cli
from tests.dashboard.fixture import GOAL, three_lanes

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests need the test extra (playwright)")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium installed (Debian: apt-get install chromium; .ci/run installs it)"
)


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        # --no-sandbox: CI runs as root, where chromium's own sandbox cannot start
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


class Opened:
    """A page loaded from disk, with every console message, page error and request it made."""

    def __init__(self, browser, index: Path):
        self.page = browser.new_page(viewport={"width": 1300, "height": 1000})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.root = index.parent.resolve().as_uri()
        self.page.goto(index.resolve().as_uri())
        self.page.wait_for_selector("#todo-table tbody tr")

    def rows(self) -> list[str]:
        return self.page.locator("#todo-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.todo)")

    def clean(self) -> None:
        assert self.console == [], self.console
        outside = [u for u in self.requests if not u.startswith(self.root + "/")]
        assert outside == [], f"requests outside the site folder: {outside}"


def _artifacts(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("LOOPX_TEST_ARTIFACTS") or tmp_path) / "dashboard"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_three_lanes_a_gate_a_handoff_and_an_inferred_bridge(browser, git_repo, capsys, tmp_path):
    ids = three_lanes(git_repo)
    out = tmp_path / "site"
    Cli(git_repo, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    opened = Opened(browser, out / "index.html")
    page = opened.page
    assert page.locator("svg g.lane").count() == 3
    assert page.locator("svg g.lane .lane-label").all_text_contents() == ["alice", "bob", "carol"]
    gate = page.locator("#card .gate")
    assert gate.count() == 1 and "blocks deploy" in gate.inner_text()
    node = page.locator("svg g.gate-node")
    assert node.count() == 1 and node.locator("text").text_content() == "ship-gate: blocks deploy"
    assert page.locator("svg line.handoff").count() == 1
    assert page.locator("svg line.handoff").get_attribute("marker-end") == "url(#arrow)"
    bridge = page.locator("svg g.bridge.inferred")
    assert bridge.count() == 1 and bridge.get_attribute("data-from") == ids["note"]
    assert bridge.locator("path").get_attribute("stroke-dasharray") == "5 4"
    assert bridge.locator("text").text_content() == "inferred"
    assert page.locator("header .built").inner_text().startswith("built from commit ")
    page.screenshot(path=str(_artifacts(tmp_path) / "three-lanes.png"), full_page=True)
    opened.clean()


def test_filters_change_the_visible_todos_and_a_todo_links_to_its_history(browser, git_repo, capsys, tmp_path):
    three_lanes(git_repo)
    out = tmp_path / "site"
    Cli(git_repo, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    opened = Opened(browser, out / "index.html")
    page = opened.page
    assert sorted(opened.rows()) == ["deploy", "docs", "lanes", "tok"]
    page.select_option("#filter-state", "done")
    page.wait_for_function("document.querySelectorAll('#todo-table tbody tr').length === 1")
    assert opened.rows() == ["lanes"]
    page.select_option("#filter-state", "")
    page.select_option("#filter-agent", "carol")
    page.wait_for_function("document.querySelectorAll('#todo-table tbody tr').length === 1")
    assert opened.rows() == ["docs"]
    page.select_option("#filter-agent", "")
    page.select_option("#filter-priority", "P1")
    page.wait_for_function("document.querySelectorAll('#todo-table tbody tr').length === 1")
    assert opened.rows() == ["tok"]
    page.click("#todo-table a[href='#todo=tok']")
    page.wait_for_selector("#history:not([hidden]) li.history-event")
    events = page.locator("#history li.history-event").all_inner_texts()
    assert "todo_add" in events[0] and "todo_claim alice" in events[1] and "todo_update bob" in events[-1]
    assert page.locator("#history li.history-event .src").first.get_attribute("data-commit")
    page.screenshot(path=str(_artifacts(tmp_path) / "filtered-history.png"), full_page=True)
    opened.clean()


def test_todos_past_the_first_chunk_load_when_a_filter_asks(browser, git_repo, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(view, "TODO_CHUNK", 5)
    three_lanes(git_repo)
    with loopx_git.open(git_repo) as repo:
        for i in range(12):
            repo.todo_add(GOAL, f"bulk todo {i}", todo_id=f"bulk{i:02d}", priority="P3" if i == 11 else "P2")
    out = tmp_path / "site"
    Cli(git_repo, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    opened = Opened(browser, out / "index.html")
    assert len(opened.rows()) == 5  # the first chunk
    assert not any(u.endswith("todos-1.js") for u in opened.requests)
    opened.page.select_option("#filter-priority", "P2")
    opened.page.wait_for_function("document.querySelectorAll('#todo-table tbody tr').length > 5")
    assert any(u.endswith("todos-3.js") for u in opened.requests)  # 16 todos: four chunks, all loaded now
    assert len(opened.rows()) == 14  # every P2 todo: three of the fixture's and bulk00 to bulk10
    opened.clean()


def test_filters_changed_before_the_chunks_arrive_load_each_once(browser, git_repo, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(view, "TODO_CHUNK", 2)
    three_lanes(git_repo)
    out = tmp_path / "site"
    Cli(git_repo, capsys).json("dashboard", "-g", GOAL, "--out", str(out))
    opened = Opened(browser, out / "index.html")
    # two changes in one task: the second asks before the first one's chunks have arrived
    opened.page.evaluate(
        """() => { const s = document.getElementById('filter-priority'); const e = () => new Event('change', {bubbles: true});
        s.dispatchEvent(e()); document.getElementById('more').click(); s.dispatchEvent(e()); }"""
    )
    opened.page.wait_for_function("!document.getElementById('todo-count').textContent.includes('+')", timeout=10_000)
    rows = opened.rows()
    assert sorted(rows) == ["deploy", "docs", "lanes", "tok"]
    assert opened.page.locator("#todo-count").inner_text().startswith("4 of 4 todos")
    opened.clean()

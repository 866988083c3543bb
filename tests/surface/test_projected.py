"""Every command line loopx puts in front of an agent or a person runs as printed (issue 32, item 10
and the rule behind it): should-run's write-back, primary action and required reads, the brief
``prime`` prints, the card's, every refusal's hint, and the examples of docs/. Each is collected
from what loopx printed for the state at hand, its placeholders filled from that same state, and run
there: it is accepted (exit 0). The state branch is put back after each, so every line runs on
the state it was printed for.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from loopx_git.cli.main import run_cli
from tests.conftest import GOAL, git, hermetic
from tests.hostile.commands import commands
from tests.hostile.test_cli_options import TEXT_PARAMS, argv

ROOT = Path(__file__).resolve().parents[2]
STATE = "refs/heads/loopx/state"
COMMAND = re.compile(r"`(loopx [^`]+)`")
LINE = re.compile(r"(?:^|: |- [a-z -]+: )(loopx (?:--format json )?[a-z-]+(?: [^\n]*)?)$", re.M)

FILLS = [
    (re.compile(r"<typed-dimension-options:[^>]*>"), "--progress-surface-id surface-new"),
    (re.compile(r"<([a-z_]+)\|[^>]*>"), r"\1"),  # <progress|blocked|no_op>: the first choice
    (re.compile(r"(?<![\w-])([a-z]+)\|[a-z|]+"), r"\1"),  # approve|reject|defer
    (re.compile(r"<tier>"), "outcome_progress"),
    (re.compile(r"<ref>|\bPATH\b|<file>"), "README.md"),
    (re.compile(r"<slug>"), "probe"),
    (re.compile(r"<typed-class>"), "advanced"),
    (re.compile(r"<evidence-id>"), "ev-new"),
    (re.compile(r"<turn-instance-id>"), "turn-1"),
    (re.compile(r"<id>|\bID\b"), "fresh-1"),  # a new id; <goal>, <agent>, TODO, G, AGENT: from the state
    (re.compile(r"\bTEXT\b|<title>|<joint probe>"), "x"),
]
"""Placeholders as loopx prints them, and what fills each (from the state at hand where it matters)."""


def fill(line: str, **names: str) -> list[str]:
    for pattern, value in FILLS:
        line = pattern.sub(value, line)
    for name, value in names.items():
        line = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", value, line)
    return shlex.split(line)


class Repo:
    def __init__(self, path: Path, remote: Path):
        self.path, self.remote = path, remote

    def run(self, *args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = run_cli(["--repo", str(self.path), *args])
        return code, out.getvalue(), err.getvalue()

    def json(self, *args: str):
        code, out, err = self.run("--format", "json", *args)
        assert code == 0, err
        return json.loads(out)

    def tip(self) -> str:
        return git(self.path, "rev-parse", STATE).strip()

    def attempt(self, words: list[str]) -> tuple[int, str]:
        """``words`` run on the state as it is now, which is then put back (here and on origin)."""
        tip = self.tip()
        code, out, err = self.run(*words)
        self.reset(tip)
        return code, err or out

    def reset(self, tip: str) -> None:
        """The state branch at ``tip`` here and on origin, and the clone's defaults as they were."""
        for where, ref in ((self.path, STATE), (self.path, "refs/remotes/origin/loopx/state"), (self.remote, STATE)):
            git(where, "update-ref", ref, tip)
        git(self.path, "config", "loopx.stateRef", STATE)
        git(self.path, "config", "loopx.goal", GOAL)
        subprocess.run(["git", "-C", str(self.path), "config", "--unset", "loopx.agent"], capture_output=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A goal in the middle of things: alice holds a todo and owes a replan (a selected todo owns the
    receipt), bob has runnable work, carol a handoff to adopt, dave a gate to decide, a deferred todo,
    a user todo; origin is a bare remote the branch was pushed to."""
    with pytest.MonkeyPatch.context() as env:
        hermetic(env, tmp_path_factory.mktemp("home"))
        base = tmp_path_factory.mktemp("projected")
        env.chdir(base)  # a command that writes where it is told (`dashboard --out nope1`) writes here
        path, remote = base / "project", base / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        path.mkdir()
        git(path, "init", "-q", "-b", "main")
        (path / "README.md").write_text("project\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "init")
        git(path, "remote", "add", "origin", str(remote))
        repo = Repo(path, remote)
        for args in (
            ["connect", "-g", GOAL, "--objective", "Ship the parser", "--no-hooks"],
            ["agent", "register", "-a", "alice", "--lane", "core"],
            ["agent", "register", "-a", "bob"],
            ["agent", "register", "-a", "carol"],
            ["agent", "register", "-a", "dave"],
            ["todo", "add", "--text", "Write the tokenizer", "-t", "tok"],
            ["todo", "add", "--text", "Write the parser", "-t", "parse", "--priority", "P1"],
            ["todo", "add", "--text", "Document it", "-t", "doc", "--resume-when", "todo_done:tok"],
            ["todo", "add", "--text", "Approve the release", "-t", "ask", "--role", "user"],
            ["todo", "add", "--text", "Carol's", "-t", "hand"],
            ["todo", "add", "--text", "Gated", "-t", "gated"],
            ["todo", "claim", "-t", "tok", "-a", "alice"],
            ["todo", "claim", "-t", "hand", "-a", "bob"],
            ["handoff", "prepare", "--handoff-id", "h1", "--from-agent-id", "bob", "--to-agent-id", "carol"]
            + ["-t", "hand", "--stop-condition", "tests pass"],
            ["gate", "open", "--gate-id", "g-release", "--owner-class", "agent", "--owner-agent-id", "dave"]
            + ["--blocks", "gated", "--question", "Release now?"],
        ):
            code, _, err = repo.run(*args)
            assert code == 0, (args, err)
        unchanged = ["--progress-result-class", "unchanged", "--progress-surface-id", "auth"]
        for _ in range(2):
            code, _, err = repo.run(
                "refresh-state", "-a", "alice", "-t", "tok", "--classification", "probe", *unchanged,
                "--progress-evidence-id", "ev-1",
            )  # fmt: skip
            assert code == 0, err
        assert repo.run("sync")[0] == 0
        yield repo


AGENTS = ("alice", "bob", "carol", "dave")
NAMES = {"AGENT": "alice", "<agent>": "alice", "G": GOAL, "<goal>": GOAL, "TODO": "parse"}
"""Placeholders for what the state holds (``parse``: a todo open and unclaimed)."""


def _projections(repo: Repo) -> list[tuple[str, str]]:
    """(where, command line) of every line should-run and prime put before each agent, and the card."""
    out = []
    for agent in AGENTS:
        should = repo.json("quota", "should-run", "-g", GOAL, "-a", agent, "--turn-instance-id", "turn-1")
        contract = should["interaction_contract"]
        primary = contract["agent_channel"]["primary_action"]
        if "loopx " in primary:
            out.append((f"should-run {agent} primary_action", primary[primary.index("loopx ") :]))
        out.append((f"should-run {agent} writeback_command", contract["cli_channel"]["writeback_command"]))
        out += [(f"should-run {agent} required_reads", r) for r in contract["agent_channel"]["required_reads"]]
        packet = should.get("replan_action_packet")
        if packet:
            out.append((f"should-run {agent} command_template", packet["writeback_contract"]["command_template"]))
        code, brief, err = repo.run("prime", "-g", GOAL, "-a", agent)
        assert code == 0, err
        out += [(f"prime {agent}", line) for line in LINE.findall(brief)]
    code, card, _ = repo.run("status", "-g", GOAL)
    out += [("status", line) for line in COMMAND.findall(card) + LINE.findall(card)]
    return out


def test_every_line_should_run_and_prime_put_before_an_agent_runs_as_printed(project, surface):
    lines = _projections(project)
    assert any("--todo-id tok" in line for where, line in lines if "command_template" in where), lines
    failed = []
    for where, line in lines:
        words = fill(line, **NAMES)[1:]
        code, said = project.attempt(words)
        if code != 0:
            failed.append(f"{where}: {line}\n    -> exit {code}: {said.strip()[:300]}")
    surface(f"{len(lines)} projected lines from should-run and prime of {len(AGENTS)} agents, and the card, run")
    assert not failed, "\n".join(failed)


def _hints(repo: Repo) -> dict[str, str]:
    """Every command line a refusal's hint holds -> the refusal it came from: every text option of
    every command given an id nothing has (``nope1``), and the command lines that make common mistakes."""
    found: dict[str, str] = {}
    runs = [argv(p, "nope1") + (["status"] if not p.path else []) for p in TEXT_PARAMS]
    runs += [
        ["todo", "claim", "-t", "tok", "-a", "bob"],
        ["todo", "complete", "-t", "tok", "-a", "bob", "--evidence", "e"],
        ["handoff", "adopt", "--handoff-id", "h1", "-a", "bob"],
        ["todo", "add", "--text", "ghp" + "_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A"],
        ["status"],
    ]
    for args in runs:
        tip = repo.tip()
        _, _, err = repo.run(*args)
        repo.reset(tip)
        for line in COMMAND.findall(err):
            found.setdefault(line, " ".join(args))
    return found


def _a_name(line: str) -> bool:
    """A command named, not a command line: ``loopx goal update``, as a rule's text says it."""
    words = line.split()[1:]
    return all(not w.startswith("-") for w in words) and tuple(words) in {p for p, _ in commands()}


@pytest.mark.slow
def test_every_command_line_in_a_refusals_hint_runs_as_printed(project, surface):
    hints = _hints(project)
    failed, names = [], 0
    for line, source in sorted(hints.items()):
        if _a_name(line):
            names += 1
            continue
        code, said = project.attempt(fill(line, **NAMES)[1:])
        if code != 0:
            failed.append(f"{line}  (hint of: loopx {source})\n    -> exit {code}: {said.strip()[:300]}")
    surface(f"{len(hints)} command lines in hints of {len(TEXT_PARAMS) + 5} refused command lines ({names} are names)")
    assert len(hints) > 10 and not failed, "\n".join(failed)


@pytest.mark.slow
def test_a_hint_that_names_a_command_names_one_that_exists(project):
    for line in _hints(project):
        words = tuple(w for w in line.split()[1:] if not w.startswith("-"))
        known = {p for p, _ in commands()}
        assert any(words[: len(p)] == p for p in known if p), line


SOURCE_LINE = re.compile(r"`(loopx [^`{}]*(?:\{[^`}]*\}[^`{}]*)*)`")


def _source_lines() -> list[tuple[str, str]]:
    """(file, command line) of every `loopx ...` a string in the package holds (a hint, a rule's text,
    a projection), with each f-string field standing for one word."""
    out = []
    for path in sorted((ROOT / "loopx_git").rglob("*.py")):
        for found in SOURCE_LINE.findall(path.read_text()):
            out.append((str(path.relative_to(ROOT)), re.sub(r"\{[^}]*\}", "X", found)))
    return out


def test_every_command_line_the_package_spells_names_real_commands_and_options(surface):
    """What the harvest above cannot reach (a refusal of a rare state): every `loopx ...` written in
    the package's strings names a command that exists, with options that command takes."""
    from tests.hostile.commands import all_params

    tree = {p[:i] for p, _ in commands() for i in range(1, len(p) + 1)}
    options: dict[tuple[str, ...], set[str]] = {}
    for param in all_params():
        if param.flag is not None:  # an option declared with no name of its own takes its parameter's
            decls = [*param.decl.decls, param.flag]
            options.setdefault(param.path, set()).update(d.split("/")[0].strip() for d in decls)
    root = options.get((), set()) | {"--format", "-f", "--json", "--help", "-h", "--version"}
    bad = []
    lines = _source_lines()
    for where, line in lines:
        if "..." in line or re.fullmatch(r"loopx (X|--help|--version true)", line):
            continue  # prose: a command left out (`loopx ... --format json`), a field, a root option
        words = shlex.split(line.replace("'", "").replace('"', ""))[1:]
        path: tuple[str, ...] = ()
        rest = list(words)
        while rest and rest[0].startswith("-") and rest[0] in root:  # global options first
            rest = rest[2:] if rest[0] in ("--format", "-f", "--repo", "--state-branch") else rest[1:]
        while rest and (*path, rest[0]) in tree:
            path, rest = (*path, rest[0]), rest[1:]
        if not path:
            bad.append(f"{where}: `{line}` names no command")
            continue
        taken = options.get(path, set()) | root
        flags = [w.split("=")[0] for w in rest if w.startswith("-") and not w.startswith("--progress-dimension")]
        unknown = [f for f in flags if f not in taken and re.fullmatch(r"--?[a-z][a-z-]*", f)]
        if unknown:
            bad.append(f"{where}: `{line}`: {' '.join(path)} takes no {', '.join(unknown)}")
    surface(f"{len(lines)} command lines spelled in the package's strings checked against the command tree")
    assert len(lines) > 50 and not bad, "\n".join(bad)


# --- the examples of docs/ ---------------------------------------------------------------------------

DOCS_RUN_ELSEWHERE = {"walkthrough.md": "tests/docs/test_walkthrough.py runs it whole, in order"}
NOT_RUN = {
    "python3 -m pip install": "an install from a package index (the set-up commands are tested in tests/docs)",
    "claude mcp add": "another program's command (it registers loopx-mcp with that client)",
    "python -m loopx_git.safety.listing --write": "rewrites this repository's doc; tests/safety checks it is current",
    "python3 -m tests.safety.corpus": "this repository's corpus: tests/safety/test_rules.py runs it",
}
"""Example lines left out, each with the reason."""

SHARED = {
    "G": "parser",
    "T": "todo-tok",
    "A": "alice",
    "EVT": '"$(loopx --format json events -g parser --kind todo_claim | "$PY" -c \'import json,sys; print(json.load(sys.stdin)[-1]["event_id"])\')"',
    "SHA": '"$(git log --format=%H --grep="todo update todo-doc" -1 loopx/state)"',
    "P": '"$(loopx --format json rollback list -g parser | "$PY" -c \'import json,sys; print(json.load(sys.stdin)[-1]["packet_id"])\')"',
    "URL": '"$REMOTE"',
    "<64 hex>": "0123456789abcdef" * 4,
    "path/to/project": ".",
}
"""What a doc's placeholders stand for, in the project below (shell words, some computed when run)."""


def _doc_lines(text: str) -> list[str]:
    out = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if not line or line.startswith("#"):
                continue
            out += [part.strip() for part in line.split(" / ")]  # `loopx pull / loopx push`: two lines
    return out


def _filled(line: str) -> str:
    for name, value in SHARED.items():
        line = re.sub(rf"(?<![\w./-]){re.escape(name)}(?![\w./-])", lambda _, value=value: value, line)
    return line


def _project_script(lines: list[str], tmp: Path) -> str:
    remote, project = tmp / "remote.git", tmp / "project"
    setup = [
        f'loopx() {{ {shlex.quote(sys.executable)} -m loopx_git "$@"; }}',
        f'loopx-mcp() {{ {shlex.quote(sys.executable)} -m loopx_git mcp "$@"; }}',
        f"export REMOTE={shlex.quote(str(remote))} BROWSER=true PY={shlex.quote(sys.executable)}",
        f"git init -q --bare {shlex.quote(str(remote))}",
        f"mkdir -p {shlex.quote(str(project))}/tests && cd {shlex.quote(str(project))} && git init -q -b main",
        "echo project > README.md && echo 'def test(): pass' > tests/test_tok.py && git add -A && git commit -qm init",
        'git remote add origin "$REMOTE" && git push -q origin main',
        "loopx connect -g parser --objective 'A streaming JSON parser' >/dev/null",
        "loopx agent register -a alice >/dev/null && loopx agent register -a bob >/dev/null",
        "loopx agent register -a nightly >/dev/null",  # the scheduled agent docs/ledger.md fires as
        "loopx todo add --text 'Write the tokenizer' -t todo-tok >/dev/null",
        "loopx todo add --text 'Document it' -t todo-doc >/dev/null",
        "loopx todo update -t todo-doc --status blocked --reason waiting >/dev/null && loopx sync >/dev/null",
        # a packet written elsewhere, for this goal: upstream LoopX's public example, renamed
        f"sed 's/public-long-horizon-loop/parser/g' "
        f"{shlex.quote(str(ROOT / 'tests/fixtures/upstream-loopx/rollback-packet.public.json'))} > plan.json",
        "printf '%s\\n' '#!/bin/sh' 'cat >/dev/null' "
        '\'echo {"status": "done", "verdict": "MATCH", "next": "resume", '
        '"evidence": [{"kind": "test_path", "ref": "tests/test_tok.py"}]}\' > agent-step.sh',
        "chmod +x agent-step.sh && git add -A && git commit -qm 'the step' && git push -q origin main",
    ]
    steps = []
    for number, line in enumerate(lines, 1):
        steps += [
            f"echo {shlex.quote('$ ' + line)}",
            f"( {line} ) </dev/null",
            f'rc=$?; [ "$rc" -eq 0 ] || {{ echo {shlex.quote(f"step {number} exited ")}"$rc: "{shlex.quote(line)} >&2; exit 99; }}',
        ]
    return "set -u\n" + "\n".join(setup) + "\n" + "\n".join(steps) + "\n"


DOCS = sorted(p.name for p in (ROOT / "docs").glob("*.md") if "```sh" in p.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("doc", [d for d in DOCS if d not in DOCS_RUN_ELSEWHERE])
def test_every_example_of_a_doc_runs_as_written(doc, tmp_path, surface):
    every = _doc_lines((ROOT / "docs" / doc).read_text())
    lines = [line for line in every if not any(line.startswith(n) for n in NOT_RUN)]
    filled = [_filled(line) for line in lines]
    done = subprocess.run(
        ["bash", "--noprofile", "--norc"],
        input=_project_script(filled, tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "GIT_EDITOR": "true"},
    )
    surface(f"docs/{doc}: {len(filled)} example lines run, {len(every) - len(lines)} left out (NOT_RUN says why)")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr

"""``loopx hook run <name>``: the entry point the git hook shims and pre-commit framework hooks
call. It runs without typer, rich or pydantic (see ``cli/entry.py``): it is on every commit's path.

Hooks:
  pre-commit            staged paths and staged content (git's pre-commit hook)
  pre-push REMOTE URL   every commit in the ref updates read from stdin (git's pre-push hook)
  commit-msg FILE       the message of the commit being made, before it exists (git's
                        commit-msg hook, and the pre-commit framework's commit-msg stage)
  boundary [FILES]      pre-commit framework: paths against the local-state boundary
  public-safety [FILES] pre-commit framework: staged names and content of FILES against the rules
  prepush               pre-commit framework's pre-push stage (PRE_COMMIT_FROM_REF/TO_REF)

Exit codes: 0 clean or warnings only, 1 a blocking finding or refusal (or any finding with
--strict), 2 usage error.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NamedTuple, TextIO

if TYPE_CHECKING:
    import argparse

HOOKS = ("pre-commit", "pre-push", "commit-msg", "boundary", "public-safety", "prepush")


class _Args(NamedTuple):
    name: str
    args: list[str]
    repo: str
    strict: bool


def _plain_args(argv: list[str]) -> _Args | None:
    """The arguments as ``_parser`` reads them (intermixed: the pre-commit framework puts a hook's
    ``args`` before the file names), for the command lines hooks are run with (a hook name, then
    what git or pre-commit passes, ``--strict``, ``--repo``), without importing argparse (~10 ms
    of every commit). None for anything else — help, an unknown option, a missing
    or unknown hook name — which ``_parser`` then reads and explains."""
    positional: list[str] = []
    repo, strict = ".", False
    rest = iter(argv)
    for token in rest:
        if token == "--":
            return None  # argparse reads what follows it its own way (it drops a second "--")
        elif token == "--strict":
            strict = True
        elif token == "--repo":
            repo = next(rest, "")
            if not repo or repo.startswith("-"):
                return None
        elif token.startswith("--repo="):
            repo = token.partition("=")[2]
        elif token.startswith("-") and token != "-":
            return None
        else:
            positional.append(token)
    if not positional or positional[0] not in HOOKS:
        return None
    return _Args(positional[0], positional[1:], repo, strict)


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(prog="loopx hook run", description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=HOOKS)
    parser.add_argument("args", nargs="*", help="what git or pre-commit passes (remote and URL, or file names)")
    parser.add_argument("--strict", action="store_true", help="warnings fail the hook too")
    parser.add_argument("--repo", default=".", help="repository (default: the current one)")
    return parser


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _print_findings(findings: list, out: TextIO) -> None:
    """Each file once: a file with one finding is one ``path:line:col: ...`` line; a file with several
    is named once, its findings as ``line:col: ...`` lines under it."""
    by_path: dict[str | None, list] = {}
    for finding in findings:
        by_path.setdefault(finding.path, []).append(finding)
    for path, found in by_path.items():
        if len(found) == 1:
            out.write(found[0].format() + "\n")
            continue
        out.write(f"{path or '<text>'}: {_count(len(found), 'finding')}\n")
        place = len(f"{path or '<text>'}:")  # format() starts with the path; the lines under it leave it out
        for finding in found:
            out.write(f"  {finding.format()[place:]}\n")


def print_report(report, out: TextIO, *, label: str, strict: bool = False, quiet_when_clean: bool = False) -> None:
    if quiet_when_clean and not report.findings and not report.refused:
        return  # a hook that talks on every commit gets switched off
    _print_findings(report.findings, out)
    for reason in report.refused:
        out.write(f"refused: {reason}\n")
    said = [_count(len(report.blocking), "blocking finding"), _count(len(report.warnings), "warning")]
    if report.refused:
        said.append(_count(len(report.refused), "refusal"))
    scope = _count(report.files, "file") + (f" in {_count(report.commits, 'commit')}" if report.commits else "")
    if label == "commit-msg":
        scope = "the commit message"
    verdict = "refused" if report.failed(strict) else "ok"
    out.write(f"loopx {label}: {verdict} — {', '.join(said)}; scanned {scope}\n")
    if not report.failed(strict):
        return
    if any(f.rule == "local-state" for f in report.blocking):
        out.write(
            "hint: local state stays out of commits: `git rm -r --cached <path>`, and `loopx connect` keeps it ignored\n"
        )
    if any(f.rule != "local-state" for f in report.findings):
        from loopx_git.hooks.checks import IN_THE_NAME

        if report.on_state_branch:  # append-only: no rebase advice for it
            remove = (
                "a state-branch commit holds it, and that branch is append-only (never rebased or rewritten): "
                "treat the value as exposed and rotate it; `loopx verify` names the record"
            )
        elif label in ("pre-push", "prepush"):
            remove = "rewrite the unpushed commits that hold the value (git rebase -i), then push again"
        elif label == "commit-msg":
            remove = "nothing was committed: commit again with a message that leaves the value out"
        elif any(f.note == IN_THE_NAME for f in report.findings):
            remove = "rename the file (git mv) or remove the value from it, and stage it again"
        else:
            remove = "remove the value from the file and stage it again"
        out.write(
            f"hint: findings show a fingerprint, never the value; {remove}; for a false positive add "
            "'<rule-id> <fingerprint> # reason' to .publicsafe-allow\n"
        )


def _framework_updates(git):
    """The pre-commit framework passes the range in environment variables; without them, push
    everything that no remote-tracking ref has."""
    from loopx_git.hooks.prepush import ZERO, RefUpdate

    to_ref, from_ref = os.environ.get("PRE_COMMIT_TO_REF"), os.environ.get("PRE_COMMIT_FROM_REF")
    remote_branch = os.environ.get("PRE_COMMIT_REMOTE_BRANCH", "")
    local_branch = os.environ.get("PRE_COMMIT_LOCAL_BRANCH", "")
    if to_ref:
        return [RefUpdate(local_branch, to_ref, remote_branch, from_ref or ZERO)]
    return [RefUpdate(name, oid, name, ZERO) for name, oid in git.refs("refs/heads/")]


def run(
    name: str,
    args: list[str],
    *,
    repo: str = ".",
    strict: bool = False,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    from loopx_git.hooks import checks

    out = out or sys.stderr
    if name == "commit-msg":
        report = _check_message(args, repo)
    elif name in ("pre-commit", "boundary", "public-safety"):
        from loopx_git.store.plumbing import IndexReader

        index = IndexReader.discover(repo)
        try:
            policy = checks.policy_of(index)
            only = (
                {os.path.relpath(os.path.abspath(a), index.workdir).replace(os.sep, "/") for a in args}
                if args
                else None
            )
            report = checks.check_staged(index, policy, only)
        finally:
            index.close()
        if name == "boundary":
            report.findings = [f for f in report.findings if f.rule == checks.LOCAL_STATE]
        elif name == "public-safety":
            report.findings = [f for f in report.findings if f.rule != checks.LOCAL_STATE]
    else:
        from loopx_git.hooks.prepush import check_push, parse_updates
        from loopx_git.store import layout
        from loopx_git.store.git import GitRepo

        git = GitRepo.discover(repo)
        policy = checks.policy_of(git)
        state_ref = layout.state_ref(git.config_get("loopx.stateRef") or layout.DEFAULT_STATE_REF)
        if name == "pre-push":
            updates = parse_updates(_read_updates(stdin or sys.stdin))
            remote = args[0] if args else None
        else:
            updates = _framework_updates(git)
            remote = os.environ.get("PRE_COMMIT_REMOTE_NAME")
        report = check_push(git, updates, policy, remote=remote, state_ref=state_ref)
    print_report(report, out, label=name, strict=strict, quiet_when_clean=True)
    return 1 if report.failed(strict) else 0


MAX_MESSAGE = 16 << 20
"""Bytes of a commit message file read at most (a message past this is refused, not read whole)."""


def _check_message(args: list[str], repo: str):
    """The commit-msg hook: git passes the file holding the message it is about to record."""
    from loopx_git.errors import ValidationError
    from loopx_git.hooks import checks
    from loopx_git.store.plumbing import IndexReader

    if len(args) != 1:
        raise ValidationError(
            f"commit-msg takes one argument, the message file git passes; got {len(args)}",
            code="invalid-input",
            hint="git runs it as `loopx hook run commit-msg .git/COMMIT_EDITMSG`",
        )
    try:
        with open(args[0], "rb") as f:
            data = f.read(MAX_MESSAGE + 1)
    except OSError as exc:
        raise ValidationError(
            f"commit-msg: the message file {args[0]!r} cannot be read ({exc.strerror or type(exc).__name__})",
            code="invalid-input",
        ) from exc
    if len(data) > MAX_MESSAGE:
        raise ValidationError(
            f"commit-msg: the message file is longer than {MAX_MESSAGE >> 20} MiB; rule: a commit message is text "
            "a person reads",
            code="invalid-input",
        )
    index = IndexReader.discover(repo)
    try:
        policy = checks.policy_of(index)
        # git strips comments (and the diff `commit -v` adds) only from a message edited in an editor;
        # without one (-m, -F) it sets GIT_EDITOR=: for the hook, and a '#' line is committed as written.
        # `commit.cleanup` can keep them too; a `--cleanup` flag on the command line the hook cannot
        # see (the pre-push hook scans such a commit before it leaves the machine)
        edited = os.environ.get("GIT_EDITOR") != ":"
        config = _git_config(index.workdir, r"^(core\.comment(char|string)|commit\.cleanup)$")
        comment = (config.get("core.comment") or "#") if edited else None
        cleanup = config.get("commit.cleanup") or "default"
    finally:
        index.close()
    text = data.decode("utf-8", "surrogateescape")
    mode = "strip" if cleanup.lower() == "default" else cleanup.lower()
    return checks.check_message(checks.message_text(text, None if comment == "auto" else comment, mode), policy)


def _git_config(workdir, pattern: str) -> dict[str, str]:
    """The values git uses for the keys matching ``pattern`` (lower-cased keys; the last one set
    wins), read in one ``git config`` process. ``core.commentChar`` and ``core.commentString`` are
    one setting to git, reported as ``core.comment`` (``auto``: git picks a comment character per
    message; nothing is then taken for a comment)."""
    import subprocess

    proc = subprocess.run(["git", "config", "--get-regexp", pattern], cwd=workdir, capture_output=True)
    values: dict[str, str] = {}
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines() if proc.returncode == 0 else []:
        key, _, value = line.partition(" ")
        key = key.lower()
        values["core.comment" if key in ("core.commentchar", "core.commentstring") else key] = value
    return values


MAX_PUSH_INPUT = 16 << 20
"""Characters of pre-push input read at most: git sends one short line per ref (a hundred thousand
refs fit); endless input (``< /dev/zero``) is refused, not read until memory runs out."""


def _read_updates(stream: TextIO) -> str:
    text = stream.read(MAX_PUSH_INPUT + 1)
    if len(text) > MAX_PUSH_INPUT:
        from loopx_git.errors import ValidationError

        raise ValidationError(
            f"pre-push input is longer than {MAX_PUSH_INPUT >> 20} Mi characters; rule: git sends one "
            "'<local ref> <local sha> <remote ref> <remote sha>' line per pushed ref",
            code="invalid-input",
        )
    return text


def main(argv: list[str]) -> int:
    """``argv`` is what follows ``loopx hook run``."""
    from loopx_git.errors import outcome

    ns = _plain_args(argv)
    if ns is None:
        try:
            parsed = _parser().parse_intermixed_args(argv)
        except SystemExit as exc:
            return 2 if exc.code else 0
        ns = _Args(parsed.name, parsed.args, parsed.repo, parsed.strict)
    try:
        return run(ns.name, ns.args, repo=ns.repo, strict=ns.strict)
    except Exception as exc:  # fail closed, but say so in one line instead of a traceback
        said = outcome(exc)
        if said.internal:
            sys.stderr.write(
                f"loopx hook run {ns.name}: {said.message}; stopped to be safe. "
                "`git commit --no-verify` / `git push --no-verify` skip the hook.\n"
            )
        else:
            sys.stderr.writelines(line + "\n" for line in said.lines())
        return said.exit_code

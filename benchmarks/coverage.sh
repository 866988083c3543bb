#!/usr/bin/env bash
# Line and branch coverage of loopx_git by the whole suite, subprocesses included (the CLI tests run
# `python -m loopx_git` as a user would): coverage.py's `patch = subprocess` starts measuring in every
# Python process the suite starts, each writing its own data file, combined at the end.
#
#   benchmarks/coverage.sh [CHECKOUT]     # default: this checkout; prints the report's TOTAL line
#
# CHECKOUT is a work tree of this repository (a `git worktree add` of an older commit, to compare),
# run with its own .venv (the README's test command, then `pip install coverage`), so that every
# process the suite starts imports that tree's loopx_git.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(cd "${1:-$here}" && pwd)"
python="$tree/.venv/bin/python"
out="$(mktemp -d)"
cat > "$out/coveragerc" <<RC
[run]
branch = true
parallel = true
source = loopx_git
patch = subprocess
data_file = $out/.coverage
[report]
precision = 1
RC
cd "$tree"
# not -x: the tests that count what a hook process imports fail under coverage (its subprocess patch
# imports dataclasses and hashlib into every process); they are listed with the figures
COVERAGE_RCFILE="$out/coveragerc" "$python" -m coverage run -m pytest -q -p no:cacheprovider -n 2 >"$out/pytest.log" 2>&1 || true
grep '^FAILED' "$out/pytest.log" || true
tail -1 "$out/pytest.log"
COVERAGE_RCFILE="$out/coveragerc" "$python" -m coverage combine -q
COVERAGE_RCFILE="$out/coveragerc" "$python" -m coverage report | tail -1
echo "data: $out"

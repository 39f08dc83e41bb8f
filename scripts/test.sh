#!/usr/bin/env bash
# Sets up if needed (scripts/setup.sh), then runs the whole test suite, then (with no arguments)
# the unit tests of the libraries that read hostile input again under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh). Extra arguments go to ctest, and then the
# sanitizer stage is left out (CUSET_SANITIZE_STAGE=1 keeps it, =0 leaves it out in any case).
# After ctest, the 20 slowest cases are printed (scripts/slowest_tests.py, from ctest's JUnit file).
# The suite has a budget: when the whole suite (ctest and the sanitizer stage, set-up excluded)
# passed but took longer than CUSET_TEST_BUDGET_S seconds (default 4500: CI gives the README's
# test command 90 minutes, set-up and build included), the command says so and exits 9, so that
# a suite which grows past its budget fails where it runs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh
stage="${CUSET_SANITIZE_STAGE:-$([[ $# -eq 0 ]] && echo 1 || echo 0)}"
build="${CUSET_BUILD_DIR:-build}"
junit="$build/Testing/ctest-junit.xml"
[[ "$junit" == /* ]] || junit="$ROOT/$junit"
rc=0
start=$SECONDS
ctest --test-dir "$build" --output-on-failure -j "${CUSET_TEST_JOBS:-2}" --output-junit "$junit" "$@" || rc=$?
# The slowest cases, passed or failed: where the suite's time goes.
python3 scripts/slowest_tests.py "$junit" 20 || true
if [[ $rc -ne 0 ]]; then
  exit "$rc"
fi
if [[ "$stage" == 1 ]]; then
  scripts/sanitize.sh
fi
took=$((SECONDS - start))
budget="${CUSET_TEST_BUDGET_S:-4500}"
echo "test suite: ${took} s (budget ${budget} s, CUSET_TEST_BUDGET_S)"
if [[ $took -gt $budget ]]; then
  echo "test suite: over its budget of ${budget} s: speed up or split the slowest cases above" >&2
  exit 9
fi

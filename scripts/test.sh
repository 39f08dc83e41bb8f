#!/usr/bin/env bash
# Sets up if needed (scripts/setup.sh), then runs the whole test suite, then (with no arguments)
# the unit tests of the libraries that read hostile input again under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh). Extra arguments go to ctest, and then the
# sanitizer stage is left out (CUSET_SANITIZE_STAGE=1 keeps it, =0 leaves it out in any case).
# After ctest, the 20 slowest cases are printed (scripts/slowest_tests.py, from ctest's JUnit file).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh
stage="${CUSET_SANITIZE_STAGE:-$([[ $# -eq 0 ]] && echo 1 || echo 0)}"
build="${CUSET_BUILD_DIR:-build}"
junit="$build/Testing/ctest-junit.xml"
[[ "$junit" == /* ]] || junit="$ROOT/$junit"
rc=0
ctest --test-dir "$build" --output-on-failure -j "${CUSET_TEST_JOBS:-2}" --output-junit "$junit" "$@" || rc=$?
# The slowest cases, passed or failed: where the suite's time goes.
python3 scripts/slowest_tests.py "$junit" 20 || true
if [[ $rc -ne 0 ]]; then
  exit "$rc"
fi
if [[ "$stage" == 1 ]]; then
  scripts/sanitize.sh
fi

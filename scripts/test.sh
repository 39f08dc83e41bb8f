#!/usr/bin/env bash
# Sets up if needed (scripts/setup.sh), then runs the whole test suite.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh
ctest --test-dir "${CUSET_BUILD_DIR:-build}" --output-on-failure -j "${CUSET_TEST_JOBS:-2}" "$@"

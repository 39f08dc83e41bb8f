#!/usr/bin/env bash
# Builds the unit tests labelled `unit-sanitized` (tests/CMakeLists.txt: the libraries that read
# hostile input without LibTorch: core, text's template interpreter, tagger, emu's rewrite, judge)
# under AddressSanitizer and UndefinedBehaviorSanitizer into build-sanitize/, and runs them. Any
# report fails the test: UBSan aborts on its first finding, ASan on a memory error or a leak.
# scripts/test.sh runs it after the suite; run it alone after scripts/setup.sh.
# Knobs: CUSET_SANITIZE_BUILD_DIR (default build-sanitize), CUSET_JOBS, CUSET_TEST_JOBS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${CUSET_SANITIZE_BUILD_DIR:-build-sanitize}"
JOBS="${CUSET_JOBS:-$(nproc)}"
say() { printf '[sanitize] %s\n' "$*" >&2; }

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUSET_SANITIZE=address,undefined -DCUSET_CUDA=OFF
            -DCUSET_BUILD_BENCH=OFF)
if [[ -n "${Torch_DIR:-}" ]]; then
  cmake_args+=(-DTorch_DIR="$Torch_DIR")
elif [[ -z "${CMAKE_PREFIX_PATH:-}" ]]; then
  cmake_args+=(-DTorch_DIR="$(echo "$ROOT"/.venv/lib/python3*/site-packages/torch/share/cmake/Torch)")
fi
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  say "configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" "${cmake_args[@]}" >/dev/null
fi
say "building the sanitized unit tests ($JOBS jobs)"
cmake --build "$BUILD_DIR" -j "$JOBS" --target cuset_sanitize_tests
# halt_on_error: the first finding fails the test; detect_leaks: a leak is a finding too.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
say "running them"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${CUSET_TEST_JOBS:-2}" -L sanitized

#!/usr/bin/env bash
# Kept for old instructions: the GPU check is bench/gpu-check.sh (build, `ctest -L gpu`,
# bench_gpu_step, one log under $OUT). Arguments and environment pass through.
exec "$(dirname "${BASH_SOURCE[0]}")/gpu-check.sh" "$@"

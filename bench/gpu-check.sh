#!/usr/bin/env bash
# The GPU check: builds cuset on a machine with an NVIDIA GPU, runs the GPU tests and measures the
# GPU benchmarks, all into one log. From the repository root:
#
#   bench/gpu-check.sh [OUT_DIR] [--dry-run]
#
# OUT_DIR (default runs/gpu-check/ in the repository; created) receives gpu-check.log and the
# JUnit report ctest-gpu.xml. The machine needs python3 with a CUDA build of PyTorch (whose
# share/cmake/Torch is the LibTorch cuset builds against) and transformers, CMake, ninja, nvcc,
# and the C++ libraries cuset uses: installed, or unpacked into .gpu-deps/root by
# bench/gpu-prepare.sh on a machine with network access and copied over with the source tree.
# The stages:
#   1. configure + build into build-gpu/ against python3's PyTorch: only cuset-train, the GPU
#      test program test_gpu and the GPU benchmarks;
#   2. ctest -L gpu (tests/gpu/test_gpu.cpp: CUDA against the CPU, resume, score, generate,
#      one-rank NCCL, the start-up memory check), JUnit report beside the log;
#   3. bench_gpu_step: a Qwen2.5-Coder-7B-shaped bf16 step (tokens/s, MFU against the bf16 matmul
#      rate measured in the same run, peak memory, cuset vs sft, the transformers step in the same
#      run), 4 layers with the reference then 2 layers without (per-layer slope), and the same step
#      with ZeRO's optimizer offloaded to the CPU;
#   4. bench_gpu_decode: greedy decode of a 28-layer Qwen2.5-Coder-7B-shaped bf16 model through
#      cuset's KV-cache loop, tokens/s at batch 1 and 32, and the fraction of the memory-bandwidth
#      bound at batch 1 (weight bytes x steps/s over the copy bandwidth measured in the same run);
#   5. the generation figure against transformers, when bench_generate can run on the GPU (a
#      --device option).
# Every stage runs under a time limit inside an overall budget (GPU_CHECK_BUDGET_S, default 540 s);
# a failed stage is recorded and the next stages still run. Everything printed goes to
# OUT_DIR/gpu-check.log, which ends with one line per stage. Exit status: 0 when every stage passed.
#
# Without a GPU (no nvidia-smi, or none listed) it is a dry run: it prints the plan and the tools
# it found, says that nothing was built or measured, and exits 0. --dry-run forces that mode.
# Environment: PYTHON (default python3), LAYERS (4), SEQ (4096), GPU_CHECK_BUDGET_S (540),
# GPU_CHECK_BUILD_DIR (build-gpu), JOBS (nproc).
set -uo pipefail

CALLER_DIR="$PWD"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
PY="${PYTHON:-python3}"
BUILD="${GPU_CHECK_BUILD_DIR:-build-gpu}"
BUDGET="${GPU_CHECK_BUDGET_S:-540}"
LAYERS="${LAYERS:-4}"
SEQ="${SEQ:-4096}"
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 4)}"
DRY=0
OUT_DIR=""
for a in "$@"; do
  case "$a" in
    --dry-run) DRY=1 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) echo "gpu-check.sh: unknown option '$a' (usage: bench/gpu-check.sh [OUT_DIR] [--dry-run])" >&2; exit 2 ;;
    *)
      if [[ -n "$OUT_DIR" ]]; then
        echo "gpu-check.sh: one output folder only (usage: bench/gpu-check.sh [OUT_DIR] [--dry-run])" >&2
        exit 2
      fi
      OUT_DIR="$a"
      [[ "$OUT_DIR" == /* ]] || OUT_DIR="$CALLER_DIR/$OUT_DIR" ;;  # relative to where it was called
  esac
done
OUT_DIR="${OUT_DIR:-runs/gpu-check}"  # default: in the repository

mkdir -p "$OUT_DIR" || exit 1
LOGDIR="$(cd "$OUT_DIR" && pwd)"
LOG="$LOGDIR/gpu-check.log"
: >"$LOG"
exec > >(tee -a "$LOG") 2>&1
TEE_PID=$!

# finish STATUS: closes the log (waits for tee to write its last lines) and exits.
finish() {
  exec 1>&- 2>&-
  wait "$TEE_PID" 2>/dev/null
  exit "$1"
}

T0=$SECONDS
STAGES=()   # "name status seconds" per stage, printed at the end
FAILED=0

remaining() { echo $((BUDGET - (SECONDS - T0))); }

# stage NAME LIMIT_S COMMAND...: runs COMMAND under min(LIMIT_S, what is left of the budget),
# records ok / FAILED (exit N) / TIMEOUT / SKIPPED and goes on.
stage() {
  local name="$1" limit="$2"
  shift 2
  local left
  left=$(remaining)
  (( left - 5 < limit )) && limit=$((left - 5))
  if (( limit < 10 )); then
    echo "== [$name] SKIPPED: the time budget (${BUDGET}s) is spent"
    STAGES+=("$name SKIPPED(budget) 0")
    FAILED=1
    return 1
  fi
  echo
  echo "== [$name] $(date -u +%H:%M:%S) limit ${limit}s: $*"
  local t=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@"
  rc=$?
  local dt=$((SECONDS - t)) status=ok
  if (( rc == 124 || rc == 137 )); then
    status="TIMEOUT(${limit}s)"
  elif (( rc != 0 )); then
    status="FAILED(exit-$rc)"
  fi
  [[ "$status" == ok ]] || FAILED=1
  echo "== [$name] $status after ${dt}s"
  STAGES+=("$name $status $dt")
  [[ "$status" == ok ]]
}

skip() {  # skip NAME REASON
  echo
  echo "== [$1] SKIPPED: $2"
  STAGES+=("$1 SKIPPED 0")
}

summary() {
  echo
  echo "== summary ($(( SECONDS - T0 ))s of ${BUDGET}s; log $LOG)"
  local s name status secs
  for s in "${STAGES[@]}"; do
    read -r name status secs <<<"$s"
    printf '  %-22s %-18s %ss\n' "$name" "$status" "$secs"
  done
}

plan() {
  cat <<EOF
plan:
  configure  cmake -S . -B $BUILD -G Ninja (Release, CUSET_CUDA=ON, tests ON, Torch_DIR from $PY's torch,
             TORCH_CUDA_ARCH_LIST=9.0, C++ libraries from .gpu-deps/root when present)
  build      cmake --build $BUILD --target cuset-train test_gpu bench_gpu_step bench_gpu_decode [bench_generate]
  gpu-tests  ctest --test-dir $BUILD -L gpu (JUnit: $LOGDIR/ctest-gpu.xml)
  bench-step bench_gpu_step --layers $LAYERS --seq $SEQ --steps 5 --warmup 2 (with the transformers step)
  decode     bench_gpu_decode --batches 1,32 (28 layers, prompts of 512 tokens, 128 new tokens)
  bench-step2 bench_gpu_step --layers $((LAYERS / 2)) --seq $SEQ --steps 5 --warmup 2 --no-hf
  bench-offload the same with --offload (ZeRO's CPU optimizer on one rank: step time and peak memory)
  generate   bench_generate --device cuda, only if bench/bench_generate.cpp has a --device option
EOF
}

echo "gpu-check.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) in $ROOT (commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), budget ${BUDGET}s)"

HAVE_GPU=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  HAVE_GPU=1
fi
if (( DRY || ! HAVE_GPU )); then
  if (( HAVE_GPU )); then
    echo "DRY RUN (--dry-run): nothing is built or run."
  elif command -v nvidia-smi >/dev/null 2>&1; then
    echo "DRY RUN: nvidia-smi lists no GPU here; nothing was built, tested or measured."
  else
    echo "DRY RUN: no NVIDIA GPU (nvidia-smi not found); nothing was built, tested or measured."
  fi
  plan
  echo "tools:"
  for t in cmake ninja nvcc "$PY" timeout; do
    printf '  %-8s %s\n' "$t" "$(command -v "$t" || echo 'missing')"
  done
  if [[ -d .gpu-deps/root ]]; then
    echo "  .gpu-deps/root present ($(du -sh .gpu-deps/root 2>/dev/null | cut -f1))"
  else
    echo "  .gpu-deps/root missing: run bench/gpu-prepare.sh first (on a machine with network access)"
  fi
  finish 0
fi

nvidia-smi -L
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader || true
TORCH_DIR="$("$PY" -c 'import os, torch; print(os.path.join(torch.utils.cmake_prefix_path, "Torch"))' 2>/dev/null)"
echo "PyTorch: $("$PY" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1)"
echo "transformers: $("$PY" -c 'import transformers; print(transformers.__version__)' 2>&1 | tail -n 1)"
echo "nvcc: $(nvcc --version 2>/dev/null | tail -n 1)  cmake: $(cmake --version | head -n 1)  ninja: $(ninja --version 2>/dev/null)"

DEPS="$ROOT/.gpu-deps/root"
PREFIX=()
if [[ -d "$DEPS" ]]; then
  export PKG_CONFIG_SYSROOT_DIR="$DEPS"
  export PKG_CONFIG_PATH="$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS/usr/share/pkgconfig"
  export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  export CPATH="$DEPS/usr/include:${CPATH:-}"
  PREFIX=(-DCMAKE_PREFIX_PATH="$DEPS/usr")
else
  echo "note: no .gpu-deps/root (bench/gpu-prepare.sh): the C++ libraries must be installed on this machine"
fi

BENCH_GENERATE=0
grep -q -- '"--device"' bench/bench_generate.cpp 2>/dev/null && BENCH_GENERATE=1
TARGETS=(cuset-train test_gpu bench_gpu_step bench_gpu_decode)
(( BENCH_GENERATE )) && TARGETS+=(bench_generate)

BUILT=0
if [[ -z "$TORCH_DIR" ]]; then
  echo "cannot find PyTorch's CMake folder through $PY"
  STAGES+=("configure FAILED(no-torch) 0")
  FAILED=1
elif stage configure 120 cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUSET_CUDA=ON \
       -DCUSET_BUILD_TESTS=ON -DCUSET_BUILD_BENCH=ON -DTorch_DIR="$TORCH_DIR" -DTORCH_CUDA_ARCH_LIST=9.0 \
       -DCUSET_PYTHON="$(command -v "$PY")" -DCUSET_PYTHON_GPU="$PY" "${PREFIX[@]}"; then
  BUILT=1
  # After a compile error (not a timeout), each target separately: one that fails to build does
  # not keep the others from running.
  if ! stage build 360 cmake --build "$BUILD" -j "$JOBS" --target "${TARGETS[@]}" &&
     [[ "${STAGES[-1]}" == *FAILED* ]]; then
    for t in "${TARGETS[@]}"; do stage "build-$t" 120 cmake --build "$BUILD" -j "$JOBS" --target "$t"; done
  fi
fi

if (( BUILT )) && [[ -x "$BUILD/cuset-train" ]]; then
  "$BUILD/cuset-train" --version
fi

if (( BUILT )) && [[ -x "$BUILD/tests/test_gpu" ]]; then
  # Leave the benchmark at least ~2 minutes of the budget.
  TESTS_LIMIT=$(( $(remaining) - 130 ))
  (( TESTS_LIMIT > 240 )) && TESTS_LIMIT=240
  (( TESTS_LIMIT < 60 )) && TESTS_LIMIT=60
  stage gpu-tests "$TESTS_LIMIT" ctest --test-dir "$BUILD" -L gpu -V --output-on-failure --timeout 200 \
    --output-junit "$LOGDIR/ctest-gpu.xml"
else
  skip gpu-tests "test_gpu was not built"
fi

if (( BUILT )) && [[ -x "$BUILD/bench/bench_gpu_step" ]]; then
  stage bench-step 150 "$BUILD/bench/bench_gpu_step" --layers "$LAYERS" --seq "$SEQ" --steps 5 --warmup 2
  if [[ -x "$BUILD/bench/bench_gpu_decode" ]]; then
    stage decode 100 "$BUILD/bench/bench_gpu_decode" --batches 1,32
  else
    skip decode "bench_gpu_decode was not built"
  fi
  stage bench-step2 90 "$BUILD/bench/bench_gpu_step" --layers "$((LAYERS / 2))" --seq "$SEQ" --steps 5 \
    --warmup 2 --no-hf
  if "$BUILD/bench/bench_gpu_step" --help | grep -q -- --offload; then
    stage bench-offload 90 "$BUILD/bench/bench_gpu_step" --layers "$((LAYERS / 2))" --seq "$SEQ" --steps 3 \
      --warmup 1 --no-hf --offload
  fi
else
  skip bench-step "bench_gpu_step was not built"
fi

if (( ! BENCH_GENERATE )); then
  skip generate "bench_generate has no --device option (CPU only): no GPU generation figure"
elif (( BUILT )) && [[ -x "$BUILD/bench/bench_generate" ]]; then
  stage generate 90 "$BUILD/bench/bench_generate" --device cuda
else
  skip generate "bench_generate was not built"
fi

summary
finish "$FAILED"

#!/usr/bin/env bash
# Functional check of the bundled CUDA programs on a machine without a GPU: the ```cuda program of
# every record in the given JSONL files (default: data/cuda-sft/{train,eval}.jsonl) is rewritten by
# the emulator's source rewrite (cuset_emu's transform_program, through the emu_transform command
# built with the tests: <build>/tests/emu_transform), compiled with the host C++ compiler against
# the cuemu runtime (src/emu/runtime: every CUDA thread a fiber, real barrier and warp-collective
# semantics) and run; it must exit 0 and print PASS. Not part of CI (several minutes); run it after
# editing the data set.
# On a GPU machine, `cuset-train data check FILE --run` is the real thing.
#   scripts/emulate-cuda-sft.sh [--asan] [--orders] [--perturb] [FILE...]
#     --asan     build with AddressSanitizer: out-of-bounds device accesses abort the program
#     --orders   run every program under five thread/block schedules (CUEMU_SCHED: forward,
#                reverse, random, chaos, lag); a race-free program passes under all of them
#     --perturb  mutation test of each program's own check: corrupt each device-to-host copy in
#                turn (an exponent bit of a word in the middle of the buffer); the program must fail
# The last line is "N passed, M failed". Exit status 77 when the CUDA headers or g++ are missing,
# 2 when emu_transform has not been built (cmake --build build --target emu_transform).
# Environment: CUSET_CHECK_JOBS (default 2), CUSET_EMU_TIMEOUT (seconds per run, default 600), CXX
# (default g++), CUDA_INCLUDE (default /usr/local/cuda/include; only headers are used),
# CUSET_BUILD_DIR (default build; where emu_transform is).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EMU="$ROOT/src/emu/runtime"
TRANSFORM="$ROOT/${CUSET_BUILD_DIR:-build}/tests/emu_transform"
ASAN=0
PERTURB=0
ORDERS=forward
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --asan) ASAN=1 ;;
    --perturb) PERTURB=1 ;;
    --orders) ORDERS="forward reverse random chaos lag" ;;
    *) echo "emulate-cuda-sft: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
if (($# == 0)); then set -- "$ROOT/data/cuda-sft/train.jsonl" "$ROOT/data/cuda-sft/eval.jsonl"; fi

CXX="${CXX:-g++}"
CUDA_INCLUDE="${CUDA_INCLUDE:-/usr/local/cuda/include}"
if [[ ! -f "$CUDA_INCLUDE/cuda_runtime.h" ]] || ! command -v "$CXX" >/dev/null || [[ "$(uname -m)" != x86_64 ]]; then
  echo "emulate-cuda-sft: needs x86-64, $CXX and the CUDA headers in $CUDA_INCLUDE; skipping" >&2
  exit 77
fi

if [[ ! -x "$TRANSFORM" ]]; then
  echo "emulate-cuda-sft: $TRANSFORM not found; build it: cmake --build ${CUSET_BUILD_DIR:-build} --target emu_transform" >&2
  exit 2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cuda-sft-emu.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

python3 "$ROOT/scripts/cuda-sft-programs.py" "$WORK" .fail "$@"

FLAGS=(-std=c++17 -O1 -g -w -fpermissive -I "$EMU/include" -I "$EMU" -I "$CUDA_INCLUDE")
if ((ASAN)); then FLAGS+=(-fsanitize=address -fno-omit-frame-pointer); fi
"$CXX" "${FLAGS[@]}" -c "$EMU/cuemu.cpp" -o "$WORK/cuemu.o"

run_one() {  # $1 = path/to/<id>.cu; leaves <id>.ok or <id>.fail
  local src="$1" stem="${1%.cu}" rc=0 copies k
  export ASAN_OPTIONS=detect_leaks=0
  if ! "$TRANSFORM" "$src" >"$stem.cpp" 2>"$stem.log"; then
    echo "transform failed: $(tail -1 "$stem.log")" >"$stem.fail"; return
  fi
  if ! "$CXX" "${FLAGS[@]}" -include "$EMU/cuemu.h" "$stem.cpp" "$WORK/cuemu.o" -o "$stem.bin" >"$stem.log" 2>&1; then
    echo "build failed: $(grep -m1 error "$stem.log")" >"$stem.fail"; return
  fi
  for order in $ORDERS; do
    CUEMU_SCHED=$order timeout "$LIMIT" "$stem.bin" >"$stem.log" 2>&1 || rc=$?
    if ((rc != 0)) || ! grep -q PASS "$stem.log"; then
      echo "[$order] exit $rc: $(tail -2 "$stem.log" | tr '\n' ' ')" >"$stem.fail"; return
    fi
  done
  if ((PERTURB)); then
    copies=$(CUEMU_COUNT=1 timeout "$LIMIT" "$stem.bin" 2>&1 >/dev/null | sed -n 's/.* \([0-9]*\) device-to-host.*/\1/p')
    for ((k = 1; k <= ${copies:-0}; ++k)); do
      if CUEMU_PERTURB=$k CUEMU_PERTURB_MODE=gross timeout "$LIMIT" "$stem.bin" >/dev/null 2>&1; then
        echo "its check accepts a corrupted device-to-host copy #$k" >"$stem.fail"; return
      fi
    done
  fi
  : >"$stem.ok"
  rm -f "$stem.bin"
}
export -f run_one
export WORK CXX EMU TRANSFORM PERTURB ORDERS
export LIMIT="${CUSET_EMU_TIMEOUT:-600}"
export FLAGS_STR="${FLAGS[*]}"

JOBS="${CUSET_CHECK_JOBS:-2}"
echo "emulate-cuda-sft: $(find "$WORK" -name '*.cu' | wc -l) programs, $JOBS jobs$( ((ASAN)) && echo ', AddressSanitizer')$( ((PERTURB)) && echo ', output corruption'), orders: $ORDERS"
find "$WORK" -name '*.cu' -print0 | sort -z |
  xargs -0 -n 1 -P "$JOBS" bash -c 'read -r -a FLAGS <<<"$FLAGS_STR"; run_one "$0"'

passed=$(find "$WORK" -name '*.ok' | wc -l)
failed=$(find "$WORK" -name '*.fail' | wc -l)
for f in $(find "$WORK" -name '*.fail' | sort); do
  echo "FAIL $(basename "${f%.fail}"): $(cat "$f")"
done
echo "$passed passed, $failed failed"
((failed == 0))

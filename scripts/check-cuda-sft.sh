#!/usr/bin/env bash
# Compile check of the bundled CUDA instruction set: extracts the ```cuda program of every
# record in the given JSONL files (default: data/cuda-sft/{train,eval}.jsonl) and builds each
# with nvcc, in parallel. It does not run them (CI has no GPU); `cuset-train data check --run`
# does that on a GPU machine. The last line is "N passed, M failed"; the exit status is 0 only
# when every program compiles, 77 when no nvcc is found (CTest reports a skip).
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), CUSET_CHECK_JOBS
# (default 2), CUSET_NVCC_ARCH (default sm_80), CUSET_CHECK_TIMEOUT (seconds per program, 600).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="${CUSET_CHECK_JOBS:-2}"
ARCH="${CUSET_NVCC_ARCH:-sm_80}"
LIMIT="${CUSET_CHECK_TIMEOUT:-600}"
NVCC="${NVCC:-$(command -v nvcc || true)}"
if [[ -z "$NVCC" && -x /usr/local/cuda/bin/nvcc ]]; then NVCC=/usr/local/cuda/bin/nvcc; fi
if [[ -z "$NVCC" ]]; then
  echo "check-cuda-sft: nvcc not found (set NVCC); skipping" >&2
  exit 77
fi
if (($# == 0)); then set -- "$ROOT/data/cuda-sft/train.jsonl" "$ROOT/data/cuda-sft/eval.jsonl"; fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cuda-sft-check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# One <id>.cu per record: the body of the response's (single) ```cuda fence.
python3 - "$WORK" "$@" <<'PY'
import json, re, sys
from pathlib import Path
work = Path(sys.argv[1])
fence = re.compile(r"```cuda\n(.*?)```", re.S)
for name in sys.argv[2:]:
    with open(name, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)
            blocks = fence.findall(rec["response"])
            sid = re.sub(r"[^A-Za-z0-9_.-]", "_", rec.get("id") or f"line{n}")
            if len(blocks) != 1:
                (work / f"{sid}.err").write_text(
                    f"error: {name}:{n}: {len(blocks)} ```cuda fences in the response (want 1)\n")
                continue
            (work / f"{sid}.cu").write_text(blocks[0], encoding="utf-8")
PY

compile_one() {  # $1 = path/to/<id>.cu; writes <id>.ok or <id>.err
  local src="$1" stem="${1%.cu}"
  if timeout "$LIMIT" "$NVCC" -std=c++17 -arch="$ARCH" -o "$stem.bin" "$src" >"$stem.log" 2>&1; then
    : >"$stem.ok"
  else
    mv "$stem.log" "$stem.err"
  fi
  rm -f "$stem.bin"
}
export -f compile_one
export NVCC ARCH LIMIT

n_cu=$(find "$WORK" -name '*.cu' | wc -l)
echo "check-cuda-sft: compiling $n_cu programs with $NVCC -arch=$ARCH ($JOBS jobs)"
find "$WORK" -name '*.cu' -print0 | sort -z | xargs -0 -n 1 -P "$JOBS" bash -c 'compile_one "$0"'

passed=$(find "$WORK" -name '*.ok' | wc -l)
failed=$(find "$WORK" -name '*.err' | wc -l)
for err in $(find "$WORK" -name '*.err' | sort); do
  first="$(grep -m1 -E 'error|Error' "$err" || head -n1 "$err")"
  echo "FAIL $(basename "${err%.err}"): ${first:-timed out after ${LIMIT}s}"
done
echo "$passed passed, $failed failed"
((failed == 0))

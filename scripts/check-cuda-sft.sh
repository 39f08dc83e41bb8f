#!/usr/bin/env bash
# Checks of the bundled CUDA instruction set over the JSONL files given (default:
# data/cuda-sft/{train,eval}.jsonl). The last line is always "N passed, M failed" and the exit
# status is 0 only when nothing failed.
#   scripts/check-cuda-sft.sh [FILE...]
#       extracts the ```cuda program of every record and builds it with nvcc, in parallel. It does
#       not run the programs (CI has no GPU); `cuset-train data check --run` does that on a GPU
#       machine. Exit status 77 (CTest: skipped) when no nvcc is found.
#   scripts/check-cuda-sft.sh --tagger CUSET_TRAIN [FILE...]
#       runs `CUSET_TRAIN tag --format json` on every response and requires at least one kernel
#       span and one launch span (what the CuSeT objective treats as CUDA-sensitive).
# Environment: NVCC (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc), CUSET_CHECK_JOBS
# (default 2), CUSET_NVCC_ARCH (default sm_80), CUSET_CHECK_TIMEOUT (seconds per program, 600).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TAGGER=""
if [[ "${1:-}" == "--tagger" ]]; then
  TAGGER="${2:?--tagger needs the path of cuset-train}"
  shift 2
fi
if (($# == 0)); then set -- "$ROOT/data/cuda-sft/train.jsonl" "$ROOT/data/cuda-sft/eval.jsonl"; fi

# ---------------------------------------------------------------- tagger coverage
read -r -d '' TAG_CHECK <<'PY' || true
import json, os, subprocess, sys, tempfile
tagger, files = sys.argv[1], sys.argv[2:]
passed = failed = 0
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "response.md")
    for name in files:
        with open(name, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                rec = json.loads(line)
                with open(path, "w", encoding="utf-8") as out:
                    out.write(rec["response"])
                r = subprocess.run([tagger, "tag", "--format", "json", path], capture_output=True, text=True)
                cats = set()
                if r.returncode == 0:
                    cats = {c for span in json.loads(r.stdout)["spans"] for c in span["categories"]}
                missing = [c for c in ("kernel", "launch") if c not in cats]
                if r.returncode != 0 or missing:
                    why = f"tagger exit {r.returncode}" if r.returncode else "no " + " and no ".join(missing)
                    print(f"FAIL {rec.get('id') or f'{name}:{n}'}: {why}")
                    failed += 1
                else:
                    passed += 1
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
if [[ -n "$TAGGER" ]]; then
  exec python3 -c "$TAG_CHECK" "$TAGGER" "$@"
fi

# ---------------------------------------------------------------- nvcc compile check
JOBS="${CUSET_CHECK_JOBS:-2}"
ARCH="${CUSET_NVCC_ARCH:-sm_80}"
LIMIT="${CUSET_CHECK_TIMEOUT:-600}"
NVCC="${NVCC:-$(command -v nvcc || true)}"
if [[ -z "$NVCC" && -x /usr/local/cuda/bin/nvcc ]]; then NVCC=/usr/local/cuda/bin/nvcc; fi
if [[ -z "$NVCC" ]]; then
  echo "check-cuda-sft: nvcc not found (set NVCC); skipping" >&2
  exit 77
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cuda-sft-check.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# One <id>.cu per record: the body of the response's (single) ```cuda fence; a record without
# exactly one such fence becomes <id>.err directly.
python3 "$ROOT/scripts/cuda-sft-programs.py" "$WORK" .err "$@"

compile_one() {  # $1 = path/to/<id>.cu; leaves <id>.ok or <id>.err
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

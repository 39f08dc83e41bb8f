#!/usr/bin/env bash
# A shell sweep over methods on a configuration (default: the demo): one run folder per run under
# runs/sweep/, then a table of the final evaluation cross-entropy (and each method's statistics)
# read from each run's summary.json. cuset runs once per region.alpha x threshold.q; the other
# methods ignore both and run once. Extra arguments go to every run, e.g.
#   METHODS="sft cuset dft eaft asft rho1" scripts/sweep.sh --set train.max_steps=8
# CONFIG=configs/qwen7b.yaml OUT=runs/qwen-sweep scripts/sweep.sh   (same on a GPU node)
# rho1 needs a score file of its reference model: REF_SCORES=FILE, or (default) the base model's,
# made once with `cuset-train score` as $OUT/base-scores.bin.
# With eval.after_training each run ends with CUDABench on its final checkpoint, and the table gets
# its compile rate, pass@1 and pass@K (a trailing "c": compile-only, no GPU judged it), e.g.
#   scripts/sweep.sh --set eval.after_training=true --set eval.tasks=CUDABench-Set.jsonl --set eval.level=1
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="${CONFIG:-configs/demo.yaml}"
OUT="${OUT:-runs/sweep}"
METHODS="${METHODS:-sft cuset}"
ALPHAS="${ALPHAS:-0.5 1.0}"
QS="${QS:-0.1 0.2}"
REF_SCORES="${REF_SCORES:-}"
[[ -x build/cuset-train ]] || scripts/setup.sh
mkdir -p "$OUT"

runs=()
run_one() {  # name, then --set arguments
  local name="$1"
  shift
  runs+=("$name")
  echo "== $name" >&2
  build/cuset-train --config "$CONFIG" --output-dir "$OUT" --run-name "$name" --set log.progress=never "$@" ||
    echo "run $name failed (exit $?)" >&2
}

for method in $METHODS; do
  case $method in
    cuset)
      for alpha in $ALPHAS; do
        for q in $QS; do
          run_one "cuset-a$alpha-q$q" --set objective.method=cuset --set objective.region.alpha="$alpha" \
            --set objective.mask.threshold.q="$q" "$@"
        done
      done
      ;;
    rho1)
      if [[ -z $REF_SCORES ]]; then
        REF_SCORES="$OUT/base-scores.bin"
        if [[ ! -f $REF_SCORES ]]; then
          echo "== scoring the base model for rho1: $REF_SCORES" >&2
          build/cuset-train score --config "$CONFIG" --out "$REF_SCORES" "$@"
        fi
      fi
      run_one rho1 --set objective.method=rho1 --set objective.rho1.reference_scores="$REF_SCORES" "$@"
      ;;
    *)
      run_one "$method" --set objective.method="$method" "$@"
      ;;
  esac
done

printf '\n%-18s %10s %10s %10s %10s %10s %9s %6s %8s %8s %8s\n' run ce_before ce_after eval_loss kept tok_w kl steps \
  compile pass@1 pass@K
for name in "${runs[@]}"; do
  s="$OUT/$name/summary.json"
  if [[ ! -f $s ]]; then printf '%-18s %10s\n' "$name" "(no summary)"; continue; fi
  python3 - "$s" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
before, after = s.get("eval_before") or {}, s.get("eval_after") or {}
fmt = lambda v, p=4: "n/a" if v is None else f"{v:.{p}f}"
kept = s.get("kept_fraction")
# eval.after_training: CUDABench figures (compile-only runs mark pass@ with "c")
b = s.get("cudabench") or {}
mark = "c" if b.get("judge") == "compile-only" else ""
pct = lambda v, m="": "n/a" if v is None else f"{100 * v:.1f}%" + m
print(f"{sys.argv[2]:<18} {fmt(before.get('eval_ce')):>10} {fmt(after.get('eval_ce')):>10} "
      f"{fmt(after.get('eval_loss')):>10} {'n/a' if kept is None else f'{100 * kept:.1f}%':>10} "
      f"{fmt(s.get('token_weight_mean'), 3):>10} {fmt(s.get('kl_mean'), 5):>9} {s.get('steps', 0):>6}"
      f" {pct(b.get('compile_rate')):>8} {pct(b.get('pass@1'), mark):>8} {pct(b.get('pass@K'), mark):>8}")
PY
done

#!/usr/bin/env bash
# A shell sweep over method x region.alpha x threshold.q on a configuration (default: the demo):
# one run folder per combination under runs/sweep/, then a table of the final evaluation losses
# read from each run's summary.json. Extra arguments go to every run, e.g.
#   scripts/sweep.sh --set train.max_steps=10
# CONFIG=configs/qwen7b.yaml OUT=runs/qwen-sweep scripts/sweep.sh   (same on a GPU node)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CONFIG="${CONFIG:-configs/demo.yaml}"
OUT="${OUT:-runs/sweep}"
METHODS="${METHODS:-sft cuset}"
ALPHAS="${ALPHAS:-0.5 1.0}"
QS="${QS:-0.1 0.2}"
[[ -x build/cuset-train ]] || scripts/setup.sh

runs=()
for method in $METHODS; do
  for alpha in $ALPHAS; do
    for q in $QS; do
      # sft ignores alpha and q: one run is enough.
      if [[ $method == sft ]]; then
        name="sft"
        [[ " ${runs[*]} " == *" $name "* ]] && continue
      else
        name="$method-a$alpha-q$q"
      fi
      runs+=("$name")
      echo "== $name" >&2
      build/cuset-train --config "$CONFIG" --output-dir "$OUT" --run-name "$name" \
        --set objective.method="$method" --set objective.region.alpha="$alpha" \
        --set objective.mask.threshold.q="$q" --set log.progress=never "$@" ||
        echo "run $name failed (exit $?)" >&2
    done
  done
done

printf '\n%-22s %12s %12s %10s %10s\n' run eval_loss eval_ce kept steps
for name in "${runs[@]}"; do
  s="$OUT/$name/summary.json"
  if [[ ! -f $s ]]; then printf '%-22s %12s\n' "$name" "(no summary)"; continue; fi
  python3 - "$s" "$name" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
after = s.get("eval_after") or {}
fmt = lambda v: "n/a" if v is None else f"{v:.4f}"
kept = s.get("kept_fraction")
print(f"{sys.argv[2]:<22} {fmt(after.get('eval_loss')):>12} {fmt(after.get('eval_ce')):>12} "
      f"{'n/a' if kept is None else f'{100 * kept:.1f}%':>10} {s.get('steps', 0):>10}")
PY
done

#!/usr/bin/env bash
# Sets up if needed (scripts/setup.sh), then runs the embedded default: CuSeT fine-tuning of the
# bundled tiny model on the bundled CUDA data, on the CPU.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh
args=("$@")
if [[ $# -eq 0 && -d runs/demo ]]; then  # a second demo gets its own run folder
  name="demo-$(date +%Y%m%d-%H%M%S)"
  echo "[demo] runs/demo holds an earlier demo; this one writes runs/$name"
  args=(--run-name "$name")
fi
exec build/cuset-train --config configs/demo.yaml "${args[@]}"

#!/usr/bin/env bash
# Rebuilds data/tiny-coder, the embedded demo model, reproducibly:
#   1. scripts/make_tiny_coder.py: corpus (CCCL headers of the CUDA toolkit + the bundled train
#      split), a 4k byte-level BPE tokenizer trained with `tokenizers`, a random Qwen2 init;
#   2. cuset-train pre-trains it (configs/tiny-coder-pretrain.yaml);
#   3. cuset-train export writes the result as bf16 into data/tiny-coder (< 10 MB).
# Takes about 25 minutes on 2 otherwise idle CPU cores. Extra arguments go to the pre-training run (e.g.
# --set train.max_steps=100 for a quicker, weaker model).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh
WORK=build/tiny-coder-work
rm -rf "$WORK"
.venv/bin/python scripts/make_tiny_coder.py "$WORK"
build/cuset-train --config configs/tiny-coder-pretrain.yaml "$@"
last="$(ls -d "$WORK"/runs/pretrain/checkpoint-* | sort | tail -n 1)"
build/cuset-train export --model "$last" --out data/tiny-coder --dtype bfloat16
rm -f data/tiny-coder/generation_config.json.tmp* 2>/dev/null || true
du -sh data/tiny-coder
echo "data/tiny-coder rebuilt from $last"

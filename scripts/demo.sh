#!/usr/bin/env bash
# Sets up if needed (scripts/setup.sh), then runs the embedded default: CuSeT fine-tuning of the
# bundled tiny model on the bundled CUDA data, on the CPU.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
scripts/setup.sh
exec build/cuset-train --config configs/demo.yaml "$@"

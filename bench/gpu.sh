#!/usr/bin/env bash
# GPU benchmark, one prepared script for a machine with an NVIDIA GPU (the device tool's H200):
# builds cuset against that machine's own PyTorch (python3's torch, its share/cmake/Torch) with
# the C++ libraries carried in .gpu-deps (bench/gpu-prepare.sh), then runs bench_gpu_step on a
# Qwen2.5-Coder-7B-shaped model: bf16 step throughput, MFU against the measured bf16 matmul rate,
# peak memory, cuset vs sft, and the same step through transformers + PyTorch in the same run.
# 4 and 2 layers are measured so the per-layer cost can be scaled to the full 28 layers.
#   LAYERS=4 SEQ=4096 bench/gpu.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
nvidia-smi -L || { echo "gpu.sh: no NVIDIA GPU visible" >&2; exit 1; }
TORCH_DIR="$($PY -c 'import os, torch; print(os.path.join(torch.utils.cmake_prefix_path, "Torch"))')"
echo "PyTorch $($PY -c 'import torch; print(torch.__version__, torch.version.cuda)') at $TORCH_DIR"
DEPS="$ROOT/.gpu-deps/root"
if [[ -d "$DEPS" ]]; then
  export PKG_CONFIG_SYSROOT_DIR="$DEPS"
  export PKG_CONFIG_PATH="$DEPS/usr/lib/x86_64-linux-gnu/pkgconfig:$DEPS/usr/share/pkgconfig"
  export LD_LIBRARY_PATH="$DEPS/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  export CPATH="$DEPS/usr/include:${CPATH:-}"
  PREFIX=(-DCMAKE_PREFIX_PATH="$DEPS/usr")
else
  PREFIX=()
fi
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUSET_CUDA=ON -DCUSET_BUILD_TESTS=OFF \
  -DTorch_DIR="$TORCH_DIR" -DTORCH_CUDA_ARCH_LIST=9.0 -DCUSET_PYTHON_GPU="$PY" "${PREFIX[@]}" >/dev/null
cmake --build build-gpu -j "$(nproc)" --target bench_gpu_step cuset-train
build-gpu/cuset-train --version
LAYERS="${LAYERS:-4}"
SEQ="${SEQ:-4096}"
echo "== $LAYERS layers, sequence $SEQ"
build-gpu/bench/bench_gpu_step --layers "$LAYERS" --seq "$SEQ" --steps 5 --warmup 2
echo "== $((LAYERS / 2)) layers (per-layer slope: scale the difference to 28 layers)"
build-gpu/bench/bench_gpu_step --layers "$((LAYERS / 2))" --seq "$SEQ" --steps 5 --warmup 2 --no-hf

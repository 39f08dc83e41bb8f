#!/usr/bin/env bash
# Sets up a machine to build and test cuset, then builds it into build/. Idempotent: a second
# run installs nothing and rebuilds incrementally.
#   1. Debian packages (compiler tools and the C++ libraries cuset uses), when missing.
#   2. .venv/: pinned torch (its share/cmake/Torch is the LibTorch we build against) and the
#      reference libraries the golden tests compare with (scripts/requirements.txt), among them
#      llama-cpp-python, compiled from source on the first set-up (about 10-15 minutes).
#   3. CMake + Ninja configure and build, through ccache.
# With your own LibTorch (e.g. on a GPU node), set Torch_DIR or CMAKE_PREFIX_PATH: the build
# uses it instead of the virtual environment's torch.
# Environment knobs: CUSET_BUILD_DIR (default build), CUSET_BUILD_TYPE (default Release),
# CUSET_CMAKE_ARGS (extra configure arguments), CUSET_JOBS (default: number of cores).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${CUSET_BUILD_DIR:-build}"
BUILD_TYPE="${CUSET_BUILD_TYPE:-Release}"
JOBS="${CUSET_JOBS:-$(nproc)}"

say() { printf '[setup] %s\n' "$*" >&2; }

# ---------------------------------------------------------------- 1. Debian packages
APT_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config python3-venv
  libsentencepiece-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libyaml-cpp-dev libpcre2-dev libutf8proc-dev libgtest-dev libgmock-dev
  libcurl4-openssl-dev  # generate.backend openai: the HTTP client of the chat-completions API
  libseccomp-dev  # the judge's system call filter
  libgloo-dev  # headers only: c10d's Gloo process group (the library itself is inside LibTorch)
)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---------------------------------------------------------------- 2. Python environment
REQ="scripts/requirements.txt"
STAMP=".venv/.cuset-requirements"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv"
  python3 -m venv .venv
fi
if [[ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ]]; then
  say "installing pinned Python packages into .venv (torch, transformers, tokenizers, ...)"
  .venv/bin/pip install -q --upgrade pip >/dev/null
  # llama-cpp-python compiles llama.cpp: for any x86-64 CPU, not only this one's instruction set
  # (pip keeps the wheel it built, so later set-ups on this machine reuse it).
  CMAKE_ARGS="${CMAKE_ARGS:+$CMAKE_ARGS }-DGGML_NATIVE=OFF" .venv/bin/pip install -q -r "$REQ"
  echo "$want" > "$STAMP"
fi

# ---------------------------------------------------------------- 3. configure and build
cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE")
if [[ -n "${Torch_DIR:-}" ]]; then
  cmake_args+=(-DTorch_DIR="$Torch_DIR")
elif [[ -z "${CMAKE_PREFIX_PATH:-}" ]]; then
  torch_dir="$(echo "$ROOT"/.venv/lib/python3*/site-packages/torch/share/cmake/Torch)"
  cmake_args+=(-DTorch_DIR="$torch_dir")
fi
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
# shellcheck disable=SC2206
extra=(${CUSET_CMAKE_ARGS:-})
if [[ ! -f "$BUILD_DIR/build.ninja" ]] || ((${#extra[@]})); then
  say "configuring $BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" "${cmake_args[@]}" "${extra[@]}" >/dev/null
fi
say "building $BUILD_DIR ($JOBS jobs)"
cmake --build "$BUILD_DIR" -j "$JOBS"
say "done: $BUILD_DIR/cuset-train"

#!/usr/bin/env bash
# Run HERE (a machine with Debian's package registry) before bench/gpu-check.sh: downloads the
# Debian packages of the C++ libraries cuset builds against (GoogleTest too, for the GPU tests)
# and unpacks them into .gpu-deps/root, so that the GPU machine (no network, its own PyTorch) can
# build cuset without installing anything. .gpu-deps is excluded from git (it travels by `carry`).
# Then, with the device tool: run(command="bench/gpu-check.sh", carry=[".gpu-deps"], timeout_s=600)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# In a git worktree .git is a file: ask git where the exclude file lives.
EXCLUDE="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$EXCLUDE")"
grep -qx '/.gpu-deps/' "$EXCLUDE" 2>/dev/null || echo '/.gpu-deps/' >> "$EXCLUDE"
rm -rf .gpu-deps && mkdir -p .gpu-deps/debs .gpu-deps/root
cd .gpu-deps/debs
apt-get download libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 \
  nlohmann-json3-dev libcli11-dev libsentencepiece-dev libsentencepiece0 libpcre2-dev libpcre2-8-0 \
  libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 libutf8proc-dev libutf8proc2 libgloo-dev \
  libgtest-dev libgmock-dev googletest >/dev/null
for f in *.deb; do dpkg -x "$f" ../root; done
cd .. && rm -rf debs  # only the unpacked tree travels
du -sh root

#!/usr/bin/env bash
# Run HERE (a machine with Debian's package registry) before bench/gpu.sh: downloads the Debian
# packages of the C++ libraries cuset builds against and unpacks them into .gpu-deps/root, so
# that the GPU machine (no network, its own PyTorch) can build cuset without installing anything.
# Then: run(command="bench/gpu.sh", carry=[".gpu-deps"]) with the device tool.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
grep -qx '/.gpu-deps/' .git/info/exclude 2>/dev/null || echo '/.gpu-deps/' >> .git/info/exclude
rm -rf .gpu-deps && mkdir -p .gpu-deps/debs .gpu-deps/root
cd .gpu-deps/debs
apt-get download libspdlog-dev libspdlog1.10 libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 \
  nlohmann-json3-dev libcli11-dev libsentencepiece-dev libsentencepiece0 libpcre2-dev libpcre2-8-0 \
  libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 libutf8proc-dev libutf8proc2 libgloo-dev >/dev/null
for f in *.deb; do dpkg -x "$f" ../root; done
du -sh ../root

#!/usr/bin/env bash
# Prepares the C++ library packages for a GPU machine without network access, to run
# bench/gpu-check.sh there. Run it on a Debian machine with network access (apt-get download):
# it downloads the Debian packages of the C++ libraries cuset builds against (GoogleTest too, for
# the GPU tests) and unpacks them into .gpu-deps/root, so that the GPU machine, which brings its
# own PyTorch, builds cuset without installing anything. .gpu-deps is excluded from git; copy it
# to the GPU machine with the source tree, then run bench/gpu-check.sh there.
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

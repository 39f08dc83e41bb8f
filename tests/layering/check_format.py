#!/usr/bin/env python3
"""The ctest `format`: every source file of the project keeps the layout .editorconfig states.

Checked, on the files git tracks and the untracked ones it does not ignore, for C++, CUDA,
Python, shell and CMake sources outside tests/fixtures and data/: valid UTF-8, LF line endings,
no tab, no trailing white space, a final newline. Prints one line per finding (FILE:LINE: what)
and exits 1 when there is any.
"""
import subprocess
import sys
from pathlib import Path

SUFFIXES = {".cpp", ".h", ".cu", ".hxx", ".py", ".sh", ".cmake", ".in"}
NAMES = {"CMakeLists.txt"}
SKIP = ("tests/fixtures/", "data/")


def source_files(root: Path):
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         check=True, capture_output=True).stdout
    for name in sorted(set(out.decode("utf-8", "surrogateescape").split("\0"))):
        if not name or name.startswith(SKIP):
            continue
        p = root / name
        if (p.suffix in SUFFIXES or p.name in NAMES) and p.is_file() and not p.is_symlink():
            yield name, p


def findings(name: str, data: bytes):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        yield f"{name}: not UTF-8 (byte {e.start})"
        return
    if text and not text.endswith("\n"):
        yield f"{name}: no newline at the end"
    for n, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            yield f"{name}:{n}: CRLF line ending"
            line = line[:-1]
        if "\t" in line:
            yield f"{name}:{n}: a tab"
        if line != line.rstrip(" \t"):
            yield f"{name}:{n}: trailing white space"


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    bad = []
    n = 0
    for name, p in source_files(root):
        n += 1
        bad.extend(findings(name, p.read_bytes()))
    for line in bad:
        print(line)
    print(f"format: {n} source files, {len(bad)} finding(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

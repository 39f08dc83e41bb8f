#!/usr/bin/env python3
"""The dependency order of cuset's libraries, held: a header or source of library L may include
`cuset/<M>/...` only when M comes at or before L in ORDER. docs/layout.md states the same order
in one line, and this check fails when the two disagree.

Usage: check_layering.py SOURCE_DIR"""
import os
import re
import sys

ORDER = ["core", "emu", "judge", "text", "tagger", "data", "model", "train", "generate", "analysis", "eval", "cli"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"cuset/([a-z_]+)/[^"]+"', re.M)


def library_of(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    if rel[:2] == ["include", "cuset"] and len(rel) > 3:
        return rel[2]
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    rank = {lib: i for i, lib in enumerate(ORDER)}
    errors = []
    for top in ("src", os.path.join("include", "cuset")):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if not name.endswith((".h", ".cpp", ".cu", ".in")):
                    continue
                path = os.path.join(dirpath, name)
                lib = library_of(root, path)
                rel = os.path.relpath(path, root)
                if lib is None:
                    errors.append(f"{rel}: outside every library folder (src/<lib>/, include/cuset/<lib>/)")
                    continue
                if lib not in rank:
                    errors.append(f"{rel}: folder '{lib}' is not a library of the order {' -> '.join(ORDER)}")
                    continue
                text = open(path, encoding="utf-8").read()
                for m in INCLUDE.finditer(text):
                    dep = m.group(1)
                    line = text.count("\n", 0, m.start()) + 1
                    if dep not in rank:
                        errors.append(f"{rel}:{line}: includes cuset/{dep}/, which is no library")
                    elif rank[dep] > rank[lib]:
                        errors.append(f"{rel}:{line}: {lib} includes cuset/{dep}/, a higher library "
                                      f"(order: {' -> '.join(ORDER)})")
    layout = open(os.path.join(root, "docs", "layout.md"), encoding="utf-8").read()
    stated = " -> ".join(ORDER)
    if stated not in layout:
        errors.append(f"docs/layout.md: the Libraries section does not state the order '{stated}'")
    for e in errors:
        print(e)
    print(f"layering: {len(errors)} violation(s) in the order {stated}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""KernelBench's own static check of the candidates under tests/fixtures/kernelbench/candidates:
the golden of tests/judge/test_kernel_static_check.cpp
(tests/fixtures/kernelbench/static_check_golden.jsonl).

KernelBench (github.com/ScalingIntelligence/KernelBench) is not on PyPI and is never copied here:
give the path of a checkout. Its own code does the work: each candidate's text goes through its
validate_kernel_static(code, backend="cuda", precision=PRECISION) of
kernelbench/kernel_static_checker.py, with its default error and warning sets, for each precision
below. A candidate's bytes are read as UTF-8 with errors="replace" (as cuset reads them).

Importing the kernelbench package imports, beside torch, numpy, tomli, python-dotenv and tqdm,
two API clients the check never uses (openai, litellm): when they are not installed they are
replaced by empty stand-in modules so that the package imports.

Usage: kernelbench_static.py CHECKOUT CANDIDATES_DIR OUT.jsonl
  CHECKOUT        the KernelBench checkout (its src/ goes first on sys.path)
  CANDIDATES_DIR  a folder of candidate files (*.py), read in name order
Writes one line per candidate and precision: {"candidate", "precision", "valid", "errors",
"warnings"}, errors and warnings sorted (KernelBench's order is that of a Python set).
"""
import json
import os
import subprocess
import sys
import types

PRECISIONS = ["fp32", "fp16", "bf16"]


def stand_in(name, **attributes):
    try:
        __import__(name)
    except ImportError:
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        sys.modules[name] = module


def main():
    checkout, candidates_dir, out_path = sys.argv[1:4]
    sys.path.insert(0, os.path.join(os.path.abspath(checkout), "src"))
    stand_in("openai", OpenAI=None)
    stand_in("litellm", completion=None)
    from kernelbench.kernel_static_checker import validate_kernel_static

    lines = []
    for name in sorted(os.listdir(candidates_dir)):
        if not name.endswith(".py"):
            continue
        with open(os.path.join(candidates_dir, name), "rb") as f:
            code = f.read().decode("utf-8", "replace")
        for precision in PRECISIONS:
            valid, errors, warnings = validate_kernel_static(code, backend="cuda", precision=precision)
            lines.append(json.dumps({"candidate": name, "precision": precision, "valid": valid,
                                     "errors": sorted(errors), "warnings": sorted(warnings)},
                                    ensure_ascii=False))
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    try:
        commit = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown (not a git checkout)"
    print("%d result(s) from KernelBench %s -> %s" % (len(lines), commit, out_path))


if __name__ == "__main__":
    main()

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
import sys

from kernelbench_checkout import commit_of, use_checkout

PRECISIONS = ["fp32", "fp16", "bf16"]


def main():
    checkout, candidates_dir, out_path = sys.argv[1:4]
    use_checkout(checkout)
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
    commit = commit_of(checkout)
    print("%d result(s) from KernelBench %s -> %s" % (len(lines), commit, out_path))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""KernelBench's own prompts for a folder of KernelBench problems: the golden of
tests/databuild/test_kernelbench_tasks.cpp (tests/fixtures/kernelbench/golden_prompts.jsonl), and
the check of cuset's prompts on a real checkout's levels.

KernelBench (github.com/ScalingIntelligence/KernelBench) is not on PyPI and is never copied here:
give the path of a checkout. Its own code does the work: the problems are read by its
LocalKernelBenchDataset (kernelbench/dataset.py) from PROBLEMS_DIR/level<N>, and each prompt is
its get_prompt_for_backend(ref_arch_src, "cuda", option=OPTION, precision=PRECISION) of
kernelbench/prompt_constructor_toml.py (no hardware block), for each (OPTION, PRECISION) below.

Importing the kernelbench package imports, beside torch, numpy, tomli, python-dotenv and tqdm,
two API clients the prompt never uses (openai, litellm): when they are not installed they are
replaced by empty stand-in modules so that the package imports.

Usage: kernelbench_prompts.py CHECKOUT PROBLEMS_DIR OUT.jsonl
  CHECKOUT      the KernelBench checkout (its src/ goes first on sys.path)
  PROBLEMS_DIR  a folder with level1/ .. level4/ (CHECKOUT/KernelBench, or tests/fixtures/kernelbench)
Writes one line per problem and combination: {"level", "problem_id", "name", "option",
"precision", "prompt"}, by level, id, then the combinations' order.
"""
import json
import os
import sys

from kernelbench_checkout import commit_of, use_checkout

COMBINATIONS = [("one_shot", "fp32"), ("zero_shot", "fp32"), ("one_shot", "fp16"), ("zero_shot", "bf16")]


def main():
    checkout, problems_dir, out_path = sys.argv[1:4]
    use_checkout(checkout)
    from kernelbench.dataset import LocalKernelBenchDataset
    from kernelbench.prompt_constructor_toml import get_prompt_for_backend

    lines = []
    for level in (1, 2, 3, 4):
        if not os.path.isdir(os.path.join(problems_dir, "level%d" % level)):
            continue
        for problem in LocalKernelBenchDataset(level=level, base_path=os.path.abspath(problems_dir)):
            for option, precision in COMBINATIONS:
                prompt = get_prompt_for_backend(problem.code, "cuda", option=option, precision=precision)
                lines.append(json.dumps({"level": level, "problem_id": problem.problem_id, "name": problem.name,
                                         "option": option, "precision": precision, "prompt": prompt},
                                        ensure_ascii=False))
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))
    commit = commit_of(checkout)
    print("%d prompt(s) from KernelBench %s -> %s" % (len(lines), commit, out_path))


if __name__ == "__main__":
    main()

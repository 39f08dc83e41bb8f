#!/usr/bin/env python3
"""The reference of bench_judge: CUDABench's own evaluator's compile step (its
Evaluate/evaluator_core.py compile_code: one `nvcc kernel.cu -o kernel` per program, serially) on
the programs of a JSON list, timed. Prints one JSON line: programs, compiled, seconds.
   bench_judge_cudabench.py CUDABENCH_CHECKOUT PROGRAMS.json WORK_DIR"""
import json
import os
import sys
import time
import types

checkout, programs_file, work = sys.argv[1], sys.argv[2], sys.argv[3]
# evaluator_core imports pandas for its report helpers, which compile_code does not use.
sys.modules.setdefault("pandas", types.ModuleType("pandas"))
sys.path.insert(0, os.path.join(checkout, "Evaluate"))
from evaluator_core import compile_code  # noqa: E402

programs = json.load(open(programs_file))
compiled = 0
t0 = time.perf_counter()
for i, code in enumerate(programs):
    d = os.path.join(work, "p%d" % i)
    os.makedirs(d, exist_ok=True)
    compiled += compile_code(code, d) is not None
seconds = time.perf_counter() - t0
print(json.dumps({"programs": len(programs), "compiled": compiled, "seconds": seconds}))

"""The KernelBench judge on a real checkout, under --judge emulate (the CPU path):

1. sizes: for every problem of a level, the elements of its inputs at full size (counted on
   torch's meta device, nothing allocated) and whether it runs at full size under emulation or
   at reduced sizes (the judge's rule, src/judge/kernelbench/reference.py's scale_constants, with
   eval.kernelbench_max_input_elements' default);
2. KernelBench's own adversarial kernels (src/kernelbench/unit_tests/test_kernels/*.py of the
   checkout) judged against level1/1_Square_matrix_multiplication_, as its unit test judges them;
3. cuset's honest candidates (tests/fixtures/kernelbench/candidates/honest_*.py) judged against
   the real level-1 problems they solve, at the sizes the rule gives.

KernelBench is not on PyPI and is never copied into the project, so this runs where a checkout is
(CI judges the fixture problems and candidates: tests/eval/test_kernelbench_eval.cpp):

  git clone https://github.com/ScalingIntelligence/KernelBench /tmp/kb
  .venv/bin/python bench/check_kernelbench_judge.py /tmp/kb [--level 1]

Prints one line per problem (sizes), one per judged candidate (its status and the first error),
and two summary lines; exits 1 when an adversarial kernel passes or an honest candidate does not.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 1 << 18  # eval.kernelbench_max_input_elements' default

# The real level-1 problems cuset's honest candidates solve (problem id -> candidate).
HONEST = {1: "honest_matmul.py", 4: "honest_matvec.py", 5: "honest_scalar_mul.py", 19: "honest_relu.py",
          20: "honest_leaky_relu.py", 21: "honest_sigmoid.py", 22: "honest_tanh.py", 23: "honest_softmax.py",
          32: "honest_hardtanh.py", 39: "honest_l2_norm.py", 47: "honest_sum_reduction.py",
          51: "honest_argmax.py", 89: "honest_cumsum.py"}


def reference_module():
    ns = {"__name__": "kernelbench_reference_rules"}
    exec(compile((ROOT / "src/judge/kernelbench/reference.py").read_text(), "reference.py", "exec"), ns)
    return ns


def sizes(records, rules):
    full = []
    for r in records:
        ns = {"__name__": "kernelbench_problem"}
        try:
            exec(compile(r["kernelbench_source"], r["kernelbench_name"], "exec"), ns)
            with torch.device("meta"):
                n = rules["tensor_elements"](ns["get_inputs"]())
            scaled = rules["scale_constants"](ns, BUDGET) if n > BUDGET else {}
        except Exception as e:  # noqa: BLE001 (a problem the meta device cannot run: reported)
            print(f"  {r['id']}: not counted ({type(e).__name__}: {str(e)[:80]})")
            continue
        what = "full size" if not scaled else "reduced: " + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in scaled.items())
        print(f"  {r['id']}: {n:,} input elements; {what}")
        if not scaled and n <= BUDGET:
            full.append(r["id"])
    return full


def judge(binary, work, tasks, lines):
    results = Path(work) / "results.jsonl"
    results.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = Path(work) / "eval"
    r = subprocess.run([binary, "eval", "--results", str(results), "--tasks", str(tasks), "--judge", "emulate",
                        "--out", str(out)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(r.stderr)
    return json.loads((out / "eval.json").read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkout")
    ap.add_argument("--level", type=int, default=1)
    a = ap.parse_args()
    binary = os.environ.get("CUSET_BINARY", str(ROOT / "build/cuset-train"))
    checkout = Path(a.checkout)
    with tempfile.TemporaryDirectory(prefix="kb-judge-") as work:
        tasks = Path(work) / "kb.jsonl"
        subprocess.run([binary, "data", "tasks", "--from-kernelbench", str(checkout), "--levels", str(a.level),
                        "--out", str(tasks)], check=True, capture_output=True)
        records = [json.loads(line) for line in tasks.read_text().splitlines() if line.strip()]
        print(f"sizes under emulation (level {a.level}, budget {BUDGET:,} input elements):")
        full = sizes(records, reference_module())
        print(f"{len(full)} of {len(records)} level-{a.level} problem(s) run at full size: {', '.join(full) or 'none'}")
        if a.level != 1:
            return
        by_id = {r["kernelbench_problem_id"]: r["id"] for r in records}
        adversarial = sorted((checkout / "src/kernelbench/unit_tests/test_kernels").glob("*.py"))
        lines = [{"id": by_id[1], **{f"code{i + 1}": p.read_text() for i, p in enumerate(adversarial)}}]
        for pid, name in sorted(HONEST.items()):
            if pid in by_id:
                code = (ROOT / "tests/fixtures/kernelbench/candidates" / name).read_text()
                if pid == 1:
                    lines[0][f"code{len(adversarial) + 1}"] = code
                else:
                    lines.append({"id": by_id[pid], "code1": code})
        ev = judge(binary, work, tasks, lines)
        bad = 0
        adversarial_caught = honest_passed = honest = 0
        for t in ev["tasks"]:
            for s in t["samples"]:
                if t["id"] == by_id[1] and s["sample"] <= len(adversarial):
                    name = "KernelBench's " + adversarial[s["sample"] - 1].name
                    caught = s["status"] != "pass"
                    adversarial_caught += caught
                    bad += not caught
                else:
                    pid = next(p for p, i in by_id.items() if i == t["id"])
                    name = HONEST[pid]
                    honest += 1
                    honest_passed += s["status"] == "pass"
                    bad += s["status"] != "pass"
                note = f" [{s['note']}]" if s.get("note") else ""
                print(f"  {t['id']}: {name}: {s['status']}{note} {s['error'][:160]}")
        print(f"KernelBench's adversarial kernels: {adversarial_caught} of {len(adversarial)} end as non-pass")
        print(f"cuset's honest candidates on the real problems: {honest_passed} of {honest} pass")
        sys.exit(1 if bad else 0)


main()

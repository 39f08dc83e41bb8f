"""KernelBench prompt parity on a real checkout: cuset's `data tasks --from-kernelbench` against
KernelBench's own prompt builder, for every problem of levels 1-4 and the four (option, precision)
combinations tests/golden/kernelbench_prompts.py makes.

KernelBench is not on PyPI and is never copied into the project, so this check runs where a
checkout is (CI checks the same code on tests/fixtures/kernelbench's modules and their committed
golden). KernelBench's package needs tomli, python-dotenv and tqdm beside the project's .venv:

  git clone https://github.com/ScalingIntelligence/KernelBench /tmp/kb
  python -m pip install --target /tmp/kbdeps tomli python-dotenv tqdm
  PYTHONPATH=/tmp/kbdeps .venv/bin/python bench/check_kernelbench_prompts.py /tmp/kb

Prints "N of N prompt(s) byte-identical" and the first differing byte of each prompt that differs;
exits 1 when one differs.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    checkout = Path(sys.argv[1])
    binary = os.environ.get("CUSET_BINARY", str(ROOT / "build/cuset-train"))
    with tempfile.TemporaryDirectory(prefix="kb-parity-") as work:
        golden = Path(work) / "golden.jsonl"
        subprocess.run([sys.executable, str(ROOT / "tests/golden/kernelbench_prompts.py"), str(checkout),
                        str(checkout / "KernelBench"), str(golden)], check=True)
        want = {}
        for line in open(golden):
            g = json.loads(line)
            want[(g["level"], g["problem_id"], g["option"], g["precision"])] = g["prompt"]
        got = {}
        for option, precision in sorted({(k[2], k[3]) for k in want}):
            out = Path(work) / f"{option}-{precision}.jsonl"
            subprocess.run([binary, "data", "tasks", "--from-kernelbench", str(checkout), "--prompt-option", option,
                            "--precision", precision, "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
            for line in open(out):
                t = json.loads(line)
                got[(t["kernelbench_level"], t["kernelbench_problem_id"], option, precision)] = t["kernelbench_prompt"]
    same = 0
    for key, prompt in sorted(want.items()):
        mine = got.get(key)
        if mine == prompt:
            same += 1
            continue
        if mine is None:
            print(f"{key}: cuset made no task")
            continue
        at = next((i for i, (a, b) in enumerate(zip(mine, prompt)) if a != b), min(len(mine), len(prompt)))
        print(f"{key}: first difference at byte {at}: cuset {mine[at:at + 40]!r}, KernelBench {prompt[at:at + 40]!r}")
    print(f"{same} of {len(want)} prompt(s) byte-identical")
    sys.exit(0 if same == len(want) else 1)


if __name__ == "__main__":
    main()

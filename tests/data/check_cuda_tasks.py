#!/usr/bin/env python3
"""CTest `cuda_tasks_consistent`: the bundled CUDA task set (data/cuda-tasks, data/README.md).

1. The committed tasks.jsonl equals a fresh pack of the task folders (scripts/pack-tasks.py --out).
2. Every record is well formed, checked here independently of the packer: exactly the record's
   fields with their types, ids >= 100000 (clear of CUDABench's 0..499) and unique, names unique
   (case-insensitive), dtypes the judge's set, shapes Python tuples of positive integers, distinct
   input/output names, gen.py and compare.py valid Python, the judge's file rule (the reference
   names every data/<input>.bin and data/<output>.bin, compare.py every output and no input),
   three non-empty prompts (level 3 a single line), at least 100 tasks over the 12 families.
3. The packer refuses planted faults in a copy of two task folders (exit 3, naming the file):
   a compare.py that names an input, a duplicate id, an unknown dtype.

Usage: check_cuda_tasks.py SOURCE_DIR
"""
import ast
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FAMILIES = {"elementwise", "reduction", "scan", "normalization", "gemm", "conv-pool", "transpose",
            "gather-scatter", "sort-topk", "histogram", "stencil", "attention"}
DTYPES = {"float32", "int32", "uint32", "int64", "uint8", "int8"}
KEYS = ["id", "task_name", "task_description", "inputs", "outputs", "gpu", "bench.cu", "gen.py",
        "compare.py", "level1_prompt", "level2_prompt", "level3_prompt", "family"]
PATH_RE = re.compile(r"""(["'])(?:\./)?(data/[A-Za-z0-9_./-]+)\1""")

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def check_record(line_no, r, ids, names):
    at = f"tasks.jsonl:{line_no}"
    if list(r) != KEYS:
        fail(f"{at}: keys {list(r)} are not {KEYS}")
        return
    if not isinstance(r["id"], int) or isinstance(r["id"], bool) or r["id"] < 100000:
        fail(f"{at}: id {r['id']!r} is not an integer >= 100000")
    if r["id"] in ids:
        fail(f"{at}: duplicate id {r['id']}")
    ids.add(r["id"])
    name = r["task_name"]
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        fail(f"{at}: bad task_name {name!r}")
    elif name.lower() in names:
        fail(f"{at}: duplicate task_name {name}")
    else:
        names.add(name.lower())
    if r["family"] not in FAMILIES:
        fail(f"{at}: unknown family {r['family']!r}")
    for k in ["task_description", "gpu", "bench.cu", "gen.py", "compare.py",
              "level1_prompt", "level2_prompt", "level3_prompt"]:
        if not isinstance(r[k], str) or not r[k].strip():
            fail(f"{at}: {k} is not a non-empty string")
            return
    if "\n" in r["level3_prompt"]:
        fail(f"{at}: level3_prompt is not one line")
    seen = set()
    for part in ("inputs", "outputs"):
        specs = r[part]
        if not isinstance(specs, list) or not specs:
            fail(f"{at}: {part} is not a non-empty list")
            return
        for s in specs:
            if not isinstance(s, dict) or list(s) != ["name", "dtype", "shape"]:
                fail(f"{at}: {part} entry {s!r} is not {{name, dtype, shape}}")
                return
            if s["name"] in seen:
                fail(f"{at}: name {s['name']} used twice in inputs/outputs")
            seen.add(s["name"])
            if s["dtype"] not in DTYPES:
                fail(f"{at}: {s['name']}: dtype {s['dtype']!r}")
            try:
                shape = ast.literal_eval(s["shape"])
            except (ValueError, SyntaxError):
                shape = None
            if (not isinstance(shape, tuple) or not shape
                    or not all(isinstance(d, int) and d > 0 for d in shape) or repr(shape) != s["shape"]):
                fail(f"{at}: {s['name']}: shape {s['shape']!r} is not a tuple of positive integers as repr() writes it")
    for k in ("gen.py", "compare.py"):
        try:
            compile(r[k], f"{at}:{k}", "exec")
        except SyntaxError as e:
            fail(f"{at}: {k} is not valid Python ({e})")
    ref = {m.group(2) for m in PATH_RE.finditer(r["bench.cu"])}
    cmp = {m.group(2) for m in PATH_RE.finditer(r["compare.py"])}
    for s in r["inputs"]:
        p = f"data/{s['name']}.bin"
        if p not in ref:
            fail(f"{at}: bench.cu does not read {p}")
        if p in cmp:
            fail(f"{at}: compare.py names the input {p}")
    for s in r["outputs"]:
        p = f"data/{s['name']}.bin"
        if p not in ref:
            fail(f"{at}: bench.cu does not write {p}")
        if p not in cmp:
            fail(f"{at}: compare.py does not read {p}")
    if "__global__" not in r["bench.cu"] or "<<<" not in r["bench.cu"]:
        fail(f"{at}: bench.cu has no kernel or no launch")
    if 'print("T" if' not in r["compare.py"]:
        fail(f"{at}: compare.py does not print its T/F verdict")


def planted(src, packer, name, edit, expect):
    """Copies two task folders, applies `edit` to the copy and expects the packer to refuse it."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "cuda-tasks"
        folders = sorted((src / "data" / "cuda-tasks").glob("*/*/task.json"))[:2]
        for f in folders:
            shutil.copytree(f.parent, root / f.parent.parent.name / f.parent.name)
        copies = [root / f.parent.parent.name / f.parent.name for f in folders]
        ok = subprocess.run([sys.executable, str(packer), "--root", str(root), "--out", str(Path(tmp) / "a.jsonl")],
                            capture_output=True, text=True)
        if ok.returncode != 0:
            fail(f"planted {name}: the unmodified copy is refused: {ok.stderr.strip()}")
            return
        edit(copies)
        r = subprocess.run([sys.executable, str(packer), "--root", str(root), "--out", str(Path(tmp) / "b.jsonl")],
                           capture_output=True, text=True)
        if r.returncode != 3 or expect not in r.stderr or r.stderr.count("\n") != 1:
            fail(f"planted {name}: expected exit 3 and one line with {expect!r}, got {r.returncode}: {r.stderr!r}")
        else:
            print(f"planted {name}: refused ({r.stderr.strip()})")


def main():
    src = Path(sys.argv[1]).resolve()
    packer = src / "scripts" / "pack-tasks.py"
    committed = src / "data" / "cuda-tasks" / "tasks.jsonl"

    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "tasks.jsonl"
        r = subprocess.run([sys.executable, str(packer), "--out", str(fresh)], capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"pack-tasks.py failed: {r.stderr.strip()}")
        elif fresh.read_bytes() != committed.read_bytes():
            fail(f"{committed} differs from a fresh pack of the sources: run scripts/pack-tasks.py")

    ids, names, families = set(), set(), {}
    lines = committed.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
        except ValueError as e:
            fail(f"tasks.jsonl:{i}: not JSON ({e})")
            continue
        if not isinstance(rec, dict):
            fail(f"tasks.jsonl:{i}: not an object")
            continue
        check_record(i, rec, ids, names)
        families[rec.get("family")] = families.get(rec.get("family"), 0) + 1
    if len(lines) < 100:
        fail(f"only {len(lines)} tasks, expected at least 100")
    missing = FAMILIES - set(families)
    if missing:
        fail(f"families without a task: {sorted(missing)}")
    print(f"{len(lines)} tasks; per family: {dict(sorted(families.items()))}")

    def names_input(copies):
        meta = json.loads((copies[0] / "task.json").read_text())
        with open(copies[0] / "compare.py", "a") as f:
            f.write(f'\nopen("data/{meta["inputs"][0]["name"]}.bin")\n')

    def duplicate_id(copies):
        a = json.loads((copies[0] / "task.json").read_text())
        b = json.loads((copies[1] / "task.json").read_text())
        b["id"] = a["id"]
        (copies[1] / "task.json").write_text(json.dumps(b))

    def bad_dtype(copies):
        a = json.loads((copies[0] / "task.json").read_text())
        a["inputs"][0]["dtype"] = "float16"
        (copies[0] / "task.json").write_text(json.dumps(a))

    planted(src, packer, "compare.py names an input", names_input, "names the input")
    planted(src, packer, "duplicate id", duplicate_id, "is also used by")
    planted(src, packer, "unknown dtype", bad_dtype, "'float16' is not one of")

    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Packs the bundled CUDA task set (data/cuda-tasks/tasks.jsonl) from its sources, one folder per
task: data/cuda-tasks/<family>/<folder>/ with

    task.json     id, name, family, description, inputs, outputs (name, dtype, shape as a list of
                  integers) and the three prompt levels
    reference.cu  the reference solution (the record's "bench.cu")
    gen.py        writes the inputs and the reference outputs under data/ (numpy, fixed seed)
    compare.py    compares the program's outputs with the reference outputs and prints T or F

Each line of tasks.jsonl is one task in CUDABench's record format (id, task_name,
task_description, inputs, outputs, gpu, bench.cu, gen.py, compare.py, level1_prompt ..
level3_prompt), plus "family". Records are sorted by id, keys in a fixed order, UTF-8.

The sources are checked on the way: the fields and their types, dtypes, shapes, unique ids
(>= 100000, clear of CUDABench's 0..499) and names, and the file rule of the judge
(include/cuset/judge/task_files.h): reference.cu names data/<input>.bin for every input and
data/<output>.bin for every output; compare.py names every data/<output>.bin and no input.

Usage:
    scripts/pack-tasks.py            write data/cuda-tasks/tasks.jsonl
    scripts/pack-tasks.py --check    exit 1 unless tasks.jsonl equals a fresh pack of the sources
    scripts/pack-tasks.py --out F    write the pack to F instead
    scripts/pack-tasks.py --root D   pack the task folders under D (default data/cuda-tasks)

Standard library only. Exit status: 0 done, 1 --check found a difference, 3 a source is malformed
(one line on stderr naming the file and the key).
"""
import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TASKS = ROOT / "data" / "cuda-tasks"

DTYPES = ("float32", "int32", "uint32", "int64", "uint8", "int8")
MIN_ID = 100000
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
META_KEYS = ("id", "name", "family", "description", "inputs", "outputs", "prompts")
PROMPT_KEYS = ("level1", "level2", "level3")
FILES = ("reference.cu", "gen.py", "compare.py")
# The judge's reading of a source: string literals "data/..." or "./data/...".
PATH_RE = re.compile(r"""(["'])(?:\./)?(data/[A-Za-z0-9_./-]+)\1""")


class SourceError(Exception):
    pass


def data_paths(source):
    return {m.group(2) for m in PATH_RE.finditer(source) if ".." not in m.group(2)}


def shape_text(shape):
    """Python's repr() of the shape as a tuple, as CUDABench writes it: (8,), (4, 16)."""
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def check_specs(where, key, specs):
    if not isinstance(specs, list) or not specs:
        raise SourceError(f"{where}: {key}: must be a non-empty list")
    for i, s in enumerate(specs):
        at = f"{where}: {key}[{i}]"
        if not isinstance(s, dict) or set(s) != {"name", "dtype", "shape"}:
            raise SourceError(f"{at}: must be an object with exactly name, dtype and shape")
        if not isinstance(s["name"], str) or not IDENT_RE.match(s["name"]):
            raise SourceError(f"{at}: name must be an identifier, got {s['name']!r}")
        if s["dtype"] not in DTYPES:
            raise SourceError(f"{at}: dtype {s['dtype']!r} is not one of {', '.join(DTYPES)}")
        sh = s["shape"]
        if (not isinstance(sh, list) or not sh
                or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in sh)):
            raise SourceError(f"{at}: shape must be a non-empty list of positive integers, got {sh!r}")


def load_task(folder):
    where = folder / "task.json"
    try:
        meta = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SourceError(f"{where}: cannot read as JSON ({e})")
    if not isinstance(meta, dict):
        raise SourceError(f"{where}: must be a JSON object")
    for k in META_KEYS:
        if k not in meta:
            raise SourceError(f"{where}: missing key {k!r}")
    extra = sorted(set(meta) - set(META_KEYS))
    if extra:
        raise SourceError(f"{where}: unknown key {extra[0]!r}")
    if not isinstance(meta["id"], int) or isinstance(meta["id"], bool) or meta["id"] < MIN_ID:
        raise SourceError(f"{where}: id must be an integer >= {MIN_ID}, got {meta['id']!r}")
    if not isinstance(meta["name"], str) or not NAME_RE.match(meta["name"]):
        raise SourceError(f"{where}: name must be letters, digits and '_', got {meta['name']!r}")
    if meta["family"] != folder.parent.name:
        raise SourceError(f"{where}: family {meta['family']!r} is not the parent folder {folder.parent.name!r}")
    if not isinstance(meta["description"], str) or not meta["description"].strip():
        raise SourceError(f"{where}: description must be a non-empty string")
    check_specs(where, "inputs", meta["inputs"])
    check_specs(where, "outputs", meta["outputs"])
    names = [s["name"] for s in meta["inputs"] + meta["outputs"]]
    if len(set(names)) != len(names):
        raise SourceError(f"{where}: inputs and outputs must have distinct names")
    p = meta["prompts"]
    if not isinstance(p, dict) or set(p) != set(PROMPT_KEYS):
        raise SourceError(f"{where}: prompts must have exactly the keys {', '.join(PROMPT_KEYS)}")
    for k in PROMPT_KEYS:
        if not isinstance(p[k], str) or not p[k].strip():
            raise SourceError(f"{where}: prompts.{k} must be a non-empty string")
    files = {}
    for f in FILES:
        try:
            files[f] = (folder / f).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise SourceError(f"{folder / f}: cannot read ({e})")
    ref, cmp = data_paths(files["reference.cu"]), data_paths(files["compare.py"])
    for s in meta["inputs"]:
        path = f"data/{s['name']}.bin"
        if path not in ref:
            raise SourceError(f"{folder / 'reference.cu'}: does not name the input {path}")
        if path in cmp:
            raise SourceError(f"{folder / 'compare.py'}: names the input {path}; the judge could not tell it "
                              "from a reference output")
    for s in meta["outputs"]:
        path = f"data/{s['name']}.bin"
        if path not in ref:
            raise SourceError(f"{folder / 'reference.cu'}: does not name the output {path}")
        if path not in cmp:
            raise SourceError(f"{folder / 'compare.py'}: does not name the output {path}")
    spec = lambda s: {"name": s["name"], "dtype": s["dtype"], "shape": shape_text(s["shape"])}
    return {
        "id": meta["id"],
        "task_name": meta["name"],
        "task_description": meta["description"],
        "inputs": [spec(s) for s in meta["inputs"]],
        "outputs": [spec(s) for s in meta["outputs"]],
        "gpu": "unknown",
        "bench.cu": files["reference.cu"],
        "gen.py": files["gen.py"],
        "compare.py": files["compare.py"],
        "level1_prompt": p["level1"],
        "level2_prompt": p["level2"],
        "level3_prompt": p["level3"],
        "family": meta["family"],
    }


def pack(root=TASKS):
    folders = sorted(f.parent for f in Path(root).glob("*/*/task.json"))
    if not folders:
        raise SourceError(f"{root}: no */*/task.json found")
    records = [load_task(f) for f in folders]
    seen_ids, seen_names = {}, {}
    for r, f in zip(records, folders):
        if r["id"] in seen_ids:
            raise SourceError(f"{f / 'task.json'}: id {r['id']} is also used by {seen_ids[r['id']]}")
        key = r["task_name"].lower()
        if key in seen_names:
            raise SourceError(f"{f / 'task.json'}: name {r['task_name']!r} is also used by {seen_names[key]}")
        seen_ids[r["id"]], seen_names[key] = f, f
    records.sort(key=lambda r: r["id"])
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def write_atomic(path, text):
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="verify that tasks.jsonl is current")
    ap.add_argument("--out", help="output file (default ROOT/tasks.jsonl)")
    ap.add_argument("--root", default=str(TASKS), help="folder of the task sources (default data/cuda-tasks)")
    args = ap.parse_args()
    root = Path(args.root)
    packed = root / "tasks.jsonl"
    try:
        text = pack(root)
    except SourceError as e:
        print(f"pack-tasks: {e}", file=sys.stderr)
        return 3
    n = text.count("\n")
    if args.check:
        try:
            old = packed.read_text(encoding="utf-8")
        except OSError as e:
            print(f"pack-tasks: {packed}: cannot read ({e}); run scripts/pack-tasks.py", file=sys.stderr)
            return 1
        if old != text:
            a, b = old.split("\n"), text.split("\n")
            line = next((i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            print(f"pack-tasks: {packed}: differs from a fresh pack of the sources at line {line} "
                  f"({len(a) - 1} lines committed, {n} packed); run scripts/pack-tasks.py", file=sys.stderr)
            return 1
        print(f"{packed}: {n} tasks, current")
        return 0
    out = Path(args.out) if args.out else packed
    write_atomic(out, text)
    print(f"{out}: {n} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Assembles the bundled CUDA instruction set (data/cuda-sft/{train,eval}.jsonl) from its
authoring sources, data/cuda-sft/src/<family>-<nn>.cu; it compiles nothing (see
scripts/check-cuda-sft.sh for that).

Each source is one complete CUDA program preceded by a metadata comment:

    /*@prompt
    <the user's request>
    @explanation
    <the prose that opens the response>
    @after                    (optional: a sentence placed after the code fence)
    <text>
    @system                   (optional: a system message)
    <text>
    @*/
    <the program>

The response is the explanation, then the program in a ```cuda fence, then the optional after
text. The split is decided per family (EVAL_FAMILIES below), so eval holds whole families that
train never sees. Output is deterministic: records sorted by id, fixed key order, one JSON
object per line, UTF-8.

Usage:
    scripts/build-cuda-sft.py            write the two JSONL files
    scripts/build-cuda-sft.py --check    verify the sources and that the JSONL files are current
"""
import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "data" / "cuda-sft" / "src"
OUT = ROOT / "data" / "cuda-sft"

# Whole task families held out for evaluation; every other family goes to train.
EVAL_FAMILIES = ("adam", "bitonic-sort", "nbody", "rope", "spmv-csr", "topk")

MIN_SAMPLES = 120
MIN_FAMILIES = 30
SECTIONS = ("prompt", "explanation", "after", "system")
ID_RE = re.compile(r"^(?P<family>[a-z0-9]+(?:-[a-z0-9]+)*)-(?P<nn>\d{2})$")
META_RE = re.compile(r"\A/\*@prompt\n(?P<body>.*?)\n@\*/\n", re.S)


class SourceError(Exception):
    pass


def parse_source(path):
    """Returns (meta dict, program text) of one authoring source."""
    text = path.read_text(encoding="utf-8")
    m = META_RE.match(text)
    if not m:
        raise SourceError(f"{path}: does not start with a /*@prompt ... @*/ metadata block")
    meta, current, lines = {}, "prompt", []
    for line in m.group("body").split("\n"):
        name = line[1:] if line.startswith("@") else None
        if name in SECTIONS:
            meta[current] = "\n".join(lines).strip()
            current, lines = name, []
            if current in meta:
                raise SourceError(f"{path}: section @{current} given twice")
        elif line.startswith("@"):
            raise SourceError(f"{path}: unknown section {line!r}")
        else:
            lines.append(line)
    meta[current] = "\n".join(lines).strip()
    for required in ("prompt", "explanation"):
        if not meta.get(required):
            raise SourceError(f"{path}: empty or missing @{required}")
    program = text[m.end():].strip("\n") + "\n"
    if "```" in program:
        raise SourceError(f"{path}: the program contains a Markdown fence")
    return meta, program


def check_program(path, program):
    """Cheap structural checks; compilation is scripts/check-cuda-sft.sh's job."""
    problems = []
    if "__global__" not in program:
        problems.append("no __global__ kernel")
    if "<<<" not in program:
        problems.append("no <<<...>>> launch")
    if not re.search(r"^int main\s*\(", program, re.M):
        problems.append("no main()")
    if "return 1" not in program and "EXIT_FAILURE" not in program:
        problems.append("main() never returns non-zero")
    if "PASS" not in program or "FAIL" not in program:
        problems.append("does not print PASS/FAIL")
    n_lines = program.count("\n")
    if not 50 <= n_lines <= 220:
        problems.append(f"{n_lines} lines (want 50..220)")
    if problems:
        raise SourceError(f"{path}: " + "; ".join(problems))


def make_record(sample_id, family, meta, program):
    response = meta["explanation"] + "\n\n```cuda\n" + program + "```"
    if meta.get("after"):
        response += "\n\n" + meta["after"]
    record = {"id": sample_id, "family": family}
    if meta.get("system"):
        record["system"] = meta["system"]
    record["prompt"] = meta["prompt"]
    record["response"] = response
    return record


def build():
    """Returns {split: [record...]} after validating every source."""
    sources = sorted(SRC.glob("*.cu"))
    if not sources:
        raise SourceError(f"{SRC}: no sources")
    splits = {"train": [], "eval": []}
    for path in sources:
        m = ID_RE.match(path.stem)
        if not m:
            raise SourceError(f"{path}: file name is not <family>-<nn>.cu")
        meta, program = parse_source(path)
        check_program(path, program)
        family = m.group("family")
        split = "eval" if family in EVAL_FAMILIES else "train"
        splits[split].append(make_record(path.stem, family, meta, program))
    fam = {s: {r["family"] for r in recs} for s, recs in splits.items()}
    missing = set(EVAL_FAMILIES) - fam["eval"]
    if missing:
        raise SourceError(f"eval families without sources: {sorted(missing)}")
    n = sum(len(r) for r in splits.values())
    n_fam = len(fam["train"] | fam["eval"])
    if n < MIN_SAMPLES or n_fam < MIN_FAMILIES:
        raise SourceError(f"{n} samples over {n_fam} families (want >= {MIN_SAMPLES} over >= {MIN_FAMILIES})")
    prompts = {}
    for recs in splits.values():
        for r in recs:
            key = " ".join(r["prompt"].split())
            if key in prompts:
                raise SourceError(f"{r['id']}: same prompt as {prompts[key]}")
            prompts[key] = r["id"]
    return splits


def render(records):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="verify the sources and that the JSONL files are up to date; write nothing")
    args = ap.parse_args()
    try:
        splits = build()
    except SourceError as e:
        print(f"build-cuda-sft: {e}", file=sys.stderr)
        return 1
    status = 0
    for split, records in splits.items():
        path = OUT / f"{split}.jsonl"
        text = render(records)
        if args.check:
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != text:
                print(f"build-cuda-sft: {path} is stale; run scripts/build-cuda-sft.py", file=sys.stderr)
                status = 1
        else:
            path.write_text(text, encoding="utf-8")
        fams = sorted({r["family"] for r in records})
        print(f"{split}: {len(records)} samples, {len(fams)} families, {len(text.encode())} bytes")
    return status


if __name__ == "__main__":
    sys.exit(main())

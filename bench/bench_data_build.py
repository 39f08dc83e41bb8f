#!/usr/bin/env python3
"""`data build` throughput: attempts judged per second by `cuset-train data build --judge compile`
with candidates from a file, against the same judge work done one program at a time (one
`nvcc kernel.cu -o kernel` per program, serially, as CUDABench's evaluator compiles), measured in
the same run on the same programs.

The candidates: for each of the first --limit tasks of the tasks file, two answers: sample 1 is the
task's reference solution (it compiles), sample 2 the same program with its last closing brace
removed (it does not). So half the attempts pass and half fail, as in a build from a model. Each
measurement starts with a cold judge cache (a fresh XDG_CACHE_HOME) and a fresh output folder.

    bench/bench_data_build.py [--tasks data/cuda-tasks/tasks.jsonl] [--limit 100] [--jobs 2]
                              [--binary build/cuset-train] [--nvcc nvcc] [--work DIR]

Prints one line per measurement (attempts, seconds, attempts/s, ratio to the serial reference)
and a last JSON line with the figures."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def broken(program):
    """The program with its last '}' removed: a compile error in every case."""
    at = program.rfind("}")
    return program[:at] + program[at + 1:] if at >= 0 else program + "\n#error broken\n"


def answers(tasks):
    """(task id, sample, program) of every candidate, and the candidates file's lines."""
    out, lines = [], []
    for t in tasks:
        for sample, program in ((1, t["bench.cu"]), (2, broken(t["bench.cu"]))):
            out.append((t["id"], sample, program))
            lines.append(json.dumps({"id": t["id"], "sample": sample, "round": 1,
                                     "response": "```cuda\n" + program + "\n```"}))
    return out, lines


def serial_nvcc(nvcc, programs, work):
    """One nvcc per program, one after the other; returns (seconds, compiled)."""
    compiled = 0
    t0 = time.perf_counter()
    for i, (_, _, program) in enumerate(programs):
        d = os.path.join(work, "p%d" % i)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "kernel.cu"), "w") as f:
            f.write(program)
        r = subprocess.run([nvcc, "kernel.cu", "-o", "kernel"], cwd=d, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        compiled += r.returncode == 0
    return time.perf_counter() - t0, compiled


def data_build(binary, tasks_file, candidates, jobs, limit, work):
    """`data build --judge compile` over the candidates; returns (seconds, attempts, passed)."""
    out = os.path.join(work, "build")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "cache"))
    cmd = [binary, "data", "build", "--tasks", tasks_file, "--candidates", candidates, "--out", out,
           "--samples", "2", "--rounds", "1", "--judge", "compile", "--jobs", str(jobs), "--limit", str(limit)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("data build failed (exit %d): %s" % (r.returncode, r.stderr.strip().splitlines()[-1:]))
    attempts = passed = 0
    with open(os.path.join(out, "build.jsonl")) as f:
        for line in f:
            if line.strip():
                a = json.loads(line)
                attempts += 1
                passed += a.get("status") in ("pass", "compiled")  # --judge compile: compiled is its pass
    return seconds, attempts, passed


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tasks", default=os.path.join(ROOT, "data/cuda-tasks/tasks.jsonl"))
    p.add_argument("--limit", type=int, default=100)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--binary", default=os.path.join(ROOT, "build/cuset-train"))
    p.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    p.add_argument("--work", default="")
    a = p.parse_args()
    with open(a.tasks) as f:
        tasks = [json.loads(l) for l in f if l.strip()][: a.limit]
    work = a.work or tempfile.mkdtemp(prefix="bench-data-build-")
    os.makedirs(work, exist_ok=True)
    programs, lines = answers(tasks)
    candidates = os.path.join(work, "candidates.jsonl")
    with open(candidates, "w") as f:
        f.write("\n".join(lines) + "\n")

    rows = []
    ref_s, ref_ok = serial_nvcc(a.nvcc, programs, os.path.join(work, "serial"))
    rows.append(("nvcc one program at a time", ref_s, len(programs), ref_ok))
    for jobs in sorted({1, a.jobs}):
        d = os.path.join(work, "jobs%d" % jobs)
        shutil.rmtree(d, ignore_errors=True)
        s, n, ok = data_build(a.binary, a.tasks, candidates, jobs, a.limit, d)
        rows.append(("cuset data build --judge compile, %d job(s)" % jobs, s, n, ok))

    print("%d tasks, %d candidates (%d compile); %s" % (len(tasks), len(programs), ref_ok, os.cpu_count()) + " cores")
    figures = []
    for name, s, n, ok in rows:
        rate = n / s
        figures.append({"run": name, "seconds": s, "attempts": n, "compiled_or_passed": ok, "attempts_per_s": rate,
                        "ratio": rate / (rows[0][2] / rows[0][1])})
        print("%-46s %4d attempts %7.1f s %6.3f /s %5.2fx  (%d ok)" % (name, n, s, rate, figures[-1]["ratio"], ok))
    print(json.dumps(figures))
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

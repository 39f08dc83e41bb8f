"""GRPO step time with multi-turn rollouts: objective.grpo.turns 2 against turns 1, same machine,
model, tasks and settings, measured in the same run.

Both runs: data/tiny-coder in fp32 on the CPU, the first TASKS tasks of
data/cuda-tasks/tasks.jsonl, G = 4, max_completion_length 128, temperature 1, the compile-only
judge (nvcc, contained), a short system message (--system). Per step, cuset's own split from
metrics.jsonl: generate_s (sampling, every turn), judge_s (judging, every turn) and update_s (the
GRPO step over every turn's rows), with mean_turns per trajectory. Medians over the steps after
the first (warm-up).

With turns 2, a trajectory whose first program fails answers again, so sampling and judging grow
with the share of failed first answers (mean_turns - 1), and the update with the rows. Turns are
sampled turn by turn: the second turn's batch waits for the first turn's verdicts.

Usage: .venv/bin/python bench/bench_grpo_turns.py [--steps 6] [--threads 2] [--tasks 2] [--turns 2]
Prints one line per run and the ratios turns T / turns 1.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("step_time_s", "generate_s", "judge_s", "update_s")


def run(args, tasks_file, work, turns):
    name = f"turns{turns}"
    cfg = {
        "model": {"path": str(ROOT / "data/tiny-coder"), "dtype": "float32"},
        "data": {"max_seq_len": 2048},
        "objective": {"method": "grpo", "grpo": {
            "tasks": tasks_file, "tasks_per_step": args.tasks, "num_generations": 4,
            "max_completion_length": 128, "temperature": 1.0, "loss_type": "dapo", "beta": 0.0,
            "judge": "compile", "system_prompt": args.system, "turns": turns}},
        "train": {"device": "cpu", "threads": args.threads, "micro_batch_size": 8,
                  "max_steps": args.steps, "lr": 1e-4, "schedule": "constant", "grad_clip": 1.0},
        "checkpoint": {"every": 0, "keep_last": 1},
        "log": {"progress": "never"},
        "eval": {"jobs": args.threads},
        "run": {"output_dir": work, "name": name},
    }
    path = Path(work) / f"{name}.json"
    path.write_text(json.dumps(cfg))  # YAML is a superset of JSON
    binary = os.environ.get("CUSET_BINARY", str(ROOT / "build/cuset-train"))
    subprocess.run([binary, "--config", str(path)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lines = [json.loads(l) for l in open(Path(work) / name / "metrics.jsonl") if l.strip()]
    steps = [m for m in lines if "reward" in m][1:]
    out = {k: statistics.median(m[k] for m in steps) for k in KEYS}
    out["mean_turns"] = statistics.mean(m.get("mean_turns", 1.0) for m in steps)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tasks", type=int, default=2)
    p.add_argument("--turns", type=int, default=2)
    p.add_argument("--system", default="You write CUDA programs. Answer with one program in a ```cuda fence.")
    args = p.parse_args()
    tasks = [json.loads(l) for l in open(ROOT / "data/cuda-tasks/tasks.jsonl") if l.strip()][: args.tasks]
    with tempfile.TemporaryDirectory(prefix="bench-grpo-turns-") as work:
        tasks_file = str(Path(work) / "tasks.jsonl")
        Path(tasks_file).write_text("".join(json.dumps(t) + "\n" for t in tasks))
        one = run(args, tasks_file, work, 1)
        many = run(args, tasks_file, work, args.turns)
    print(f"settings: tiny-coder fp32 CPU, {args.threads} threads, {args.tasks} tasks x G 4, 128 new tokens, "
          f"compile judge, medians of steps 2-{args.steps}")
    for name, r in (("turns 1", one), (f"turns {args.turns}", many)):
        print(f"{name:8s} step {r['step_time_s']:.2f} s = generate {r['generate_s']:.2f} + judge {r['judge_s']:.2f} "
              f"+ update {r['update_s']:.2f}; mean turns {r['mean_turns']:.2f}")
    ratio = {k: many[k] / one[k] if one[k] > 0 else float("nan") for k in KEYS}
    print(f"ratio turns {args.turns} / turns 1: step {ratio['step_time_s']:.2f}x, generate {ratio['generate_s']:.2f}x, "
          f"judge {ratio['judge_s']:.2f}x, update {ratio['update_s']:.2f}x")


if __name__ == "__main__":
    main()

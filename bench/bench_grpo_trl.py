"""GRPO step time: cuset-train (objective.method grpo) against TRL's GRPOTrainer, same machine,
model, prompts and settings, measured in the same run.

Both sides: data/tiny-coder in fp32 on the CPU with the same number of threads, the first
TASKS tasks of data/cuda-tasks/tasks.jsonl as prompts (one system message, --system, given to
cuset as objective.grpo.system_prompt, and the task's CUDABench user message at level 3, in the
model's chat template), G = 4 completions per prompt, all
prompts of a step in one generation batch, max_completion_length 128, temperature 1, loss dapo,
beta 0, AdamW at lr 1e-4, one optimizer step per generation batch, grad clip 1.

The reward differs by design: cuset's is its judge (compile mode, nvcc under containment, run
only on fenced programs), TRL's a Python check for a fenced program (no compiler): so the step's
share that both do the same way, generation plus update, is compared on its own, and the whole
step too. Per step: cuset's split from metrics.jsonl (generate_s, judge_s, update_s); TRL's from
timers around GRPOTrainer._generate (generation), _calculate_rewards (reward) and the step
(callback), the update being the step minus _generate_and_score_completions. Medians over the
steps after the first (warm-up).

Usage: .venv/bin/python bench/bench_grpo_trl.py [--steps 6] [--threads 2] [--tasks 2] [--system TEXT]
Prints one line per side and the ratios TRL / cuset (> 1: cuset is faster).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def user_prompt(task, level=3, gpu="NVIDIA GeForce RTX 4090"):
    # The user message cuset sends (src/eval/cudabench.cpp, build_user_prompt).
    def specs(v):
        return "\n".join(f"{s['name']}: {s['dtype']}, shape = {s['shape']}" for s in v)

    return ("\n### TASK SPECIFICATION\n\nTask Name:\n" + task["task_name"] + "\n\nTask Description:\n" +
            task[f"level{level}_prompt"] + "\n\nInput:\n" + specs(task["inputs"]) + "\n\nOutput:\n" +
            specs(task["outputs"]) + "\n\nGPU:\n" + gpu + "\n\nCUDA program:\n")


def run_cuset(args, tasks_file, work):
    cfg = {
        "model": {"path": str(ROOT / "data/tiny-coder"), "dtype": "float32"},
        "data": {"chat_format": "chatml"},
        "objective": {"method": "grpo", "grpo": {
            "tasks": tasks_file, "tasks_per_step": args.tasks, "num_generations": 4,
            "max_completion_length": 128, "temperature": 1.0, "loss_type": "dapo", "beta": 0.0,
            "judge": "compile", "system_prompt": args.system}},
        "train": {"device": "cpu", "threads": args.threads, "micro_batch_size": 4 * args.tasks,
                  "max_steps": args.steps, "lr": 1e-4, "schedule": "constant", "grad_clip": 1.0},
        "checkpoint": {"every": 0, "keep_last": 1},
        "log": {"progress": "never"},
        "eval": {"jobs": args.threads},
        "run": {"output_dir": work, "name": "cuset"},
    }
    path = Path(work) / "cuset.json"
    path.write_text(json.dumps(cfg))  # YAML is a superset of JSON
    binary = os.environ.get("CUSET_BINARY", str(ROOT / "build/cuset-train"))
    subprocess.run([binary, "--config", str(path)], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    lines = [json.loads(l) for l in open(Path(work) / "cuset/metrics.jsonl") if l.strip()]
    steps = [m for m in lines if "reward" in m][1:]
    return {k: statistics.median(m[k] for m in steps) for k in ("step_time_s", "generate_s", "judge_s", "update_s")}


def run_trl(args, tasks, system):
    import torch
    import transformers
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(args.threads)
    model_dir = str(ROOT / "data/tiny-coder")
    tok = transformers.AutoTokenizer.from_pretrained(model_dir)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    rows = [{"prompt": [{"role": "system", "content": system}, {"role": "user", "content": user_prompt(t)}]}
            for t in tasks]
    dataset = Dataset.from_list(rows * (args.steps + 1))

    def fenced(completions, **kw):
        out = []
        for c in completions:
            text = c[0]["content"] if isinstance(c, list) else c
            out.append(0.1 if re.search(r"```\w*\s.*?```", text, re.S) else 0.0)
        return out

    timers = {"generate": [], "reward": [], "gen_and_score": [], "step": []}

    def timed(name, fn):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            r = fn(*a, **k)
            timers[name].append(time.perf_counter() - t0)
            return r
        return wrapper

    class StepTimer(transformers.TrainerCallback):
        def on_step_begin(self, a, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_step_end(self, a, state, control, **kw):
            timers["step"].append(time.perf_counter() - self.t0)

    cfg = GRPOConfig(output_dir=tempfile.mkdtemp(prefix="trl-grpo-"), use_cpu=True, bf16=False,
                     per_device_train_batch_size=4 * args.tasks, gradient_accumulation_steps=1,
                     num_generations=4, max_completion_length=128, temperature=1.0, learning_rate=1e-4,
                     lr_scheduler_type="constant", max_grad_norm=1.0, beta=0.0, loss_type="dapo",
                     max_steps=args.steps, logging_steps=1, report_to=[], save_strategy="no",
                     shuffle_dataset=False, seed=7, disable_dropout=True, disable_tqdm=True,
                     log_level="error")
    trainer = GRPOTrainer(model=model, reward_funcs=[fenced], args=cfg, train_dataset=dataset,
                          processing_class=tok, callbacks=[StepTimer()])
    trainer._generate = timed("generate", trainer._generate)
    trainer._calculate_rewards = timed("reward", trainer._calculate_rewards)
    trainer._generate_and_score_completions = timed("gen_and_score", trainer._generate_and_score_completions)
    trainer.train()
    n = min(len(timers["step"]), len(timers["gen_and_score"]))
    steps = range(1, n)
    med = lambda xs: statistics.median(xs[i] for i in steps)
    return {"step_time_s": med(timers["step"]), "generate_s": med(timers["generate"]),
            "judge_s": med(timers["reward"]),
            "update_s": statistics.median(timers["step"][i] - timers["gen_and_score"][i] for i in steps)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--tasks", type=int, default=2)
    p.add_argument("--system", default="You write CUDA programs. Answer with one program in a ```cuda fence.",
                   help="the prompts' system message on both sides")
    args = p.parse_args()
    tasks = [json.loads(l) for l in open(ROOT / "data/cuda-tasks/tasks.jsonl") if l.strip()][: args.tasks]
    with tempfile.TemporaryDirectory(prefix="bench-grpo-") as work:
        tasks_file = str(Path(work) / "tasks.jsonl")
        Path(tasks_file).write_text("".join(json.dumps(t) + "\n" for t in tasks))
        c = run_cuset(args, tasks_file, work)
        t = run_trl(args, tasks, args.system)
    print(f"settings: tiny-coder fp32 CPU, {args.threads} threads, {args.tasks} prompts x G 4, 128 new tokens, "
          f"medians of steps 2-{args.steps}")
    for name, r in (("cuset", c), ("trl", t)):
        print(f"{name:6s} step {r['step_time_s']:.2f} s = generate {r['generate_s']:.2f} + reward {r['judge_s']:.2f} "
              f"+ update {r['update_s']:.2f}")
    gu_c, gu_t = c["generate_s"] + c["update_s"], t["generate_s"] + t["update_s"]
    print(f"ratio trl/cuset: step {t['step_time_s'] / c['step_time_s']:.2f}x, generate + update {gu_t / gu_c:.2f}x, "
          f"generate {t['generate_s'] / c['generate_s']:.2f}x, update {t['update_s'] / c['update_s']:.2f}x")


if __name__ == "__main__":
    main()

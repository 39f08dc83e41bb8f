"""Reference side of bench_gpu_step: the same training step through transformers + PyTorch —
a Qwen2ForCausalLM of the same shape (random init), bf16 weights, SDPA attention, gradient
checkpointing, next-token cross-entropy over the last three quarters of the sequence, global-norm
clipping and torch.optim.AdamW (fused on CUDA). Prints `hf_step_seconds <median>`.
Usage: bench_gpu_hf.py [--layers 4] [--seq 4096] [--batch 1] [--steps 5] [--warmup 2] [--device cuda] [--tiny]"""
import argparse
import statistics
import time

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

ap = argparse.ArgumentParser()
ap.add_argument("--layers", type=int, default=4)
ap.add_argument("--seq", type=int, default=4096)
ap.add_argument("--batch", type=int, default=1)
ap.add_argument("--steps", type=int, default=5)
ap.add_argument("--warmup", type=int, default=2)
ap.add_argument("--device", default="cuda")
ap.add_argument("--tiny", action="store_true")
a = ap.parse_args()
dev = torch.device(a.device)
cfg = Qwen2Config(vocab_size=1024 if a.tiny else 152064, hidden_size=128 if a.tiny else 3584,
                  intermediate_size=384 if a.tiny else 18944, num_hidden_layers=a.layers,
                  num_attention_heads=4 if a.tiny else 28, num_key_value_heads=2 if a.tiny else 4,
                  max_position_embeddings=32768, rope_theta=1e6, tie_word_embeddings=False)
dtype = torch.bfloat16 if dev.type == "cuda" else torch.float32
model = Qwen2ForCausalLM(cfg).to(device=dev, dtype=dtype)
model.config._attn_implementation = "sdpa"
model.gradient_checkpointing_enable()
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=dev.type == "cuda")
ids = torch.randint(cfg.vocab_size, (a.batch, a.seq), device=dev)
labels = ids.roll(-1, 1)
labels[:, -1] = -100
labels[:, : a.seq // 4] = -100
times = []
for s in range(a.warmup + a.steps):
    if dev.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    logits = model(input_ids=ids).logits
    loss = torch.nn.functional.cross_entropy(logits.float().view(-1, cfg.vocab_size), labels.view(-1), ignore_index=-100)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    if s >= a.warmup:
        times.append(time.perf_counter() - t0)
peak = torch.cuda.max_memory_allocated(dev) / 1e9 if dev.type == "cuda" else float("nan")
print(f"transformers step {statistics.median(times):.3f} s | peak {peak:.1f} GB")
print(f"hf_step_seconds {statistics.median(times):.6f}")

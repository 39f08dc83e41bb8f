"""Reference side of bench_train: the same optimizer steps with PyPI transformers + PyTorch —
same model folder, same micro-batches (input ids, attention masks, labels; written by
bench_train), the loss summed over target tokens and divided by the step's count (the
normalisation cuset uses), global-norm clipping at 1.0 and torch.optim.AdamW, on the same
number of CPU threads.
Usage: bench_train_hf.py MODEL_DIR INPUTS.safetensors THREADS GRAD_ACCUM
Prints `ready`, then for each `step` line on stdin runs the next step and prints
`<wall seconds> <process CPU seconds> <loss>`."""
import sys
import time

import torch
import transformers
from safetensors.torch import load_file

model_dir, inputs, threads, accum = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="sdpa")
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)
data = load_file(inputs)
step_index = 0


def step(s):
    opt.zero_grad(set_to_none=True)
    total = sum(int((data[f"s{s}m{m}.labels"] != -100).sum()) for m in range(accum))
    loss_sum = 0.0
    for m in range(accum):
        ids, mask, labels = (data[f"s{s}m{m}.{k}"] for k in ("input_ids", "attention_mask", "labels"))
        logits = model(input_ids=ids, attention_mask=mask).logits.float()
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1),
                                                 ignore_index=-100, reduction="sum")
        (loss / total).backward()
        loss_sum += loss.item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss_sum / total


print("ready", flush=True)
for line in sys.stdin:
    if line.strip() != "step":
        break
    t0, c0 = time.perf_counter(), time.process_time()
    loss = step(step_index)
    step_index += 1
    print(f"{time.perf_counter() - t0:.6f} {time.process_time() - c0:.6f} {loss:.6f}", flush=True)

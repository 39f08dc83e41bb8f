"""Reference side of bench_model_step: training steps (forward + backward) of the same model (a
folder written by cuset's model_save) on the same input ids, with PyPI transformers + PyTorch
eager (fp32, attn_implementation sdpa by default), on the same number of CPU threads.
Usage: bench_model_hf.py MODEL_DIR INPUTS.safetensors THREADS [ATTN]
Driven over stdin/stdout so the caller can interleave its own steps with these (both then see the
same machine load): prints `ready`, then for every line `step` on stdin runs one step and prints
`<wall seconds> <process CPU seconds> <loss>`; exits at end of input."""
import sys
import time

import torch
import transformers
from safetensors.torch import load_file

model_dir, inputs, threads = sys.argv[1:4]
attn = sys.argv[4] if len(sys.argv) > 4 else "sdpa"
torch.set_num_threads(int(threads))
model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                          attn_implementation=attn)
model.train()
ids = load_file(inputs)["input_ids"]


def step():
    model.zero_grad(set_to_none=True)
    out = model(input_ids=ids, labels=ids)  # shifted next-token cross-entropy, mean over tokens
    out.loss.backward()
    return out.loss.item()


print("ready", flush=True)
for line in sys.stdin:
    if line.strip() != "step":
        break
    t0, c0 = time.perf_counter(), time.process_time()
    loss = step()
    print(f"{time.perf_counter() - t0:.6f} {time.process_time() - c0:.6f} {loss:.6f}", flush=True)

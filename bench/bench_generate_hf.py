"""Reference side of bench_generate: transformers' generate() (greedy, KV cache, left padding)
on the same model folder, prompts, CPU threads and device (fp32).
Usage: bench_generate_hf.py --make-model DIR     a random 4-layer, 512-hidden Qwen2 model (fp32)
       bench_generate_hf.py MODEL_DIR PROMPTS.json THREADS [DEVICE]   (DEVICE: cpu, cuda, ...)
PROMPTS.json: {"<name>": [[ids...], ...], ...}. Prints `ready`, then for each line
`<name> <new tokens>` on stdin runs generate() on that batch and prints one JSON line
{"seconds": wall seconds, "tokens": the generated ids [B, new]}."""
import json
import sys
import time

import torch
import transformers

if sys.argv[1] == "--make-model":
    torch.manual_seed(0)
    cfg = transformers.Qwen2Config(vocab_size=32768, hidden_size=512, intermediate_size=1536, num_hidden_layers=4,
                                   num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096,
                                   tie_word_embeddings=True, rms_norm_eps=1e-6, pad_token_id=0)
    m = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    m.save_pretrained(sys.argv[2], safe_serialization=True)
    sys.exit(0)

model_dir, prompts_file, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
device = torch.device(sys.argv[4] if len(sys.argv) > 4 else "cpu")
torch.set_num_threads(threads)
model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device)
model.eval()
model.generation_config.eos_token_id = None
pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
batches = {}
for name, prompts in json.load(open(prompts_file)).items():
    L = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), L), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), L), dtype=torch.long)
    for b, p in enumerate(prompts):
        ids[b, L - len(p):] = torch.tensor(p)
        mask[b, L - len(p):] = 1
    batches[name] = (ids.to(device), mask.to(device))
print("ready", flush=True)
for line in sys.stdin:
    name, new = line.split()
    ids, mask = batches[name]
    with torch.no_grad():
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        out = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, eos_token_id=None,
                             pad_token_id=pad, temperature=None, top_p=None, top_k=None, max_new_tokens=int(new))
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        seconds = time.perf_counter() - t0
    print(json.dumps({"seconds": seconds, "tokens": out[:, ids.shape[1]:].tolist()}), flush=True)

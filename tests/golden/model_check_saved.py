"""Checks model folders written by cuset's model_save against the folders they came from, with
PyPI transformers: AutoModelForCausalLM.from_pretrained(saved) must load without missing,
unexpected or mis-shaped tensors, and every tensor must equal the original cast to the saved
dtype. Usage: model_check_saved.py (SAVED_DIR ORIGINAL_DIR DTYPE)... with DTYPE float32 or
bfloat16. Prints one line per folder; the first mismatching tensor ends the run with exit 1."""
import sys

import torch
import transformers

torch.set_num_threads(1)
args = sys.argv[1:]
assert args and len(args) % 3 == 0, __doc__


def check(saved, original, dtype_name):
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype_name]
    model, info = transformers.AutoModelForCausalLM.from_pretrained(saved, dtype=dtype,
                                                                    output_loading_info=True)
    problems = {k: v for k, v in info.items() if v}
    if problems:
        return f"loading {saved}: {problems}"
    ref = transformers.AutoModelForCausalLM.from_pretrained(original, dtype=torch.float32)
    if model.config.tie_word_embeddings != ref.config.tie_word_embeddings:
        return f"{saved}: tie_word_embeddings differs"
    got, want = model.state_dict(), ref.state_dict()
    if set(got) != set(want):
        return f"{saved}: tensor names differ: {sorted(set(got) ^ set(want))}"
    for name, t in want.items():
        g = got[name]
        if g.dtype != dtype or g.shape != t.shape or not torch.equal(g, t.to(dtype)):
            diff = (g.float() - t.to(dtype).float()).abs().max().item() if g.shape == t.shape else "-"
            return f"{saved}: tensor {name} differs: {g.dtype} {tuple(g.shape)} vs {tuple(t.shape)}, max abs diff {diff}"
    print(f"OK {saved}: {len(want)} tensors identical ({dtype_name})")
    return None


for i in range(0, len(args), 3):
    problem = check(*args[i:i + 3])
    if problem:
        print(problem)
        sys.exit(1)

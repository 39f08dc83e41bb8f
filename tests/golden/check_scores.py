"""Checks a JSONL score file written by `cuset-train score` against transformers: for every
sample, runs the same token ids through AutoModelForCausalLM (fp32, eager) and compares the
probability of each token given its prefix. Usage: check_scores.py MODEL_DIR SCORES.jsonl TOL
[ADAPTER_DIR]; with ADAPTER_DIR the model is PeftModel.from_pretrained(model, ADAPTER_DIR) (PyPI
peft, eval mode: no dropout). Prints the largest absolute difference; exits 1 when it exceeds TOL."""
import json
import sys

import torch
from transformers import AutoModelForCausalLM

from tolerance_log import within, worst as worse

model_dir, scores, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
if len(sys.argv) > 4:
    from peft import PeftModel
    model = PeftModel.from_pretrained(model, sys.argv[4])
model.eval()
worst = 0.0
n_tokens = 0
with open(scores) as f:
    header = json.loads(f.readline())
    assert header["format"] == "cuset-scores", header
    for line in f:
        r = json.loads(line)
        ids = torch.tensor([r["ids"]])
        with torch.no_grad():
            logits = model(ids).logits[0].float()
        probs = torch.softmax(logits, dim=-1)
        want = probs[:-1].gather(1, ids[0, 1:, None])[:, 0]
        got = torch.tensor([float("nan") if p is None else p for p in r["prob"]])
        assert got[0].isnan(), "prob[0] must be NaN (no prefix)"
        diff = (got[1:] - want).abs().max().item()
        worst = worse(worst, diff)
        n_tokens += len(r["ids"]) - 1
print(f"{n_tokens} token probabilities, max abs difference {worst:.3g} (tolerance {tol:g})")
sys.exit(0 if within(worst, tol) else 1)

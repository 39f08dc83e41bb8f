"""Reference values for tests/generate/test_generate.cpp from PyPI transformers.

argv[1] = <work>/golden/generate; the random models of tests/golden/model.py are read from the
sibling folder <work>/golden/model/<case>/model (the golden_model fixture runs first), the demo
model from data/tiny-coder. Written:
  greedy_<case>.safetensors   prompt_ids [B, L] int64 left-padded, prompt_mask [B, L],
                              tokens [B, 64] int64 (generate(do_sample=False, max_new_tokens=64),
                              eos_token_id=None so all 64 are produced), logits [64, B, V] fp32
                              (raw next-token logits of every step, output_logits=True: to tell
                              a near-tie from a real divergence)
  greedy_cases.txt            the case names (the four random models, then tiny_coder)
  tiny_coder_prompts.jsonl    the prompts given to tiny-coder ({"system", "prompt"}), one a line;
                              greedy_tiny_coder's prompt ids are apply_chat_template(...,
                              add_generation_prompt=True) of them
  processors.safetensors      logits [R, V] fp32 (with ties), ids [R, L] / mask [R, L]
                              (left-padded prompt+generated ids for the repetition penalty), and
                              for every processor setting p: probs.<p> [R, V] = softmax of the
                              processed scores (0 where filtered)
  processors.json             each setting's parameters
"""
import json
import os
import sys

import torch
import transformers
from safetensors.torch import save_file
from transformers.generation.logits_process import (LogitsProcessorList, MinPLogitsWarper,
                                                    RepetitionPenaltyLogitsProcessor,
                                                    TemperatureLogitsWarper, TopKLogitsWarper,
                                                    TopPLogitsWarper)

torch.set_num_threads(1)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
model_golden = os.path.join(os.path.dirname(out), "model")
NEW = 64
gen = torch.Generator().manual_seed(4321)


def left_pad(prompts, pad):
    L = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), L), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), L), dtype=torch.long)
    for b, p in enumerate(prompts):
        ids[b, L - len(p):] = torch.tensor(p)
        mask[b, L - len(p):] = 1
    return ids, mask


def greedy(name, model_dir, prompts):
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.eval()
    pad = model.config.pad_token_id if model.config.pad_token_id is not None else 0
    ids, mask = left_pad(prompts, pad)
    model.generation_config.eos_token_id = None
    with torch.no_grad():
        o = model.generate(input_ids=ids, attention_mask=mask, do_sample=False, max_new_tokens=NEW,
                           min_new_tokens=None, eos_token_id=None, pad_token_id=pad, temperature=None,
                           top_p=None, top_k=None, output_logits=True, return_dict_in_generate=True)
    tokens = o.sequences[:, ids.shape[1]:]
    assert tokens.shape[1] == NEW, tokens.shape
    logits = torch.stack([x.float() for x in o.logits])  # [NEW, B, V]
    save_file({"prompt_ids": ids, "prompt_mask": mask, "tokens": tokens.contiguous(),
               "logits": logits.contiguous()}, os.path.join(out, f"greedy_{name}.safetensors"))
    print(f"greedy {name}: prompts {[len(p) for p in prompts]}, first tokens {tokens[:, :6].tolist()}")


cases = [c for c in open(os.path.join(model_golden, "cases.txt")).read().split() if c]
for c in cases:
    model_dir = os.path.join(model_golden, c, "model")
    V = json.load(open(os.path.join(model_dir, "config.json")))["vocab_size"]
    lengths = [5, 17, 11]
    prompts = [torch.randint(4, V, (n,), generator=gen).tolist() for n in lengths]
    greedy(c, model_dir, prompts)

# tiny-coder on CUDA instruction prompts, rendered by its own chat template (with the system
# message given, so the template and cuset's chatml render the same text).
tiny = os.path.join(root, "data", "tiny-coder")
tok = transformers.AutoTokenizer.from_pretrained(tiny)
records = [json.loads(l) for l in open(os.path.join(root, "data", "cuda-sft", "eval.jsonl")) if l.strip()]
chosen = []
for r, cut in zip(records[:4], [400, 120, 250, 60]):
    chosen.append({"id": r["id"], "system": "You are a CUDA expert.", "prompt": r["prompt"][:cut]})
with open(os.path.join(out, "tiny_coder_prompts.jsonl"), "w") as f:
    for r in chosen:
        f.write(json.dumps(r) + "\n")
prompts = []
for r in chosen:
    msgs = [{"role": "system", "content": r["system"]}, {"role": "user", "content": r["prompt"]}]
    p = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=True, return_dict=False)
    if isinstance(p, dict) or hasattr(p, "input_ids"):
        p = p["input_ids"]
    prompts.append(list(p))
greedy("tiny_coder", tiny, prompts)
with open(os.path.join(out, "greedy_cases.txt"), "w") as f:
    f.write("\n".join(cases + ["tiny_coder"]) + "\n")

# Logits processors on fixed logits with ties.
R, V, L = 5, 50, 9
logits = torch.randn(R, V, generator=gen) * 3
logits[0, 7] = logits[0, 3]                 # a tie
logits[1, :10] = logits[1, :10].max()       # a block of equal maxima (top_k / top_p / min_p ties)
logits[2] = torch.round(logits[2])          # many ties
logits[3, 5] = 0.0                          # a zero score under the repetition penalty
logits[4] = logits[4] * 0.01                # nearly flat
ids = torch.randint(0, V, (R, L), generator=gen)
ids[3, 8] = 5
pads = [0, 3, 1, 0, 5]
mask = torch.ones(R, L, dtype=torch.long)
for r, n in enumerate(pads):
    mask[r, :n] = 0
    ids[r, :n] = 0  # padding id 0 must not be penalised (generate() ignores left padding)
settings = {
    "rep1.3": dict(repetition_penalty=1.3),
    "rep0.7": dict(repetition_penalty=0.7),
    "temp0.7": dict(temperature=0.7),
    "temp1.8": dict(temperature=1.8),
    "topk1": dict(temperature=1.0, top_k=1),
    "topk5": dict(temperature=1.0, top_k=5),
    "topk100": dict(temperature=1.0, top_k=100),
    "topp0.9": dict(temperature=1.0, top_p=0.9),
    "topp0.5": dict(temperature=1.0, top_p=0.5),
    "topp0": dict(temperature=1.0, top_p=0.0),
    "minp0.1": dict(temperature=1.0, min_p=0.1),
    "minp1": dict(temperature=1.0, min_p=1.0),
    "all": dict(repetition_penalty=1.2, temperature=0.8, top_k=20, top_p=0.9, min_p=0.05),
    "temp_topk_topp": dict(temperature=1.5, top_k=12, top_p=0.7),
}
ref = {"logits": logits.contiguous(), "ids": ids, "mask": mask}
for name, s in settings.items():
    # The order of GenerationMixin._get_logits_processor (min_tokens_to_keep = 1 without beams).
    procs = LogitsProcessorList()
    if s.get("repetition_penalty", 1.0) != 1.0:
        procs.append(RepetitionPenaltyLogitsProcessor(s["repetition_penalty"],
                                                      prompt_ignore_length=(mask != 0).int().argmax(dim=1)))
    if s.get("temperature", 1.0) != 1.0:
        procs.append(TemperatureLogitsWarper(s["temperature"]))
    if s.get("top_k", 0) != 0:
        procs.append(TopKLogitsWarper(top_k=s["top_k"], min_tokens_to_keep=1))
    if s.get("top_p", 1.0) < 1.0:
        procs.append(TopPLogitsWarper(top_p=s["top_p"], min_tokens_to_keep=1))
    if "min_p" in s:
        procs.append(MinPLogitsWarper(min_p=s["min_p"], min_tokens_to_keep=1))
    scores = procs(ids, logits.clone())
    ref["probs." + name] = torch.softmax(scores, dim=-1).contiguous()
save_file(ref, os.path.join(out, "processors.safetensors"))
json.dump(settings, open(os.path.join(out, "processors.json"), "w"), indent=1)
print(f"processors: {len(settings)} settings")

"""Loads a checkpoint folder written by cuset-train with transformers (AutoModelForCausalLM,
AutoTokenizer) and checks that every parameter equals the tensor stored in the safetensors
files, bit for bit. Prints 'identical' and exits 0 on success, lists mismatches and exits 1."""
import glob
import os
import sys

import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM, AutoTokenizer

ckpt = sys.argv[1]
stored = {}
for f in sorted(glob.glob(os.path.join(ckpt, "model*.safetensors"))):
    stored.update(load_file(f))
model = AutoModelForCausalLM.from_pretrained(ckpt, dtype="auto")
tok = AutoTokenizer.from_pretrained(ckpt)
bad = []
sd = model.state_dict()
for name, t in stored.items():
    if name not in sd:
        bad.append(f"{name}: not a parameter of the transformers model")
    elif sd[name].dtype != t.dtype or not torch.equal(sd[name], t):
        bad.append(f"{name}: differs (dtype {sd[name].dtype} vs {t.dtype})")
for name in sd:
    if name not in stored and not (name == "lm_head.weight" and model.config.tie_word_embeddings):
        bad.append(f"{name}: missing from the checkpoint")
ids = tok("__global__ void k() {}")["input_ids"]
if not ids:
    bad.append("tokenizer produced no ids")
if bad:
    print("\n".join(bad))
    sys.exit(1)
print(f"{len(stored)} tensors identical; tokenizer loads ({len(ids)} ids)")

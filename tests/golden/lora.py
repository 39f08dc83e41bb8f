"""Reference values for tests/model/test_lora.cpp from PyPI peft (the reference LoRA).

Reads the golden random models of tests/golden/model.py (<model_golden>/<case>/model and its
inputs.safetensors) and, per case, wraps the fp32 model with peft.get_peft_model(LoraConfig(...))
with random non-zero A and B (B = 0 would make every test pass trivially), then writes into
<out>/<case>:
  adapter/            PeftModel.save_pretrained: adapter_config.json + adapter_model.safetensors
  ref.safetensors     <batch>.logits [B,T,V] fp32 for batch plain / pad (padded positions zeroed);
                      <batch>.grad.<PEFT tensor name> = d/d(adapter tensor) of sum(logits * w)
                      over real tokens (w = inputs' w_<batch>), the names as PEFT saves them
                      ("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
                      merged.<hf name> every tensor of merge_and_unload()'s model;
                      plain.merged_logits its logits on plain_ids.
Cases differ in rank, alpha, rslora and target modules.
Usage: lora.py OUT MODEL_GOLDEN_DIR"""
import json
import os
import sys

import torch
import transformers
from peft import LoraConfig, get_peft_model
from safetensors.torch import load_file, save_file

torch.set_num_threads(1)
out, golden = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)

ALL = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
CASES = {
    "llama_linear": dict(r=4, lora_alpha=8, target_modules=ALL, use_rslora=False),
    "llama3_bias": dict(r=8, lora_alpha=16, target_modules=["q_proj", "v_proj", "down_proj"], use_rslora=True),
    "qwen2_yarn": dict(r=4, lora_alpha=6, target_modules=ALL, use_rslora=False),
    "qwen3_tied": dict(r=2, lora_alpha=4, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj"],
                       use_rslora=False),
}


def peft_name(n):
    return n.replace(".lora_A.default.", ".lora_A.").replace(".lora_B.default.", ".lora_B.")


def run_case(name, spec, gen):
    folder = os.path.join(out, name)
    model_dir = os.path.join(golden, name, "model")
    x = load_file(os.path.join(golden, name, "inputs.safetensors"))
    base = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                             attn_implementation="eager")
    cfg = LoraConfig(task_type="CAUSAL_LM", lora_dropout=0.0, bias="none", **spec)
    model = get_peft_model(base, cfg)
    model.eval()
    lora = {n: p for n, p in model.named_parameters() if p.requires_grad}
    assert lora and all(".lora_" in n for n in lora), list(lora)
    with torch.no_grad():
        for n, p in lora.items():
            # A ~ N(0, 1/in), B ~ N(0, 1/r): the adapter changes every projection's output by
            # about as much as the projection itself.
            p.copy_(torch.randn(p.shape, generator=gen) / p.shape[1] ** 0.5)
    model.save_pretrained(os.path.join(folder, "adapter"))
    ref = {}
    for batch, ids, mask in [("plain", x["plain_ids"], None), ("pad", x["pad_ids"], x["pad_mask"])]:
        m_ = mask if mask is not None else torch.ones_like(ids)
        logits = model(input_ids=ids, attention_mask=mask).logits
        logits = logits.masked_fill(~m_.bool()[..., None], 0.0)
        keep = m_.bool()
        loss = (logits[keep] * x["w_" + batch][keep]).sum()
        model.zero_grad(set_to_none=True)
        loss.backward()
        ref[batch + ".logits"] = logits.detach().contiguous()
        for n, p in lora.items():
            ref[batch + ".grad." + peft_name(n)] = p.grad.detach().clone().contiguous()
    merged = model.merge_and_unload()
    with torch.no_grad():
        for n, t in merged.state_dict().items():
            ref["merged." + n] = t.detach().clone().contiguous()
        ref["plain.merged_logits"] = merged(input_ids=x["plain_ids"]).logits.contiguous()
    # A tied lm_head shares the embedding: keep one copy (safetensors refuses shared storage).
    if merged.config.tie_word_embeddings:
        ref.pop("merged.lm_head.weight", None)
    save_file(ref, os.path.join(folder, "ref.safetensors"))
    json.dump(spec, open(os.path.join(folder, "spec.json"), "w"))


gen = torch.Generator().manual_seed(4242)
names = [l.strip() for l in open(os.path.join(golden, "cases.txt")) if l.strip()]
for name in names:
    run_case(name, CASES[name], gen)
with open(os.path.join(out, "cases.txt"), "w") as f:
    f.write("\n".join(names) + "\n")
print("lora golden:", ", ".join(names))

"""Checks files cuset wrote against PyPI peft (run by tests/model/test_lora.cpp).

  check_lora.py adapter BASE_MODEL ADAPTER_DIR LOGITS.safetensors ATOL
      PeftModel.from_pretrained(BASE_MODEL, ADAPTER_DIR) must load every tensor of the adapter
      (no missing or unexpected key) with cuset's r / alpha / targets, and its logits on
      LOGITS' "input_ids" must equal LOGITS' "logits" (cuset's) within ATOL.
  check_lora.py merged BASE_MODEL ADAPTER_DIR EXPORT_DIR ATOL
      The folder `cuset-train export --merge` wrote must hold exactly the tensors of
      PeftModel.from_pretrained(...).merge_and_unload() (fp32), within ATOL, and give its logits.
Prints one line per check; exit status 0 when all pass, 1 otherwise."""
import json
import os
import sys

import torch
import transformers
from peft import PeftModel
from safetensors.torch import load_file

from tolerance_log import within, worst

torch.set_num_threads(1)
mode, base_dir, adapter_dir, other, atol = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
ok = True


def check(cond, msg):
    global ok
    print(("ok   " if cond else "FAIL ") + msg)
    ok = ok and bool(cond)


cfg = json.load(open(os.path.join(adapter_dir, "adapter_config.json")))
base = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.float32, attn_implementation="eager")
model = PeftModel.from_pretrained(base, adapter_dir)
model.eval()
pc = model.peft_config["default"]
check(pc.peft_type.value == "LORA" and pc.task_type == "CAUSAL_LM", f"peft_type {pc.peft_type} task_type {pc.task_type}")
check(pc.r == cfg["r"] and pc.lora_alpha == cfg["lora_alpha"] and pc.use_rslora == cfg["use_rslora"],
      f"r {pc.r} alpha {pc.lora_alpha} rslora {pc.use_rslora}")
saved = load_file(os.path.join(adapter_dir, "adapter_model.safetensors"))
loaded = {n.replace(".default", ""): p for n, p in model.named_parameters() if ".lora_" in n}
check(set(saved) == set(loaded), f"{len(saved)} saved tensors, {len(loaded)} adapter tensors in the PeftModel")
diff = max((saved[k] - loaded[k].detach()).abs().max().item() for k in saved if k in loaded)
check(diff == 0.0, f"adapter tensors loaded exactly (max diff {diff:.3g})")

if mode == "adapter":
    ref = load_file(other)
    with torch.no_grad():
        logits = model(input_ids=ref["input_ids"]).logits
    err = (logits - ref["logits"]).abs().max().item()
    check(within(err, atol), f"logits max abs err {err:.3g} (atol {atol:g})")
elif mode == "merged":
    merged = model.merge_and_unload()
    ours = transformers.AutoModelForCausalLM.from_pretrained(other, dtype=torch.float32, attn_implementation="eager")
    a, b = merged.state_dict(), ours.state_dict()
    check(set(a) == set(b), f"{len(b)} exported tensors, {len(a)} in merge_and_unload()")
    err = 0.0
    for k in a:
        if k in b:
            err = worst(err, (a[k].float() - b[k].float()).abs().max().item())
    check(within(err, atol), f"merged weights max abs err {err:.3g} (atol {atol:g})")
    ids = torch.arange(12).remainder(base.config.vocab_size).reshape(1, 12)
    with torch.no_grad():
        le = (merged(input_ids=ids).logits - ours(input_ids=ids).logits).abs().max().item()
    # The two models' weights are within atol (above): a linear layer's output moves by atol times
    # the sum of |x| over its inputs (64 of them, |x| ~ 1 after the norms), through 2 layers and
    # the head: ~100 atol to first order (identical weights, as here, give identical logits).
    check(within(le, 100 * atol), f"merged logits max abs err {le:.3g}")
else:
    check(False, "unknown mode " + mode)
sys.exit(0 if ok else 1)

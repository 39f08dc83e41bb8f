"""Reference values for tests/train/test_optim.cpp from torch.optim.AdamW and
torch.nn.utils.clip_grad_norm_ (PyPI torch). Writes optim.json into the folder argv[1].

Cases: fp32 parameters with weight decay on some of them, a schedule of learning rates and a
fixed sequence of gradients (AdamW single-tensor path, foreach=False); bf16 parameters updated
through fp32 master copies (reference: AdamW on the fp32 copy, then cast to bf16); and global-norm
clipping of a set of gradients."""
import json
import os
import sys

import torch

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(7)


def tolist(t):
    return t.detach().double().flatten().tolist()


def adamw_case(dtype, weight_decay, decay_mask, steps=6):
    shapes = [(4, 3), (5,), (2, 2, 3)]
    params = [torch.randn(s, dtype=torch.float32) for s in shapes]
    grads = [[torch.randn(s) * (0.1 + i) for s in shapes] for i in range(steps)]
    lrs = [1e-2 * (0.5 + 0.25 * i) for i in range(steps)]
    model_params = [p.to(dtype) for p in params]
    # Reference: torch.optim.AdamW on fp32 tensors (the master copies for bf16 models).
    master = [p.float().clone().requires_grad_(True) for p in model_params]
    groups = [
        {"params": [m for m, d in zip(master, decay_mask) if d], "weight_decay": weight_decay},
        {"params": [m for m, d in zip(master, decay_mask) if not d], "weight_decay": 0.0},
    ]
    opt = torch.optim.AdamW(groups, lr=lrs[0], betas=(0.9, 0.95), eps=1e-8, foreach=False,
                            fused=False)
    for step in range(steps):
        for g in opt.param_groups:
            g["lr"] = lrs[step]
        for m, g in zip(master, grads[step]):
            # The model's gradient is in the model dtype; the optimizer reads it in fp32.
            m.grad = g.to(dtype).float()
        opt.step()
    final_model = [m.detach().to(dtype) for m in master]
    return {
        "dtype": str(dtype).replace("torch.", ""),
        "shapes": [list(s) for s in shapes],
        "decay": decay_mask,
        "weight_decay": weight_decay,
        "betas": [0.9, 0.95],
        "eps": 1e-8,
        "lrs": lrs,
        "init": [tolist(p) for p in model_params],
        "grads": [[tolist(g.to(dtype)) for g in gs] for gs in grads],
        "final": [tolist(p) for p in final_model],
        "exp_avg": [tolist(opt.state[m]["exp_avg"]) for m in master],
        "exp_avg_sq": [tolist(opt.state[m]["exp_avg_sq"]) for m in master],
    }


def clip_case(max_norm, scale):
    shapes = [(3, 3), (7,)]
    grads = [torch.randn(s) * scale for s in shapes]
    ps = [torch.zeros(s, requires_grad=True) for s in shapes]
    for p, g in zip(ps, grads):
        p.grad = g.clone()
    norm = torch.nn.utils.clip_grad_norm_(ps, max_norm)
    return {"max_norm": max_norm, "shapes": [list(s) for s in shapes],
            "grads": [tolist(g) for g in grads], "norm": float(norm),
            "clipped": [tolist(p.grad) for p in ps]}


cases = {
    "adamw_fp32": adamw_case(torch.float32, 0.1, [True, False, True]),
    "adamw_bf16": adamw_case(torch.bfloat16, 0.05, [True, False, True]),
    "clip_active": clip_case(1.0, 3.0),
    "clip_inactive": clip_case(100.0, 0.1),
}
with open(os.path.join(out, "optim.json"), "w") as f:
    json.dump(cases, f)
print("wrote", os.path.join(out, "optim.json"))

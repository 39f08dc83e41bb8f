"""Reference values for tests/train/test_grpo.cpp. Writes grpo.json into the folder argv[1].

The loss, its gradient with respect to the per-token log-probabilities and the logged statistics
come from TRL's own GRPOTrainer._compute_loss (trl 1.16.0 from PyPI), called on fixed tensors:
the trainer object it is given carries only the attributes that method reads (the options, an
accelerator of one process, a policy in training mode), and its log-probability hook returns the
test's tensor instead of running a model. Nothing here restates the formulas.

The model case (grpo_model.safetensors): data/tiny-coder (the demo model, fp32, transformers'
eager attention) scores fixed completions after left-padded prompts at temperature 0.7 the way
TRL does (log_softmax of logits / temperature at the completion positions); TRL's _compute_loss
(dapo, beta 0.04) on those log-probabilities, backpropagated into the model: the loss, the
log-probabilities and every parameter's gradient.

Cases: every loss_type cuset has (grpo, bnpo, dr_grpo, dapo, cispo, sapo, luspo) with beta 0 and
0.04, token- and sequence-level importance sampling, an asymmetric clip (epsilon_high; cispo's
cap at 1.2, under the largest ratios), sapo's two temperatures, two-sided clipping (delta),
gradient accumulation 2 and the dapo and cispo normaliser of a larger generation batch.
"""
import json
import os
import sys
from collections import defaultdict
from types import SimpleNamespace

import torch
import transformers
from safetensors.torch import save_file
from trl.trainer.grpo_trainer import GRPOTrainer

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(20261202)

B, T = 4, 6
# Completions of lengths 6, 4, 1 and 3 (right-padded).
mask = torch.zeros(B, T)
for i, n in enumerate([6, 4, 1, 3]):
    mask[i, :n] = 1
logps0 = -torch.rand(B, T, dtype=torch.float32) * 3 - 0.05
# The sampling policy differs enough that ratios leave [1 - 0.2, 1 + 0.28] in both directions,
# per token and (the row offsets) per sequence: row 0 (A > 0) above, row 1 (A < 0) below.
old = logps0 + torch.randn(B, T) * 0.35 + torch.tensor([-0.35, 0.3, 0.0, 0.1]).unsqueeze(1)
ref = logps0 + torch.randn(B, T) * 0.2
adv = torch.tensor([1.3, -0.7, 0.4, -1.9])


class Accelerator:
    num_processes = 1

    @staticmethod
    def gather(x):
        return x.reshape(-1) if x.dim() == 0 else x

    @staticmethod
    def gather_for_metrics(x):
        return x

    @staticmethod
    def reduce(x, reduction="sum"):
        return x


def trl_loss(case, logps=None, inputs=None):
    own = logps is None
    if own:
        logps = logps0.clone().requires_grad_(True)
    b, t = logps.shape
    metrics = {"train": defaultdict(list)}
    me = SimpleNamespace(
        _get_per_token_logps_and_entropies=lambda *a, **k: (logps, torch.zeros(b, t), None),
        aux_loss_enabled=False,
        top_entropy_quantile=1.0,
        off_policy_mask_threshold=None,
        importance_sampling_level=case["importance_sampling_level"],
        beta=case["beta"],
        args=SimpleNamespace(use_bias_correction_kl=False, delta=case["delta"],
                             steps_per_generation=case["steps_per_generation"],
                             sapo_temperature_pos=case.get("sapo_temperature_pos", 1.0),
                             sapo_temperature_neg=case.get("sapo_temperature_neg", 1.05)),
        loss_type=case["loss_type"],
        epsilon_low=case["epsilon"],
        epsilon_high=case["epsilon_high"],
        use_vllm=False,
        vllm_importance_sampling_correction=False,
        model=SimpleNamespace(training=True),
        current_gradient_accumulation_steps=case["grad_accum"],
        max_completion_length=case["max_completion_length"],
        accelerator=Accelerator(),
        _entropy_bonus_enabled=False,
        _metrics=metrics,
    )
    inputs = inputs or {
        "prompt_ids": torch.zeros(B, 2, dtype=torch.long),
        "prompt_mask": torch.ones(B, 2, dtype=torch.long),
        "completion_ids": torch.zeros(B, T, dtype=torch.long),
        "completion_mask": mask.long(),
        "advantages": adv.clone(),
        "old_per_token_logps": old.clone(),
        "ref_per_token_logps": ref.clone(),
        "num_items_in_batch": torch.tensor(case["num_items_in_batch"]),
    }
    loss = GRPOTrainer._compute_loss(me, None, inputs)
    loss.backward()
    if not own:
        return loss.item()
    m = metrics["train"]
    return {
        "loss": loss.item(),
        "grad": logps.grad.reshape(-1).tolist(),
        "kl": m["kl"][0] if m.get("kl") else None,
        # cispo logs one fraction (cispo_clip_ratio), cuset's clip_high; sapo logs none (it clips nothing)
        "clip_low": m["clip_ratio/low_mean"][0] if "clip_ratio/low_mean" in m else 0.0,
        "clip_high": m["clip_ratio/high_mean"][0] if "clip_ratio/high_mean" in m else m.get("cispo_clip_ratio", [0.0])[0],
        "clip_region": m["clip_ratio/region_mean"][0] if "clip_ratio/region_mean" in m else m.get("cispo_clip_ratio", [0.0])[0],
    }


cases = []
for loss_type in ["grpo", "bnpo", "dr_grpo", "dapo"]:
    for beta in [0.0, 0.04]:
        for level in ["token", "sequence"]:
            if level == "sequence" and loss_type != "grpo":
                continue  # TRL allows sequence-level sampling with the per-sequence loss only
            cases.append(dict(loss_type=loss_type, beta=beta, importance_sampling_level=level, epsilon=0.2,
                              epsilon_high=0.28, delta=None, grad_accum=1, steps_per_generation=1,
                              max_completion_length=8, num_items_in_batch=float(mask.sum())))
for loss_type in ["grpo", "dapo"]:  # two-sided clipping, accumulation, a larger generation batch
    cases.append(dict(loss_type=loss_type, beta=0.04, importance_sampling_level="token", epsilon=0.2,
                      epsilon_high=0.2, delta=1.5, grad_accum=2, steps_per_generation=4,
                      max_completion_length=8, num_items_in_batch=3 * float(mask.sum())))
for loss_type, level in [("cispo", "token"), ("cispo", "sequence"), ("sapo", "token"), ("sapo", "sequence"),
                         ("luspo", "sequence"), ("luspo", "token")]:
    for beta in [0.0, 0.04]:
        cases.append(dict(loss_type=loss_type, beta=beta, importance_sampling_level=level, epsilon=0.2,
                          epsilon_high=1.2 if loss_type == "cispo" else 0.28, delta=None, grad_accum=1,
                          steps_per_generation=1, max_completion_length=8, num_items_in_batch=float(mask.sum()),
                          sapo_temperature_pos=1.0, sapo_temperature_neg=1.05))
cases.append(dict(loss_type="cispo", beta=0.04, importance_sampling_level="token", epsilon=0.2, epsilon_high=1.2,
                  delta=None, grad_accum=2, steps_per_generation=4, max_completion_length=8,
                  num_items_in_batch=3 * float(mask.sum())))
cases.append(dict(loss_type="sapo", beta=0.0, importance_sampling_level="token", epsilon=0.2, epsilon_high=0.28,
                  delta=None, grad_accum=2, steps_per_generation=1, max_completion_length=8,
                  num_items_in_batch=float(mask.sum()), sapo_temperature_pos=0.5, sapo_temperature_neg=2.0))
for c in cases:
    c.update(trl_loss(c))

json.dump({"B": B, "T": T, "mask": mask.reshape(-1).tolist(), "logps": logps0.reshape(-1).tolist(),
           "old": old.reshape(-1).tolist(), "ref": ref.reshape(-1).tolist(), "adv": adv.tolist(), "cases": cases},
          open(os.path.join(out, "grpo.json"), "w"), indent=1)
# ---------------------------------------------------------------- the model case
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
torch.set_num_threads(2)
model = transformers.AutoModelForCausalLM.from_pretrained(
    os.path.join(root, "data/tiny-coder"), dtype=torch.float32, attn_implementation="eager")
model.train()
gen = torch.Generator().manual_seed(7)
vocab = model.config.vocab_size
MB, MP, MT, TEMP = 3, 5, 6, 0.7
prompt_ids = torch.randint(1, vocab, (MB, MP), generator=gen)
prompt_mask = torch.ones(MB, MP, dtype=torch.long)
prompt_mask[1, :2] = 0  # left padding
prompt_mask[2, :4] = 0
prompt_ids[prompt_mask == 0] = 0
completion_ids = torch.randint(1, vocab, (MB, MT), generator=gen)
completion_mask = torch.ones(MB, MT, dtype=torch.long)
completion_mask[0, 4:] = 0  # right padding
completion_mask[2, 2:] = 0
completion_ids[completion_mask == 0] = 0
ids = torch.cat([prompt_ids, completion_ids], 1)
logits = model(input_ids=ids, attention_mask=torch.cat([prompt_mask, completion_mask], 1)).logits
mlogps = torch.log_softmax(logits[:, MP - 1:-1].float() / TEMP, -1).gather(-1, completion_ids.unsqueeze(-1)).squeeze(-1)
mold = mlogps.detach() + torch.randn(MB, MT, generator=gen) * 0.3
mref = mlogps.detach() + torch.randn(MB, MT, generator=gen) * 0.2
madv = torch.tensor([0.9, -1.2, 0.5])
mcase = dict(loss_type="dapo", beta=0.04, importance_sampling_level="token", epsilon=0.2, epsilon_high=0.28,
             delta=None, grad_accum=1, steps_per_generation=1, max_completion_length=MT,
             num_items_in_batch=float(completion_mask.sum()))
minputs = {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "completion_ids": completion_ids,
           "completion_mask": completion_mask, "advantages": madv, "old_per_token_logps": mold,
           "ref_per_token_logps": mref, "num_items_in_batch": torch.tensor(mcase["num_items_in_batch"])}
mloss = trl_loss(mcase, logps=mlogps, inputs=minputs)
tensors = {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "completion_ids": completion_ids,
           "completion_mask": completion_mask, "logps": mlogps.detach(), "old": mold, "ref": mref, "adv": madv,
           "loss": torch.tensor([mloss], dtype=torch.float64), "temperature": torch.tensor([TEMP], dtype=torch.float64)}
for n, p in model.named_parameters():
    tensors["g." + n] = p.grad.detach().clone()
save_file(tensors, os.path.join(out, "grpo_model.safetensors"))
print(f"grpo: {len(cases)} cases from trl's GRPOTrainer._compute_loss")

"""Reference values for tests/train/test_objective.cpp. Writes objective.json into the folder argv[1].

Everything in float64 with PyTorch (torch.nn.functional.cross_entropy, autograd) and numpy:
- nll: per-token cross-entropy of h W^T with ignored labels, and the gradients of sum(g * l) for
  a random upstream g (the reference for the chunked custom autograd function).
- sft_step: one optimizer step of two micro-batches; the loss is F.cross_entropy(reduction='mean',
  ignore_index=-100) over all the step's logits at once (the token mean over the step's
  response tokens), with its gradients for every micro-batch's hidden states and the lm_head.
- quantile: numpy.quantile(method='linear').
- naive: docs/method.md sec. 2-5 written out the slow, obvious way (Python loops over
  samples and windows, numpy.quantile, autograd through the numerator with detached weights),
  for a packed micro-batch, one case per method / threshold mode / switch. It shares no code with
  src/train/objective.cpp; it checks the vectorised, chunked C++ on cases too big to work by hand.
  The baselines eaft / asft / rho1 the same way, per token on full logits: EAFT's weight from
  torch.sort of the softmax (top k, renormalised, entropy / ln k, ** alpha, detached), ASFT's
  c l + alpha KL(pi_ref || pi_theta) with autograd through log_softmax, Rho-1's selection of the
  ceil(f n) highest l - l_ref over the micro-batch (exact fractions for the count).
"""
import json
import math
import os
import sys
from fractions import Fraction

import numpy as np
import torch
import torch.nn.functional as F

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(20240918)
rng = np.random.default_rng(20240918)
torch.set_default_dtype(torch.float64)
IGNORE = -100


def flat(t):
    return t.detach().reshape(-1).tolist()


def nll_case():
    N, D, V = 13, 5, 17
    h = (torch.randn(N, D) * 1.5).requires_grad_()
    w = torch.randn(V, D).requires_grad_()
    y = torch.randint(0, V, (N,))
    y[[2, 7, 8]] = IGNORE
    g = torch.rand(N) + 0.5
    l = F.cross_entropy(h @ w.T, y, reduction="none", ignore_index=IGNORE)
    (g * l).sum().backward()
    return {"N": N, "D": D, "V": V, "hidden": flat(h), "weight": flat(w), "labels": y.tolist(),
            "g": g.tolist(), "nll": flat(l), "grad_hidden": flat(h.grad), "grad_weight": flat(w.grad)}


def sft_step_case():
    D, V = 6, 11
    shapes = [(2, 5), (1, 7)]
    w = torch.randn(V, D).requires_grad_()
    hs, ys = [], []
    for b, t in shapes:
        h = torch.randn(b, t, D).requires_grad_()
        y = torch.randint(0, V, (b, t))
        y[0, :2] = IGNORE  # a prompt
        hs.append(h)
        ys.append(y)
    ys[0][1, 4] = IGNORE  # padding
    logits = torch.cat([(h @ w.T).reshape(-1, V) for h in hs])
    labels = torch.cat([y.reshape(-1) for y in ys])
    loss = F.cross_entropy(logits, labels, ignore_index=IGNORE)
    loss.backward()
    return {"D": D, "V": V, "weight": flat(w), "loss": loss.item(), "grad_weight": flat(w.grad),
            "micro_batches": [{"B": b, "T": t, "hidden": flat(h), "labels": y.reshape(-1).tolist(),
                               "grad_hidden": flat(h.grad)}
                              for (b, t), h, y in zip(shapes, hs, ys)]}


def quantile_case():
    cases = []
    arrays = [[0.3], [0.9, 0.1], [0.1, 0.2, 0.6, 0.8, 0.9], [0.5, 0.5, 0.25, 0.5],
              rng.random(37).tolist(), (rng.random(1000) ** 3).tolist()]
    for a in arrays:
        for q in [0.0, 0.1, 0.2, 0.25, 0.5, 0.7, 0.999, 1.0]:
            cases.append({"values": a, "q": q, "expected": float(np.quantile(np.array(a), q))})
    return cases


# ------------------------------------------------------------------ the naive objective

B, T, D, V = 3, 12, 5, 7
SAMPLE = [[0] * 5 + [1] * 7, [2] * 12, [3] * 8 + [4] * 4]  # row 2 packs sample 4 without tokens
NAIVE_IDS = ["s0", "s1", "s2", "s3", "s4"]


def naive_inputs():
    h = torch.randn(B, T, D) * 0.8
    w = torch.randn(V, D)
    y = torch.randint(0, V, (B, T))
    easy = torch.rand(B, T) < 0.6  # targets the model already predicts: confidences spread out
    y = torch.where(easy, (h @ w.T).argmax(-1), y)
    y[0, 0] = y[0, 5] = y[0, 6] = IGNORE        # prompts of samples 0 and 1
    y[1, 0:2] = IGNORE                          # prompt of sample 2
    y[2, 0] = IGNORE
    y[2, 8:12] = IGNORE                         # sample 4: prompt only / padding
    sens = torch.rand(B, T) < 0.35
    cached = torch.rand(B, T).float().double()  # fp32 values (the API takes fp32 confidences)
    return h, w, y, sens, cached


def naive_reference(h, w, y):
    """A nearby reference model (its own generator: the draws above stay as they were): final
    hidden states and lm_head for asft, and its fp32 target probabilities for rho1."""
    g = torch.Generator().manual_seed(77)
    h_ref = h + 0.4 * torch.randn(h.shape, generator=g)
    w_ref = w + 0.3 * torch.randn(w.shape, generator=g)
    p = torch.softmax(h_ref.reshape(-1, D) @ w_ref.T, -1)
    p_ref = p.gather(1, y.reshape(-1, 1).clamp_min(0)).reshape(B, T).float().double()
    return h_ref, w_ref, p_ref


def naive_objective(h, w, y, sens, cached, o, ref):
    """docs/method.md sec. 2-5, the obvious way. o: dict of options."""
    h = h.clone().requires_grad_()
    w = w.clone().requires_grad_()
    h_ref, w_ref, p_ref = ref
    logits = h.reshape(-1, D) @ w.T
    logits_ref = (h_ref.reshape(-1, D) @ w_ref.T).detach()
    l_all = F.cross_entropy(logits, y.reshape(-1), reduction="none", ignore_index=IGNORE).reshape(B, T)
    c_all = cached if o["cached"] else torch.exp(-l_all.detach())
    samples = []
    for s in range(len(NAIVE_IDS)):
        pos = [(b, t) for b in range(B) for t in range(T) if SAMPLE[b][t] == s and y[b, t] != IGNORE]
        samples.append(pos)
    if o["mode"] == "batch_quantile" and o["method"] == "cuset":
        all_c = np.array([c_all[b, t].item() for pos in samples for (b, t) in pos])
        batch_tau = float(np.quantile(all_c, o["q"]))
    if o["method"] == "rho1":
        score = {(b, t): l_all[b, t].item() + math.log(p_ref[b, t].item()) for pos in samples for (b, t) in pos}
        ranked = sorted(score.values(), reverse=True)
        keep = max(1, math.ceil(Fraction(o["keep_fraction"]).limit_denominator(10 ** 6) * len(ranked)))
        batch_tau = ranked[keep - 1]
    numerator = torch.zeros(())
    denominator = 0.0
    per_sample = []
    stats = {"n_kept": 0, "n_sensitive": 0, "n_kept_only_sensitive": 0, "conf_sum_sensitive": 0.0,
             "conf_sum_plain": 0.0, "nll_sum_valid": 0.0, "tok_w_sum": 0.0, "kl_sum": 0.0}
    for pos in samples:
        c = np.array([c_all[b, t].item() for (b, t) in pos])
        s_flags = [bool(sens[b, t]) for (b, t) in pos]
        n = len(pos)
        rec = {"n_valid": n, "tau": None, "weight": 1.0, "win_begin": -1, "win_end": -1, "win_mean": None}
        if n == 0:
            per_sample.append(rec)
            continue
        cuset = o["method"] == "cuset"
        tau = None
        if cuset and o["mask_confidence"]:
            tau = {"sample_quantile": lambda: float(np.quantile(c, o["q"])), "fixed": lambda: o["value"],
                   "batch_quantile": lambda: batch_tau}[o["mode"]]()
        weight = 1.0
        if cuset and o["region"]:
            win = min(o["window"], n)
            best, best_j = None, None
            for j in range(0, n - win + 1):
                mean = sum(c[j:j + win]) / win
                if best is None or mean < best:   # strict: the earliest window wins ties
                    best, best_j = mean, j
            weight = 1.0 + o["alpha"] * (1.0 - best)
            rec.update(win_begin=best_j, win_end=best_j + win, win_mean=best)
        rec.update(tau=tau, weight=weight)
        per_sample.append(rec)
        for k, (b, t) in enumerate(pos):
            ck = float(c[k])
            kept = True
            only = False
            if tau is not None:
                conf_ok = ck >= tau
                kept = conf_ok or (o["mask_sensitivity"] and s_flags[k])
                only = kept and not conf_ok
            g = 1.0
            term = 0.0
            if o["method"] == "rho1":
                kept = score[(b, t)] >= batch_tau
            m = 1.0 if kept else (0.0 if o["method"] == "rho1" else o["drop_weight"])
            row = b * T + t
            if o["method"] == "dft" or o["method"] == "asft":
                g = ck
            elif o["method"] == "focal":
                g = (1.0 - ck) ** o["gamma"]
            elif o["method"] == "eaft":
                p = torch.softmax(logits[row].detach(), -1)
                top = torch.sort(p, descending=True).values[:o["eaft_k"]]
                top = top / top.sum()
                H = -(top * torch.log(top)).sum().item()
                g = (H / math.log(len(top))) ** o["eaft_alpha"]
            if o["method"] == "asft":
                lr = torch.log_softmax(logits_ref[row], -1)
                kl = (torch.exp(lr) * (lr - torch.log_softmax(logits[row], -1))).sum()
                term = o["asft_alpha"] * weight * m * kl
                stats["kl_sum"] += kl.item()
            numerator = numerator + weight * m * g * l_all[b, t] + term
            denominator += weight * m
            stats["tok_w_sum"] += m * g
            stats["n_kept"] += int(kept)
            stats["n_kept_only_sensitive"] += int(only)
            stats["n_sensitive"] += int(s_flags[k])
            stats["conf_sum_sensitive" if s_flags[k] else "conf_sum_plain"] += ck
            stats["nll_sum_valid"] += l_all[b, t].item()
    numerator.backward()
    res = {"numerator": numerator.item(), "denominator": denominator, "samples": per_sample,
           "grad_hidden": flat(h.grad), "grad_weight": flat(w.grad), "stats": stats}
    if (o["mode"] == "batch_quantile" and o["method"] == "cuset") or o["method"] == "rho1":
        res["batch_tau"] = batch_tau
    return res


def naive_cases():
    h, w, y, sens, cached = naive_inputs()
    ref = naive_reference(h, w, y)
    base = {"method": "cuset", "cached": False, "mask_confidence": True, "mask_sensitivity": True,
            "drop_weight": 0.0, "mode": "sample_quantile", "q": 0.2, "value": 0.5, "region": True,
            "window": 4, "alpha": 1.0, "gamma": 2.0, "eaft_alpha": 1.0, "eaft_k": 20,
            "asft_alpha": 0.1, "keep_fraction": 0.6}
    variants = {
        "cuset": {},
        "cuset_q0.35_alpha2.5_window3": {"q": 0.35, "alpha": 2.5, "window": 3},
        "cuset_drop0.3": {"drop_weight": 0.3},
        "cuset_no_sensitivity": {"mask_sensitivity": False, "q": 0.5},
        "cuset_no_confidence": {"mask_confidence": False},
        "cuset_no_region": {"region": False, "q": 0.5},
        "cuset_fixed": {"mode": "fixed", "value": 0.05},
        "cuset_fixed_no_region": {"mode": "fixed", "value": 0.05, "region": False},
        "cuset_batch_quantile": {"mode": "batch_quantile", "q": 0.45},
        "cuset_window_big": {"window": 256},
        "cuset_cached": {"cached": True, "q": 0.4},
        "sft": {"method": "sft"},
        "dft": {"method": "dft"},
        "focal": {"method": "focal", "gamma": 1.5},
        "eaft": {"method": "eaft"},  # k = 20 > V = 7: the whole distribution
        "eaft_k3_alpha0.5": {"method": "eaft", "eaft_k": 3, "eaft_alpha": 0.5},
        "asft": {"method": "asft"},
        "asft_alpha1.5_drop": {"method": "asft", "asft_alpha": 1.5, "drop_weight": 0.3},  # drop: unused
        "rho1": {"method": "rho1"},
        "rho1_keep0.3": {"method": "rho1", "keep_fraction": 0.3},
    }
    cases = []
    for name, v in variants.items():
        o = dict(base, **v)
        cases.append({"name": name, "options": o, "expected": naive_objective(h, w, y, sens, cached, o, ref)})
    return {"B": B, "T": T, "D": D, "V": V, "hidden": flat(h), "weight": flat(w),
            "labels": y.reshape(-1).tolist(), "sensitive": [int(x) for x in sens.reshape(-1).tolist()],
            "sample_index": [s for row in SAMPLE for s in row], "sample_ids": NAIVE_IDS,
            "confidence": flat(cached), "ref_hidden": flat(ref[0]), "ref_weight": flat(ref[1]),
            "ref_prob": flat(ref[2]), "cases": cases}


result = {"nll": nll_case(), "sft_step": sft_step_case(), "quantile": quantile_case(),
          "naive": naive_cases(), "torch": torch.__version__, "numpy": np.__version__}
with open(os.path.join(out, "objective.json"), "w") as f:
    json.dump(result, f)
print("wrote", os.path.join(out, "objective.json"))

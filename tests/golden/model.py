"""Reference values for tests/model/test_model.cpp from PyPI transformers (the reference decoder).

For each case a small random model is created, saved with save_pretrained (safetensors) into
<out>/<case>/model, reloaded with AutoModelForCausalLM.from_pretrained (so the reference reads the
same config.json cuset reads), and run on fixed inputs. Written per case:
  inputs.safetensors  plain_ids [2,12]; pad_ids/pad_mask [3,12] (right padding);
                      left_ids/left_mask [2,12] (left padding); pack_ids/pack_seg/pack_pos/pack_mask
                      [2,12] (several samples per row, one padded tail); w_<batch> [B,T,V] fp32 loss
                      weights.
  ref.safetensors     <batch>.logits [B,T,V] fp32 (garbage-free only at real tokens);
                      <batch>.grad.<hf name> = d/dparam of sum(logits * w) over real tokens;
                      plain.logits_bf16 / pad.logits_bf16: transformers' own bf16 forward.
Packed references run every sample separately through transformers (positions from 0) and put
the pieces back together; their gradient is the sum over the pieces.

Cases: llama_linear (GQA, linear RoPE x4 as DeepSeek-Coder, old-style `rope_scaling` config),
llama3_bias (MHA, q/k/v/o bias, llama3 RoPE), qwen2_yarn (q/k/v bias, GQA, yarn RoPE, old-style
config), qwen3_tied (q/k norm, head_dim 32 != 64/4, tied embeddings, pad_token_id)."""
import json
import os
import sys

import torch
import transformers
from safetensors.torch import save_file

torch.set_num_threads(1)
out = sys.argv[1]
os.makedirs(out, exist_ok=True)

T = 12
V = 160


def cfg_llama_linear():
    return transformers.LlamaConfig(
        vocab_size=V, hidden_size=64, intermediate_size=112, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6,
        max_position_embeddings=256,
        rope_parameters={"rope_type": "linear", "factor": 4.0, "rope_theta": 100000.0},
        tie_word_embeddings=False)


def cfg_llama3_bias():
    return transformers.LlamaConfig(
        vocab_size=V, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=4, rms_norm_eps=1e-5, attention_bias=True,
        max_position_embeddings=128,
        rope_parameters={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 16,
                         "rope_theta": 10000.0},
        tie_word_embeddings=False)


def cfg_qwen2_yarn():
    return transformers.Qwen2Config(
        vocab_size=V, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6,
        max_position_embeddings=128,
        rope_parameters={"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": 32, "rope_theta": 1000000.0},
        tie_word_embeddings=False)


def cfg_qwen3_tied():
    return transformers.Qwen3Config(
        vocab_size=V, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-6,
        max_position_embeddings=128, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
        tie_word_embeddings=True, pad_token_id=3)


# Old-style config.json files as the real checkpoints ship them (DeepSeek-Coder, Qwen2.5).
OLD_STYLE = {
    "llama_linear": {"rope_scaling": {"type": "linear", "factor": 4.0}, "rope_theta": 100000.0},
    "qwen2_yarn": {"rope_scaling": {"type": "yarn", "factor": 4.0,
                                    "original_max_position_embeddings": 32},
                   "rope_theta": 1000000.0},
}

CASES = {
    "llama_linear": cfg_llama_linear,
    "llama3_bias": cfg_llama3_bias,
    "qwen2_yarn": cfg_qwen2_yarn,
    "qwen3_tied": cfg_qwen3_tied,
}


def randomize(model, gen):
    """Parameters far from the default init so every one of them moves the logits."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(0.3 * torch.randn(p.shape, generator=gen))
            elif "embed_tokens" in name:
                p.copy_(0.5 * torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) / p.shape[-1] ** 0.5)


def make_inputs(gen, pad_id):
    ids = lambda b: torch.randint(0, V, (b, T), generator=gen)
    x = {}
    x["plain_ids"] = ids(2)
    if pad_id is not None:
        x["plain_ids"][0, 4] = pad_id  # the padding row's embedding still feeds the forward pass
    x["pad_ids"] = ids(3)
    lengths = [12, 7, 3]
    x["pad_mask"] = torch.tensor([[1 if t < n else 0 for t in range(T)] for n in lengths])
    x["pad_ids"][x["pad_mask"] == 0] = 0
    x["left_ids"] = ids(2)
    left = [9, 12]
    x["left_mask"] = torch.tensor([[1 if t >= T - n else 0 for t in range(T)] for n in left])
    x["left_ids"][x["left_mask"] == 0] = 0
    # Packed rows: row 0 holds samples of 5, 4, 3 tokens; row 1 samples of 7, 3 and 2 padding.
    x["pack_ids"] = ids(2)
    segs = [[5, 4, 3], [7, 3, 2]]
    seg = torch.zeros(2, T, dtype=torch.long)
    pos = torch.zeros(2, T, dtype=torch.long)
    mask = torch.ones(2, T, dtype=torch.long)
    for b, lens in enumerate(segs):
        s = 0
        for i, n in enumerate(lens):
            seg[b, s:s + n] = i
            pos[b, s:s + n] = torch.arange(n)
            s += n
    mask[1, 10:] = 0
    seg[1, 10:] = 9
    x["pack_ids"][mask == 0] = 0
    x["pack_seg"], x["pack_pos"], x["pack_mask"] = seg, pos, mask
    return x, segs


def loss_of(logits, w, mask):
    keep = mask.bool()
    return (logits[keep] * w[keep]).sum()


def run_case(name, make_cfg, gen):
    folder = os.path.join(out, name)
    model_dir = os.path.join(folder, "model")
    cfg = make_cfg()
    torch.manual_seed(0)
    m = transformers.AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    randomize(m, gen)
    m.save_pretrained(model_dir, safe_serialization=True)
    if name in OLD_STYLE:
        path = os.path.join(model_dir, "config.json")
        c = json.load(open(path))
        c.pop("rope_parameters", None)
        c.pop("dtype", None)
        c["torch_dtype"] = "float32"
        c.update(OLD_STYLE[name])
        json.dump(c, open(path, "w"), indent=2)
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                              attn_implementation="eager")
    model.eval()
    for a, b in zip(m.state_dict().values(), model.state_dict().values()):
        assert torch.equal(a, b)

    x, segs = make_inputs(gen, cfg.pad_token_id)
    ref = {}
    params = dict(model.named_parameters())

    def record(batch, logits, loss):
        model.zero_grad(set_to_none=True)
        loss.backward()
        ref[batch + ".logits"] = logits.detach().float().contiguous()
        for n, p in params.items():
            ref[batch + ".grad." + n] = p.grad.detach().clone().contiguous()

    for batch, ids, mask in [("plain", x["plain_ids"], None), ("pad", x["pad_ids"], x["pad_mask"]),
                             ("left", x["left_ids"], x["left_mask"])]:
        w = torch.randn(ids.shape[0], T, V, generator=gen)
        x["w_" + batch] = w
        m_ = mask if mask is not None else torch.ones_like(ids)
        logits = model(input_ids=ids, attention_mask=mask).logits
        # Left padding: only real tokens are compared, padded ones may be anything.
        logits = logits.masked_fill(~m_.bool()[..., None], 0.0)
        record(batch, logits, loss_of(logits, w, m_))

    # Packed: each sample on its own.
    w = torch.randn(2, T, V, generator=gen)
    x["w_pack"] = w
    logits = torch.zeros(2, T, V)
    pieces = []
    for b, lens in enumerate(segs):
        s = 0
        for i, n in enumerate(lens):
            if b == 1 and i == len(lens) - 1:
                break  # the padded tail
            piece = model(input_ids=x["pack_ids"][b:b + 1, s:s + n]).logits[0]
            pieces.append((b, s, n, piece))
            s += n
    total = sum((piece * w[b, s:s + n]).sum() for b, s, n, piece in pieces)
    for b, s, n, piece in pieces:
        logits[b, s:s + n] = piece.detach()
    model.zero_grad(set_to_none=True)
    total.backward()
    ref["pack.logits"] = logits.contiguous()
    for n_, p in params.items():
        ref["pack.grad." + n_] = p.grad.detach().clone().contiguous()

    # transformers' own bf16 forward: the yardstick for cuset's bf16 tolerance.
    with torch.no_grad():
        mb = transformers.AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16,
                                                               attn_implementation="sdpa")
        ref["plain.logits_bf16"] = mb(input_ids=x["plain_ids"]).logits.float().contiguous()
        lb = mb(input_ids=x["pad_ids"], attention_mask=x["pad_mask"]).logits.float()
        ref["pad.logits_bf16"] = lb.masked_fill(~x["pad_mask"].bool()[..., None], 0.0).contiguous()

    save_file({k: v.contiguous() for k, v in x.items()}, os.path.join(folder, "inputs.safetensors"))
    save_file(ref, os.path.join(folder, "ref.safetensors"))
    print(f"{name}: {len(params)} parameters, logits max |x| {ref['plain.logits'].abs().max():.2f}")


gen = torch.Generator().manual_seed(1234)
for name, make_cfg in CASES.items():
    run_case(name, make_cfg, gen)
with open(os.path.join(out, "cases.txt"), "w") as f:
    f.write("\n".join(CASES) + "\n")

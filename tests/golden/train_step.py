"""Reference optimizer steps for tests/train/test_train_step.cpp, with PyPI transformers +
torch.optim.AdamW on data/tiny-coder (the demo model) in fp32: K steps of two right-padded
micro-batches each (random token ids from a seeded generator, a prompt quarter and the padding
without targets), the loss summed over the step's targets and divided by their count (plain SFT
normalisation), global-norm clipping at 1.0, AdamW with decoupled weight decay on matrices only
(not norms: the same groups as cuset's decays_by_default), eps 1e-3 (see the test). Writes
argv[1]/train_step.safetensors: the inputs, the per-step losses (fp64) and every final weight
under its Hugging Face name."""
import os
import sys

import torch
import transformers
from safetensors.torch import save_file

STEPS, MICRO, ROWS, LR, WD, CLIP = 4, 2, 2, 1e-3, 0.1, 1.0
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
torch.set_num_threads(2)
model = transformers.AutoModelForCausalLM.from_pretrained(
    os.path.join(root, "data/tiny-coder"), dtype=torch.float32, attn_implementation="eager")
model.train()
decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "norm" not in n]
no_decay = [p for n, p in model.named_parameters() if not (p.dim() >= 2 and "norm" not in n)]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=LR, betas=(0.9, 0.95), eps=1e-3)
gen = torch.Generator().manual_seed(1234)
vocab = model.config.vocab_size
tensors, losses = {}, []
for s in range(STEPS):
    batches = []
    for m in range(MICRO):
        T = 48 + 16 * ((s + m) % 3)
        ids = torch.randint(1, vocab, (ROWS, T), generator=gen)
        lengths = [T - 11 * r for r in range(ROWS)]
        mask = torch.zeros(ROWS, T, dtype=torch.long)
        labels = torch.full((ROWS, T), -100, dtype=torch.long)
        for r, L in enumerate(lengths):
            mask[r, :L] = 1
            ids[r, L:] = 0  # pad
            labels[r, L // 4:L - 1] = ids[r, L // 4 + 1:L]  # position t predicts token t + 1
        key = f"s{s}m{m}"
        tensors[key + ".input_ids"], tensors[key + ".attention_mask"], tensors[key + ".labels"] = ids, mask, labels
        batches.append((ids, mask, labels))
    opt.zero_grad(set_to_none=True)
    total = sum(int((lb != -100).sum()) for _, _, lb in batches)
    loss_sum = 0.0
    for ids, mask, labels in batches:
        logits = model(input_ids=ids, attention_mask=mask).logits.float()
        loss = torch.nn.functional.cross_entropy(logits.view(-1, vocab), labels.view(-1), ignore_index=-100,
                                                 reduction="sum")
        (loss / total).backward()
        loss_sum += loss.item()
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    opt.step()
    losses.append(loss_sum / total)
tensors["loss"] = torch.tensor(losses, dtype=torch.float64)
for n, p in model.named_parameters():
    tensors["w." + n] = p.detach().clone()
save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(out, "train_step.safetensors"))
print("losses", losses)

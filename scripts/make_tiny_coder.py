"""Builds the inputs of the embedded demo model (scripts/make-tiny-coder.sh runs this first):

1. a pre-training corpus of permissively licensed C++/CUDA code found on this machine — the
   CCCL headers shipped with the CUDA toolkit (CUB and Thrust, Apache-2.0) — plus the responses
   of the bundled training split data/cuda-sft/train.jsonl (never the eval split), written as
   JSONL {"text": ...} records for `cuset-train`;
2. a byte-level BPE tokenizer with Qwen2's pipeline (NFC, the Qwen split regex, ByteLevel) and
   ChatML special tokens, trained on that corpus with the `tokenizers` library;
3. a randomly initialised Qwen2-architecture model (transformers), saved as a Hugging Face folder.

Usage: make_tiny_coder.py WORK_DIR. Deterministic for a given machine image."""
import glob
import json
import os
import random
import sys

import torch
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import Qwen2Config, Qwen2ForCausalLM

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK = sys.argv[1]
VOCAB = 4096
CHUNK_CHARS = 1400  # about 450 tokens: most records fit a 512-token row whole
QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# A ChatML template of our own (same rendering as Qwen2.5's for system/user/assistant turns).
CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{%- endif %}"
    "{%- for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}")


def corpus_files():
    cuda_inc = os.environ.get("CUDA_INCLUDE", "/usr/local/cuda/include")
    files = []
    for sub in ("cccl/cub", "cccl/thrust", "cub", "thrust"):
        for ext in ("cuh", "h", "hpp", "inl"):
            files += glob.glob(os.path.join(cuda_inc, sub, "**", "*." + ext), recursive=True)
    return sorted(set(os.path.realpath(f) for f in files))


def chunks(text, n):
    """Splits text at line boundaries into pieces of about n characters."""
    out, cur, size = [], [], 0
    for line in text.splitlines(keepends=True):
        cur.append(line)
        size += len(line)
        if size >= n:
            out.append("".join(cur))
            cur, size = [], 0
    if cur and size > 200:
        out.append("".join(cur))
    return out


def main():
    os.makedirs(WORK, exist_ok=True)
    files = corpus_files()
    if not files:
        sys.exit("make_tiny_coder: no CCCL headers found under /usr/local/cuda/include (set CUDA_INCLUDE)")
    records = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            records += chunks(fh.read(), CHUNK_CHARS)
    sft = os.path.join(ROOT, "data/cuda-sft/train.jsonl")
    if not os.path.exists(sft):
        sys.exit(f"make_tiny_coder: {sft} is missing")
    with open(sft, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                records.append(r["prompt"] + "\n\n" + r["response"])
    random.Random(0).shuffle(records)
    with open(os.path.join(WORK, "corpus.jsonl"), "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps({"text": r}) + "\n")
    print(f"corpus: {len(files)} header files + bundled train split -> {len(records)} records, "
          f"{sum(map(len, records)) / 1e6:.1f} M characters", flush=True)

    tok = Tokenizer(models.BPE(ignore_merges=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=VOCAB, min_frequency=2, special_tokens=SPECIALS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(records, trainer=trainer)
    model_dir = os.path.join(WORK, "init")
    os.makedirs(model_dir, exist_ok=True)
    tok.save(os.path.join(model_dir, "tokenizer.json"))
    with open(os.path.join(model_dir, "tokenizer_config.json"), "w") as fh:
        json.dump({"tokenizer_class": "Qwen2Tokenizer", "bos_token": None, "eos_token": "<|im_end|>",
                   "pad_token": "<|endoftext|>", "unk_token": None, "model_max_length": 2048,
                   "add_bos_token": False, "chat_template": CHAT_TEMPLATE}, fh, indent=2)
    vocab = tok.get_vocab_size()
    print(f"tokenizer: {vocab} tokens", flush=True)

    torch.manual_seed(0)
    cfg = Qwen2Config(vocab_size=vocab, hidden_size=256, intermediate_size=768, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                      rope_theta=10000.0, rms_norm_eps=1e-6, tie_word_embeddings=True,
                      bos_token_id=None, eos_token_id=tok.token_to_id("<|im_end|>"),
                      pad_token_id=tok.token_to_id("<|endoftext|>"))
    model = Qwen2ForCausalLM(cfg).to(torch.float32)
    model.save_pretrained(model_dir, safe_serialization=True)
    n = sum(p.numel() for p in model.parameters())
    print(f"model: Qwen2, {n / 1e6:.2f} M parameters -> {model_dir}", flush=True)


if __name__ == "__main__":
    main()

"""A very small Qwen2 model and tokenizer for the trainer tests, made with the reference
libraries: a byte-level BPE tokenizer (Qwen2 pipeline, ChatML special tokens) trained with
`tokenizers` on tests/fixtures/mini_sft.jsonl, and a randomly initialised Qwen2ForCausalLM
(transformers, seed 0) saved as a Hugging Face folder in argv[1]/model."""
import json
import os
import sys

import torch
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import Qwen2Config, Qwen2ForCausalLM

out = os.path.join(sys.argv[1], "model")
os.makedirs(out, exist_ok=True)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
texts = []
with open(os.path.join(root, "tests/fixtures/mini_sft.jsonl")) as f:
    for line in f:
        r = json.loads(line)
        if "messages" in r:
            texts += [m["content"] for m in r["messages"]]
        else:
            texts += [r["prompt"], r["response"]]
split = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
         r"|\s*[\r\n]+|\s+(?!\S)|\s+")
tok = Tokenizer(models.BPE())
tok.normalizer = normalizers.NFC()
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(split), behavior="isolated", invert=False),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=False)])
tok.decoder = decoders.ByteLevel()
tok.post_processor = processors.ByteLevel(trim_offsets=False)
tok.train_from_iterator(texts * 4, trainers.BpeTrainer(
    vocab_size=400, min_frequency=2, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
    initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
tok.save(os.path.join(out, "tokenizer.json"))
template = ("{%- for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endfor %}"
            "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}")
with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
    json.dump({"tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
               "bos_token": None, "chat_template": template}, f)
torch.manual_seed(0)
cfg = Qwen2Config(vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=1024,
                  tie_word_embeddings=True, eos_token_id=tok.token_to_id("<|im_end|>"),
                  pad_token_id=tok.token_to_id("<|endoftext|>"))
Qwen2ForCausalLM(cfg).save_pretrained(out, safe_serialization=True)
print("wrote", out)

"""Reference fixture for tests/data/test_data.cpp: a small byte-level BPE tokenizer in the Qwen2.5
layout (ChatML special tokens, Qwen2's pre-tokenizer split, byte-level pieces), trained with
Hugging Face `tokenizers` on CUDA text, and the ids that `transformers`' apply_chat_template
gives for one conversation with that tokenizer.

Writes into argv[1]:
  tokenizer/tokenizer.json, tokenizer/tokenizer_config.json   the tokenizer (chatml template)
  sample.json     {"messages": [...], "ids": [...]}  (apply_chat_template, tokenize=True)
  tools/tokenizer.json, tools/tokenizer_config.json   the same tokenizer with Qwen2.5's real template
                  (PyPI trl's chat_templates/qwen2_5.jinja), which renders tools
  tools_sample.json  {"line": a JSONL record with "tools", "ids": apply_chat_template(messages,
                  tools=...), "roles"/"trainable": per token, by the rule (response = overlaps the
                  assistant content, trainable = that and the <|im_end|> after it; prompt = overlaps
                  the user content; template otherwise), "prompt_ids": the generation prompt of the
                  messages before the answer, with the tools}
"""
import importlib.util
import json
import os
import sys
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

out = Path(sys.argv[1])
tok_dir = out / "tokenizer"
tok_dir.mkdir(parents=True, exist_ok=True)

# Qwen2's pre-tokenizer regex (tokenizer.json of Qwen2.5-Coder).
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

PROGRAM = """#include <cstdio>
__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

int main() {
    const int n = 1000;
    float* d = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    int block = 128, grid = (n + block - 1) / block;
    scale<<<grid, block>>>(d, 2.0f, n);
    cudaDeviceSynchronize();
    cudaFree(d);
    return 0;
}
"""
MESSAGES = [
    {"role": "system", "content": "You write correct CUDA."},
    {"role": "user", "content": "Write a kernel `__global__ void scale(float* x, float a, int n)` "
                                "that multiplies x by a, and launch it with 128 threads per block."},
    {"role": "assistant", "content": "Each thread scales one element; the grid rounds up.\n\n```cuda\n"
                                     + PROGRAM + "```\n"},
]

tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
])
tok.decoder = decoders.ByteLevel()
trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=SPECIAL, show_progress=False,
                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
corpus = [PROGRAM, MESSAGES[1]["content"], MESSAGES[2]["content"],
          "Use shared memory and __syncthreads() between the phases of a reduction."] * 4
tok.train_from_iterator(corpus, trainer=trainer)
tok.save(str(tok_dir / "tokenizer.json"))

CHAT_TEMPLATE = ("{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
                 "message['content'] + '<|im_end|>' + '\\n' }}{%- endfor %}"
                 "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}")
config = {
    "tokenizer_class": "Qwen2Tokenizer",
    "bos_token": None,
    "eos_token": "<|im_end|>",
    "pad_token": "<|endoftext|>",
    "chat_template": CHAT_TEMPLATE,
    "model_max_length": 4096,
}
(tok_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")

fast = PreTrainedTokenizerFast(tokenizer_file=str(tok_dir / "tokenizer.json"),
                               eos_token="<|im_end|>", pad_token="<|endoftext|>")
fast.chat_template = CHAT_TEMPLATE
ids = fast.apply_chat_template(MESSAGES, tokenize=True, add_generation_prompt=False)
if isinstance(ids, dict) or hasattr(ids, "keys"):
    ids = ids["input_ids"]
(out / "sample.json").write_text(json.dumps({"messages": MESSAGES, "ids": list(ids)}) + "\n")
print(f"data golden: vocab {tok.get_vocab_size()}, {len(ids)} ids -> {out}")

# ---------------------------------------------------------------- a record with tools
spec = importlib.util.find_spec("trl")  # located, not imported (installed without its dependencies)
if spec is None or not spec.submodule_search_locations:
    sys.exit("data.py: PyPI's trl is not installed (scripts/setup.sh installs it)")
QWEN25 = (Path(list(spec.submodule_search_locations)[0]) / "chat_templates" / "qwen2_5.jinja").read_text(encoding="utf-8")
TOOLS = [{"type": "function", "function": {
    "name": "compile_cuda", "description": "Compile a .cu file with nvcc.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "arch": {"type": "string", "enum": ["sm_80", "sm_90"]}},
                   "required": ["path"]}}}]
TOOL_MESSAGES = [{"role": "user", "content": "Compile scale.cu for sm_90."},
                 {"role": "assistant", "content": "Run `nvcc -arch=sm_90 scale.cu`; the kernel needs no changes."}]
tools_dir = out / "tools"
tools_dir.mkdir(parents=True, exist_ok=True)
tok.save(str(tools_dir / "tokenizer.json"))
(tools_dir / "tokenizer_config.json").write_text(json.dumps(dict(config, chat_template=QWEN25), indent=2) + "\n")
hf = PreTrainedTokenizerFast.from_pretrained(str(tools_dir))
text = hf.apply_chat_template(TOOL_MESSAGES, tools=TOOLS, tokenize=False)
tool_ids = hf.apply_chat_template(TOOL_MESSAGES, tools=TOOLS, tokenize=True, return_dict=True)["input_ids"]
enc = tok.encode(text, add_special_tokens=False)
assert list(tool_ids) == enc.ids
assert '"name": "compile_cuda"' in text
answer = TOOL_MESSAGES[1]["content"]
a = text.rindex(answer + "<|im_end|>")
u = text.rindex(TOOL_MESSAGES[0]["content"])
roles, trainable = [], []
for b, e in enc.offsets:
    over = lambda lo, hi: b < e and max(b, lo) < min(e, hi)
    roles.append("response" if over(a, a + len(answer)) else "prompt" if over(u, u + len(TOOL_MESSAGES[0]["content"]))
                 else "template")
    trainable.append(1 if over(a, a + len(answer) + len("<|im_end|>")) else 0)
prompt_ids = hf.apply_chat_template(TOOL_MESSAGES[:1], tools=TOOLS, tokenize=True, return_dict=True,
                                    add_generation_prompt=True)["input_ids"]
line = json.dumps({"id": "tools-1", "messages": TOOL_MESSAGES, "tools": TOOLS}, ensure_ascii=False)
(out / "tools_sample.json").write_text(json.dumps({"line": line, "ids": list(tool_ids), "roles": roles,
                                                    "trainable": trainable, "prompt_ids": list(prompt_ids)}) + "\n")
print(f"data golden: a record with tools, {len(tool_ids)} ids, {sum(trainable)} trainable")

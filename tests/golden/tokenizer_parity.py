#!/usr/bin/env python3
"""Reference fixtures for the tokenizer and chat-format tests (tests/text/test_tokenizer.cpp).

Trains small byte-level BPE tokenizers with the Hugging Face `tokenizers` library, using the exact
pipelines of the model families cuset supports, and writes, for a corpus of texts, the ids, byte
offsets and decodings that `tokenizers` produces. Also trains a SentencePiece model with the
`sentencepiece` library, renders conversations with transformers' apply_chat_template and the
families' real chat templates, and records Python's UTF-8 repair. Usage: tokenizer_parity.py OUT_DIR

Offsets: `tokenizers` returns character offsets in Python; every offset is converted to a byte
offset of the UTF-8 text as len(text[:c].encode()), which is exact because character offsets name
character boundaries. (The Python binding converts to characters before the post-processor runs,
so ByteLevel's offset trimming moves offsets by characters; cuset reproduces that.)
"""
import glob
import json
import os
import random
import sys
import unicodedata

import sentencepiece as spm
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

QWEN_REGEX = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
LLAMA3_REGEX = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
# Seed-Coder's tokenizer.json regex (as llama.cpp's llama-vocab.cpp quotes it for SEED_CODER).
SEED_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\r\n]+|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"

DS_BOS, DS_EOS = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"
SEED_BOS, SEED_EOS = "<[begin▁of▁sentence]>", "<[end▁of▁sentence]>"

# ---------------------------------------------------------------- chat templates
# Qwen2.5 / Qwen2.5-Coder-Instruct tokenizer_config.json chat_template.
QWEN25_TEMPLATE = "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- messages[0]['content'] }}\n    {%- else %}\n        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}\n    {%- endif %}\n    {{- \"\\n\\n# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n    {%- for tool in tools %}\n        {{- \"\\n\" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}}\\n</tool_call><|im_end|>\\n\" }}\n{%- else %}\n    {%- if messages[0]['role'] == 'system' %}\n        {{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}\n    {%- else %}\n        {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- for message in messages %}\n    {%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or (message.role == \"assistant\" and not message.tool_calls) %}\n        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}\n    {%- elif message.role == \"assistant\" %}\n        {{- '<|im_start|>' + message.role }}\n        {%- if message.content %}\n            {{- '\\n' + message.content }}\n        {%- endif %}\n        {%- for tool_call in message.tool_calls %}\n            {%- if tool_call.function is defined %}\n                {%- set tool_call = tool_call.function %}\n            {%- endif %}\n            {{- '\\n<tool_call>\\n{\"name\": \"' }}\n            {{- tool_call.name }}\n            {{- '\", \"arguments\": ' }}\n            {{- tool_call.arguments | tojson }}\n            {{- '}\\n</tool_call>' }}\n        {%- endfor %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"tool\" %}\n        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != \"tool\") %}\n            {{- '<|im_start|>user' }}\n        {%- endif %}\n        {{- '\\n<tool_response>\\n' }}\n        {{- message.content }}\n        {{- '\\n</tool_response>' }}\n        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n            {{- '<|im_end|>\\n' }}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}\n"

# Qwen3 tokenizer_config.json chat_template.
QWEN3_TEMPLATE = """{%- if tools %}
    {{- '<|im_start|>system\\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\\n\\n' }}
    {%- endif %}
    {{- "# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>" }}
    {%- for tool in tools %}
        {{- "\\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\"name\\": <function-name>, \\"arguments\\": <args-json-object>}\\n</tool_call><|im_end|>\\n" }}
{%- else %}
    {%- if messages[0].role == 'system' %}
        {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
    {%- endif %}
{%- endif %}
{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}
{%- for message in messages[::-1] %}
    {%- set index = (messages|length - 1) - loop.index0 %}
    {%- if ns.multi_step_tool and message.role == "user" and message.content is string and not(message.content.startswith('<tool_response>') and message.content.endswith('</tool_response>')) %}
        {%- set ns.multi_step_tool = false %}
        {%- set ns.last_query_index = index %}
    {%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.content is string %}
        {%- set content = message.content %}
    {%- else %}
        {%- set content = '' %}
    {%- endif %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) %}
        {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>' + '\\n' }}
    {%- elif message.role == "assistant" %}
        {%- set reasoning_content = '' %}
        {%- if message.reasoning_content is string %}
            {%- set reasoning_content = message.reasoning_content %}
        {%- else %}
            {%- if '</think>' in content %}
                {%- set reasoning_content = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}
                {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
            {%- endif %}
        {%- endif %}
        {%- if loop.index0 > ns.last_query_index %}
            {%- if loop.last or (not loop.last and reasoning_content) %}
                {{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}
            {%- else %}
                {{- '<|im_start|>' + message.role + '\\n' + content }}
            {%- endif %}
        {%- else %}
            {{- '<|im_start|>' + message.role + '\\n' + content }}
        {%- endif %}
        {%- if message.tool_calls %}
            {%- for tool_call in message.tool_calls %}
                {%- if (loop.first and content) or (not loop.first) %}
                    {{- '\\n' }}
                {%- endif %}
                {%- if tool_call.function %}
                    {%- set tool_call = tool_call.function %}
                {%- endif %}
                {{- '<tool_call>\\n{"name": "' }}
                {{- tool_call.name }}
                {{- '", "arguments": ' }}
                {%- if tool_call.arguments is string %}
                    {{- tool_call.arguments }}
                {%- else %}
                    {{- tool_call.arguments | tojson }}
                {%- endif %}
                {{- '}\\n</tool_call>' }}
            {%- endfor %}
        {%- endif %}
        {{- '<|im_end|>\\n' }}
    {%- elif message.role == "tool" %}
        {%- if loop.first or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\\n<tool_response>\\n' }}
        {{- content }}
        {{- '\\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
    {%- if enable_thinking is defined and enable_thinking is false %}
        {{- '<think>\\n\\n</think>\\n\\n' }}
    {%- endif %}
{%- endif %}"""

# deepseek-coder-6.7b-instruct / 33b-instruct tokenizer_config.json chat_template.
DEEPSEEK_TEMPLATE = "{% if not add_generation_prompt is defined %}\n{% set add_generation_prompt = false %}\n{% endif %}\n{%- set ns = namespace(found=false) -%}\n{%- for message in messages -%}\n    {%- if message['role'] == 'system' -%}\n        {%- set ns.found = true -%}\n    {%- endif -%}\n{%- endfor -%}\n{{bos_token}}{%- if not ns.found -%}\n{{'You are an AI programming assistant, utilizing the Deepseek Coder model, developed by Deepseek Company, and you only answer questions related to computer science. For politically sensitive questions, security and privacy issues, and other non-computer science questions, you will refuse to answer\\n'}}\n{%- endif %}\n{%- for message in messages %}\n    {%- if message['role'] == 'system' %}\n{{ message['content'] }}\n    {%- else %}\n        {%- if message['role'] == 'user' %}\n{{'### Instruction:\\n' + message['content'] + '\\n'}}\n        {%- else %}\n{{'### Response:\\n' + message['content'] + '\\n<|EOT|>\\n'}}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{% if add_generation_prompt %}\n{{'### Response:'}}\n{% endif %}"

# Seed-Coder-8B-Instruct's chat_template (tests/fixtures/chat_templates/README.md names its source):
# a default system turn unless the first message is the system's, then bos + role + "\n" +
# content|trim + eos per turn.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "chat_templates",
                       "seed-coder-8b-instruct.jinja"), encoding="utf-8") as _f:
    SEED_TEMPLATE = _f.read()

# ---------------------------------------------------------------- corpus

HANDWRITTEN_CUDA = r'''
#include <cuda_runtime.h>
#include <cstdio>

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void reduce_sum(const float* in, float* out, int n) {
    extern __shared__ float smem[];
    unsigned tid = threadIdx.x;
    float v = 0.f;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x) v += in[i];
    smem[tid] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 32; s >>= 1) {
        if (tid < s) smem[tid] += smem[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        v = smem[tid] + smem[tid + 32];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        if (tid == 0) atomicAdd(out, v);
    }
}

int main() {
    const int n = 1 << 20;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    dim3 block(256);
    int blocks = (n + 255) / 256;
    saxpy<256><<<blocks, block>>>(n, 2.0f, x, y);
    reduce_sum<<<blocks, 256, 256 * sizeof(float), 0>>>(x, y, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(err)); return 1; }
    cudaDeviceSynchronize();
    return 0;
}
'''

HANDWRITTEN = [
    "", " ", "  ", "\n", "\n\n\n", "\t", "a", "Hello world", " Hello  world ", "hello\n", "\r\n\r\n",
    "I'm sure you're right, they'd've known. It's HIS; WE'LL SEE. 'S 'T 'RE 'VE 'M 'LL 'D",
    "ſ'ſ 'ſ K'K", "don't DON'T Don'T", "'''quoted'''",
    "x = 1234567890 + 3.14159e-10; // numbers 007 1,000,000",
    "fullwidth ３４５６ roman ⅫⅣ fractions ½¾ arabic-indic ٠١٢٣ devanagari ०१२",
    "中文字符测试，你好世界！机器学习与深度学习。", "日本語のテキストとカタカナ、ひらがな。",
    "한국어 텍스트입니다. 안녕하세요", "混合 mixed 文本 text 123 数字",
    "emoji 😀👍🏽 👨‍👩‍👧‍👦 🇺🇸🇫🇷 ❤️ ✨🚀", "🤖" * 7,
    "combining e\u0301 E\u0301 a\u030A A\u030A o\u0308 u\u0308", "precomposed é Å ö ü",
    "reorder e\u0323\u0302 vs e\u0302\u0323 vs \u1ec7", "hangul jamo \u1100\u1161\u11a8 \u1112\u1161\u11ab",
    "singletons \u2126 \u212b \u0344 \u0958 \u2000 \ufb01 \u0340\u0341", "marks first \u0301\u0302abc",
    "a\u0308\u0304\u0301 Z\u0327\u030C \u0915\u093C \u0928\u093C",
    "spaces\u00a0nbsp\u2003em\u3000ideo\u2028ls\u2029ps\u0085nel\u180emvs end",
    "trailing spaces   \n   leading", "    indented\n        more\n\n\n\n    back",
    "tabs\t\tand\tspaces \t \t mixed", "\n\n  \n \n", "    ", " \n", "x\n \n \ny",
    "a" * 300, "ab" * 150, "z" * 1200, "🙂" * 40, "中" * 100, " " * 100, "\n" * 50, "-" * 80, "=" * 81,
    "#" * 30 + " heading", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "<|endoftext|>",
    "partial <|im_ <|im_end <|im_end|><|im_end|> <|endoftext|>x", "<think>\n\n</think>\n\n", "<tool_call>{}</tool_call>",
    DS_BOS + "### Instruction:\nhi\n### Response:\nok\n<|EOT|>\n", "schön café naïve ö õ ÿ ø", "<｜fim▁begin｜>x<｜fim▁hole｜>y<｜fim▁end｜>",
    SEED_BOS + "user\nhi" + SEED_EOS, "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "a <mask> b<mask>c  <mask>  d", "x [RS]   y [RS]z", "hello world hellohello xhello hello_x hello", "words.word,word;word: 12 3",
    "```cuda\n__global__ void k(float* a) { a[threadIdx.x] = 0; }\n```\n", "k<<<grid, block, smem, stream>>>(a, b);",
    "std::vector<std::pair<int, float>> v; template <typename T> T max(T a, T b) { return a > b ? a : b; }",
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n    pass\n",
    "| col | col2 |\n|-----|------|\n| a   | b    |\n\n> quote\n\n- item\n  - nested\n\n[link](http://example.com)",
    "mixed\r\nline\rendings\n\r", "\u200b\u200c\u200d zero width \ufeff bom", "math 𝔸𝕓𝒸 ∑∫∂ √2 ≤ ≥ ≠ ∞",
    "control \x01\x02\x07\x1b[0m escape", "ascii ~!@#$%^&*()_+`-={}|[]\\:\";'<>?,./",
    "Ⓐⓑ circled", "word\u00adsoft\u00adhyphen", "ΑΒΓ αβγ Ωmega Ωhm", "кириллица Текст", "עברית ערבית عربي",
]


def read_files(patterns, limit):
    out, total = [], 0
    for pat in patterns:
        for path in sorted(glob.glob(pat, recursive=True)):
            if total >= limit:
                return out
            try:
                with open(path, "rb") as f:
                    text = f.read(200_000).decode("utf-8", errors="replace")
            except OSError:
                continue
            if not text.strip():
                continue
            out.append(text)
            total += len(text)
    return out


def corpus_documents(scale=1.0):
    """Code and prose found on a Debian build machine (CUDA, C++, Python, Markdown) plus the
    handwritten samples. Deterministic for a given machine."""
    venv = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".venv")
    site = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
    site = site[0] if site else "/nonexistent"
    docs = []
    docs += read_files(["/usr/local/cuda/include/cccl/cub/**/*.cuh", "/usr/local/cuda/include/**/*.h"], int(700_000 * scale))
    docs += read_files(["/usr/include/c++/*/bits/*.h", "/usr/include/c++/*/*"], int(500_000 * scale))
    docs += read_files([os.path.join(site, "transformers", "models", "*", "modeling_*.py"),
                        os.path.join(site, "torch", "nn", "**", "*.py")], int(600_000 * scale))
    docs += read_files([os.path.join(site, "**", "*.md"), "/usr/share/doc/**/*.md"], int(200_000 * scale))
    docs.append(HANDWRITTEN_CUDA)
    docs.append(HANDWRITTEN_CUDA.replace("\n", "\r\n"))
    docs += [t for t in HANDWRITTEN if t]
    return docs


def unicode_sweep_texts():
    """Every BMP code point (surrogates excluded) and samples of the other planes, each seen
    alone, after a letter, doubled and next to digits and spaces."""
    texts = []
    ranges = [(0x0000, 0xD800), (0xE000, 0x10000), (0x10000, 0x10800), (0x1D400, 0x1D800), (0x1F000, 0x1FB00),
              (0x20000, 0x20200), (0xE0000, 0xE0080)]
    for lo, hi in ranges:
        for start in range(lo, hi, 256):
            parts = []
            for c in range(start, min(start + 256, hi)):
                ch = chr(c)
                parts.append("a" + ch + " " + ch + ch + "1\n")
            texts.append("".join(parts))
    return texts


# ---------------------------------------------------------------- pipelines

def qwen_added_tokens():
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
                "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
                "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
    plain = ["<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
             "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
    return ([AddedToken(t, special=True, normalized=False) for t in specials] +
            [AddedToken(t, special=False, normalized=False) for t in plain])


def build(name, vocab_size, docs, min_frequency=2):
    """A trained tokenizer with the named family's pipeline, plus its tokenizer_config.json."""
    initial = pre_tokenizers.ByteLevel.alphabet()
    config = {}
    if name == "qwen":
        tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(QWEN_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
        tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
        added = qwen_added_tokens()
        config = {"bos_token": None, "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"}
    elif name == "deepseek":
        tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
        tok.normalizer = normalizers.Sequence([])
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex("[\r\n]"), behavior="isolated", invert=False),
            pre_tokenizers.Split(Regex("\\s?\\p{L}+"), behavior="isolated", invert=False),
            pre_tokenizers.Split(Regex("\\s?\\p{P}+"), behavior="isolated", invert=False),
            pre_tokenizers.Split(Regex("[一-龥ࠀ-一가-퟿]+"), behavior="isolated", invert=False),
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
        tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
        added = ([AddedToken(c, special=False, normalized=True) for c in "õ÷ÁýÀÿøúþüùöû"] +
                 [AddedToken(DS_BOS, special=True, normalized=True), AddedToken(DS_EOS, special=True, normalized=True),
                  AddedToken("<｜fim▁hole｜>", special=False, normalized=True),
                  AddedToken("<｜fim▁begin｜>", special=False, normalized=True),
                  AddedToken("<｜fim▁end｜>", special=False, normalized=True),
                  AddedToken("<pad>", special=False, normalized=True),
                  AddedToken("<|User|>", special=False, normalized=True),
                  AddedToken("<|Assistant|>", special=False, normalized=True),
                  AddedToken("<|EOT|>", special=True, normalized=False)])
        config = {"bos_token": {"content": DS_BOS, "__type": "AddedToken"}, "eos_token": "<|EOT|>", "pad_token": DS_EOS}
    elif name == "seed":
        tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(SEED_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
        tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
        added = [AddedToken(t, special=True, normalized=False) for t in
                 [SEED_BOS, SEED_EOS, "<[PAD▁TOKEN]>", "<[SEP▁TOKEN]>", "<[fim-prefix]>", "<[fim-suffix]>", "<[fim-middle]>"]]
        config = {"bos_token": SEED_BOS, "eos_token": SEED_EOS, "pad_token": "<[PAD▁TOKEN]>"}
    elif name == "llama3":
        tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
        tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
        added = [AddedToken(t, special=True, normalized=False) for t in
                 ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|start_header_id|>",
                  "<|end_header_id|>", "<|eot_id|>"]]
        config = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}
    elif name == "gpt2":
        # GPT-2/RoBERTa style: ByteLevel with its own regex and prefix space, trimmed offsets,
        # and added tokens with lstrip / rstrip / single_word.
        tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
        added = [AddedToken("<mask>", special=True, normalized=False, lstrip=True),
                 AddedToken("[RS]", special=False, normalized=False, rstrip=True),
                 AddedToken("hello", special=False, normalized=True, single_word=True),
                 AddedToken("<|endoftext|>", special=True, normalized=False)]
        config = {"eos_token": "<|endoftext|>"}
    elif name == "prefix":
        # ByteLevel without its regex but with the prefix space, contiguous Digits before it, and a
        # Split that runs on the byte-level text after it (its "Ġ" is the space byte).
        tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(r"\n+"), behavior="isolated"),
            pre_tokenizers.Digits(individual_digits=False),
            pre_tokenizers.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=False),
            pre_tokenizers.Split(Regex("Ġ+"), behavior="merged_with_next")])
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=False)
        added = [AddedToken("<|endoftext|>", special=True, normalized=False)]
        config = {"eos_token": "<|endoftext|>"}
    elif name == "bytefallback":
        # Char-level BPE with byte fallback, NFC, and Split with every behaviour and invert.
        tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=True))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(" ", behavior="merged_with_next"),
            pre_tokenizers.Split(Regex(r"\p{N}+"), behavior="contiguous"),
            pre_tokenizers.Split(Regex(r"[.,;:]"), behavior="merged_with_previous"),
            pre_tokenizers.Split(Regex(r"\t+"), behavior="removed"),
            pre_tokenizers.Split(Regex(r"[a-z]+"), behavior="isolated", invert=True)])
        tok.decoder = decoders.Sequence([decoders.ByteFallback(), decoders.Fuse()])
        added = [AddedToken("<s>", special=True, normalized=False), AddedToken("</s>", special=True, normalized=False)]
        config = {"bos_token": "<s>", "eos_token": "</s>"}
        initial = []
    else:
        raise ValueError(name)

    extra = {"limit_alphabet": 300} if name == "bytefallback" else {}
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=False,
                                  initial_alphabet=initial, special_tokens=[], **extra)
    tok.train_from_iterator(docs, trainer=trainer)
    tok.add_tokens(added)

    spec = json.loads(tok.to_str())
    if name == "bytefallback":  # the <0xXX> tokens byte_fallback needs
        vocab = spec["model"]["vocab"]
        nxt = max(vocab.values()) + 1
        for b in range(256):
            key = "<0x%02X>" % b
            if key not in vocab:
                vocab[key] = nxt
                nxt += 1
        for a in spec["added_tokens"]:
            a["id"] = nxt
            nxt += 1
    if name == "llama3":
        spec["model"]["ignore_merges"] = True
    tok = Tokenizer.from_str(json.dumps(spec))
    # Post-processors that name added tokens by id can only be set now.
    if name == "deepseek":
        bos = tok.token_to_id(DS_BOS)
        tok.post_processor = processors.TemplateProcessing(single=DS_BOS + " $A", pair=DS_BOS + " $A " + DS_BOS + " $B",
                                                           special_tokens=[(DS_BOS, bos)])
    elif name == "llama3":
        bos = tok.token_to_id("<|begin_of_text|>")
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
            processors.TemplateProcessing(single="<|begin_of_text|> $A", pair="<|begin_of_text|> $A <|begin_of_text|> $B",
                                          special_tokens=[("<|begin_of_text|>", bos)])])
    elif name == "bytefallback":
        bos = tok.token_to_id("<s>")
        tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> $B </s>",
                                                           special_tokens=[("<s>", bos), ("</s>", tok.token_to_id("</s>"))])
    return tok, config


def byte_offsets(text, offsets):
    """Character offsets of `tokenizers` (Python) -> byte offsets of the UTF-8 text."""
    cum = [0]
    for ch in text:
        cum.append(cum[-1] + len(ch.encode("utf-8")))
    return [[cum[a], cum[b]] for a, b in offsets]


def flat(pairs):
    return [x for p in pairs for x in p]


def case(tok, text, full=True):
    """Reference encoding of `text`. Offsets are flattened [b0, e0, b1, e1, ...]; "decoded" is
    stored only when decode(ids) differs from the text."""
    plain = tok.encode(text, add_special_tokens=False)
    c = {"text": text, "ids": plain.ids, "offsets": flat(byte_offsets(text, plain.offsets))}
    decoded = tok.decode(plain.ids, skip_special_tokens=False)
    if decoded != text:
        c["decoded"] = decoded
    if full:
        special = tok.encode(text, add_special_tokens=True)
        c["ids_special"] = special.ids
        c["offsets_special"] = flat(byte_offsets(text, special.offsets))
        c["decoded_skip"] = tok.decode(special.ids, skip_special_tokens=True)
    return c


def fixture_texts(docs, rng):
    texts = list(HANDWRITTEN)
    for d in docs:
        if len(d) < 50:
            continue
        for _ in range(2):
            n = rng.choice([64, 200, 800, 3000])
            a = rng.randrange(0, max(1, len(d) - n))
            texts.append(d[a:a + n])
    texts.append(HANDWRITTEN_CUDA)
    texts.append(HANDWRITTEN_CUDA.replace("\n", "\r\n"))
    return texts


# ---------------------------------------------------------------- chat fixtures

CONVERSATIONS = [
    {"id": "single", "messages": [{"role": "user", "content": "Write a CUDA kernel that adds two vectors."},
                                  {"role": "assistant", "content": "```cuda\n__global__ void add(const float* a, const float* b, float* c, int n) {\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) c[i] = a[i] + b[i];\n}\n```\nLaunch it with `add<<<(n + 255) / 256, 256>>>(a, b, c, n);`."}]},
    {"id": "system", "messages": [{"role": "system", "content": "You are a CUDA expert."},
                                  {"role": "user", "content": "What is a warp?"},
                                  {"role": "assistant", "content": "A warp is 32 threads that execute together."}]},
    {"id": "multi", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
                                 {"role": "user", "content": "Explain __syncthreads()."},
                                 {"role": "assistant", "content": "It is a block-wide barrier:\n\n    __syncthreads();\n"}]},
    {"id": "newlines", "messages": [{"role": "user", "content": "\n\nleading and trailing newlines\n\n"},
                                    {"role": "assistant", "content": "\nanswer starts with a newline}\n"}]},
    {"id": "unicode", "messages": [{"role": "user", "content": "中文问题：什么是共享内存？ 🚀"},
                                   {"role": "assistant", "content": "共享内存（shared memory）是块内线程共享的片上存储。 naïve café e\u0301"}]},
    {"id": "spaces", "messages": [{"role": "user", "content": "  two spaces"},
                                  {"role": "assistant", "content": "    int x = 0;    \n\t}"}]},
    {"id": "reasoning", "messages": [{"role": "user", "content": "Is 7 prime?"},
                                     {"role": "assistant", "content": "<think>\nIt has no divisors but 1 and 7.\n</think>\n\nYes."},
                                     {"role": "user", "content": "And 9?"},
                                     {"role": "assistant", "content": "<think>\n9 = 3 * 3.\n\n</think>\n\n\nNo, 9 = 3 * 3."}]},
]


def qwen3_pieces(c, think):
    """(char offset in the content, text) of what Qwen3's template renders of an assistant
    content: the reasoning before '</think>' (only in think mode) and the answer after it."""
    if "</think>" not in c:
        return [(0, c)] if not think else [(len(c) - len(c.lstrip("\n")), c.lstrip("\n"))]
    before = c.split("</think>")[0].rstrip("\n")
    k = before.rfind("<think>")
    rs = k + 7 if k >= 0 else 0
    reasoning = before[rs:].lstrip("\n")
    rs += len(before[rs:]) - len(reasoning)
    a = c.rfind("</think>") + 8
    answer = c[a:].lstrip("\n")
    a += len(c[a:]) - len(answer)
    out = [(rs, reasoning)] if think and reasoning else []
    return out + [(a, answer)]


def chat_roles(fmt, rendered, messages, offsets, eos_text):
    """Expected role per token from the reference offsets: a token overlapping an assistant
    content is response (trainable); else one overlapping an end-of-turn range is trainable
    template; else one overlapping a user/system content is prompt/system; else template."""
    last_user = max([i for i, m in enumerate(messages) if m["role"] == "user"], default=len(messages) - 1)
    eot = {"chatml": "<|im_end|>", "qwen3": "<|im_end|>", "deepseek-coder": "\n<|EOT|>", "seed-coder": eos_text}[fmt]
    cum = [0]
    for ch in rendered:
        cum.append(cum[-1] + len(ch.encode("utf-8")))
    ranges, trained, cursor = [], [], 0  # ranges: (byte begin, byte end, message, content byte offset)
    for i, m in enumerate(messages):
        c = m["content"]
        pieces = [(0, c)]
        if fmt == "seed-coder":  # message['content'] | trim
            pieces = [(len(c) - len(c.lstrip()), c.strip())]
        if fmt == "qwen3" and m["role"] == "assistant":
            think = i > last_user and (i == len(messages) - 1 or bool(qwen3_pieces(c, True)[:-1]))
            pieces = qwen3_pieces(c, think)
            if think and len(pieces) == 2:  # "<think>\n" and "\n</think>\n\n" around the reasoning are trainable
                r = rendered.find("<think>\n" + pieces[0][1], cursor)
                trained.append((cum[r], cum[r + 8]))
                e = r + 8 + len(pieces[0][1])
                trained.append((cum[e], cum[e + len("\n</think>\n\n")]))
        end = None
        for off, text in pieces:
            if not text:
                continue
            pos = rendered.find(text, cursor)
            assert pos >= 0, (fmt, i, text)
            ranges.append((cum[pos], cum[pos + len(text)], i, len(c[:off].encode("utf-8"))))
            cursor = end = pos + len(text)
        if m["role"] == "assistant":
            assert end is not None and rendered.startswith(eot, end), (fmt, i)
            trained.append((cum[end], cum[end + len(eot)]))
    roles, trainable, message, spans = [], [], [], []
    for (tb, te) in offsets:
        role, msg, span, best = "template", -1, [-1, -1], 0
        if te > tb:
            for (rb, re_, i, coff) in ranges:
                ob, oe = max(tb, rb), min(te, re_)
                if oe <= ob:
                    continue
                rank = 4 if messages[i]["role"] == "assistant" else 2
                if rank > best:
                    best, msg = rank, i
                    span = [coff + ob - rb, coff + oe - rb]
                    role = "response" if rank == 4 else ("system" if messages[i]["role"] == "system" else "prompt")
                elif rank == best and msg == i:
                    span[1] = coff + oe - rb
            if best < 3 and any(min(te, b) > max(tb, a) for a, b in trained):
                best = 3
        roles.append(role)
        trainable.append(1 if best >= 3 else 0)
        message.append(msg)
        spans.append(span)
    return roles, trainable, message, spans


def chat_fixtures(out, tok_dirs):
    from transformers import PreTrainedTokenizerFast
    result = []
    for fmt, d, template in [("chatml", tok_dirs["qwen25"], QWEN25_TEMPLATE), ("qwen3", tok_dirs["qwen3"], QWEN3_TEMPLATE),
                             ("deepseek-coder", tok_dirs["deepseek"], DEEPSEEK_TEMPLATE),
                             ("seed-coder", tok_dirs["seed"], SEED_TEMPLATE)]:
        cfg = json.load(open(os.path.join(d, "tokenizer_config.json")))
        bos = cfg.get("bos_token")
        bos = bos["content"] if isinstance(bos, dict) else bos
        eos = cfg.get("eos_token")
        hf = PreTrainedTokenizerFast(tokenizer_file=os.path.join(d, "tokenizer.json"), bos_token=bos, eos_token=eos)
        hf.chat_template = template
        raw = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        for conv in CONVERSATIONS:
            rendered = hf.apply_chat_template(conv["messages"], tokenize=False)
            ids_tf = hf.apply_chat_template(conv["messages"], tokenize=True)
            if hasattr(ids_tf, "keys"):
                ids_tf = ids_tf["input_ids"]
            enc = raw.encode(rendered, add_special_tokens=False)
            assert list(ids_tf) == enc.ids, (fmt, conv["id"])
            offsets = byte_offsets(rendered, enc.offsets)
            roles, trainable, message, spans = chat_roles(fmt, rendered, conv["messages"], offsets, eos)
            result.append({"format": fmt, "dir": os.path.basename(d), "id": conv["id"], "messages": conv["messages"],
                           "rendered": rendered, "ids": enc.ids, "tokens": enc.tokens, "roles": roles,
                           "trainable": trainable, "message": message, "spans": spans})
    with open(os.path.join(out, "chat.json"), "w") as f:
        json.dump(result, f, ensure_ascii=False)


# ---------------------------------------------------------------- UTF-8 repair

def utf8_cases(rng):
    cases = [b"", b"plain", b"\xff", b"\xc0\xaf", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf0\x9f\x98",
             b"\xe2\x82", b"a\x80b", b"\xc3", b"\xe6\x97\xa5\xe6\x9c", b"ok \xf0\x9f\x98\x80 \xf0\x9f\x98 x",
             b"\xf1\x80\x80\xf1", b"\xc2\x41", b"\xef\xbf\xbd", b"\xf8\x88\x80\x80\x80"]
    for _ in range(300):
        n = rng.randrange(1, 24)
        cases.append(bytes(rng.choice([0x41, 0x80, 0xBF, 0xC2, 0xC3, 0xE0, 0xE2, 0xED, 0xF0, 0xF4, 0xF5, 0x9F, 0xA0, 0x90])
                           for _ in range(n)))
    return [{"hex": c.hex(), "replaced_hex": c.decode("utf-8", errors="replace").encode("utf-8").hex(),
             "valid": _valid(c)} for c in cases]


def _valid(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# ---------------------------------------------------------------- SentencePiece protobuf
# SentencePieceText (sentencepiece.proto): 2 = repeated SentencePiece {1 piece, 2 id, 3 surface,
# 4 begin, 5 end}; begin/end are byte offsets in the input. Decoded by hand: no protobuf package.

def _varint(buf, i):
    v, shift = 0, 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, i


def _fields(buf):
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire == 5:
            v, i = buf[i:i + 4], i + 4
        elif wire == 1:
            v, i = buf[i:i + 8], i + 8
        else:
            raise ValueError("protobuf wire type %d" % wire)
        yield field, v


def spt_pieces(serialized):
    """(id, begin, end) of each piece of a serialized SentencePieceText."""
    out = []
    for field, v in _fields(serialized):
        if field == 2:
            d = {"id": 0, "begin": 0, "end": 0}
            for f2, v2 in _fields(v):
                if f2 == 2:
                    d["id"] = v2
                elif f2 == 4:
                    d["begin"] = v2
                elif f2 == 5:
                    d["end"] = v2
            out.append((d["id"], d["begin"], d["end"]))
    return out


# ---------------------------------------------------------------- main

def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(1234)
    docs = corpus_documents()
    with open(os.path.join(out, "corpus.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(docs))
    texts = fixture_texts(docs, rng)
    sweep = unicode_sweep_texts()

    tok_dirs = {}
    summary = {}
    for name in ["qwen", "deepseek", "seed", "llama3", "gpt2", "prefix", "bytefallback"]:
        tok, config = build(name, 6000, docs)
        dirs = ["qwen25", "qwen3"] if name == "qwen" else [name]
        for dname in dirs:
            d = os.path.join(out, dname)
            os.makedirs(d, exist_ok=True)
            tok.save(os.path.join(d, "tokenizer.json"))
            cfg = dict(config)
            if dname == "qwen25":
                cfg["chat_template"] = QWEN25_TEMPLATE
            elif dname == "qwen3":
                cfg["chat_template"] = QWEN3_TEMPLATE
            elif dname == "deepseek":
                cfg["chat_template"] = DEEPSEEK_TEMPLATE
            elif dname == "seed":
                cfg["chat_template"] = SEED_TEMPLATE
            with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
                json.dump(cfg, f, ensure_ascii=False)
            tok_dirs[dname] = d
        cases = [case(tok, t) for t in texts] + [case(tok, t, full=False) for t in sweep]
        fixture = {"pipeline": name, "dir": dirs[0], "vocab_size": tok.get_vocab_size(with_added_tokens=True),
                   "special_ids": sorted({t.content: i for i, t in tok.get_added_tokens_decoder().items() if t.special}.values()),
                   "n_sweep": len(sweep), "cases": cases}
        with open(os.path.join(out, name + ".json"), "w") as f:
            json.dump(fixture, f, ensure_ascii=False)
        summary[name] = len(cases)

    # SentencePiece: a BPE model with byte fallback, checked against its Python API.
    sp_dir = os.path.join(out, "spm")
    os.makedirs(sp_dir, exist_ok=True)
    spm.SentencePieceTrainer.train(input=os.path.join(out, "corpus.txt"), model_prefix=os.path.join(sp_dir, "tokenizer"),
                                   vocab_size=4000, model_type="bpe", byte_fallback=True, character_coverage=0.9995,
                                   max_sentence_length=1 << 20, num_threads=1, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(sp_dir, "tokenizer.model"))
    sp_cases = []
    for t in texts:
        pieces = spt_pieces(sp.encode(t, return_type="serialized_proto"))
        ids_bos = sp.encode(t, add_bos=True)
        sp_cases.append({"text": t, "ids": [p[0] for p in pieces], "offsets": flat([[p[1], p[2]] for p in pieces]),
                         "ids_special": ids_bos, "decoded": sp.decode([p[0] for p in pieces])})
    with open(os.path.join(out, "spm.json"), "w") as f:
        json.dump({"vocab_size": sp.get_piece_size(), "bos": sp.bos_id(), "eos": sp.eos_id(), "cases": sp_cases}, f,
                  ensure_ascii=False)

    chat_fixtures(out, tok_dirs)
    with open(os.path.join(out, "utf8.json"), "w") as f:
        json.dump(utf8_cases(rng), f)
    print("tokenizer fixtures:", summary, "spm", len(sp_cases))


if __name__ == "__main__":
    main()

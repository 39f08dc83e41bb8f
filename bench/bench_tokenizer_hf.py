#!/usr/bin/env python3
"""Reference side of bench_tokenizer: Hugging Face `tokenizers` on the same documents.

  bench_tokenizer_hf.py prepare WORK_DIR     corpus (a few MB of code) + a 32k byte-level BPE with
                                             the Qwen2 pipeline, when not there yet
  bench_tokenizer_hf.py time WORK_DIR REPEAT encode_batch time of every document with offsets, and
                                             encode_batch_fast without them (best of REPEAT); the
                                             thread count is RAYON_NUM_THREADS

`time` prints one JSON line: seconds, bytes, tokens and a checksum of all ids, so the C++ side can
check it did the same work.
"""
import json
import os
import sys
import time


def prepare(work):
    os.makedirs(work, exist_ok=True)
    docs_path = os.path.join(work, "docs.json")
    if not os.path.exists(docs_path):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
        import tokenizer_parity as tp
        docs = tp.corpus_documents(scale=2.5)
        with open(docs_path, "w") as f:
            json.dump(docs, f, ensure_ascii=False)
    tok_dir = os.path.join(work, "qwen32k")
    if not os.path.exists(os.path.join(tok_dir, "tokenizer.json")):
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "golden"))
        import tokenizer_parity as tp
        docs = json.load(open(docs_path))
        tok, config = tp.build("qwen", 32768, docs, min_frequency=1)
        os.makedirs(tok_dir, exist_ok=True)
        tok.save(os.path.join(tok_dir, "tokenizer.json"))
        with open(os.path.join(tok_dir, "tokenizer_config.json"), "w") as f:
            json.dump(config, f)
    print(json.dumps({"docs": docs_path, "tokenizer": tok_dir}))


def checksum(encodings):
    h = 0
    for e in encodings:
        for i in e.ids:
            h = (h * 1000003 + i + 1) & 0xFFFFFFFFFFFFFFFF
    return h


def time_encode(work, repeat):
    from tokenizers import Tokenizer
    docs = json.load(open(os.path.join(work, "docs.json")))
    tok = Tokenizer.from_file(os.path.join(work, "qwen32k", "tokenizer.json"))
    best = best_fast = None
    encs = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        encs = tok.encode_batch(docs, add_special_tokens=False)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
        # The same without offsets (encode_batch_fast): a stricter reference.
        t0 = time.perf_counter()
        tok.encode_batch_fast(docs, add_special_tokens=False)
        dt = time.perf_counter() - t0
        best_fast = dt if best_fast is None else min(best_fast, dt)
    print(json.dumps({"seconds": best, "seconds_no_offsets": best_fast, "bytes": sum(len(d.encode("utf-8")) for d in docs),
                      "tokens": sum(len(e.ids) for e in encs), "checksum": checksum(encs),
                      "threads": os.environ.get("RAYON_NUM_THREADS", "default")}))


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2])
    else:
        time_encode(sys.argv[2], int(sys.argv[3]))

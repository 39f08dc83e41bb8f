// Tokenizer encode throughput (MB/s) on a few MB of code (CUDA, C++, Python, Markdown) with a 32k
// byte-level BPE (Qwen2 pipeline: NFC + Split + ByteLevel), single-threaded and batch-parallel,
// against Hugging Face `tokenizers` timed in the same run on the same documents and thread count
// (bench_tokenizer_hf.py). Also checks both produced the same ids (checksum).
//   build/bench/bench_tokenizer [--threads N] [--repeat R] [--work DIR]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuset/text/tokenizer.h"

namespace {

using nlohmann::json;

std::string run(const std::string& cmd) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) throw std::runtime_error("cannot run " + cmd);
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
    if (pclose(p) != 0) throw std::runtime_error("failed: " + cmd);
    return out;
}

json last_json_line(const std::string& out) {
    size_t e = out.find_last_not_of("\n");
    size_t b = out.rfind('\n', e);
    return json::parse(out.substr(b == std::string::npos ? 0 : b + 1));
}

uint64_t checksum(const std::vector<std::vector<int32_t>>& all) {
    uint64_t h = 0;
    for (const auto& ids : all)
        for (int32_t i : ids) h = h * 1000003ull + static_cast<uint64_t>(i) + 1;
    return h;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    int repeat = 3;
    std::string work = "bench-work/tokenizer";
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        if (a == "--threads") threads = std::stoi(argv[i + 1]);
        else if (a == "--repeat") repeat = std::stoi(argv[i + 1]);
        else if (a == "--work") work = argv[i + 1];
    }
    const std::string py = std::string(CUSET_PYTHON) + " " + CUSET_SOURCE_DIR + "/bench/bench_tokenizer_hf.py";
    try {
        json prep = last_json_line(run(py + " prepare '" + work + "'"));
        std::ifstream f(prep["docs"].get<std::string>());
        std::stringstream ss;
        ss << f.rdbuf();
        const auto docs = json::parse(ss.str()).get<std::vector<std::string>>();
        auto tok = cuset::tokenizer_load(prep["tokenizer"].get<std::string>());
        size_t bytes = 0;
        for (const auto& d : docs) bytes += d.size();
        std::printf("corpus: %zu documents, %.2f MB; tokenizer: %s (vocab %lld)\n", docs.size(), bytes / 1e6,
                    tok->source().c_str(), static_cast<long long>(tok->vocab_size()));

        // Single thread: every document in order, best of `repeat`.
        std::vector<std::vector<int32_t>> ids(docs.size());
        double single = 1e30;
        for (int r = 0; r < repeat; ++r) {
            auto t0 = std::chrono::steady_clock::now();
            for (size_t d = 0; d < docs.size(); ++d) ids[d] = tok->encode(docs[d]).ids;
            single = std::min(single, seconds_since(t0));
        }
        size_t tokens = 0;
        for (const auto& v : ids) tokens += v.size();
        const uint64_t ours = checksum(ids);

        // Batch: `threads` workers taking documents from a shared counter.
        double multi = 1e30;
        for (int r = 0; r < repeat; ++r) {
            std::atomic<size_t> next{0};
            auto t0 = std::chrono::steady_clock::now();
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; ++t)
                pool.emplace_back([&] {
                    for (size_t d; (d = next.fetch_add(1)) < docs.size();) ids[d] = tok->encode(docs[d]).ids;
                });
            for (auto& th : pool) th.join();
            multi = std::min(multi, seconds_since(t0));
        }
        const bool same_multi = checksum(ids) == ours;

        json hf1 = last_json_line(run("RAYON_NUM_THREADS=1 TOKENIZERS_PARALLELISM=true " + py + " time '" + work + "' " +
                                      std::to_string(repeat)));
        json hfn = last_json_line(run("RAYON_NUM_THREADS=" + std::to_string(threads) + " TOKENIZERS_PARALLELISM=true " +
                                      py + " time '" + work + "' " + std::to_string(repeat)));
        const bool same_ids = hf1["checksum"].get<uint64_t>() == ours && hf1["tokens"].get<size_t>() == tokens;

        const double mb = bytes / 1e6;
        std::printf("tokens: %zu (HF %zu), ids identical to HF: %s, threaded run identical: %s\n", tokens,
                    hf1["tokens"].get<size_t>(), same_ids ? "yes" : "NO", same_multi ? "yes" : "NO");
        auto line = [&](const char* what, double ours_s, const json& hf) {
            const double hf_s = hf["seconds"].get<double>(), hf_fast = hf["seconds_no_offsets"].get<double>();
            std::printf("%-14s: cuset %7.2f MB/s | HF encode_batch %7.2f MB/s, ratio %5.2fx | HF without offsets "
                        "(encode_batch_fast) %7.2f MB/s, ratio %5.2fx\n",
                        what, mb / ours_s, mb / hf_s, hf_s / ours_s, mb / hf_fast, hf_fast / ours_s);
        };
        line("single thread", single, hf1);
        line((std::to_string(threads) + " threads").c_str(), multi, hfn);
        std::printf("(goal: single-thread ratio >= 1.5x; cuset always computes offsets)\n");
        return same_ids && same_multi ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_tokenizer: %s\n", e.what());
        return 1;
    }
}

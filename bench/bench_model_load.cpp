// Benchmark (a): loading a ~2 GB bf16 checkpoint (generated in a temporary folder: a 1B-class
// Llama config, 2 shards + index) with model_load, against reading the same bytes sequentially
// with read(2) into newly allocated memory. Each measurement runs in a fresh child process (so
// both pay for fresh memory, as a real first load does; a reused heap would flatter either),
// alternating, with the files in the page cache (a first untimed read warms it); median of
// --repeat runs each. Printed: seconds, GB/s and the ratio load / raw read (goal <= 1.25).
// Not run by the test suite.
//   bench_model_load [--gb 2] [--repeat 3] [--threads 1] [--keep DIR]
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "cuset/model/model.h"

namespace {

namespace fs = std::filesystem;

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Reads every *.safetensors file of `dir` into one new buffer per file; returns bytes read.
size_t raw_read(const std::string& dir) {
    size_t total = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().extension() != ".safetensors") continue;
        int fd = ::open(e.path().c_str(), O_RDONLY);
        struct stat st {};
        ::fstat(fd, &st);
        std::unique_ptr<char[]> buf(new char[st.st_size]);
        size_t off = 0;
        while (off < static_cast<size_t>(st.st_size)) {
            ssize_t n = ::read(fd, buf.get() + off, std::min<size_t>(st.st_size - off, size_t{64} << 20));
            if (n <= 0) break;
            off += static_cast<size_t>(n);
        }
        ::close(fd);
        total += off;
    }
    return total;
}

// Child process: one timed raw read or model_load of `dir`; prints the seconds.
int child(const std::string& mode, const std::string& dir, int threads) {
    at::set_num_threads(threads);
    double t0 = now();
    if (mode == "raw") {
        raw_read(dir);
    } else {
        cuset::Decoder m = cuset::model_load(dir, at::kBFloat16, at::kCPU);
    }
    std::printf("%.6f\n", now() - t0);
    return 0;
}

double run_child(const char* self, const std::string& mode, const std::string& dir, int threads) {
    std::string cmd = std::string("'") + self + "' --child " + mode + " --dir '" + dir + "' --threads " + std::to_string(threads);
    double t = -1;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        if (std::fscanf(p, "%lf", &t) != 1) t = -1;
        ::pclose(p);
    }
    if (t < 0) {
        std::fprintf(stderr, "child '%s' failed\n", cmd.c_str());
        std::exit(1);
    }
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    double gb = 2.0;
    int repeat = 3, threads = 1;
    std::string keep, mode;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k == "--gb") gb = std::atof(argv[i + 1]);
        else if (k == "--repeat") repeat = std::atoi(argv[i + 1]);
        else if (k == "--threads") threads = std::atoi(argv[i + 1]);
        else if (k == "--keep" || k == "--dir") keep = argv[i + 1];
        else if (k == "--child") mode = argv[i + 1];
        else {
            std::fprintf(stderr, "unknown argument %s\n", k.c_str());
            return 2;
        }
    }
    if (!mode.empty()) return child(mode, keep, threads);
    const std::string dir = keep.empty() ? (fs::temp_directory_path() / ("cuset-bench-load-" + std::to_string(::getpid()))).string() : keep;

    // hidden 2048, intermediate 5632, vocab 32000: ~51M parameters per layer + 131M embedding/head.
    const int64_t layers = std::max<int64_t>(1, static_cast<int64_t>((gb * 1e9 / 2 - 131e6) / 51.4e6 + 0.5));
    nlohmann::json j = {{"architectures", {"LlamaForCausalLM"}}, {"hidden_size", 2048}, {"intermediate_size", 5632},
                        {"num_hidden_layers", layers}, {"num_attention_heads", 16}, {"num_key_value_heads", 16},
                        {"vocab_size", 32000}, {"torch_dtype", "bfloat16"}};
    if (!fs::exists(dir + "/config.json")) {
        std::printf("writing a %lld-layer bf16 checkpoint to %s ...\n", (long long)layers, dir.c_str());
        std::fflush(stdout);
        cuset::Decoder init(cuset::model_config_from_json(j, "bench"), at::TensorOptions().dtype(at::kBFloat16));
        {
            at::NoGradGuard no_grad;
            float v = 0.001f;
            for (auto& [name, p] : cuset::hf_named_parameters(init)) p.fill_(v += 0.001f);
        }
        double t0 = now();
        cuset::model_save(init, dir, "", at::kBFloat16, /*max_shard_bytes=*/int64_t{1} << 30);
        std::printf("written in %.2f s\n", now() - t0);
    }
    size_t bytes = raw_read(dir);  // warms the page cache
    std::vector<double> t_raw, t_load;
    for (int r = 0; r < repeat; ++r) {
        t_raw.push_back(run_child(argv[0], "raw", dir, threads));
        t_load.push_back(run_child(argv[0], "load", dir, threads));
    }
    const double raw = median(t_raw), load = median(t_load);
    std::printf("checkpoint: %.2f GB bf16 in %s, %d intra-op thread(s), page cache warm, fresh process per run, "
                "median of %d\n", bytes / 1e9, dir.c_str(), threads, repeat);
    std::printf("raw sequential read  %.3f s  (%.2f GB/s)\n", raw, bytes / 1e9 / raw);
    std::printf("model_load (bf16)    %.3f s  (%.2f GB/s)\n", load, bytes / 1e9 / load);
    std::printf("ratio load / raw read: %.2f (goal <= 1.25)\n", load / raw);
    if (keep.empty()) fs::remove_all(dir);
    return 0;
}

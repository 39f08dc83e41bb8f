// Benchmark of the objective on the CPU, forward + backward of the lm_head and loss, at
// N = 4096 tokens, D = 1024, V = 151,936 (Qwen's vocabulary), fp32. Prints, as ratios measured in
// this one run: peak extra memory and time of the chunked objective vs the full-logits reference
// (sft, the same loss), and cuset vs sft time (both chunked). Not run by the test suite.
//
// Memory: a counting wrapper around LibTorch's CPU allocator gives the peak bytes of live tensors
// above what was live before the call (the lm_head gradient included: both paths make one). The
// process's peak resident set (VmHWM after a reset through /proc/self/clear_refs) is printed beside
// it as a cross-check that also sees BLAS scratch memory.
//   bench_objective [--tokens N] [--dim D] [--vocab V] [--chunk C] [--sample-len L] [--no-long]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <time.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>

#include "counting_allocator.h"
#include "cuset/train/objective.h"

namespace {

bench::CountingAllocator* g_counter = nullptr;

int64_t status_kb(const char* key) {  // VmRSS / VmHWM of this process, in kB
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind(key, 0) == 0) return std::atoll(line.c_str() + std::strlen(key) + 1);
    return -1;
}
bool rss_peak_reset() {
    std::ofstream f("/proc/self/clear_refs");
    f << "5";
    return static_cast<bool>(f);
}

double cpu_seconds() {  // of the whole process, all threads
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Result {
    double seconds = 0;        // wall clock
    double cpu_seconds = 0;    // process CPU time (less sensitive to other load on the machine)
    double peak_extra_gb = 0;  // allocator count
    double rss_extra_gb = -1;  // VmHWM - VmRSS before (-1: not available)
    double loss = 0;
};

struct Inputs {
    at::Tensor hidden;  // [B, T, D] fp32 leaf
    at::Tensor weight;  // [V, D] fp32 leaf
    cuset::MicroBatchTargets targets;
};

Inputs make_inputs(int64_t n_tokens, int64_t sample_len, int64_t D, int64_t V) {
    Inputs in;
    const int64_t B = n_tokens / sample_len;
    in.hidden = (at::randn({B, sample_len, D}) * 0.05).requires_grad_();
    in.weight = (at::randn({V, D}) * 0.05).requires_grad_();
    in.targets.labels = at::randint(0, V, {B, sample_len}, at::TensorOptions().dtype(at::kLong));
    in.targets.sensitive = at::rand({B, sample_len}) < 0.3;
    return in;
}

Result measure(const char* name, const cuset::ObjectiveOptions& o, Inputs& in) {
    in.hidden.mutable_grad() = at::Tensor();
    in.weight.mutable_grad() = at::Tensor();
    cuset::Objective obj(o);
    const bool rss_ok = rss_peak_reset();
    const int64_t rss_before = status_kb("VmRSS:");
    const int64_t before = g_counter->current();
    g_counter->reset_peak();
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    cuset::ObjectiveOutput out = obj.compute(in.hidden, in.weight, in.targets);
    out.numerator.backward();
    const auto t1 = std::chrono::steady_clock::now();
    Result r;
    r.seconds = std::chrono::duration<double>(t1 - t0).count();
    r.cpu_seconds = cpu_seconds() - c0;
    r.peak_extra_gb = static_cast<double>(g_counter->peak() - before) / 1e9;
    if (rss_ok) r.rss_extra_gb = static_cast<double>(status_kb("VmHWM:") - rss_before) / 1e6;
    r.loss = out.numerator.item<double>() / out.denominator;
    std::printf("  %-34s %7.2f s wall %7.2f s CPU   peak extra %6.3f GB (allocator) %6.3f GB (RSS)   loss %.6f\n",
                name, r.seconds, r.cpu_seconds, r.peak_extra_gb, r.rss_extra_gb, r.loss);
    std::fflush(stdout);
    in.hidden.mutable_grad() = at::Tensor();
    in.weight.mutable_grad() = at::Tensor();
    return r;
}

int64_t arg(int argc, char** argv, const char* flag, int64_t dflt) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], flag) == 0) return std::atoll(argv[i + 1]);
    return dflt;
}
bool has(int argc, char** argv, const char* flag) {
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], flag) == 0) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    static bench::CountingAllocator counter(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&counter, /*priority=*/255);
    g_counter = &counter;

    const int64_t N = arg(argc, argv, "--tokens", 4096), D = arg(argc, argv, "--dim", 1024);
    const int64_t V = arg(argc, argv, "--vocab", 151936), chunk = arg(argc, argv, "--chunk", 1024);
    const int64_t L = arg(argc, argv, "--sample-len", 512);
    std::printf("objective benchmark: N = %lld tokens (%lld samples of %lld), D = %lld, V = %lld, "
                "fp32, chunk %lld, %d threads\n",
                static_cast<long long>(N), static_cast<long long>(N / L), static_cast<long long>(L),
                static_cast<long long>(D), static_cast<long long>(V), static_cast<long long>(chunk),
                at::get_num_threads());
    at::manual_seed(1);

    cuset::ObjectiveOptions sft, cuset_o;
    sft.method = cuset::Method::kSft;
    cuset_o.method = cuset::Method::kCuset;
    {  // warm-up (BLAS threads, allocator), small, not reported
        Inputs small = make_inputs(256, 128, D, 8192);
        cuset::ObjectiveOptions o = sft;
        o.chunk_size = 0;
        cuset::Objective(o).compute(small.hidden, small.weight, small.targets).numerator.backward();
        o.chunk_size = chunk;
        cuset::Objective(o).compute(small.hidden, small.weight, small.targets).numerator.backward();
    }

    Inputs in = make_inputs(N, L, D, V);
    sft.chunk_size = 0;
    Result full = measure("sft, full logits (reference)", sft, in);
    sft.chunk_size = chunk;
    Result chunked = measure("sft, chunked", sft, in);
    cuset_o.chunk_size = chunk;
    Result cus = measure("cuset, chunked", cuset_o, in);
    Result cus_long;
    const bool long_case = !has(argc, argv, "--no-long") && N > chunk;
    if (long_case) {  // one sample longer than a chunk: its logits are computed twice
        Inputs one = make_inputs(N, N, D, V);
        one.weight = in.weight;
        cus_long = measure("cuset, chunked, one long sample", cuset_o, one);
    }

    std::printf("\nratios (goal in brackets):\n");
    std::printf("  chunked / full peak extra memory  %.3f (allocator), %.3f (RSS)   [<= 0.25]\n",
                chunked.peak_extra_gb / full.peak_extra_gb,
                full.rss_extra_gb > 0 ? chunked.rss_extra_gb / full.rss_extra_gb : -1.0);
    std::printf("  chunked / full time               %.3f wall, %.3f CPU   [<= 1.15]\n",
                chunked.seconds / full.seconds, chunked.cpu_seconds / full.cpu_seconds);
    std::printf("  cuset / sft time (chunked)        %.3f wall, %.3f CPU   [<= 1.05]\n",
                cus.seconds / chunked.seconds, cus.cpu_seconds / chunked.cpu_seconds);
    if (long_case)
        std::printf("  cuset, one %lld-token sample / sft %.3f wall, %.3f CPU   (a sample longer than a "
                    "chunk: logits twice)\n",
                    static_cast<long long>(N), cus_long.seconds / chunked.seconds,
                    cus_long.cpu_seconds / chunked.cpu_seconds);
    std::printf("  |loss chunked - loss full| / loss %.2e\n", std::abs(chunked.loss - full.loss) / full.loss);
    return 0;
}

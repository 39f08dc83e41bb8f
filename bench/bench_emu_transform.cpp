// Linearity of the emulator's source rewrite (cuset::emu::transform_program): an honest bundled
// program (data/cuda-sft/src/layernorm-04.cu) padded to 1x, 2x, 4x and 8x a base size with three
// paddings: a comment of repeated `extern __shared__` (the shape that made an earlier rewrite
// quadratic), an `#if 0` block of the same (code to the rewrite), and copies of the program itself
// (ordinary code). Prints the best thread-CPU seconds per size and time(kx)/time(1x) against k,
// and says "linear" when the 8x/1x ratio is below 12 (a quadratic rewrite gives 64). A program,
// not a test: nothing here asserts on time.
//   bench_emu_transform [--base-kib 256] [--reps 5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

#include "cuset/core/error.h"
#include "cuset/emu/transform.h"

namespace {

std::string read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "bench_emu_transform: cannot read %s\n", path.c_str());
        std::exit(1);
    }
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// `unit` repeated until `body` reaches `size` bytes in all.
std::string fill(std::string body, const std::string& unit, size_t size) {
    while (body.size() < size) body += unit;
    return body;
}

// The program padded to `size` bytes: its text, then the padding.
std::string padded(const std::string& program, const std::string& padding, size_t size) {
    const size_t room = size > program.size() ? size - program.size() : 0;
    if (padding == "comment") return program + fill("/*", "extern __shared__ ", room - 4) + "*/\n";
    if (padding == "#if 0") return program + fill("#if 0\n", "extern __shared__ ", room - 9) + "\n#endif\n";
    return fill(program, "\n" + program, size);  // ordinary code
}

// Best thread CPU seconds of `reps` rewrites of `text` (the wall seconds beside it).
std::pair<double, double> best_of(int reps, const std::string& text, size_t& out_size) {
    double cpu = 1e30, wall = 1e30;
    for (int r = 0; r < reps; ++r) {
        const auto w0 = std::chrono::steady_clock::now();
        const double c0 = thread_cpu_seconds();
        try {
            out_size = cuset::emu::transform_program(text).size();
        } catch (const cuset::InputError& e) {
            std::fprintf(stderr, "bench_emu_transform: %s\n", e.what());
            std::exit(1);
        }
        cpu = std::min(cpu, thread_cpu_seconds() - c0);
        wall = std::min(wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    }
    return {cpu, wall};
}

}  // namespace

int main(int argc, char** argv) {
    size_t base_kib = 256;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--base-kib")) base_kib = static_cast<size_t>(std::atol(argv[i + 1]));
        else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    }
    const std::string program = read(std::string(CUSET_SOURCE_DIR) + "/data/cuda-sft/src/layernorm-04.cu");
    const size_t base = base_kib * 1024;
    const std::vector<size_t> ks = {1, 2, 4, 8};
    std::printf("bench_emu_transform: layernorm-04.cu (%zu bytes) padded to k x %zu KiB, best of %d (thread CPU s)\n",
                program.size(), base_kib, reps);
    bool all_linear = true;
    for (const char* padding : {"comment", "#if 0", "code"}) {
        std::printf("  padding: %s\n", !std::strcmp(padding, "code") ? "copies of the program (code)"
                                       : !std::strcmp(padding, "comment") ? "a comment of repeated `extern __shared__ `"
                                                                           : "an #if 0 block of repeated `extern __shared__ `");
        std::printf("    %4s %10s %10s %10s %10s %12s\n", "k", "bytes", "cpu s", "wall s", "MB/s", "t(k)/t(1)");
        double t1 = 0, ratio8 = 0;
        for (size_t k : ks) {
            const std::string text = padded(program, padding, k * base);
            size_t out_size = 0;
            const auto [cpu, wall] = best_of(reps, text, out_size);
            if (k == 1) t1 = cpu;
            const double ratio = cpu / t1;
            if (k == 8) ratio8 = ratio;
            std::printf("    %4zu %10zu %10.4f %10.4f %10.1f %12.2f\n", k, text.size(), cpu, wall, text.size() / 1e6 / cpu, ratio);
        }
        const bool linear = ratio8 < 12;
        all_linear = all_linear && linear;
        std::printf("    8x/1x = %.2f: %s\n", ratio8, linear ? "linear" : "NOT linear (quadratic gives 64)");
    }
    std::printf("%s\n", all_linear ? "linear on every padding" : "NOT linear on some padding");
    return 0;
}

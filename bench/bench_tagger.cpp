// Throughput of the CUDA-sensitivity tagger on a few MB of CUDA source (the tagger fixtures
// repeated): as one bare .cu text and as many Markdown responses of a few KB each (how the data
// pipeline calls it). References measured in the same run: a newline count over the same bytes
// (memory speed) and the lexer alone. Goal: >= 50 MB/s. Not run by the test suite.
// Times are the thread's CPU time (the tagger is single-threaded; on a shared machine wall time
// also counts other processes), best of R runs; wall-clock MB/s are printed beside them.
//   bench_tagger [--mb N] [--reps R]
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

#include "cuset/tagger/cuda_lexer.h"
#include "cuset/tagger/tagger.h"

namespace {

std::string read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(stderr, "bench_tagger: cannot read %s\n", path.c_str());
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

struct Timing {
    double cpu = 1e30;   // best thread CPU seconds
    double wall = 1e30;  // best wall seconds
};

// Best of `reps` runs of fn().
template <class F>
Timing best_of(int reps, F&& fn) {
    Timing best;
    for (int r = 0; r < reps; ++r) {
        auto w0 = std::chrono::steady_clock::now();
        double c0 = thread_cpu_seconds();
        fn();
        double cpu = thread_cpu_seconds() - c0;
        std::chrono::duration<double> wall = std::chrono::steady_clock::now() - w0;
        best.cpu = std::min(best.cpu, cpu);
        best.wall = std::min(best.wall, wall.count());
    }
    return best;
}

volatile size_t g_sink = 0;  // keeps results alive

}  // namespace

int main(int argc, char** argv) {
    double mb = 4.0;
    int reps = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--mb")) mb = std::atof(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    }
    const std::string dir = std::string(CUSET_SOURCE_DIR) + "/tests/fixtures/tagger/";
    const std::string cu = read(dir + "multi_kernel.cu");
    const std::string md = read(dir + "response.md");
    const size_t target = static_cast<size_t>(mb * 1024 * 1024);

    std::string file;  // one big .cu text
    while (file.size() < target) file += cu;
    std::vector<std::string> responses;  // Markdown responses of a few KB
    size_t response_bytes = 0;
    for (int i = 0; response_bytes < target; ++i) {
        responses.push_back(i % 2 == 0 ? md : "Here is the code:\n\n```cuda\n" + cu + "```\n\nIt launches six kernels.\n");
        response_bytes += responses.back().size();
    }

    const double file_mb = file.size() / 1048576.0;
    const double resp_mb = response_bytes / 1048576.0;
    Timing t_newlines = best_of(reps, [&] { g_sink = g_sink + std::count(file.begin(), file.end(), '\n'); });
    Timing t_lex = best_of(reps, [&] { g_sink = g_sink + cuset::cuda_lex(file).size(); });
    Timing t_file = best_of(reps, [&] { g_sink = g_sink + cuset::tag_text(file).size(); });
    Timing t_resp = best_of(reps, [&] {
        for (const std::string& r : responses) g_sink = g_sink + cuset::tag_text(r).size();
    });

    std::printf("bench_tagger: %.2f MB as one .cu file, %.2f MB as %zu Markdown responses, best of %d\n",
                file_mb, resp_mb, responses.size(), reps);
    std::printf("  %-26s %10s %10s %12s %14s\n", "", "MB/s cpu", "MB/s wall", "vs lexer", "vs newlines");
    auto row = [&](const char* name, double mb_done, const Timing& t) {
        double per_mb = t.cpu / mb_done;  // seconds per MB, compared at equal size
        std::printf("  %-26s %10.1f %10.1f %11.3fx %13.4fx\n", name, mb_done / t.cpu, mb_done / t.wall,
                    (t_lex.cpu / file_mb) / per_mb, (t_newlines.cpu / file_mb) / per_mb);
    };
    row("newline count (reference)", file_mb, t_newlines);
    row("lexer only", file_mb, t_lex);
    row("tag_text, one .cu file", file_mb, t_file);
    row("tag_text, responses", resp_mb, t_resp);
    const double worst = std::min(file_mb / t_file.cpu, resp_mb / t_resp.cpu);
    std::printf("  goal >= 50 MB/s (cpu time): %s (%.1f MB/s worst case)\n", worst >= 50.0 ? "met" : "NOT met", worst);
    return 0;
}

// Cost of rendering with the model's own Jinja chat template (`template`) against the hand-written
// `chatml` format, on N samples of the bundled CUDA data (data/cuda-sft/train.jsonl, repeated to N):
// render alone, and the whole format() (render + tokenization + roles + mask), with the tokenizer
// and template of data/tiny-coder (a ChatML template) unless --model names another folder, or
// --template another template file. Prints the template / hand-written ratios and the share of
// format() that rendering takes. Times are the thread's CPU time, best of R runs. Not run by the
// test suite.
//   bench_chat_template [--n N] [--reps R] [--model DIR] [--template FILE]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <time.h>

#include <nlohmann/json.hpp>

#include "cuset/text/chat_format.h"
#include "cuset/text/tokenizer.h"

namespace {

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

template <typename F>
double best_of(int reps, F f) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        double t0 = thread_cpu_seconds();
        f();
        best = std::min(best, thread_cpu_seconds() - t0);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    size_t n = 10000;
    int reps = 3;
    std::string model = std::string(CUSET_SOURCE_DIR) + "/data/tiny-coder", templ;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--n")) n = std::strtoull(argv[i + 1], nullptr, 10);
        else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
        else if (!std::strcmp(argv[i], "--model")) model = argv[i + 1];
        else if (!std::strcmp(argv[i], "--template")) templ = argv[i + 1];
        else {
            std::fprintf(stderr, "usage: bench_chat_template [--n N] [--reps R] [--model DIR] [--template FILE]\n");
            return 2;
        }
    }
    std::vector<cuset::Conversation> base;
    std::ifstream f(std::string(CUSET_SOURCE_DIR) + "/data/cuda-sft/train.jsonl");
    for (std::string line; std::getline(f, line);) {
        if (line.empty()) continue;
        auto j = nlohmann::json::parse(line);
        base.push_back({j["id"], {{"user", j["prompt"]}, {"assistant", j["response"]}}});
    }
    if (base.empty()) {
        std::fprintf(stderr, "bench_chat_template: no samples in data/cuda-sft/train.jsonl\n");
        return 1;
    }
    std::vector<cuset::Conversation> convs;
    for (size_t i = 0; i < n; ++i) convs.push_back(base[i % base.size()]);
    size_t bytes = 0;
    for (const auto& c : convs)
        for (const auto& m : c.messages) bytes += m.content.size();

    auto tok = cuset::tokenizer_load(model);
    cuset::ChatFormatOptions ho, to;
    ho.format = "chatml";
    to.format = "template";
    to.chat_template = templ;
    cuset::ChatFormatter hand(*tok, ho, model), tmpl(*tok, to, model);

    size_t sink = 0;
    const double r_hand = best_of(reps, [&] {
        for (const auto& c : convs) sink += hand.render(c).text.size();
    });
    const double r_tmpl = best_of(reps, [&] {
        for (const auto& c : convs) sink += tmpl.render(c).text.size();
    });
    const double f_hand = best_of(reps, [&] {
        for (const auto& c : convs) sink += hand.format(c).ids.size();
    });
    const double f_tmpl = best_of(reps, [&] {
        for (const auto& c : convs) sink += tmpl.format(c).ids.size();
    });
    std::printf("bench_chat_template: %zu samples (%.1f MB of content), template %s, tokenizer %s (checksum %zu)\n", n,
                bytes / 1e6, tmpl.template_source().c_str(), model.c_str(), sink % 1000);
    std::printf("render   hand-written chatml %8.3f s   template %8.3f s   ratio %.2f\n", r_hand, r_tmpl, r_tmpl / r_hand);
    std::printf("format() hand-written chatml %8.3f s   template %8.3f s   ratio %.2f\n", f_hand, f_tmpl, f_tmpl / f_hand);
    std::printf("template rendering is %.1f%% of the template format() (the rest: tokenization, roles, mask)\n",
                100.0 * r_tmpl / f_tmpl);
    return 0;
}

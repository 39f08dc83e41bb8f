// Generation throughput: cuset's batched KV-cache greedy decoding (generate/) vs transformers'
// generate() on the same model folder, prompts, threads and device (CPU by default, or a GPU with
// --device cuda), measured in the same run and interleaved run by run (bench_generate_hf.py as a
// Python subprocess), best of N each.
// Models: data/tiny-coder and a random 4-layer, 512-hidden Qwen2 (vocab 32768) made by the
// Python helper; batch 1 and batch 8 (CUDA instruction prompts of data/cuda-sft/eval.jsonl,
// chatml generation prompts), 256 new tokens, no EOS. Prints tokens/s of both and their ratio
// (goal >= 1.5x), the prefill of both (a one-token run), and how many greedy tokens agree.
// fp32 on either device. Usage: bench_generate [--threads N] [--new-tokens N] [--repeats N]
// [--device cpu|cuda]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "cuset/data/dataset.h"
#include "cuset/generate/generate_run.h"
#include "cuset/generate/generator.h"
#include "cuset/model/model.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The reference process: one request line in, one JSON line out.
struct Reference {
    pid_t pid = -1;
    FILE* to = nullptr;
    FILE* from = nullptr;

    Reference(const std::vector<std::string>& args) {
        int to_child[2], from_child[2];
        if (pipe(to_child) != 0 || pipe(from_child) != 0) std::exit(1);
        pid = fork();
        if (pid == 0) {
            dup2(to_child[0], 0);
            dup2(from_child[1], 1);
            close(to_child[1]);
            close(from_child[0]);
            std::vector<char*> argv{const_cast<char*>(CUSET_PYTHON)};
            for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            execv(CUSET_PYTHON, argv.data());
            _exit(127);
        }
        close(to_child[0]);
        close(from_child[1]);
        to = fdopen(to_child[1], "w");
        from = fdopen(from_child[0], "r");
        if (read_line() != "ready") {
            std::fprintf(stderr, "reference process failed to start\n");
            std::exit(1);
        }
    }
    ~Reference() {
        fclose(to);
        fclose(from);
        waitpid(pid, nullptr, 0);
    }
    std::string read_line() {
        std::string s;
        for (int c; (c = fgetc(from)) != EOF && c != '\n';) s += static_cast<char>(c);
        return s;
    }
    json run(const std::string& name, int new_tokens) {
        std::fprintf(to, "%s %d\n", name.c_str(), new_tokens);
        std::fflush(to);
        std::string line = read_line();
        if (line.empty()) {
            std::fprintf(stderr, "reference process died\n");
            std::exit(1);
        }
        return json::parse(line);
    }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 2, new_tokens = 256, repeats = 3;
    std::string device_name = "cpu";
    const char* usage = "usage: bench_generate [--threads N] [--new-tokens N] [--repeats N] [--device cpu|cuda]\n";
    if (argc % 2 == 0) {  // every option takes a value
        std::fprintf(stderr, "%s", usage);
        return 2;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i];
        if (k == "--threads") threads = std::atoi(argv[i + 1]);
        else if (k == "--new-tokens") new_tokens = std::atoi(argv[i + 1]);
        else if (k == "--repeats") repeats = std::atoi(argv[i + 1]);
        else if (k == "--device") device_name = argv[i + 1];
        else {
            std::fprintf(stderr, "%s", usage);
            return 2;
        }
    }
    if (device_name != "cpu" && device_name != "cuda") {
        std::fprintf(stderr, "bench_generate: --device expects cpu or cuda, got '%s'\n", device_name.c_str());
        return 2;
    }
    if (device_name == "cuda" && !at::hasCUDA()) {
        std::fprintf(stderr, "bench_generate: --device cuda, but no CUDA device is available to this LibTorch\n");
        return 2;
    }
    const c10::Device device = device_name == "cuda" ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    at::set_num_threads(threads);
    at::NoGradGuard no_grad;
    const std::string src = CUSET_SOURCE_DIR;
    const std::string tmp = (fs::temp_directory_path() / ("cuset-bench-generate-" + std::to_string(getpid()))).string();
    fs::create_directories(tmp);
    const std::string helper = src + "/bench/bench_generate_hf.py";
    const std::string big = tmp + "/qwen2-4x512";
    if (std::system((std::string(CUSET_PYTHON) + " '" + helper + "' --make-model '" + big + "' >/dev/null 2>&1").c_str()) != 0) {
        std::fprintf(stderr, "could not make the 4x512 model\n");
        return 1;
    }

    // Prompts: the eval set's first 8 prompts as chatml generation prompts (tiny-coder's
    // tokenizer; the random model reads the same ids).
    cuset::TextOptions text;
    text.tokenizer = src + "/data/tiny-coder";
    text.chat_format.format = "chatml";
    cuset::TextPipeline pipe = cuset::text_pipeline_from(text);
    std::vector<std::vector<int32_t>> prompts;
    std::ifstream in(src + "/data/cuda-sft/eval.jsonl");
    for (std::string line; std::getline(in, line) && prompts.size() < 8;) {
        cuset::PromptRecord rec;
        std::string why;
        if (cuset::prompt_parse(line, &rec, &why)) prompts.push_back(pipe.formatter->generation_prompt(rec.prompt));
    }
    json pj;
    pj["1"] = std::vector<std::vector<int32_t>>{prompts[0]};
    pj["8"] = prompts;
    std::ofstream(tmp + "/prompts.json") << pj.dump();
    size_t lo = 1 << 30, hi = 0;
    for (const auto& p : prompts) lo = std::min(lo, p.size()), hi = std::max(hi, p.size());
    std::printf("bench_generate: greedy, fp32 on %s, %d new tokens, %d CPU threads, best of %d interleaved runs; prompts "
                "%zu..%zu tokens\n",
                device.str().c_str(), new_tokens, threads, repeats, lo, hi);

    struct Model {
        std::string name, dir;
    };
    for (const Model& m : {Model{"tiny-coder (4x256, V 4096)", src + "/data/tiny-coder"}, Model{"qwen2 4x512 (V 32768)", big}}) {
        cuset::Decoder model = cuset::model_load(m.dir, at::kFloat, device);
        Reference ref({helper, m.dir, tmp + "/prompts.json", std::to_string(threads), device.str()});
        auto generator = [&](int n) {
            cuset::GenerateOptions go;
            go.max_new_tokens = n;
            go.context_length = model->config().max_position_embeddings;
            return cuset::Generator(model, *pipe.tokenizer, go, device);
        };
        cuset::Generator full = generator(new_tokens), one = generator(1), warm = generator(8);
        for (const char* name : {"1", "8"}) {
            std::vector<cuset::GenerationInput> batch;
            for (const auto& p : pj[name]) batch.push_back({p.get<std::vector<int32_t>>(), 0});
            warm.generate(batch);
            ref.run(name, 8);
            double ours = 1e30, theirs = 1e30, ours_prefill = 1e30, theirs_prefill = 1e30;
            std::vector<cuset::GenerationOutput> outs;
            json ref_tokens;
            for (int r = 0; r < repeats; ++r) {
                auto t0 = std::chrono::steady_clock::now();
                one.generate(batch);
                ours_prefill = std::min(ours_prefill, seconds_since(t0));
                theirs_prefill = std::min(theirs_prefill, ref.run(name, 1)["seconds"].get<double>());
                t0 = std::chrono::steady_clock::now();
                outs = full.generate(batch);
                ours = std::min(ours, seconds_since(t0));
                json j = ref.run(name, new_tokens);
                theirs = std::min(theirs, j["seconds"].get<double>());
                ref_tokens = j["tokens"];
            }
            int64_t same = 0, total = 0;
            for (size_t b = 0; b < outs.size(); ++b) {
                auto want = ref_tokens[b].get<std::vector<int32_t>>();
                size_t k = 0;
                while (k < want.size() && k < outs[b].tokens.size() && want[k] == outs[b].tokens[k]) ++k;
                same += static_cast<int64_t>(k);
                total += static_cast<int64_t>(want.size());
            }
            const double n = static_cast<double>(batch.size()) * new_tokens;
            std::printf("%-27s batch %s: cuset %7.1f tok/s  transformers %7.1f tok/s  ratio %.2fx  (prefill %.3f s vs "
                        "%.3f s)  equal greedy prefix %lld/%lld tokens\n",
                        m.name.c_str(), name, n / ours, n / theirs, theirs / ours, ours_prefill, theirs_prefill,
                        static_cast<long long>(same), static_cast<long long>(total));
            std::fflush(stdout);
        }
    }
    fs::remove_all(tmp);
    return 0;
}

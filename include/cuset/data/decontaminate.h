// Decontamination of training data against a benchmark (`data check --against TASKS.jsonl`): the
// long token n-grams a sample shares with the benchmark's tasks. The benchmark file is read
// generically (every string in each JSONL record: for CUDABench the description, the level
// prompts, the reference solution and its scripts); this file knows no benchmark's fields.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cuset {

// Tokens per shared span. At 50, data/cuda-sft shares none with CUDABench (its longest shared
// spans, 45-48 tokens, are 2D thread-index lines with their bounds check); at 32 eight of its 134
// samples would be flagged for generic code such as those lines or the GELU formula.
inline constexpr int kOverlapNgram = 50;

// The tokens the spans are counted in, each a byte range of the text: a maximal run of ASCII
// letters, digits, '_' and non-ASCII bytes (compared lower-cased), or any other non-space byte.
struct OverlapToken {
    size_t begin = 0, end = 0;
};
std::vector<OverlapToken> overlap_tokens(std::string_view text);

// Every n-gram of every task (a 64-bit hash of its tokens) and the first task it occurs in.
struct BenchmarkIndex {
    std::string path;
    int n = kOverlapNgram;
    std::vector<std::string> task_names;              // task_name, else id, else "line N"
    std::unordered_map<uint64_t, uint32_t> task_of;   // n-gram hash -> task index
};

// Reads a JSONL benchmark file (InputError naming FILE:LINE for a line that is not a JSON object).
BenchmarkIndex benchmark_index_load(const std::string& path, int n = kOverlapNgram);

struct Overlap {
    int64_t shared = 0;      // n-grams of the sample found in the benchmark (0 = clean)
    uint32_t task = 0;       // the task holding most of them
    int64_t task_shared = 0;
    std::string first;       // the sample's text of the first shared span
};

// The overlap of a sample's texts (its prompt and response; not its system prompt) with `index`.
Overlap benchmark_overlap(const BenchmarkIndex& index, const std::vector<std::string_view>& texts);

}  // namespace cuset

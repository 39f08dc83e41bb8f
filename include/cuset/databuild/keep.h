// Which passing attempts of a build become training samples. Per (task, sample) chain the one
// passing attempt is its last (a chain stops at its first pass); per task the policy picks:
//   first     the passing chain of the lowest sample number (one per task)
//   shortest  the passing answer with the fewest tokens, ties to the lower sample (one per task)
//   fastest   the passing answer whose program ran fastest on the GPU (one per task; GPU judge only)
//   distinct  every passing answer, less duplicates
// Then duplicates go, whatever the policy, in task and sample order (the earlier one stays):
//   exact     the same prompt and the same program up to whitespace (runs of blanks count as one)
//   near      within one task, two programs whose sets of 5-token shingles (decontaminate.h's
//             tokens) have a Jaccard similarity of kNearDuplicate or more
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cuset::databuild {

enum class KeepPolicy { kFirst, kShortest, kFastest, kDistinct };
const char* keep_policy_name(KeepPolicy p);
KeepPolicy keep_policy_parse(const std::string& name);  // UsageError for an unknown name

inline constexpr double kNearDuplicate = 0.9;
inline constexpr int kShingle = 5;

// A passing answer that may be kept.
struct Candidate {
    size_t task = 0;          // the task's position in the build
    int64_t sample = 1;
    int64_t tokens = 0;
    double run_seconds = -1;  // -1 = not measured
    std::string prompt;       // the task's prompt (exact duplicates need the same one)
    std::string program;      // the program judged (duplicates are found on it)
};

// Jaccard similarity of the kShingle-token shingle sets of two programs (1 when both have none).
double shingle_similarity(std::string_view a, std::string_view b);

struct KeepResult {
    std::vector<size_t> kept;  // indices into the candidates, in task then sample order
    int64_t exact_duplicates = 0, near_duplicates = 0;
};

// `candidates` in task then sample order.
KeepResult keep_select(const std::vector<Candidate>& candidates, KeepPolicy policy);

}  // namespace cuset::databuild

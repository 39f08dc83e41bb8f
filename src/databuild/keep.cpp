// The keep policy and the duplicate rules of a build (databuild/keep.h).
#include "cuset/databuild/keep.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_set>

#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/data/decontaminate.h"

namespace cuset::databuild {

const char* keep_policy_name(KeepPolicy p) {
    switch (p) {
        case KeepPolicy::kFirst: return "first";
        case KeepPolicy::kShortest: return "shortest";
        case KeepPolicy::kFastest: return "fastest";
        case KeepPolicy::kDistinct: return "distinct";
    }
    return "?";
}

KeepPolicy keep_policy_parse(const std::string& name) {
    for (KeepPolicy p : {KeepPolicy::kFirst, KeepPolicy::kShortest, KeepPolicy::kFastest, KeepPolicy::kDistinct})
        if (name == keep_policy_name(p)) return p;
    throw UsageError("--keep must be first, shortest, fastest or distinct, got '" + name + "'");
}

namespace {

// The program with every run of whitespace made one space and the ends trimmed.
std::string squeeze_blanks(std::string_view s) {
    std::string out;
    bool blank = false;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            blank = true;
            continue;
        }
        if (blank && !out.empty()) out += ' ';
        blank = false;
        out += c;
    }
    return out;
}

std::unordered_set<uint64_t> shingles(std::string_view text) {
    std::vector<OverlapToken> toks = overlap_tokens(text);
    std::unordered_set<uint64_t> out;
    if (toks.empty()) return out;
    const size_t n = std::min<size_t>(kShingle, toks.size());  // a program shorter than a shingle is one
    for (size_t i = 0; i + n <= toks.size(); ++i) {
        Hasher h;
        for (size_t k = i; k < i + n; ++k) {
            std::string t(text.substr(toks[k].begin, toks[k].end - toks[k].begin));
            for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            h.add(t);
        }
        out.insert(h.value());
    }
    return out;
}

double jaccard(const std::unordered_set<uint64_t>& a, const std::unordered_set<uint64_t>& b) {
    if (a.empty() && b.empty()) return 1.0;
    const auto& small = a.size() < b.size() ? a : b;
    const auto& large = a.size() < b.size() ? b : a;
    size_t both = 0;
    for (uint64_t x : small) both += large.count(x);
    return static_cast<double>(both) / static_cast<double>(a.size() + b.size() - both);
}

}  // namespace

double shingle_similarity(std::string_view a, std::string_view b) { return jaccard(shingles(a), shingles(b)); }

KeepResult keep_select(const std::vector<Candidate>& c, KeepPolicy policy) {
    // The policy's choice per task.
    std::vector<size_t> chosen;
    std::map<size_t, size_t> best;  // task -> candidate
    for (size_t i = 0; i < c.size(); ++i) {
        if (policy == KeepPolicy::kDistinct) {
            chosen.push_back(i);
            continue;
        }
        auto it = best.find(c[i].task);
        if (it == best.end()) {
            best[c[i].task] = i;
            continue;
        }
        const Candidate& b = c[it->second];
        bool better = false;
        if (policy == KeepPolicy::kShortest) better = c[i].tokens < b.tokens;
        if (policy == KeepPolicy::kFastest)
            better = c[i].run_seconds >= 0 && (b.run_seconds < 0 || c[i].run_seconds < b.run_seconds);
        if (better) it->second = i;
    }
    for (const auto& [task, i] : best) chosen.push_back(i);
    std::sort(chosen.begin(), chosen.end(), [&](size_t a, size_t b) {
        return std::make_pair(c[a].task, c[a].sample) < std::make_pair(c[b].task, c[b].sample);
    });

    // Duplicates: exact over the whole set, near within a task; the earlier one stays.
    KeepResult r;
    std::set<std::pair<std::string, std::string>> seen;
    std::map<size_t, std::vector<std::unordered_set<uint64_t>>> kept_shingles;  // task -> kept programs
    for (size_t i : chosen) {
        if (!seen.emplace(c[i].prompt, squeeze_blanks(c[i].program)).second) {
            ++r.exact_duplicates;
            continue;
        }
        std::unordered_set<uint64_t> sh = shingles(c[i].program);
        bool near = false;
        for (const auto& other : kept_shingles[c[i].task]) near = near || jaccard(sh, other) >= kNearDuplicate;
        if (near) {
            ++r.near_duplicates;
            continue;
        }
        kept_shingles[c[i].task].push_back(std::move(sh));
        r.kept.push_back(i);
    }
    return r;
}

}  // namespace cuset::databuild

// Examples, epoch order, step/rank split, micro-batch tensors and the tokenised-data cache.
#include "cuset/data/batching.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>

#include <ATen/ATen.h>

#include "cuset/core/atomic_file.h"
#include "cuset/core/error.h"
#include "cuset/core/hash.h"
#include "cuset/core/log.h"

namespace cuset {

PreparedData data_prepare(const std::vector<TokenizedSample>& samples, const PrepareOptions& o) {
    PreparedData d;
    d.n_input = static_cast<int64_t>(samples.size());
    for (size_t k = 0; k < samples.size(); ++k) {
        const TokenizedSample& s = samples[k];
        int64_t T = static_cast<int64_t>(s.ids.size());
        if (T > o.max_seq_len) {
            if (o.truncation == "drop") {
                ++d.n_dropped;
                continue;
            }
            ++d.n_truncated;
            T = o.max_seq_len;
        }
        Example e;
        e.id = s.id;
        e.source = static_cast<int32_t>(k);
        e.ids.assign(s.ids.begin(), s.ids.begin() + T);
        e.labels.assign(T, -100);
        e.label_bits.assign(T, 0);
        for (int64_t t = 0; t + 1 < T; ++t) {
            if (!s.trainable[t + 1]) continue;
            e.labels[t] = s.ids[t + 1];
            e.label_bits[t] = s.tag_bits[t + 1];
            ++e.n_targets;
            d.n_sensitive += s.tag_bits[t + 1] != 0;
        }
        if (e.n_targets == 0) {
            // Truncation removed the whole response: nothing to learn from this sample.
            ++d.n_dropped;
            continue;
        }
        d.n_tokens += T;
        d.n_targets += e.n_targets;
        d.examples.push_back(std::move(e));
    }
    return d;
}

namespace {

// SplitMix64: a tiny, fully specified generator, so the data order is the same everywhere.
struct SplitMix64 {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

}  // namespace

std::vector<Row> epoch_rows(const PreparedData& data, const OrderOptions& o, int64_t epoch) {
    const int64_t n = static_cast<int64_t>(data.examples.size());
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    if (o.shuffle) {
        SplitMix64 rng{o.seed * 0x2545F4914F6CDD1Dull + static_cast<uint64_t>(epoch) + 1};
        for (int64_t i = n - 1; i > 0; --i) {
            int64_t j = static_cast<int64_t>(rng.next() % static_cast<uint64_t>(i + 1));
            std::swap(order[i], order[j]);
        }
    }
    auto len = [&](int32_t i) { return static_cast<int64_t>(data.examples[i].ids.size()); };
    if (o.group_by_length) {
        for (int64_t b = 0; b < n; b += o.group_window) {
            auto first = order.begin() + b;
            auto last = order.begin() + std::min(n, b + o.group_window);
            std::stable_sort(first, last, [&](int32_t a, int32_t c) { return len(a) > len(c); });
        }
    }
    std::vector<Row> rows;
    for (int32_t i : order) {
        if (o.packing && !rows.empty() && rows.back().length + len(i) <= o.max_seq_len) {
            rows.back().examples.push_back(i);
            rows.back().length += len(i);
            continue;
        }
        rows.push_back(Row{{i}, len(i)});
    }
    return rows;
}

int64_t steps_per_epoch(int64_t n_rows, int64_t global_batch) {
    return (n_rows + global_batch - 1) / global_batch;
}

std::vector<Row> step_rows_for_rank(const std::vector<Row>& epoch, int64_t global_batch,
                                    int64_t step_in_epoch, int64_t rank, int64_t world) {
    const int64_t n = static_cast<int64_t>(epoch.size());
    const int64_t begin = step_in_epoch * global_batch;
    const int64_t end = std::min(n, begin + global_batch);
    const int64_t m = std::max<int64_t>(0, end - begin);
    const int64_t lo = begin + rank * m / world;
    const int64_t hi = begin + (rank + 1) * m / world;
    return std::vector<Row>(epoch.begin() + lo, epoch.begin() + hi);
}

MicroBatch make_micro_batch(const PreparedData& data, const std::vector<Row>& rows, int32_t pad_id,
                            c10::Device device, const std::vector<std::vector<float>>* probs,
                            const std::vector<std::vector<float>>* ref_probs) {
    const int64_t B = static_cast<int64_t>(rows.size());
    int64_t T = 1;
    for (const Row& r : rows) T = std::max(T, r.length);
    const bool packed = std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.examples.size() > 1; });

    at::Tensor ids = at::full({B, T}, pad_id, at::kLong);      // [B, T]
    at::Tensor mask = at::zeros({B, T}, at::kBool);            // [B, T]
    at::Tensor pos = at::zeros({B, T}, at::kLong);             // [B, T]
    at::Tensor seg = at::full({B, T}, -1, at::kLong);          // [B, T]
    at::Tensor labels = at::full({B, T}, -100, at::kLong);     // [B, T]
    at::Tensor bits = at::zeros({B, T}, at::kInt);             // [B, T]
    at::Tensor sample = at::full({B, T}, -1, at::kLong);       // [B, T]
    auto* ids_p = ids.data_ptr<int64_t>();
    auto* mask_p = mask.data_ptr<bool>();
    auto* pos_p = pos.data_ptr<int64_t>();
    auto* seg_p = seg.data_ptr<int64_t>();
    auto* lab_p = labels.data_ptr<int64_t>();
    auto* bits_p = bits.data_ptr<int32_t>();
    auto* smp_p = sample.data_ptr<int64_t>();
    at::Tensor conf;  // [B, T] fp32
    float* conf_p = nullptr;
    if (probs) {
        conf = at::full({B, T}, std::numeric_limits<float>::quiet_NaN(), at::kFloat);
        conf_p = conf.data_ptr<float>();
    }
    at::Tensor ref;  // [B, T] fp32 reference p(target) (rho1)
    float* ref_p = nullptr;
    if (ref_probs) {
        ref = at::full({B, T}, std::numeric_limits<float>::quiet_NaN(), at::kFloat);
        ref_p = ref.data_ptr<float>();
    }

    MicroBatch mb;
    int64_t s = 0;
    for (int64_t b = 0; b < B; ++b) {
        int64_t t0 = 0;
        for (size_t k = 0; k < rows[b].examples.size(); ++k) {
            const Example& e = data.examples[rows[b].examples[k]];
            const std::vector<float>* p = probs ? &probs->at(e.source) : nullptr;
            if (p && p->size() < e.ids.size())
                throw InputError("cached confidences of sample '" + quote_bounded(e.id) + "' are shorter than the sample: "
                                 "score the data again with the same data.max_seq_len");
            const std::vector<float>* rp = ref_probs ? &ref_probs->at(e.source) : nullptr;
            if (rp && rp->size() < e.ids.size())
                throw InputError("reference scores of sample '" + quote_bounded(e.id) + "' are shorter than the sample: "
                                 "score the data again with the same data.max_seq_len");
            for (size_t t = 0; t < e.ids.size(); ++t) {
                int64_t at_ = b * T + t0 + static_cast<int64_t>(t);
                ids_p[at_] = e.ids[t];
                mask_p[at_] = true;
                pos_p[at_] = static_cast<int64_t>(t);
                seg_p[at_] = static_cast<int64_t>(k);
                if (e.labels[t] >= 0) {
                    lab_p[at_] = e.labels[t];
                    bits_p[at_] = static_cast<int32_t>(e.label_bits[t]);
                    smp_p[at_] = s;
                    if (p) conf_p[at_] = (*p)[t + 1];
                    if (rp) ref_p[at_] = (*rp)[t + 1];
                }
            }
            t0 += static_cast<int64_t>(e.ids.size());
            mb.n_tokens += static_cast<int64_t>(e.ids.size());
            mb.n_targets += e.n_targets;
            mb.sample_ids.push_back(e.id);
            ++s;
        }
    }
    at::Tensor sensitive = bits.ne(0);  // [B, T] bool
    auto move = [&](const at::Tensor& t) {
        if (device.is_cpu()) return t;
        return t.pin_memory().to(device, /*non_blocking=*/true);
    };
    mb.input_ids = move(ids);
    // Without padding or packing the attention is plain causal: no mask, so that the GPU can use
    // the flash / memory-efficient kernels (they take no explicit mask).
    const bool padded = std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.length != T; });
    if (padded || packed) mb.attention_mask = move(mask);
    mb.position_ids = move(pos);
    if (packed) mb.segment_ids = move(seg);
    mb.labels = move(labels);
    mb.sensitive = move(sensitive);
    mb.label_bits = move(bits);
    mb.sample_index = move(sample);
    if (probs) mb.confidence = move(conf);
    if (ref_probs) mb.reference_prob = move(ref);
    return mb;
}

namespace {

constexpr char kCacheMagic[8] = {'C', 'U', 'S', 'E', 'T', 'T', 'O', 'K'};
constexpr uint32_t kCacheVersion = 1;

template <class T>
void put(std::ostream& f, const T& v) {
    f.write(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <class T>
void put_vec(std::ostream& f, const std::vector<T>& v) {
    put<uint64_t>(f, v.size());
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
}
template <class T>
bool get(std::ifstream& f, T* v) {
    return static_cast<bool>(f.read(reinterpret_cast<char*>(v), sizeof(T)));
}
// A count is checked against `limit` and against the bytes the file still has (`file_size`), so
// a corrupted count (2^32 - 1) is a bad cache, not a 16 GB allocation.
template <class T>
bool get_vec(std::ifstream& f, std::vector<T>* v, uint64_t limit, uint64_t file_size) {
    uint64_t n = 0;
    if (!get(f, &n) || n > limit) return false;
    const std::streamoff pos = f.tellg();
    if (pos < 0 || static_cast<uint64_t>(pos) > file_size || n > (file_size - static_cast<uint64_t>(pos)) / sizeof(T))
        return false;
    v->resize(n);
    return static_cast<bool>(f.read(reinterpret_cast<char*>(v->data()), static_cast<std::streamsize>(n * sizeof(T))));
}

}  // namespace

bool tokenized_cache_load(const std::string& path, const std::string& key,
                          std::vector<TokenizedSample>* out) {
    std::error_code ec;
    const uint64_t file_size = std::filesystem::is_regular_file(path, ec) ? std::filesystem::file_size(path, ec) : 0;
    if (ec || file_size == 0) return false;
    std::ifstream f(path, std::ios::binary);
    if (!f) return false;
    char magic[8];
    uint32_t version = 0;
    std::string stored_key;
    if (!f.read(magic, 8) || std::memcmp(magic, kCacheMagic, 8) != 0) return false;
    if (!get(f, &version) || version != kCacheVersion) return false;
    std::vector<char> kbytes;
    if (!get_vec(f, &kbytes, 1024, file_size)) return false;
    if (std::string(kbytes.begin(), kbytes.end()) != key) return false;
    uint64_t n = 0;
    if (!get(f, &n)) return false;
    const uint64_t kMaxTokens = uint64_t(1) << 32;
    // Every sample takes at least its five counts (40 bytes).
    const std::streamoff here = f.tellg();
    if (here < 0 || n > (file_size - static_cast<uint64_t>(here)) / 40) return false;
    std::vector<TokenizedSample> samples(n < (1u << 24) ? n : 0);
    if (samples.size() != n) return false;
    for (TokenizedSample& s : samples) {
        std::vector<char> id;
        if (!get_vec(f, &id, 1 << 20, file_size)) return false;
        s.id.assign(id.begin(), id.end());
        if (!get_vec(f, &s.ids, kMaxTokens, file_size) || !get_vec(f, &s.roles, kMaxTokens, file_size) ||
            !get_vec(f, &s.trainable, kMaxTokens, file_size) || !get_vec(f, &s.tag_bits, kMaxTokens, file_size))
            return false;
        size_t T = s.ids.size();
        if (s.roles.size() != T || s.trainable.size() != T || s.tag_bits.size() != T) return false;
        for (int64_t t : s.ids)
            if (t < 0) return false;  // the caller checks the upper end against its tokenizer
    }
    *out = std::move(samples);
    return true;
}

void tokenized_cache_save(const std::string& path, const std::string& key,
                          const std::vector<TokenizedSample>& samples) {
    // A cache that cannot be written costs the next start a re-tokenisation, nothing more.
    std::string tmp;
    try {
        AtomicFile file(path);
        tmp = file.temp_path();
        std::ostream& f = file.stream();
        f.write(kCacheMagic, 8);
        put(f, kCacheVersion);
        put_vec(f, std::vector<char>(key.begin(), key.end()));
        put<uint64_t>(f, samples.size());
        for (const TokenizedSample& s : samples) {
            put_vec(f, std::vector<char>(s.id.begin(), s.id.end()));
            put_vec(f, s.ids);
            put_vec(f, s.roles);
            put_vec(f, s.trainable);
            put_vec(f, s.tag_bits);
        }
        file.commit();
    } catch (const RuntimeFailure& e) {
        log_warn("cannot write the tokenised-data cache %s (continuing without it): %s",
                 (tmp.empty() ? path : tmp).c_str(), e.what());
    }
}

std::string tokenized_hash(const std::vector<TokenizedSample>& samples) {
    Hasher h;
    h.add_u64(samples.size());
    for (const TokenizedSample& s : samples) {
        h.add(s.id);
        h.add(s.ids.data(), s.ids.size() * sizeof(int32_t));
        h.add(s.trainable.data(), s.trainable.size());
        h.add(s.tag_bits.data(), s.tag_bits.size() * sizeof(uint32_t));
    }
    return h.hex();
}

}  // namespace cuset

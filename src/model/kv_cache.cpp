// KV cache allocation and row selection.
#include "cuset/model/kv_cache.h"

#include <ATen/ATen.h>

namespace cuset {

KvCache kv_cache_allocate(const ModelConfig& cfg, int64_t batch, int64_t max_len, c10::ScalarType dtype,
                          c10::Device device) {
    KvCache c;
    auto o = at::TensorOptions().dtype(dtype).device(device);
    // Zeros, not empty: masked key positions still enter SDPA's products (a masked score is
    // score + -inf, and its probability 0 times the value), so a NaN left in uninitialised memory
    // at a padded slot would turn the whole row into NaN.
    for (int64_t l = 0; l < cfg.n_layer; ++l) {
        c.k.push_back(at::zeros({batch, cfg.n_head_kv, max_len, cfg.head_dim}, o));
        c.v.push_back(at::zeros({batch, cfg.n_head_kv, max_len, cfg.head_dim}, o));
    }
    c.real = at::zeros({batch, max_len}, at::TensorOptions().dtype(at::kBool).device(device));
    return c;
}

void KvCache::select_rows(const at::Tensor& rows) {
    for (auto* side : {&k, &v})
        for (at::Tensor& t : *side) t = t.index_select(0, rows);
    real = real.index_select(0, rows);
}

}  // namespace cuset

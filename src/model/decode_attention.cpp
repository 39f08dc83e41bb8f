// Grouped-query attention over a KV cache for decode steps (see the header).
#include "cuset/model/decode_attention.h"

#include <limits>

#include <ATen/ops/bmm.h>
#include <ATen/ops/softmax.h>
#include <c10/util/Exception.h>

namespace cuset {

at::Tensor decode_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                            double scale) {
    const int64_t b = q.size(0), h = q.size(1), t = q.size(2), e = q.size(3);
    const int64_t kh = k.size(1), len = k.size(2);
    TORCH_CHECK(kh > 0 && h % kh == 0, "decode_attention: ", h, " query heads over ", kh, " key/value heads");
    const int64_t g = h / kh;
    // Heads k*G .. k*G+G-1 then positions: row (g, t) of group k.
    const at::Tensor qg = q.reshape({b * kh, g * t, e});  // [B*K, G*T, E]
    const at::Tensor kf = k.reshape({b * kh, len, e});     // [B*K, L, E] (a view of the cache)
    const at::Tensor vf = v.reshape({b * kh, len, e});     // [B*K, L, E]
    at::Tensor s;                                          // [B*K, G*T, L] fp32
    if (q.scalar_type() == at::kFloat || q.scalar_type() == at::kDouble)
        s = at::bmm(qg, kf.transpose(1, 2));
    else if (q.is_cuda())
        s = at::bmm(qg, kf.transpose(1, 2), at::kFloat);  // fp32 accumulate and output
    else  // the CPU has no bf16 -> fp32 bmm: scores are rounded to bf16 first (the decoder uses this on CUDA)
        s = at::bmm(qg, kf.transpose(1, 2)).to(at::kFloat);
    s.mul_(scale);
    const at::Tensor keep = mask.expand({b, 1, t, len}).unsqueeze(2).expand({b, 1, g, t, len});  // [B, 1, G, T, L]
    s = s.view({b, kh, g * t, len})
            .masked_fill_(keep.reshape({b, 1, g * t, len}).logical_not(), -std::numeric_limits<double>::infinity());
    const at::Tensor p = at::softmax(s, -1).to(v.scalar_type()).view({b * kh, g * t, len});  // [B*K, G*T, L]
    return at::bmm(p, vf).view({b, h, t, e});                                                // [B, H, T, E]
}

}  // namespace cuset

// The largest absolute difference between the fp32 weights of two model folders (a NaN stays):
// for tests whose runs should agree to within the rounding of a different summation order.
// `file`: the weights file in each folder (adapter_model.safetensors for LoRA checkpoints).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "cuset/model/safetensors.h"

namespace cuset::test {

inline double max_weight_diff(const std::string& a, const std::string& b,
                              const std::string& file = "model.safetensors") {
    cuset::SafetensorsFile fa(a + "/" + file), fb(b + "/" + file);
    double worst = 0;
    for (const auto& t : fa.tensors()) {
        const cuset::TensorView* u = fb.find(t.name);
        EXPECT_NE(u, nullptr) << t.name;
        if (!u) continue;
        const float* x = reinterpret_cast<const float*>(t.data);
        const float* y = reinterpret_cast<const float*>(u->data);
        for (int64_t i = 0; i < t.numel(); ++i) {
            const double d = std::abs(double(x[i]) - double(y[i]));
            if (!(d <= worst)) worst = d;  // a NaN stays
        }
    }
    return worst;
}

}  // namespace cuset::test

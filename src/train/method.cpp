// The table of training methods (train/method.h, docs/method.md sec. 5).
#include "cuset/train/method.h"

#include <array>
#include <cstddef>

namespace cuset {
namespace {

using W = TokenWeight;
using M = TokenMask;
using P = StepPass;

// In the order of enum Method (checked below).
constexpr std::array<MethodRow, 7> kMethods = {{
    // method        name     weight           mask             pass                    ref.model ref.scores eval
    {Method::kSft,   "sft",   W::kOne,         M::kAll,         P::kNone,               false, false, Method::kSft},
    {Method::kCuset, "cuset", W::kOne,         M::kCuset,       P::kConfidenceQuantile, false, false, Method::kCuset},
    {Method::kDft,   "dft",   W::kConfidence,  M::kAll,         P::kNone,               false, false, Method::kDft},
    {Method::kFocal, "focal", W::kFocal,       M::kAll,         P::kNone,               false, false, Method::kFocal},
    {Method::kEaft,  "eaft",  W::kEntropy,     M::kAll,         P::kNone,               false, false, Method::kEaft},
    {Method::kAsft,  "asft",  W::kConfidence,  M::kAll,         P::kNone,               true,  false, Method::kDft},
    {Method::kRho1,  "rho1",  W::kOne,         M::kExcessLoss,  P::kExcessLoss,         false, true,  Method::kSft},
}};

constexpr bool rows_in_enum_order() {
    for (size_t i = 0; i < kMethods.size(); ++i)
        if (static_cast<size_t>(kMethods[i].method) != i) return false;
    return true;
}
static_assert(rows_in_enum_order(), "kMethods: one row per Method, in the enum's order");

}  // namespace

const MethodRow& method_row(Method m) { return kMethods.at(static_cast<size_t>(m)); }

const char* method_name(Method m) { return method_row(m).name; }

std::optional<Method> method_named(const std::string& name) {
    for (const MethodRow& r : kMethods)
        if (name == r.name) return r.method;
    return std::nullopt;
}

}  // namespace cuset

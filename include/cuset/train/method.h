// The training methods as one table (docs/method.md sec. 5): one row per objective.method, with
// what the objective, the trainer and the evaluation read of it. Adding a method is a row (and,
// for a new kind of weight or mask, its arm in the objective); no file branches on the method.
#pragma once

#include <optional>
#include <string>

namespace cuset {

enum class Method { kSft, kCuset, kDft, kFocal, kEaft, kAsft, kRho1 };

// The per-token method weight g(i,t) of a valid token (c = its detached confidence).
enum class TokenWeight {
    kOne,         // 1
    kConfidence,  // c (dft, and asft's DFT part)
    kFocal,       // (1 - c)^gamma (objective.focal.gamma)
    kEntropy,     // sg((H_topk / ln k)^alpha) from each chunk's logits (EAFT: objective.eaft.*)
};

// Which valid tokens count (the mask m) and how samples are weighed (w_i).
enum class TokenMask {
    kAll,         // m = valid, w_i = 1
    kCuset,       // m = valid AND (c >= tau_i OR s), w_i = 1 + alpha (1 - r_i): mask.*, region.*
    kExcessLoss,  // m = valid AND l - l_ref >= tau_step, a hard selection (drop_weight unused), w_i = 1
};

// The first pass over the step, before the loss, whose threshold spans every micro-batch and rank.
enum class StepPass {
    kNone,
    kConfidenceQuantile,  // with mask.threshold.mode batch_quantile: tau_step = q-quantile of c
    kExcessLoss,          // tau_step = the ceil(keep_fraction n)-th largest l - l_ref
};

struct MethodRow {
    Method method;
    const char* name;       // objective.method
    TokenWeight weight;     // g
    TokenMask mask;         // m and w_i
    StepPass pass;          // the confidence (or score) pass it needs
    bool reference_model;   // + alpha KL(pi_ref || pi_theta) per token: a frozen copy of the
                            // initial model runs beside the model (objective.asft.alpha)
    bool reference_scores;  // l_ref from a reference model's score file (objective.rho1.reference_scores)
    Method eval;            // the method of eval_loss: evaluation has no reference model nor score file
};

// The row of `m`.
const MethodRow& method_row(Method m);
const char* method_name(Method m);
// The method objective.method names `name`, or nullopt.
std::optional<Method> method_named(const std::string& name);

}  // namespace cuset

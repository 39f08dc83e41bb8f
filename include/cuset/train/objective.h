// The CuSeT training objective (docs/method.md sec. 1-5) and its baselines (sft, dft,
// focal, eaft, asft, rho1): per-token cross-entropy from final hidden states without materialising [N, V] logits,
// the confidence/sensitivity mask, region-aware sample weights, and the step normalisation.
// It does not run the model, read score caches or talk to other ranks: callers pass those in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "cuset/model/lm_head.h"  // kIgnoreIndex, token_nll
#include "cuset/train/method.h"   // Method and its row: what the objective does per method

namespace cuset {

enum class ThresholdMode { kSampleQuantile, kFixed, kBatchQuantile };

struct ObjectiveOptions {
    Method method = Method::kCuset;
    bool cached_confidence = false;  // confidence.source: cached (c supplied by the caller)
    // Mask switches. mask_confidence=false: no token is dropped for low confidence (m = valid),
    // so mask_sensitivity has nothing to rescue. mask_sensitivity=false: m = valid AND mc.
    bool mask_confidence = true, mask_sensitivity = true;
    double drop_weight = 0.0;  // mask value of a dropped valid token (0 = hard mask)
    ThresholdMode threshold_mode = ThresholdMode::kSampleQuantile;
    double q = 0.2, threshold_value = 0.5;
    bool region_enabled = true;
    int64_t window = 256;  // valid tokens per region window
    double alpha = 1.0;    // w = 1 + alpha * (1 - min window mean confidence)
    double focal_gamma = 2.0;
    // eaft: per-token weight sg((H_topk / ln k)^alpha), H_topk = entropy of the renormalised top-k
    // probabilities (arXiv 2601.02151).
    double eaft_alpha = 1.0;
    int64_t eaft_k = 20;
    // asft: sg(p) l + alpha KL(pi_ref || pi_theta) per token (arXiv 2509.23753); pi_ref = the
    // frozen initial model, whose final hidden states the caller passes (ReferenceForward).
    double asft_alpha = 0.1;
    // rho1: score = l_theta - l_ref (l_ref from the reference model's score file); the step keeps
    // the ceil(keep_fraction n) highest-scored of its n valid tokens (ties at the threshold kept),
    // loss = their mean l (arXiv 2404.07965). Two-pass step, like batch_quantile.
    double rho1_keep_fraction = 0.6;
    int64_t chunk_size = 1024;  // tokens per lm_head+loss chunk; 0 = full logits (reference path)
};

struct MicroBatchTargets {
    at::Tensor labels;        // [B, T] int64: target of position t (already shifted), -100 = not valid
    at::Tensor sensitive;     // [B, T] bool: s(i,t) of that target; undefined = all false
    at::Tensor sample_index;  // [B, T] int64: sample (0..S-1 in this micro-batch) of the target, -1 =
                              // invalid; rows may hold several packed samples; undefined = row index
    at::Tensor confidence;    // [B, T] fp32, only for confidence.source = cached; undefined otherwise
    at::Tensor reference_prob;  // [B, T] fp32 p_ref(target) from the reference score file (rho1 only)
    std::vector<std::string> sample_ids;  // [S] for the per-sample debug log (may be empty)
};

// One sample's weight and the region that set it. The window is in valid-token ordinals of the
// sample: tokens [win_begin, win_end) of its n_valid response tokens. tau and the window are NaN
// / -1 when they do not apply (no valid token, or a method without them).
struct SampleWeight {
    std::string id;
    double weight = 1.0, tau = std::numeric_limits<double>::quiet_NaN();
    int64_t win_begin = -1, win_end = -1;
    double win_mean = std::numeric_limits<double>::quiet_NaN();
    int64_t n_valid = 0;
};

// Every statistic of ObjectiveStats, once: X(type, member, index, merge, initial value), `merge`
// how two values combine (sum, min, max). The struct's members, its buffer's indices, merge() and
// the buffer's conversions are all made from this list.
#define CUSET_OBJECTIVE_STATS(X)                                                                           \
    X(int64_t, n_valid, kNValid, sum, 0)                      /* valid target tokens */                    \
    X(int64_t, n_kept, kNKept, sum, 0)                        /* valid tokens the mask keeps (m = 1) */    \
    X(int64_t, n_sensitive, kNSensitive, sum, 0)              /* valid tokens with s = 1 */                \
    X(int64_t, n_kept_only_sensitive, kNKeptOnlySensitive, sum, 0) /* kept although c < tau, as s = 1 */   \
    X(double, sum_tau, kSumTau, sum, 0.0)                     /* per-sample thresholds (cuset mask) */     \
    X(int64_t, n_tau, kNTau, sum, 0)                          /* samples that have a threshold */          \
    X(int64_t, n_samples, kNSamples, sum, 0)                  /* samples with a valid token */             \
    X(double, w_min, kWMin, min, std::numeric_limits<double>::infinity())   /* per-sample weights */       \
    X(double, w_max, kWMax, max, -std::numeric_limits<double>::infinity())                                 \
    X(double, w_sum, kWSum, sum, 0.0)                                                                      \
    X(double, conf_sum_sensitive, kConfSumSensitive, sum, 0.0) /* c over sensitive valid tokens */         \
    X(double, conf_sum_plain, kConfSumPlain, sum, 0.0)        /* c over non-sensitive valid tokens */      \
    X(double, nll_sum_valid, kNllSumValid, sum, 0.0)          /* l over valid tokens (unweighted) */       \
    X(double, tok_w_sum, kTokWSum, sum, 0.0)  /* m g over valid tokens (g: 1, c, (1-c)^gamma, EAFT's) */   \
    X(double, kl_sum, kKlSum, sum, 0.0)       /* KL(pi_ref || pi_theta) over valid tokens (asft) */

// Counters for the trainer's log, summed over a micro-batch; merge() adds two (micro-batches,
// steps, ranks). Samples are counted only when they have at least one valid token.
struct ObjectiveStats {
#define CUSET_STATS_MEMBER(type, member, index, merge, init) type member = init;
    CUSET_OBJECTIVE_STATS(CUSET_STATS_MEMBER)
#undef CUSET_STATS_MEMBER

    void merge(const ObjectiveStats& o);

    // The statistics as one flat buffer of doubles, field f at index f (the sums over ranks, and
    // the objective's one transfer of them from the device); integer counts are exact below 2^53.
#define CUSET_STATS_INDEX(type, member, index, merge, init) index,
    enum Field : size_t {
        CUSET_OBJECTIVE_STATS(CUSET_STATS_INDEX)
        kFields  // the buffer's size
    };
#undef CUSET_STATS_INDEX
    std::vector<double> to_buffer() const;             // [kFields]
    static ObjectiveStats from_buffer(const double* v);  // v[0, kFields)

    double kept_fraction() const;                 // n_kept / n_valid
    double sensitive_fraction() const;            // n_sensitive / n_valid
    double kept_only_sensitive_fraction() const;  // n_kept_only_sensitive / n_valid
    double mean_tau() const;                      // sum_tau / n_tau
    double w_mean() const;                        // w_sum / n_samples
    double conf_mean_sensitive() const;           // NaN when there is no such token
    double conf_mean_plain() const;
    double nll_mean() const;                      // plain token-mean NLL of the valid tokens
    double tok_w_mean() const;                    // tok_w_sum / n_valid
    double kl_mean() const;                       // kl_sum / n_valid
};

struct ObjectiveOutput {
    // scalar fp32 (fp64 for fp64 inputs) with grad: sum_{i,t} w_i m(i,t) g(i,t) l(i,t), where g is
    // the per-token method weight (1, c, (1-c)^gamma or the EAFT weight), plus for asft
    // alpha sum_t KL_t(pi_ref || pi_theta) (with gradient). With no valid token: a zero leaf whose
    // backward() changes nothing.
    at::Tensor numerator;
    double denominator = 0.0;  // sum_{i,t} w_i m(i,t) (detached)
    ObjectiveStats stats;
    std::vector<SampleWeight> samples;  // [S]
};

// The frozen reference model's outputs for the same micro-batch (asft): final hidden states
// [B, T, D] and lm_head [V, D], model dtype, computed without gradients.
struct ReferenceForward {
    at::Tensor hidden;
    at::Tensor lm_head;
};

class Objective {
public:
    explicit Objective(ObjectiveOptions opts);  // throws UsageError on an out-of-range option

    // hidden [B, T, D] (model dtype), lm_head [V, D] (same dtype). batch_tau: the step's threshold
    // from step_threshold() for batch_quantile and rho1 (required there, ignored otherwise).
    // reference: required for asft (needs_reference_model()), ignored otherwise. With chunk_size > 0 the
    // gradients of the numerator are computed chunk by chunk during this call (each chunk's logits
    // once, whole samples per chunk; only a sample longer than a chunk is recomputed) and handed
    // to autograd, so numerator.backward() costs no further lm_head work.
    ObjectiveOutput compute(const at::Tensor& hidden, const at::Tensor& lm_head,
                            const MicroBatchTargets& t,
                            std::optional<double> batch_tau = std::nullopt,
                            const ReferenceForward* reference = nullptr) const;

    // batch_quantile pass 1 (no grad): confidences of the valid targets, in row-major order,
    // [n_valid] fp64: exactly the c that compute() compares with the threshold (exp(-l) taken in
    // fp64), so a threshold equal to some c keeps that token. labels [B, T] or [N] int64.
    at::Tensor confidences(const at::Tensor& hidden, const at::Tensor& lm_head,
                           const at::Tensor& labels) const;
    // Same, but returns the supplied confidences when confidence.source is cached.
    at::Tensor confidences(const at::Tensor& hidden, const at::Tensor& lm_head,
                           const MicroBatchTargets& t) const;

    // Two-pass step, pass 1 for any method that needs it: the per-token scores the step threshold
    // is taken over ([n_valid] fp64, row-major): confidences for batch_quantile, l_theta - l_ref for
    // rho1 (t.reference_prob required). step_threshold: the threshold over all the step's scores
    // (every micro-batch and rank; non-empty): quantile_linear(q), or for rho1 the
    // ceil(keep_fraction n)-th largest score.
    at::Tensor step_scores(const at::Tensor& hidden, const at::Tensor& lm_head,
                           const MicroBatchTargets& t) const;
    double step_threshold(const at::Tensor& all_scores) const;

    bool needs_two_passes() const;  // the method's StepPass, when it applies (batch_quantile, rho1)
    bool needs_reference_model() const { return method_row(opts_.method).reference_model; }
    bool needs_reference_scores() const { return method_row(opts_.method).reference_scores; }
    const ObjectiveOptions& options() const { return opts_; }

private:
    ObjectiveOptions opts_;
};

// CuSeT's mask and sample weights (docs/method.md sec. 2-3) of given token confidences, for a loss
// other than this objective's (GRPO's objective.grpo.token_weights: cuset). The tokens of several
// sequences at once, grouped by sequence in order: conf [n] (fp32 or fp64, p of each token),
// sensitive [n] bool, counts [S] tokens per sequence (sum = n; 0 allowed). `o`: the mask.* and
// region.* keys of method cuset; the threshold is per sequence (sample_quantile) or fixed
// (batch_quantile and cached confidences are UsageErrors). Returns, on conf's device:
struct CusetTokenWeights {
    at::Tensor coefficient;  // [n] fp64: w_i m(i,t), with m = 1 kept, drop_weight otherwise
    at::Tensor kept;         // [n] bool: m(i,t) = 1
    at::Tensor weight;       // [S] fp64: w_i (1 for a sequence without tokens)
};
CusetTokenWeights cuset_token_weights(const at::Tensor& conf, const at::Tensor& sensitive,
                                      const std::vector<int64_t>& counts, const ObjectiveOptions& o);

// q-quantile of `values` (any shape, any floating dtype, non-empty) with numpy's default 'linear'
// interpolation, computed in fp64.
double quantile_linear(const at::Tensor& values, double q);

// Step normalisation (train_step): after all micro-batches of a step, every gradient is divided by
// the step's global denominator (the sum of ObjectiveOutput::denominator over micro-batches and ranks).
// grad *= inv_denominator for every parameter that has a gradient. Throws RuntimeFailure when
// inv_denominator is not finite (a step with denominator 0 must be skipped by the caller).
void gradients_scale(const std::vector<at::Tensor>& params, double inv_denominator);

}  // namespace cuset
